"""``hetsim calibrate`` and ``hetsim bench dispatch`` given bad input: each is refused with a
message naming the option or variable before any measuring, and a corrupt ``local`` tag, which
``calibrate`` rewrites, does not stop ``calibrate`` (every other command still names it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hetsim.calibrate import Calibration
from hetsim.cli import bench as bench_cli
from hetsim.cli import calibrate as calibrate_cli
from hetsim.cli import main
from hetsim.target import Target, remove_tag_dir
from tests.calibrate.synthetic import synthetic


def _synthetic(plan: str, *, threads: int | None = None, advance: object = None) -> Calibration:
    """`calibrate` without measuring: every fitted value 1."""
    return synthetic(plan)


def _never(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("measured or benchmarked before the input was checked")


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last line `main` prints for `argv`, a usage error (exit status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize("value", ["abc", "2.5", "0", "-2", ""])
def test_threads_not_a_positive_integer_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "abc", "2.5": argparse's "invalid int value", which did not say what --threads takes
    assert _usage_error(["calibrate", "--quick", f"--threads={value}"], capsys) == (
        "hetsim calibrate: error: argument --threads: expected an integer from 1 to this "
        f"machine's CPUs ({os.cpu_count() or 1}), got {value!r}"
    )


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "tags"
    path.write_text("not a folder\n")
    return path


@pytest.mark.parametrize(
    ("below", "got"),
    [
        ("", "the file '{file}'"),
        ("sub", "'{file}/sub' (under the file '{file}')"),
    ],
    ids=["the-folder", "a-folder-above"],
)
def test_tag_folder_that_is_a_file_is_refused_before_calibrating(
    a_file: Path,
    below: str,
    got: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # calibrated in full, then "--out <file>/local.yaml: ... got File exists" (no --out given)
    monkeypatch.setenv("HETSIM_TAG_DIR", str(a_file / below) if below else str(a_file))
    monkeypatch.setattr(calibrate_cli, "calibrate", _never)
    assert main(["calibrate", "--quick", "--threads", "1"]) == 1
    expected = "HETSIM_TAG_DIR: expected a folder of tag files, got " + got.format(file=a_file)
    assert capsys.readouterr().err == f"error: {expected}\n"


def test_config_home_that_is_a_file_is_refused_before_calibrating(
    a_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(a_file))
    monkeypatch.setattr(calibrate_cli, "calibrate", _never)
    assert main(["calibrate", "--quick", "--threads", "1"]) == 1
    assert capsys.readouterr().err == (
        "error: $XDG_CONFIG_HOME/hetsim/targets: expected a folder of tag files, got "
        f"'{a_file}/hetsim/targets' (under the file '{a_file}')\n"
    )


@pytest.mark.parametrize("argv", [["targets", "list"], ["run", "mlp", "--target", "local"]])
def test_other_commands_refuse_a_tag_folder_that_is_a_file(
    argv: list[str],
    a_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the folder was skipped without a word: --target local then read "unknown kind or tag"
    monkeypatch.setenv("HETSIM_TAG_DIR", str(a_file))
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"error: HETSIM_TAG_DIR: expected a folder of tag files, got the file '{a_file}'\n"
    )


def test_out_elsewhere_does_not_need_the_tag_folder(
    a_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HETSIM_TAG_DIR", str(a_file))
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    out = tmp_path / "mine.yaml"
    assert main(["calibrate", "--quick", "--threads", "1", "--out", str(out)]) == 0
    assert Target(str(out)).host.attrs["model"] == "Synthetic CPU"
    # the file's name is the tag's: it said "(tag 'local' in ...)"
    assert capsys.readouterr().err.endswith(f"wrote {out} (tag 'mine' in {tmp_path})\n")


# What an unquoted CPU name made of the tag file: "model: *star" is an undefined YAML alias.
CORRUPT = "kind: hetero\nhost: {kind: x86-cpu, model: *star}\n"


@pytest.fixture
def corrupt_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tags"
    folder.mkdir()
    (folder / "local.yaml").write_text(CORRUPT)
    monkeypatch.setenv("HETSIM_TAG_DIR", str(folder))
    return folder


def test_calibrate_rewrites_a_corrupt_local_tag(
    corrupt_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # main() registered the user's folder first: "holds bad tags", and calibrate never ran
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    assert main(["calibrate", "--quick", "--threads", "1"]) == 0
    try:
        assert calibrate_cli.register_user_tags() == ("local",)
        assert Target("local").host.attrs["model"] == "Synthetic CPU"
    finally:
        remove_tag_dir(corrupt_folder)


def test_other_commands_still_name_a_corrupt_local_tag(
    corrupt_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["targets", "list"]) == 1
    assert capsys.readouterr().err == (
        f"error: the user tag folder {corrupt_folder} (HETSIM_TAG_DIR, else "
        "$XDG_CONFIG_HOME/hetsim/targets) holds bad tags:\n"
        f"{corrupt_folder}/local.yaml:2: expected valid yaml, got found undefined alias 'star'\n"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1,a", "expected comma-separated positive integers, got 'a' in '1,a'"),
        ("0,10", "expected comma-separated positive integers, got '0' in '0,10'"),
        ("1,-5", "expected comma-separated positive integers, got '-5' in '1,-5'"),
        ("1,1e3", "expected comma-separated positive integers, got '1e3' in '1,1e3'"),
        ("\u00b2,3", "expected comma-separated positive integers, got '\u00b2' in '\u00b2,3'"),
        ("10,10", "expected two or more distinct op counts (1,10,100), got '10,10'"),
        ("", "expected two or more distinct op counts (1,10,100), got ''"),
    ],
)
def test_bad_op_counts_are_a_usage_error_naming_the_entry(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "argument --ops: --ops: expected two or more distinct positive integers ..., got '1,a'"
    argv = ["bench", "dispatch", "--target", "x86-h100", f"--ops={value}"]
    assert _usage_error(argv, capsys) == f"hetsim bench dispatch: error: argument --ops: {message}"


def test_unknown_targets_are_refused_before_benchmarking(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # x86-h100 was benchmarked first; then "unknown kind or tag 'x86-h10'", without --target
    monkeypatch.setattr(bench_cli, "bench_dispatch", _never)
    argv = ["bench", "dispatch", "--target", "x86-h100", "--target", "x86-h10", "--ops", "1,10"]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        "error: --target: unknown kind or tag 'x86-h10' (did you mean 'x86-h100'?)\n"
    )
