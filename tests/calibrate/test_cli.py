"""``hetsim calibrate``: where the tag goes, and that the user's folder is found."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from hetsim.cli import calibrate as calibrate_cli
from hetsim.errors import HetsimError
from hetsim.target import TAGS, Target, remove_tag_dir


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    calibrate_cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["calibrate", *argv])


def test_user_tag_dir_prefers_the_variable(tmp_path: Path) -> None:
    env = {"HETSIM_TAG_DIR": str(tmp_path), "XDG_CONFIG_HOME": "/elsewhere"}
    assert calibrate_cli.user_tag_dir(env) == tmp_path


def test_user_tag_dir_defaults_under_the_config_home() -> None:
    assert calibrate_cli.user_tag_dir({"XDG_CONFIG_HOME": "/cfg"}) == Path("/cfg/hetsim/targets")


def test_missing_user_folder_registers_nothing(tmp_path: Path) -> None:
    assert calibrate_cli.register_user_tags({"HETSIM_TAG_DIR": str(tmp_path / "none")}) == ()


def test_bad_user_tags_name_their_folder(tmp_path: Path) -> None:
    # every command registers the user's folder first: its error must say which folder it was
    (tmp_path / "soc").mkdir()
    (tmp_path / "soc" / "a.yaml").write_text("tag: soc/b\n")
    (tmp_path / "soc" / "b.yaml").write_text("tag: soc/a\n")
    with pytest.raises(HetsimError) as caught:
        calibrate_cli.register_user_tags({"HETSIM_TAG_DIR": str(tmp_path)})
    assert str(caught.value) == (
        f"the user tag folder {tmp_path} (HETSIM_TAG_DIR, else $XDG_CONFIG_HOME/hetsim/targets) "
        "holds bad tags:\ntags: cycle soc/a -> soc/b -> soc/a"
    )
    assert "soc/a" not in TAGS


def test_json_inside_the_tag_folder_is_refused(tmp_path: Path) -> None:
    samples = tmp_path / "c.json"
    args = _args("--quick", "--out", str(tmp_path / "local.yaml"), "--json", str(samples))
    expected = f"--json: expected a file outside the tag folder {tmp_path}, got {samples}"
    with pytest.raises(HetsimError, match=f"^{re.escape(expected)}$"):
        calibrate_cli.run(args)


# more than the machine's CPUs: 1000 on a 2-CPU machine fitted every efficiency to its floor
# and wrote "cores: 1000" into the tag; a 20-digit count overflowed inside threadpoolctl
@pytest.mark.parametrize("threads", ["0", "-2", str((os.cpu_count() or 1) + 1), "9" * 20])
def test_threads_outside_the_machine_are_refused(
    tmp_path: Path, threads: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):  # when the command line is read
        _args("--quick", "--out", str(tmp_path / "local.yaml"), "--threads", threads)
    cpus = os.cpu_count() or 1
    expected = (
        f"argument --threads: expected an integer from 1 to this machine's CPUs ({cpus}), "
        f"got '{threads}'"
    )
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {expected}")
    assert not (tmp_path / "local.yaml").exists()


def test_quick_calibration_writes_a_tag_the_user_folder_registers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tags"
    monkeypatch.setenv("HETSIM_TAG_DIR", str(folder))
    json_path = str(tmp_path / "c.json")
    assert calibrate_cli.run(_args("--quick", "--threads", "1", "--json", json_path)) == 0
    assert (folder / "local.yaml").is_file()
    try:
        assert calibrate_cli.register_user_tags() == ("local",)
        assert Target("local").host.attrs["cores"] == 1
        assert "dispatch_us" in capsys.readouterr().out
    finally:
        remove_tag_dir(folder)
    assert "local" not in TAGS
