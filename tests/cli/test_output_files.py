"""Every option that names a file to write refuses, when the command line is read, a path that
is a directory or whose directory does not exist."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from hetsim.cli import build_parser
from hetsim.cli.files import is_replaceable, writing
from hetsim.errors import HetsimError

# (command line before the option, the option): every option typed `output_file`
WRITERS = [
    (["run", "mlp", "--target", "x86-h100"], "--save-outputs"),
    (["run", "mlp", "--target", "x86-h100"], "--trace"),
    (["run", "mlp", "--target", "x86-h100"], "--gantt"),
    (["platform", "show", "x86-h100"], "--png"),
    (["compare", "mlp", "--target", "x86-h100"], "--plot"),
    (["sweep", "sweep.yaml"], "--out"),
    (["sweep", "sweep.yaml"], "--plot"),
    (["bench", "dispatch"], "--plot"),
    (["calibrate"], "--out"),
    (["calibrate"], "--json"),
]


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "option"), WRITERS, ids=[" ".join(w[0][:2]) + w[1] for w in WRITERS]
)
def test_a_directory_is_refused(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = _usage_error([*argv, option, str(tmp_path)], capsys)
    assert error.endswith(
        f"error: argument {option}: expected a file to write, got the directory '{tmp_path}'"
    )


@pytest.mark.parametrize(
    ("argv", "option"), WRITERS, ids=[" ".join(w[0][:2]) + w[1] for w in WRITERS]
)
def test_a_file_in_a_missing_directory_is_refused(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "missing" / "out.file"
    error = _usage_error([*argv, option, str(path)], capsys)
    assert error.endswith(
        f"error: argument {option}: expected a file in an existing directory, got '{path}' "
        f"(no directory '{path.parent}')"
    )


@pytest.mark.parametrize(
    ("argv", "option"), WRITERS, ids=[" ".join(w[0][:2]) + w[1] for w in WRITERS]
)
def test_an_empty_path_is_refused_as_one(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "got the directory ''": Path('') is the current directory
    error = _usage_error([*argv, option, ""], capsys)
    assert error.endswith(f"error: argument {option}: expected a path of a file to write, got ''")


def test_a_file_in_an_existing_directory_is_taken(tmp_path: Path) -> None:
    args = build_parser().parse_args(["run", "mlp", "--target", "x86-h100", "--trace",
                                      str(tmp_path / "t.json")])  # fmt: skip
    assert args.trace == tmp_path / "t.json"


PNG_WRITERS = [
    (["run", "mlp", "--target", "x86-h100"], "--gantt"),
    (["platform", "show", "x86-h100"], "--png"),
    (["compare", "mlp", "--target", "x86-h100"], "--plot"),
    (["sweep", "sweep.yaml"], "--plot"),
    (["bench", "dispatch"], "--plot"),
]
"""The options typed `png_file`: the chart they write is a PNG."""


@pytest.mark.parametrize(
    ("argv", "option"), PNG_WRITERS, ids=[" ".join(w[0][:2]) + w[1] for w in PNG_WRITERS]
)
def test_a_chart_path_must_end_in_png(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chart.jpg"
    error = _usage_error([*argv, option, str(path)], capsys)
    assert error.endswith(f"error: argument {option}: expected a .png path (or none), got '{path}'")


ONE_FORMAT_WRITERS = [
    (["run", "mlp", "--target", "x86-h100"], "--trace", ".json"),
    (["run", "mlp", "--target", "x86-h100"], "--save-outputs", ".npz"),
    (["sweep", "sweep.yaml"], "--out", ".jsonl"),  # JSON lines had gone into results.png
]
"""The options typed `suffixed_file`: the file they write has one format."""


@pytest.mark.parametrize(
    ("argv", "option", "suffix"), ONE_FORMAT_WRITERS, ids=[w[1] for w in ONE_FORMAT_WRITERS]
)
def test_a_file_of_one_format_must_end_in_its_suffix(
    argv: list[str], option: str, suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --trace t.png wrote the Chrome trace's JSON into t.png
    path = tmp_path / "out.png"
    error = _usage_error([*argv, option, str(path)], capsys)
    assert error.endswith(
        f"error: argument {option}: expected a {suffix} path (or none), got '{path}'"
    )


@pytest.mark.parametrize(
    ("argv", "option", "suffix"), ONE_FORMAT_WRITERS, ids=[w[1] for w in ONE_FORMAT_WRITERS]
)
@pytest.mark.parametrize("name", ["out{suffix}", "OUT{upper}", "out"])
def test_a_file_of_one_format_takes_its_suffix_in_any_case_or_none(
    argv: list[str], option: str, suffix: str, name: str, tmp_path: Path
) -> None:
    path = tmp_path / name.format(suffix=suffix, upper=suffix.upper())
    args = build_parser().parse_args([*argv, option, str(path)])
    assert getattr(args, option.lstrip("-").replace("-", "_")) == path


def test_a_file_name_too_long_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # is_dir() raised OSError (File name too long) while the command line was read: a traceback
    name = str(tmp_path / ("x" * 300 + ".json"))
    for before, option in WRITERS:
        assert _usage_error([*before, option, name], capsys).endswith(
            f"error: argument {option}: expected a file it can write, got {name!r} "
            "(File name too long)"
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "mlp", "--target", "x86-h100", "--inputs"],
        ["run", "mlp", "--target", "x86-h100", "--rules"],
        ["plan", "mlp", "--target", "x86-h100", "--rules"],
        ["compare", "mlp", "--target", "x86-h100", "--shapes"],
        ["bench", "dispatch", "--tags"],
        ["targets", "list", "--tags"],
        ["sweep"],
    ],
    ids=lambda argv: " ".join(argv[:1] + argv[-1:]),
)
def test_an_empty_path_to_read_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Path("") is "." (the current folder), which the error then named: "inputs .: ..."
    option = argv[-1] if argv[-1].startswith("--") else "FILE"
    assert _usage_error([*argv, ""], capsys).endswith(
        f"error: argument {option}: expected a path, got ''"
    )


def test_a_write_that_fails_leaves_the_file_there_before_and_no_partial_one(
    tmp_path: Path,
) -> None:
    # a full disk had left a half-written trace in place of the earlier good one
    path = tmp_path / "t.json"
    path.write_text("earlier")

    def fill_the_disk() -> None:
        with writing("--trace", path) as partial:
            partial.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(HetsimError, match=r"expected a file it can write, got No space"):
        fill_the_disk()
    assert path.read_text() == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    with writing("--trace", path) as partial:
        partial.write_text("whole")
    assert path.read_text() == "whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_a_link_is_written_through_not_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("earlier")
    link = tmp_path / "t.json"
    link.symlink_to(real)
    with writing("--trace", link) as path:
        path.write_text("new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_a_device_or_a_pipe_is_written_through(tmp_path: Path) -> None:
    # written whole and put in place, --trace /dev/null had left a regular file there
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert not is_replaceable(pipe)
    assert not is_replaceable(Path("/dev/null"))
    assert is_replaceable(tmp_path / "new.json")


def test_a_file_in_a_folder_that_takes_no_new_file_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its temporary file could not be made there, where the file itself can be written
    path = tmp_path / "t.json"
    path.write_text("earlier")
    assert is_replaceable(path)
    monkeypatch.setattr(os, "access", lambda where, mode: Path(where) != tmp_path)
    assert not is_replaceable(path)
    with writing("--trace", path) as written:
        assert written == path
        written.write_text("new")
    assert path.read_text() == "new"
