"""``hetsim targets show|validate``: names and files, as `Target` reads them.

A name that is a kind or tag is that kind or tag, whatever the current folder holds; a file is
read as what it holds or builds on, an executor or runtime as well as a target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hetsim.cli import main
from hetsim.target import remove_tag_dir

SHIPPED_VM = Path(__file__).resolve().parents[2] / "targets" / "tvm" / "relax-vm.yaml"
RELAX_VM = "kind: vm\ntag: tvm/relax-vm\ndispatch_us: 0.27\nis_static: false\n"
VM = "kind: vm\ndispatch_us: 0.27\nis_static: false\n"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The tag folder ``tags`` in the current folder, holding ``lab/vm``, built on the
    executor tag ``tvm/relax-vm``; forgotten after the test."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tags" / "lab").mkdir(parents=True)
    (tmp_path / "tags" / "lab" / "vm.yaml").write_text("tag: tvm/relax-vm\ndispatch_us: 1\n")
    yield Path("tags")
    remove_tag_dir(tmp_path / "tags")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["targets", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("form", [[], ["--tree"]])
def test_show_prints_a_shipped_executor_tag_file_as_its_tag(
    capsys: pytest.CaptureFixture[str], form: list[str]
) -> None:
    # it said: relax-vm.yaml:2: kind: expected a target kind, got executor kind 'vm'
    assert _run(capsys, "show", str(SHIPPED_VM), *form) == (0, RELAX_VM, "")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("kind: vm\ndispatch_us: 1\n", "kind: vm\ndispatch_us: 1.0\nis_static: false\n"),
        (
            "description: a slow C runtime\nkind: crt\ncall_us: 1\n",
            "kind: crt\nalloc_us: 0.2\nfree_us: 0.1\ncall_us: 1.0\n",
        ),
    ],
)
def test_show_prints_an_executor_or_runtime_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, shown: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    assert _run(capsys, "show", str(path)) == (0, shown, "")


def test_show_names_a_bad_executor_file_s_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "vm.yaml"
    bad.write_text("kind: vm\ndispatch_us: -1\n")
    assert _run(capsys, "show", str(bad)) == (
        1,
        "",
        f"error: {bad}:2: dispatch_us: expected a non-negative number, got -1\n",
    )


@pytest.mark.parametrize("tags", [[], ["--tags", "tags"]])
def test_validate_accepts_a_tag_file_built_on_an_executor_tag(
    capsys: pytest.CaptureFixture[str], lab: Path, tags: list[str]
) -> None:
    # it said: kind: expected a target kind, got executor kind 'vm'
    file = str(lab / "lab" / "vm.yaml")
    assert _run(capsys, "validate", file, *tags) == (0, f"{file}: ok\n", "")


@pytest.mark.parametrize(("tags", "tag"), [([], "tvm/relax-vm"), (["--tags", "tags"], "lab/vm")])
def test_show_prints_a_tag_file_built_on_an_executor_tag(
    capsys: pytest.CaptureFixture[str], lab: Path, tags: list[str], tag: str
) -> None:
    # a registered tag file keeps its tag name; read alone, it shows the tag it extends
    shown = f"kind: vm\ntag: {tag}\ndispatch_us: 1.0\nis_static: false\n"
    assert _run(capsys, "show", str(lab / "lab" / "vm.yaml"), *tags) == (0, shown, "")


def test_validate_names_the_line_of_a_file_built_on_an_executor_tag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "vm.yaml"
    bad.write_text("tag: tvm/relax-vm\ndispatch_us: -1\n")
    assert _run(capsys, "validate", str(bad)) == (
        1,
        f"{bad}:2: dispatch_us: expected a non-negative number, got -1\n",
        "",
    )


def test_a_kind_name_wins_over_a_folder_of_that_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it said: cuda: expected a target file, got a directory
    monkeypatch.chdir(tmp_path)
    Path("cuda").mkdir()
    assert _run(capsys, "validate", "cuda") == (0, "cuda: ok\n", "")


@pytest.mark.parametrize("make", [Path.mkdir, Path.touch])
def test_an_executor_kind_name_wins_over_a_path_of_that_name(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[Path], object],
) -> None:
    # it said: expected a target, got executor kind 'vm'
    monkeypatch.chdir(tmp_path)
    make(Path("vm"))
    assert _run(capsys, "show", "vm") == (0, VM, "")
    assert _run(capsys, "validate", "vm") == (0, "vm: ok\n", "")


def test_a_tag_name_wins_over_a_file_of_that_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it said: nvidia/h100: expected a file ending in .yaml, .yml, .json, .toml, got ''
    monkeypatch.chdir(tmp_path)
    Path("nvidia").mkdir()
    Path("nvidia/h100").touch()
    assert _run(capsys, "validate", "nvidia/h100") == (0, "nvidia/h100: ok\n", "")


def test_a_folder_that_is_no_name_is_still_said_to_be_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("boards").mkdir()
    assert _run(capsys, "validate", "boards") == (
        1,
        "boards: expected a target file, got a directory\n",
        "",
    )
    assert _run(capsys, "show", "boards") == (
        1,
        "",
        "error: boards: expected a target file, got a directory\n",
    )
