"""``hetsim targets list|show|validate|kinds``: output, exit status, errors without tracebacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hetsim.cli import main
from hetsim.target import Target, remove_tag_dir

TAGS = {
    "lab/cpu.yaml": "description: a lab CPU\nkind: arm-cpu\ncores: 2\n",
    "lab/soc.yaml": "description: a lab platform\nkind: hetero\nhost: lab/cpu\n"
    "devices: [{kind: npu, name: npu}]\n",
}


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Path]:
    """A folder of two tags, forgotten after the test."""
    folder = tmp_path / "tags"
    for name, text in TAGS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    yield folder
    remove_tag_dir(folder)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["targets", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_list_shows_tags_with_descriptions(capsys: pytest.CaptureFixture[str], lab: Path) -> None:
    status, out, _ = _run(capsys, "list", "--tags", str(lab))
    rows = {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[1] for line in out.splitlines()}
    assert status == 0
    assert rows["TAG"] == "DESCRIPTION"
    assert (rows["lab/cpu"], rows["lab/soc"]) == ("a lab CPU", "a lab platform")


def test_show_prints_the_canonical_tree_as_yaml_and_json(
    capsys: pytest.CaptureFixture[str], lab: Path
) -> None:
    status, out, _ = _run(capsys, "show", "lab/soc", "--tags", str(lab))
    assert status == 0
    assert Target(yaml.safe_load(out)) == Target("lab/soc")
    status, out, _ = _run(capsys, "show", "lab/soc", "--json", "--tags", str(lab))
    assert (status, json.loads(out)) == (0, Target("lab/soc").export())


def test_show_tree_draws_kinds_executors_and_parameters(
    capsys: pytest.CaptureFixture[str], lab: Path
) -> None:
    status, out, _ = _run(capsys, "show", "lab/soc", "--tree", "--tags", str(lab))
    assert status == 0
    # no link at the root level (it showed the kind's default, read by nothing), nor for the
    # npu, which computes in its host's memory
    assert out == (
        "hetero[lab/soc]\n"
        "├─ host: arm-cpu[lab/cpu]  2 x 1.5 GHz, 24 GFLOP/s, mem 12.8 GB/s\n"
        "├─ executor: vm  dispatch_us=0.27, is_static=False\n"
        "├─ runtime: cpp  alloc_us=0.5, free_us=0.2, call_us=0.1\n"
        "└─ npu: npu  1 x 1 GHz, 2048 GFLOP/s, mem 16 GB/s\n"
    )
    # a level whose host computes in its parent's memory has no link either
    status, out, _ = _run(capsys, "show", "nxp-imx93", "--tree")
    assert "└─ vdevice0: hetero\n" in out
    # a device with a memory of its own shows its link, which the run uses (it was not shown)
    status, out, _ = _run(capsys, "show", "cuda", "--tree")
    assert out.splitlines()[-1] == (
        "└─ dev0: cuda  132 x 1.98 GHz, 66908.2 GFLOP/s, mem 3350 GB/s, link 63 GB/s, 1 us"
    )


def test_show_reads_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('kind = "cuda"\nname = "gpu0"\n')
    status, out, _ = _run(capsys, "show", str(path), "--json")
    assert status == 0
    assert json.loads(out)["devices"][0]["name"] == "gpu0"


def test_show_an_unknown_name_prints_the_problem_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(capsys, "show", "cdua")
    assert (status, out) == (1, "")
    assert err == "error: TARGET: unknown kind or tag 'cdua' (did you mean 'cuda'?)\n"


@pytest.mark.parametrize("tree", [[], ["--tree"]])
def test_show_names_the_target_argument_only_for_a_problem_at_the_root(
    capsys: pytest.CaptureFixture[str], tree: list[str]
) -> None:
    assert _run(capsys, "show", *tree, "[1]") == (
        1, "", "error: TARGET: expected a target name or a mapping, got [1]\n"
    )  # fmt: skip
    assert _run(capsys, "show", *tree, '{"kind": "cdua"}') == (
        1, "", "error: kind: unknown kind 'cdua' (did you mean 'cuda'?)\n"
    )  # fmt: skip


def test_an_unknown_tag_with_no_close_name_says_where_own_tags_come_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "board.yaml").write_text("tag: x86-h100\n")
    monkeypatch.delenv("HETSIM_TAG_DIR", raising=False)
    assert main(["plan", "mlp", "--target", "lab/board"]) == 1
    assert capsys.readouterr().err == (
        "error: --target: unknown tag 'lab/board' (a tag folder of your own: HETSIM_TAG_DIR=DIR "
        "before any command, or the command's --tags DIR where it has one)\n"
    )
    monkeypatch.setenv("HETSIM_TAG_DIR", str(tmp_path))  # as the hint says: found
    try:
        assert main(["plan", "mlp", "--target", "lab/board"]) == 0
    finally:
        remove_tag_dir(tmp_path)
    assert "plan of mlp on lab/board" in capsys.readouterr().out


def test_validate_prints_every_problem_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("kind: npu\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: hetero\nhost: cuda\ndevices: []\n")
    status, out, _ = _run(capsys, "validate", str(good), str(bad))
    assert status == 1
    assert out.splitlines() == [
        f"{good}: ok",
        f"{bad}:3: devices: expected at least one device, got []",
        f"{bad}:2: host: kind 'cuda' cannot host (a host needs can_host)",
    ]


def test_validate_names_a_file_once_however_its_path_is_spelled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: hetero\nhost: cuda\ndevices: [npu]\n")
    status, out, _ = _run(capsys, "validate", f"{tmp_path}/./bad.yaml")
    assert (status, out) == (1, f"{bad}:2: host: kind 'cuda' cannot host (a host needs can_host)\n")


def test_validate_finds_an_op_list_entry_hetsim_does_not_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text("kind: hetero\ndevices:\n  - {kind: cuda, ops: [Matmul, Gemm, relu]}\n")
    status, out, _ = _run(capsys, "validate", str(typo))
    expected = "expected an op type hetsim runs, or '*', got"
    assert (status, out) == (
        1,
        f"{typo}:3: devices[dev0].ops[0]: {expected} 'Matmul' (did you mean 'MatMul'?)\n"
        f"{typo}:3: devices[dev0].ops[2]: {expected} 'relu' (did you mean 'Relu'?)\n",
    )


def test_validate_exits_0_when_all_are_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"kind": "cuda"}')
    assert _run(capsys, "validate", str(good)) == (0, f"{good}: ok\n", "")


def test_validate_accepts_every_shipped_tag_file_executor_tags_included(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = Path(__file__).resolve().parents[2] / "targets"
    files = sorted(str(p) for p in folder.rglob("*.yaml"))
    status, out, _ = _run(capsys, "validate", *files)
    assert status == 0, out
    assert out.count(": ok\n") == len(files)
    assert any(f.endswith("tvm/relax-vm.yaml") for f in files)


def test_validate_checks_an_executor_file_against_its_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "vm.yaml"
    bad.write_text("kind: vm\ndispatch_us: -1\n")
    status, out, _ = _run(capsys, "validate", str(bad))
    assert status == 1
    assert out == f"{bad}:2: dispatch_us: expected a non-negative number, got -1\n"


def test_validate_reports_a_missing_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "none.yaml"
    status, out, _ = _run(capsys, "validate", str(missing))
    assert (status, out) == (1, f"{missing}: expected a target file, got no such file\n")


def test_kinds_lists_every_kind(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "kinds")
    rows = [line.split()[:2] for line in out.splitlines()]
    assert status == 0
    assert rows == [
        ["KIND", "CATEGORY"],
        ["arm-cpu", "target"],
        ["riscv-cpu", "target"],
        ["x86-cpu", "target"],
        ["cuda", "target"],
        ["npu", "target"],
        ["hetero", "target"],
        ["vm", "executor"],
        ["graph", "executor"],
        ["cpp", "runtime"],
        ["crt", "runtime"],
    ]


def test_kinds_shows_one_schema_as_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "kinds", "graph")
    assert status == 0
    assert out.splitlines() == [
        "### `graph` (executor): a graph executor: a static node list, static shapes only",
        "",
        "",
        "| attribute | type | unit | default | valid values | doc |",
        "|---|---|---|---|---|---|",
        "| node_us | float | µs | 0.1 | a non-negative number | host time to run one node |",
        "| is_static | bool |  | True | true | needs static shapes (always true) |",
    ]


def test_kinds_markdown_of_one_kind_is_that_kind_s_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # it printed every kind, ignoring the one named
    assert _run(capsys, "kinds", "graph", "--markdown") == _run(capsys, "kinds", "graph")


def test_kinds_rejects_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "kinds", "vmm") == (
        1,
        "",
        "error: kinds: unknown kind 'vmm' (did you mean 'vm'?)\n",
    )


def test_a_bad_tag_folder_is_an_error_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "x.yaml").write_text("kind: npu\ncores: 0\n")
    status, out, err = _run(capsys, "list", "--tags", str(folder))
    assert (status, out) == (1, "")
    assert err == f"error: {folder / 'x.yaml'}:2: cores: expected an integer >= 1, got 0\n"


def test_a_bad_file_in_a_tag_folder_is_named_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # it said tags[bad].devices[dev0].cores, and which of the folder's files was bad was a guess
    folder = tmp_path / "tags"
    folder.mkdir()
    (folder / "good.yaml").write_text("description: a good one\nkind: cuda\n")
    (folder / "bad.yaml").write_text("kind: hetero\ndevices: [{kind: cuda, cores: -1}]\n")
    status, out, err = _run(capsys, "list", "--tags", str(folder))
    assert (status, out) == (1, "")  # all or nothing: no tag of the folder is listed
    assert err == (
        f"error: {folder / 'bad.yaml'}:2: devices[dev0].cores: expected an integer >= 1, got -1\n"
    )
    status, out, _ = _run(capsys, "validate", str(folder / "bad.yaml"))
    assert (status, out) == (
        1,
        f"{folder / 'bad.yaml'}:2: devices[dev0].cores: expected an integer >= 1, got -1\n",
    )


@pytest.mark.parametrize("spelling", ["{}", "{}/"])
def test_show_a_directory_says_it_is_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spelling: str
) -> None:
    # it said: unknown tag '<the directory>'
    folder = spelling.format(tmp_path)
    assert _run(capsys, "show", folder) == (
        1,
        "",
        f"error: {folder}: expected a target file, got a directory\n",
    )


def test_validate_a_directory_says_it_is_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = _run(capsys, "validate", str(tmp_path))
    assert (status, out) == (1, f"{tmp_path}: expected a target file, got a directory\n")


def test_validate_names_a_device_file_s_attribute_as_the_file_writes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # it said devices[dev0].cores, of a file without a 'devices' key
    yaml_file, toml_file = tmp_path / "gpu.yaml", tmp_path / "gpu.toml"
    yaml_file.write_text("kind: cuda\ncores: -1\n")
    toml_file.write_text('kind = "cuda"\n\ncores = -1\n')
    status, out, _ = _run(capsys, "validate", str(yaml_file), str(toml_file))
    assert (status, out.splitlines()) == (
        1,
        [
            f"{yaml_file}:2: cores: expected an integer >= 1, got -1",
            f"{toml_file}:3: cores: expected an integer >= 1, got -1",
        ],
    )


def test_validate_refuses_a_json_key_given_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # json kept the last one: this file was a valid GPU
    twice = tmp_path / "twice.json"
    twice.write_text('{"kind": "npu",\n "cores": 2,\n "kind": "cuda"}\n')
    assert _run(capsys, "validate", str(twice)) == (
        1,
        f"{twice}:3: expected valid json, got found the key 'kind' twice\n",
        "",
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("tvm/relax-vm", "kind: vm\ntag: tvm/relax-vm\ndispatch_us: 0.27\nis_static: false\n"),
        ("vm", "kind: vm\ndispatch_us: 0.27\nis_static: false\n"),
        ("crt", "kind: crt\nalloc_us: 0.2\nfree_us: 0.1\ncall_us: 0.05\n"),
    ],
)
def test_an_executor_or_runtime_tag_or_kind_is_shown_and_validated_by_name(
    name: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # targets list lists tvm/relax-vm, but show and validate by name said "expected a target
    # kind, got executor kind 'vm'" (validate of its file said ok)
    assert main(["targets", "show", name]) == 0
    assert capsys.readouterr().out == shown
    assert main(["targets", "validate", name]) == 0
    assert capsys.readouterr().out == f"{name}: ok\n"


def test_a_tag_built_on_an_executor_tag_is_shown_as_that_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # its own data has no kind (only "tag: tvm/relax-vm"): it was taken for a target
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "vm.yaml").write_text("tag: tvm/relax-vm\ndispatch_us: 1\n")
    try:
        assert main(["targets", "show", "lab/vm", "--tags", str(tmp_path)]) == 0
        assert capsys.readouterr().out == (
            "kind: vm\ntag: lab/vm\ndispatch_us: 1.0\nis_static: false\n"
        )
        assert main(["targets", "validate", "lab/vm"]) == 0
        assert capsys.readouterr().out == "lab/vm: ok\n"
    finally:
        remove_tag_dir(tmp_path)
