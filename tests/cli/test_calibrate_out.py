"""Where ``hetsim calibrate`` writes: a tag file its folder can register (``--out``, else
``local.yaml`` in the user's tag folder), and samples (``--json``) outside every tag folder. Each
bad place is refused before any measuring: it was found by the next command, after the whole
calibration, as a tag folder that breaks every command or a tag that cannot be registered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetsim.calibrate import Calibration
from hetsim.cli import build_parser, main
from hetsim.cli import calibrate as calibrate_cli
from hetsim.errors import TargetError
from hetsim.target import TAGS, Target, add_tag_dir, remove_tag_dir
from hetsim.target.tags import TAG_PATTERN
from tests.calibrate.synthetic import synthetic

CALIBRATE = ["calibrate", "--quick", "--threads", "1"]


def _synthetic(plan: str, *, threads: int | None = None, advance: object = None) -> Calibration:
    """`calibrate` without measuring: every fitted value 1."""
    return synthetic(plan)


def _never(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("measured before the output paths were checked")


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user tag folder, chosen by HETSIM_TAG_DIR."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HETSIM_TAG_DIR", str(folder))
    return folder


def _refused(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    """The error `main` prints for `argv`, which must fail before calibrating."""
    monkeypatch.setattr(calibrate_cli, "calibrate", _never)
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


@pytest.mark.parametrize("below", ["sub", "sub/deeper"])
def test_json_below_the_user_tag_folder_is_refused(
    user_folder: Path,
    below: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # accepted: every later command then failed "holds bad tags: .../sub/cal.json: expected a
    # 'kind' or a 'tag', got neither" (a tag folder is read at any depth)
    (user_folder / below).mkdir(parents=True)
    samples = user_folder / below / "cal.json"
    err = _refused([*CALIBRATE, "--json", str(samples)], monkeypatch, capsys)
    assert (
        err
        == f"error: --json: expected a file outside the tag folder {user_folder}, got {samples}\n"
    )
    assert list(user_folder.rglob("*.*")) == []


def test_json_below_the_folder_of_out_is_refused(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "mine" / "sub").mkdir(parents=True)
    samples = tmp_path / "mine" / "sub" / "cal.json"
    argv = [*CALIBRATE, "--out", str(tmp_path / "mine" / "laptop.yaml"), "--json", str(samples)]
    err = _refused(argv, monkeypatch, capsys)
    folder = tmp_path / "mine"
    assert err == f"error: --json: expected a file outside the tag folder {folder}, got {samples}\n"


def test_json_in_the_user_tag_folder_is_refused_with_out_elsewhere(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # every command reads the user's folder, wherever --out puts the tag
    samples = user_folder / "cal.json"
    (tmp_path / "mine").mkdir()
    argv = [*CALIBRATE, "--out", str(tmp_path / "mine" / "laptop.yaml"), "--json", str(samples)]
    err = _refused(argv, monkeypatch, capsys)
    assert err == (
        f"error: --json: expected a file outside the tag folder {user_folder}, got {samples}\n"
    )


@pytest.mark.parametrize("name", ["cal.png", "cal.yaml", "cal.json.txt"])
def test_json_named_for_another_format_is_a_usage_error(
    user_folder: Path,
    tmp_path: Path,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # accepted: JSON written under cal.png, where run --trace t.png is refused
    monkeypatch.setattr(calibrate_cli, "calibrate", _never)
    samples = str(tmp_path / name)
    with pytest.raises(SystemExit) as exit_info:
        main([*CALIBRATE, "--json", samples])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "hetsim calibrate: error: argument --json: expected a .json path (or none), got "
        f"{samples!r}"
    )


@pytest.mark.parametrize("name", ["cal.json", "cal.JSON", "cal"])
def test_json_named_json_or_without_a_suffix_is_taken(tmp_path: Path, name: str) -> None:
    args = build_parser().parse_args(["calibrate", "--json", str(tmp_path / name)])
    assert args.json == tmp_path / name


NAMED_FOR_A_TAG = "expected a file named for a tag"
YAML = "expected a .yaml or .yml file (a tag in YAML)"
SUFFIXED = "target file suffix ['.json', '.toml', '.yaml', '.yml']"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("vm.yaml", f"{NAMED_FOR_A_TAG}, not a kind, got the executor kind 'vm'"),
        ("VM.yaml", f"{NAMED_FOR_A_TAG}, not a kind, got the executor kind 'vm'"),
        ("cuda.yml", f"{NAMED_FOR_A_TAG}, not a kind, got the target kind 'cuda'"),
        ("Cpp.YAML", f"{NAMED_FOR_A_TAG}, not a kind, got the runtime kind 'cpp'"),
        ("Bad Name.yaml", f"{NAMED_FOR_A_TAG} (matching {TAG_PATTERN!r}), got 'Bad Name'"),
        ("-x.yaml", f"{NAMED_FOR_A_TAG} (matching {TAG_PATTERN!r}), got '-x'"),
        ("o.txt", f"{YAML}, got 'o.txt'"),
        ("o", f"{YAML}, got 'o'"),
        ("o.json", f"{YAML}, got 'o.json'"),
        ("o.toml", f"{YAML}, got 'o.toml'"),
        ("mine.json.yaml", f"{NAMED_FOR_A_TAG} without a {SUFFIXED}, got 'mine.json'"),
        ("mine.YML.yml", f"{NAMED_FOR_A_TAG} without a {SUFFIXED}, got 'mine.YML'"),
    ],
)
def test_out_that_can_never_be_a_tag_is_refused_before_calibrating(
    user_folder: Path,
    tmp_path: Path,
    name: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # written after the whole calibration, "(tag 'vm' in DIR)"; then --tags DIR failed
    # "tags[vm]: expected a tag name that is not a kind name", or skipped o.txt, or read
    # the YAML in o.json as JSON
    out = tmp_path / name
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == f"error: --out {out}: {message}\n"
    assert not out.exists()


def test_out_named_with_a_target_file_suffix_is_what_its_folder_refuses(
    user_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # mine.json.yaml was written as the tag 'mine.json'; every command then failed on the
    # user's folder, which refuses that name: the same check, made before measuring
    out = user_folder / "mine.json.yaml"
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (f"error: --out {out}: {NAMED_FOR_A_TAG} without a {SUFFIXED}, got 'mine.json'\n")
    out.write_text("kind: x86-cpu\n")
    with pytest.raises(TargetError, match=re.escape(f"expected a tag name without a {SUFFIXED}")):
        add_tag_dir(user_folder)


def test_out_named_for_a_shipped_tag_is_refused(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --tags DIR then failed "expected a new tag name, got one defined in .../x86-h100.yaml"
    out = tmp_path / "X86-H100.yaml"
    source = TAGS.get("x86-h100").source
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (
        f"error: --out {out}: expected a file named for a new tag, got the tag 'x86-h100' "
        f"of {source}\n"
    )


def test_local_tag_beside_another_local_file_is_refused(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # local.yaml was added beside it: every command then failed "tags[local]: expected a new
    # tag name, got one defined in .../local.json"
    (user_folder / "local.json").write_text('{"kind": "x86-cpu"}\n')
    err = _refused(CALIBRATE, monkeypatch, capsys)
    assert err == (
        f"error: HETSIM_TAG_DIR: expected no other file of the tag 'local' in {user_folder}, "
        f"got {user_folder}/local.json\n"
    )
    assert not (user_folder / "local.yaml").exists()


def test_twin_in_the_config_home_folder_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HETSIM_TAG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "hetsim" / "targets"
    folder.mkdir(parents=True)
    (folder / "LOCAL.toml").write_text('kind = "x86-cpu"\n')
    err = _refused(CALIBRATE, monkeypatch, capsys)
    assert err == (
        "error: $XDG_CONFIG_HOME/hetsim/targets: expected no other file of the tag 'local' in "
        f"{folder}, got {folder}/LOCAL.toml\n"
    )


def test_out_beside_a_file_of_its_tag_is_refused(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "Laptop.yml").write_text("kind: x86-cpu\n")
    out = tmp_path / "laptop.yaml"
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (
        f"error: --out {out}: expected no other file of the tag 'laptop' in {tmp_path}, "
        f"got {tmp_path}/Laptop.yml\n"
    )


def test_out_beside_files_of_other_tags_is_written(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "laptop.txt").write_text("notes\n")  # not read as a tag
    (folder / "laptop-old.yaml").write_text("kind: x86-cpu\n")
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    out = folder / "laptop.yml"
    samples = tmp_path / "laptop.json"  # beside the tag folder, not in it
    assert main([*CALIBRATE, "--out", str(out), "--json", str(samples)]) == 0
    assert capsys.readouterr().err.endswith(f"wrote {out} (tag 'laptop' in {folder})\n")
    try:
        assert add_tag_dir(folder) == ("laptop-old", "laptop")
        assert Target("laptop").host.attrs["model"] == "Synthetic CPU"
    finally:
        remove_tag_dir(folder)
    assert samples.is_file()


def test_local_tag_is_rewritten_in_place(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (user_folder / "local.yaml").write_text("kind: x86-cpu\n")
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    assert main(CALIBRATE) == 0
    try:
        assert calibrate_cli.register_user_tags() == ("local",)
        assert Target("local").host.attrs["model"] == "Synthetic CPU"
    finally:
        remove_tag_dir(user_folder)


def test_out_below_the_user_folder_is_named_by_its_path_there(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the folder registers DIR/nvidia/h100.yaml as the tag nvidia/h100: it was written, named
    # 'h100', and every command then failed "expected a new tag name" for the shipped one
    (user_folder / "nvidia").mkdir()
    out = user_folder / "nvidia" / "h100.yaml"
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (
        f"error: --out {out}: expected a file named for a new tag, got the tag 'nvidia/h100' "
        f"of {TAGS.get('nvidia/h100').source}\n"
    )
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    (user_folder / "sub").mkdir()
    mine = user_folder / "sub" / "local.yaml"
    assert main([*CALIBRATE, "--out", str(mine)]) == 0
    assert capsys.readouterr().err.endswith(f"wrote {mine} (tag 'sub/local' in {user_folder})\n")


def test_a_shipped_tag_file_is_not_rewritten(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # its own file passed as the file "of" the tag: the H100 platform became this CPU
    out = Path(TAGS.get("x86-h100").source)
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (
        f"error: --out {out}: expected a file named for a new tag, got the tag 'x86-h100' "
        f"of {out}\n"
    )


def test_out_named_for_a_tag_of_the_user_folder_is_refused(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # every command reads the user's folder: --tags with the new file's folder then failed
    (user_folder / "local.yaml").write_text("kind: x86-cpu\n")
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "elsewhere" / "local.yaml"
    err = _refused([*CALIBRATE, "--out", str(out)], monkeypatch, capsys)
    assert err == (
        f"error: --out {out}: expected a file named for a new tag, got the tag 'local' of "
        f"{user_folder / 'local.yaml'}\n"
    )


def test_a_json_that_cannot_be_written_leaves_the_tag_unwritten(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the tag was written first, and the command failed on the JSON without saying so
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full, a file no write fits in")
    monkeypatch.setattr(calibrate_cli, "calibrate", _synthetic)
    out = tmp_path / "laptop.yaml"
    assert main([*CALIBRATE, "--out", str(out), "--json", "/dev/full"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: --json /dev/full: expected a file it can write, got No space left on device"
    )
    assert not out.exists()


def _proc_takes_no_file() -> None:
    """Skip unless /proc takes no new file (as on Linux, where root's `os.access` says yes)."""
    if not Path("/proc").is_dir() or calibrate_cli._write_problem(Path("/proc/x"), "") is None:
        pytest.skip("needs /proc, a folder that takes no new file")


def test_out_in_a_folder_that_takes_no_file_is_refused_before_calibrating(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # found when writing, after the whole calibration: "got No such file or directory"
    _proc_takes_no_file()
    err = _refused([*CALIBRATE, "--out", "/proc/local.yaml"], monkeypatch, capsys)
    assert err == (
        "error: --out /proc/local.yaml: expected a file it can write, got no file can be made "
        "in /proc (No such file or directory)\n"
    )


def test_json_in_a_folder_that_takes_no_file_is_refused_before_calibrating(
    user_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _proc_takes_no_file()
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "laptop.yaml"
    err = _refused([*CALIBRATE, "--out", str(out), "--json", "/proc/cal.json"], monkeypatch, capsys)
    assert err == (
        "error: --json /proc/cal.json: expected a file it can write, got no file can be made "
        "in /proc (No such file or directory)\n"
    )
    assert list((tmp_path / "out").iterdir()) == []  # the check leaves nothing behind


def test_a_user_folder_under_a_folder_that_takes_no_file_is_refused_before_calibrating(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the folder is made when writing: its nearest existing parent must take it
    _proc_takes_no_file()
    monkeypatch.setenv("HETSIM_TAG_DIR", "/proc/hetsim-tags")
    err = _refused(CALIBRATE, monkeypatch, capsys)
    assert err == (
        "error: HETSIM_TAG_DIR /proc/hetsim-tags/local.yaml: expected a file it can write, got "
        "no file can be made in /proc (No such file or directory)\n"
    )


def test_checking_out_leaves_no_file_when_the_calibration_is_interrupted(
    user_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(calibrate_cli, "calibrate", interrupted)
    for folder in ("out", "samples"):
        (tmp_path / folder).mkdir()
    args = [*CALIBRATE, "--out", str(tmp_path / "out" / "laptop.yaml")]
    with pytest.raises(KeyboardInterrupt):
        main([*args, "--json", str(tmp_path / "samples" / "cal.json")])
    assert [list((tmp_path / f).iterdir()) for f in ("out", "samples")] == [[], []]


def test_a_folder_where_the_local_tag_goes_is_refused_before_calibrating(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # found when writing, after the whole calibration: "Is a directory"
    (user_folder / "local.yaml").mkdir()
    err = _refused(CALIBRATE, monkeypatch, capsys)
    assert err == (
        f"error: HETSIM_TAG_DIR {user_folder}/local.yaml: expected a file it can write, got the "
        f"folder '{user_folder}/local.yaml'\n"
    )
