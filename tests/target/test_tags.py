"""Tags: folders, names, references at every level, deep overrides, cycles, atomic registration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hetsim.errors import TargetError
from hetsim.target import TAGS, Target, add_tag_dir, list_tags, register_tag, unregister_tag
from hetsim.target.tags import read_tag_dir, shipped_tag_dir

MakeTags = Callable[..., Path]


@pytest.mark.usefixtures("small_tags")
def test_a_tag_names_a_whole_platform_at_every_level() -> None:
    t = Target("test/soc")
    assert t.tag == "test/soc"
    assert (t.host.tag, t.host.attrs["cores"]) == ("test/cpu", 2)  # type: ignore[union-attr]
    assert (t.executor.kind, t.executor.tag, t.executor.attrs["dispatch_us"]) == (  # type: ignore[union-attr]
        "vm",
        "test/fast-vm",
        0.1,
    )
    level, gpu = t.devices
    assert (level.name, level.host.tag, level.host.attrs["freq_ghz"]) == (  # type: ignore[union-attr]
        "vdevice0",
        "test/cpu",
        0.5,
    )
    assert (level.devices[0].tag, level.devices[0].attrs["flops_per_cycle"]) == ("test/npu", 512)
    assert (gpu.name, gpu.kind, gpu.tag) == ("dev1", "cuda", None)


@pytest.mark.usefixtures("small_tags")
def test_a_tag_keeps_its_name_however_it_is_spelled(small_tags: Path) -> None:
    trees = [
        Target("test/soc"),
        Target("TEST/Soc"),
        Target({"tag": "test/soc"}),
        Target({"tag": "Test/SOC", "kind": "hetero"}),
        Target.load(small_tags / "test" / "soc.yaml"),
        Target(str(small_tags / "test" / "soc.yaml")),
    ]
    assert {t.tag for t in trees} == {"test/soc"}
    assert all(t == trees[0] for t in trees)


@pytest.mark.usefixtures("small_tags")
def test_overrides_merge_deeply_by_attribute_and_by_device_name() -> None:
    base = Target("test/soc")
    t = Target(
        {
            "tag": "test/soc",
            "devices": {"vdevice0": {"host": {"freq_ghz": 1.2}, "link": {"latency_us": 5}}},
        }
    )
    level = t.devices[0]
    assert level.host.attrs["freq_ghz"] == 1.2  # type: ignore[union-attr]
    assert dict(level.attrs["link"]) == {"bandwidth_gbps": 8.0, "latency_us": 5.0}
    assert t.tag == "test/soc"
    # everything else is untouched
    assert level.host.attrs["cores"] == base.devices[0].host.attrs["cores"]  # type: ignore[union-attr]
    assert t.devices[1] == base.devices[1]
    assert t.host == base.host


@pytest.mark.usefixtures("small_tags")
def test_a_tag_file_may_extend_another_with_overrides() -> None:
    t = Target("test/soc-fast")
    assert t.tag == "test/soc-fast"
    assert t.devices[0].host.attrs["freq_ghz"] == 2.0  # type: ignore[union-attr]
    assert t.devices[0].host.tag == "test/cpu"  # type: ignore[union-attr]


@pytest.mark.usefixtures("small_tags")
def test_devices_as_a_list_replace_the_tags_devices() -> None:
    t = Target({"tag": "test/soc", "devices": ["npu"]})
    assert [(d.name, d.kind) for d in t.devices] == [("dev0", "npu")]


@pytest.mark.usefixtures("small_tags")
def test_null_removes_an_override_or_a_device() -> None:
    t = Target({"tag": "test/soc", "executor": None, "devices": {"dev1": None}})
    assert (t.executor.kind, t.executor.tag) == ("vm", None)  # type: ignore[union-attr]
    assert [d.name for d in t.devices] == ["vdevice0"]


@pytest.mark.usefixtures("small_tags")
def test_replacing_a_named_device_keeps_its_name() -> None:
    t = Target({"tag": "test/soc", "devices": {"vdevice0": "cuda"}})
    assert [(d.name, d.kind) for d in t.devices] == [("vdevice0", "cuda"), ("dev1", "cuda")]


@pytest.mark.usefixtures("small_tags")
def test_an_override_of_another_kind_replaces_the_host() -> None:
    t = Target({"tag": "test/soc", "host": {"kind": "x86-cpu"}})
    assert (t.host.kind, t.host.tag, t.host.attrs["cores"]) == ("x86-cpu", None, 8)  # type: ignore[union-attr]


@pytest.mark.usefixtures("small_tags")
def test_tags_and_overrides_round_trip_through_export() -> None:
    for spec in (
        "test/soc",
        "test/soc-fast",
        {"tag": "test/soc", "devices": {"dev1": {"cores": 8}}},
    ):
        t = Target(spec)
        assert Target(t.export()) == t


def test_a_device_tag_with_its_own_host_is_a_level(tag_folder: MakeTags) -> None:
    tag_folder({"board/orin.yaml": "kind: cuda\nname: gpu\nhost: {kind: arm-cpu, cores: 12}\n"})
    t = Target("board/orin")
    assert (t.tag, t.host.attrs["cores"], t.devices[0].kind) == ("board/orin", 12, "cuda")  # type: ignore[union-attr]
    nested = Target({"kind": "hetero", "devices": ["board/orin"]})
    assert (nested.devices[0].kind, nested.devices[0].tag) == ("hetero", "board/orin")
    assert Target(nested.export()) == nested
    assert Target(t.export()) == t


def test_loading_an_edited_tag_file_reads_the_edit(tag_folder: MakeTags) -> None:
    folder = tag_folder({"ed/dev.yaml": "kind: npu\ncores: 2\n"})
    assert Target.load(folder / "ed" / "dev.yaml").devices[0].tag == "ed/dev"
    (folder / "ed" / "dev.yaml").write_text("kind: npu\ncores: 3\n")
    device = Target.load(folder / "ed" / "dev.yaml").devices[0]
    assert (device.tag, device.attrs["cores"]) == (None, 3)


def test_list_tags_gives_descriptions(small_tags: Path) -> None:
    listed = dict(list_tags())
    assert listed["test/soc"] == "a test platform"
    assert listed["test/soc-fast"] == "the test platform, faster"


def test_read_tag_dir_names_tags_by_path(small_tags: Path) -> None:
    assert [t.name for t in read_tag_dir(small_tags)] == [
        "test/cpu",
        "test/fast-vm",
        "test/npu",
        "test/soc-fast",
        "test/soc",
    ]


def test_a_cycle_is_an_error_naming_the_cycle(tag_folder: MakeTags) -> None:
    folder = tag_folder(
        {"soc/a.yaml": "tag: soc/b\n", "soc/b.yaml": "tag: soc/a\n"}, register=False
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert [p.message for p in err.value.problems] == [
        "tags: cycle soc/a -> soc/b -> soc/a",  # once, whichever of its tags found it
    ]
    assert "soc/a" not in TAGS


def test_a_cycle_through_a_nested_host_is_found(tag_folder: MakeTags) -> None:
    folder = tag_folder(
        {"loop.yaml": "kind: hetero\ndevices: [npu]\nhost: {tag: loop}\n"}, register=False
    )
    with pytest.raises(TargetError, match=r"^tags: cycle loop -> loop$"):
        add_tag_dir(folder)


def test_registration_is_atomic(tag_folder: MakeTags) -> None:
    folder = tag_folder(
        {"ok/one.yaml": "kind: npu\n", "ok/two.yaml": "kind: npu\ncores: -1\n"}, register=False
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert (
        str(err.value) == f"{folder / 'ok' / 'two.yaml'}:2: cores: expected an integer >= 1, got -1"
    )
    assert "ok/one" not in TAGS
    assert "ok/two" not in TAGS


def test_a_bad_tag_file_names_its_file_and_line(tag_folder: MakeTags) -> None:
    # it said tags[bad].devices[dev0].cores, with no file or line
    folder = tag_folder(
        {
            "good.yaml": "description: a good one\nkind: cuda\n",
            "bad.yaml": "kind: hetero\ndevices: [{kind: cuda, cores: -1}]\n",
        },
        register=False,
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert str(err.value) == (
        f"{folder / 'bad.yaml'}:2: devices[dev0].cores: expected an integer >= 1, got -1"
    )
    assert "good" not in TAGS  # all or nothing


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "t.toml",
            'kind = "cuda"\nname = "gpu"\n\ncores = -1\n',
            ":4: cores: expected an integer >= 1, got -1",
        ),
        (
            "t.json",
            '{"kind": "hetero",\n "devices": [\n  {"kind": "npu", "cores": 0}]}',
            ":3: devices[dev0].cores: expected an integer >= 1, got 0",
        ),
        (
            "t.yaml",
            "kind: vm\ndispatch_us: -1\n",
            ":2: dispatch_us: expected a non-negative number, got -1",
        ),
        (
            "t.yaml",
            "kind: cuda\nhost: {kind: arm-cpu, cores: 0}\n",
            ":2: host.cores: expected an integer >= 1, got 0",
        ),
    ],
)
def test_every_kind_of_tag_file_names_its_line(
    tag_folder: MakeTags, name: str, text: str, message: str
) -> None:
    folder = tag_folder({name: text}, register=False)
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert str(err.value) == f"{folder / name}{message}"


def test_a_tag_file_whose_problem_comes_from_another_tag_names_both_files(
    tag_folder: MakeTags,
) -> None:
    folder = tag_folder(
        {"base.yaml": "kind: npu\ncores: 0\n", "fast.yaml": "tag: base\nfreq_ghz: 2.0\n"},
        register=False,
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert [p.message for p in err.value.problems] == [
        f"{folder / 'base.yaml'}:2: cores: expected an integer >= 1, got 0",
        f"{folder / 'fast.yaml'}: cores: expected an integer >= 1, got 0",  # from base: no line
    ]


def test_a_tag_registered_from_python_names_its_tag() -> None:
    with pytest.raises(TargetError) as err:
        register_tag("py/slow", {"kind": "npu", "cores": 0})
    assert str(err.value) == "tags[py/slow].cores: expected an integer >= 1, got 0"


def test_a_tag_named_like_a_kind_is_rejected(tag_folder: MakeTags) -> None:
    folder = tag_folder({"cuda.yaml": "kind: npu\n"}, register=False)
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert str(err.value) == (
        f"{folder / 'cuda.yaml'}: tags[cuda]: expected a tag name that is not a kind name, got "
        "the target kind 'cuda'"
    )


def test_a_bad_name_does_not_hide_another_tags_bad_value(tag_folder: MakeTags) -> None:
    """One error lists every problem: the values of the well-named tags are checked too, and
    next to a file that does not read."""
    folder = tag_folder(
        {
            "cuda.yaml": "kind: npu\n",
            "broken.yaml": "kind: [\n",
            "lab/board.yaml": "kind: hetero\ndevices:\n  - {name: npu, kind: npu, cores: 0}\n",
        },
        register=False,
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    messages = [p.message for p in err.value.problems]
    assert (
        f"{folder / 'lab' / 'board.yaml'}:3: devices[npu].cores: expected an integer >= 1, got 0"
        in messages
    )
    assert len(messages) == 3, messages  # the name, the file, the value
    assert "lab/board" not in [name for name, _ in list_tags()]  # all or nothing


def test_a_tag_name_already_taken_is_rejected(tag_folder: MakeTags, small_tags: Path) -> None:
    folder = tag_folder({"test/cpu.yaml": "kind: npu\n"}, register=False)
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert err.value.problems[0].message == (
        f"{folder / 'test' / 'cpu.yaml'}: tags[test/cpu]: expected a new tag name, got one "
        f"defined in {small_tags / 'test' / 'cpu.yaml'}"
    )


def test_two_files_of_one_tag_name_name_the_first(tag_folder: MakeTags) -> None:
    folder = tag_folder({"two/gpu.json": '{"kind": "cuda"}', "two/gpu.yaml": "kind: cuda\n"},
                        register=False)  # fmt: skip
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert str(err.value) == (
        f"{folder / 'two' / 'gpu.yaml'}: tags[two/gpu]: expected a new tag name, got one defined "
        f"in {folder / 'two' / 'gpu.json'}"
    )


def test_a_bad_tag_file_is_reported_with_its_path(tag_folder: MakeTags) -> None:
    folder = tag_folder(
        {
            "x/broken.yaml": "kind: [npu\n",
            "x/list.yaml": "- npu\n",
            "x/said.yaml": "kind: npu\ndescription: 3\n",
        },
        register=False,
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert [p.message for p in err.value.problems] == [
        f"{folder / 'x' / 'broken.yaml'}:2: expected valid yaml, got expected ',' or ']', but "
        "got '<stream end>'",
        f"{folder / 'x' / 'list.yaml'}:1: expected a mapping (a tag file holds one target or "
        "config), got list",
        f"{folder / 'x' / 'said.yaml'}:2: description: expected a string, got 3",
    ]


def test_re_adding_a_folder_reads_it_again(tag_folder: MakeTags) -> None:
    folder = tag_folder({"re/dev.yaml": "kind: npu\ncores: 2\n"})
    (folder / "re" / "dev.yaml").write_text("kind: npu\ncores: 3\n")
    add_tag_dir(folder)
    assert Target("re/dev").devices[0].attrs["cores"] == 3


def test_a_failed_re_add_keeps_the_folders_old_tags(tag_folder: MakeTags) -> None:
    folder = tag_folder({"re/dev.yaml": "kind: npu\ncores: 2\n"})
    (folder / "re" / "dev.yaml").write_text("kind: npu\ncores: 0\n")
    with pytest.raises(TargetError):
        add_tag_dir(folder)
    assert "re/dev" in TAGS


def test_register_tag_from_python_checks_first() -> None:
    with pytest.raises(
        TargetError,
        match=r"^tags\[py/bad\]\.devices\[dev0\]: unknown kind or "
        r"tag 'cdua' \(did you mean 'cuda'\?\)$",
    ):
        register_tag("py/bad", {"kind": "hetero", "devices": ["cdua"]})
    assert "py/bad" not in TAGS
    register_tag("py/gpu", {"kind": "cuda", "launch_us": 3.0}, "a GPU")
    try:
        assert Target("py/gpu").devices[0].tag == "py/gpu"
    finally:
        unregister_tag("py/gpu")
    assert "py/gpu" not in TAGS


def test_an_executor_tag_is_valid_on_its_own(tag_folder: MakeTags) -> None:
    tag_folder({"exec/slow.yaml": "kind: graph\nnode_us: 3.0\n"})
    t = Target({"kind": "hetero", "executor": "exec/slow", "devices": ["npu"]})
    assert (t.executor.tag, t.executor.attrs["node_us"]) == ("exec/slow", 3.0)  # type: ignore[union-attr]


def test_the_shipped_folder_is_found_in_the_checkout() -> None:
    folder = shipped_tag_dir()
    assert folder is not None
    assert folder == Path(__file__).resolve().parents[2] / "targets"


def test_a_target_named_again_is_the_same_tree_until_the_tags_change() -> None:
    first = Target("x86-h100")
    assert Target("x86-h100") is first  # kept: resolving a tag was half a warm run
    register_tag("test/kept-gpu", {"kind": "cuda", "launch_us": 3.0})
    try:
        before = Target("test/kept-gpu")
        assert Target("test/kept-gpu") is before
        unregister_tag("test/kept-gpu")
        register_tag("test/kept-gpu", {"kind": "cuda", "launch_us": 5.0})
        after = Target("test/kept-gpu")  # the registry changed: resolved anew
        assert after.devices[0].attrs["launch_us"] == 5.0
        assert before.devices[0].attrs["launch_us"] == 3.0
        assert Target("x86-h100") == first
    finally:
        unregister_tag("test/kept-gpu")
    with pytest.raises(TargetError, match="test/kept-gpu"):
        Target("test/kept-gpu")  # gone with its tag, not kept


def test_a_folder_too_big_to_be_a_tag_folder_is_refused_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --tags / walked the whole disk and parsed every YAML file on it, for minutes
    monkeypatch.setattr("hetsim.target.tags.MAX_TAG_FOLDER_ENTRIES", 5)
    for i in range(6):
        (tmp_path / f"t{i}.txt").write_text("")
    with pytest.raises(TargetError) as err:
        read_tag_dir(tmp_path)
    assert str(err.value) == (
        f"{tmp_path}: expected a folder of tag files, got more than 5 files and folders under it"
    )
    (tmp_path / "t5.txt").unlink()
    assert read_tag_dir(tmp_path) == []  # five: at the limit
