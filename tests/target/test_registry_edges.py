"""The tag registry stays as it was on a refused change, and a tag removed or edited is read
as what it now is: re-adding a folder, unregistering, a caller's data changed later, an edited
file, a kind named as a tag, a byte-order mark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hetsim.errors import TargetError
from hetsim.target import (
    KINDS,
    Kind,
    Target,
    add_tag_dir,
    register_kind,
    register_tag,
    remove_tag_dir,
    unregister_tag,
)
from hetsim.target.tags import TAGS


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Path]:
    """A registered folder with lab/gpu (launch_us 3.0) and lab/npu."""
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "gpu.yaml").write_text("kind: cuda\nlaunch_us: 3.0\n")
    (tmp_path / "lab" / "npu.yaml").write_text("kind: npu\ncores: 2\n")
    add_tag_dir(tmp_path)
    yield tmp_path
    remove_tag_dir(tmp_path)


def test_a_refused_re_add_keeps_the_tags_the_folder_had(lab: Path) -> None:
    # the "restore" read the edited files again: lab/npu (deleted) was gone, and lab/gpu took
    # the refused launch_us -5.0 unchecked
    (lab / "lab" / "gpu.yaml").write_text("kind: cuda\nlaunch_us: -5.0\n")
    (lab / "lab" / "npu.yaml").unlink()
    with pytest.raises(TargetError, match=r"gpu\.yaml:2: launch_us: expected a non-negative "):
        add_tag_dir(lab)
    assert Target("lab/gpu").devices[0].attrs["launch_us"] == 3.0
    assert "lab/npu" in TAGS


def test_an_unregistered_folder_tag_is_gone_from_its_folder(lab: Path) -> None:
    # the folder still named it: its file by path raised KeyError, and removing the folder
    # later removed a Python tag that had taken the name
    unregister_tag("LAB/GPU")  # names match ignoring case
    assert "lab/gpu" not in TAGS
    assert Target(str(lab / "lab" / "gpu.yaml")).devices[0].attrs["launch_us"] == 3.0
    register_tag("lab/gpu", {"kind": "npu"})
    try:
        assert remove_tag_dir(lab) == ("lab/npu",)
        assert Target("lab/gpu").devices[0].kind == "npu"
    finally:
        unregister_tag("lab/gpu")
        add_tag_dir(lab)  # for the fixture to remove


def test_a_tag_keeps_its_data_when_the_caller_changes_theirs() -> None:
    # a shallow copy: the caller's nested link, changed later, changed the checked tag
    data = {"kind": "cuda", "link": {"bandwidth_gbps": 8.0}}
    register_tag("lab/alias", data)
    try:
        data["link"]["bandwidth_gbps"] = -1.0
        assert Target({"tag": "LAB/ALIAS"}).devices[0].attrs["link"]["bandwidth_gbps"] == 8.0
    finally:
        unregister_tag("lab/alias")


def test_an_edited_tag_file_with_true_for_1_is_read_as_edited(lab: Path) -> None:
    # "edited since it was read" compared by ==, where cores true equals the registered
    # cores 1: the file was taken for the tag, and the bad value passed
    (lab / "lab" / "one.yaml").write_text("kind: npu\ncores: 1\n")
    add_tag_dir(lab)
    (lab / "lab" / "one.yaml").write_text("kind: npu\ncores: true\n")
    expected = r"one\.yaml:2: cores: expected an integer >= 1, got True"
    with pytest.raises(TargetError, match=expected):
        Target(str(lab / "lab" / "one.yaml"))


def test_a_kind_named_as_a_tag_is_refused() -> None:
    # load_kinds refused it, register_kind did not: the tag's cores 8 vanished behind the kind
    register_tag("dspx", {"kind": "npu", "cores": 8})
    try:
        kind = Kind("dspx", "target", "a vector DSP", KINDS["npu"].attrs, keys=("accel",))
        with pytest.raises(TargetError) as err:
            register_kind(kind)
        assert str(err.value) == (
            "kinds[dspx]: expected a kind name that is not a tag name, got a tag"
        )
        assert Target("dspx").devices[0].attrs["cores"] == 8
    finally:
        unregister_tag("dspx")


@pytest.mark.parametrize(
    ("suffix", "text"),
    [(".yaml", "kind: cuda\n"), (".json", '{"kind": "cuda"}\n'), (".toml", 'kind = "cuda"\n')],
)
def test_a_file_with_a_byte_order_mark_reads(tmp_path: Path, suffix: str, text: str) -> None:
    # YAML skipped the BOM; JSON refused it ("Unexpected UTF-8 BOM"), TOML misread line 1
    path = tmp_path / f"gpu{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert Target(str(path)).devices[0].kind == "cuda"


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".yaml", "kind: cuda\ncores: -1\n"),
        (".json", '{"kind": "cuda",\n "cores": -1}\n'),
        (".toml", 'kind = "cuda"\ncores = -1\n'),
    ],
)
def test_a_problem_in_a_file_with_a_byte_order_mark_has_its_line(
    tmp_path: Path, suffix: str, text: str
) -> None:
    # the lines were found in the text read again with the BOM, which TOML refused: a TOML
    # file's problems named the file alone (found by a target audit)
    path = tmp_path / f"gpu{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    with pytest.raises(TargetError) as caught:
        Target(str(path))
    assert [p.message for p in caught.value.problems] == [
        f"{path}:2: cores: expected an integer >= 1, got -1"
    ]


def test_the_shipped_folder_comes_first_once_read_again(lab: Path) -> None:
    # read again, it went last: calibrate took folders()[0] for the shipped folder
    shipped = TAGS.folders()[0]
    add_tag_dir(shipped)
    assert TAGS.folders() == (shipped, lab.resolve())


@pytest.fixture
def box(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A second registered folder whose box/soc builds on lab/gpu (a device of it)."""
    folder = tmp_path_factory.mktemp("box")
    (folder / "box").mkdir()
    (folder / "box" / "soc.yaml").write_text(
        "kind: hetero\nhost: x86/xeon-8480c\ndevices:\n  - tag: lab/gpu\n    name: gpu0\n"
    )
    add_tag_dir(folder)
    yield folder
    remove_tag_dir(folder)


def test_a_re_add_that_breaks_a_tag_built_on_the_folder_is_refused(lab: Path, box: Path) -> None:
    # lab read again without lab/gpu was taken: box/soc, registered and checked, then failed
    # wherever it was used
    (lab / "lab" / "gpu.yaml").rename(lab / "lab" / "gpu2.yaml")
    with pytest.raises(TargetError) as err:
        add_tag_dir(lab)
    assert str(err.value).splitlines() == [
        "expected the folder's tags read again to leave the tags built on them valid, got tag "
        f"box/soc ({box / 'box' / 'soc.yaml'}), which builds on lab/gpu",
        f"{box / 'box' / 'soc.yaml'}:4: devices[gpu0].tag: unknown tag 'lab/gpu' "
        "(did you mean 'lab/gpu2'?)",
    ]
    assert Target("box/soc").devices[0].attrs["launch_us"] == 3.0
    assert "lab/gpu2" not in TAGS
    (lab / "lab" / "gpu2.yaml").write_text("kind: cuda\nlaunch_us: 5.0\n")
    (lab / "lab" / "gpu.yaml").write_text("kind: cuda\nlaunch_us: 4.0\n")
    assert add_tag_dir(lab) == ("lab/gpu", "lab/gpu2", "lab/npu")  # a change that fits
    assert Target("box/soc").devices[0].attrs["launch_us"] == 4.0


def test_forgetting_a_tag_another_builds_on_is_refused(lab: Path, box: Path) -> None:
    message = (
        "expected no registered tag to build on the tags it forgets, got tag box/soc "
        f"({box / 'box' / 'soc.yaml'}), which builds on lab/gpu\n"
        f"{box / 'box' / 'soc.yaml'}:4: devices[gpu0].tag: unknown tag 'lab/gpu'"
    )
    forgets = [
        (lambda: remove_tag_dir(lab), ""),
        (lambda: unregister_tag("Lab/GPU"), " (did you mean 'lab/npu'?)"),  # lab/npu stays
    ]
    for forget, hint in forgets:
        with pytest.raises(TargetError) as err:
            forget()
        assert str(err.value) == message + hint
        assert Target("box/soc").devices[0].attrs["launch_us"] == 3.0
    assert remove_tag_dir(box) == ("box/soc",)  # the user first: then both go
    add_tag_dir(box)  # for the fixture to remove


def test_a_tag_named_as_a_target_file_is_refused() -> None:
    # registered, it was listed but unusable by name: Target("board.yaml") reads a file
    with pytest.raises(TargetError) as err:
        register_tag("board.YAML", {"kind": "cuda"})
    assert str(err.value) == (
        "tags[board.YAML]: expected a tag name without a target file suffix ['.json', '.toml', "
        "'.yaml', '.yml'], got 'board.YAML'"
    )
    assert "board.YAML" not in TAGS
