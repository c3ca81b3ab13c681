"""``hetsim platform show``: the tree, JSON and PNG, and a user error on an unknown target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsim.cli import main
from hetsim.errors import TargetError
from hetsim.platform import build_platform, render_tree
from hetsim.target import Target


def test_show_prints_the_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform", "show", "arm-riscv-soc"]) == 0
    out = capsys.readouterr().out
    assert out == render_tree(build_platform(Target("arm-riscv-soc"))) + "\n"
    assert "vdevice0/host  [coprocessor] riscv-cpu" in out


def test_show_json_describes_the_platform(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform", "show", "x86-h100", "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described == build_platform(Target("x86-h100")).to_dict()
    assert list(described["links"]) == ["host.mem--gpu0.mem"]


def test_show_png_draws_the_platform(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "soc.png"
    assert main(["platform", "show", "arm-riscv-soc", "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().err == f"wrote {png}\n"


def test_show_png_writes_the_path_given_even_without_a_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "soc"  # matplotlib would add ".png" unless told the format
    assert main(["platform", "show", "arm-riscv-soc", "--png", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["soc"]
    assert capsys.readouterr().err == f"wrote {path}\n"


def test_show_unknown_target_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TargetError) as raised:
        Target("no-such-tag")
    assert main(["platform", "show", "no-such-tag"]) == 1
    hint = (  # no close name: where the user's own tags come from
        " (a tag folder of your own: HETSIM_TAG_DIR=DIR before any command, or the command's "
        "--tags DIR where it has one)"
    )
    assert capsys.readouterr().err == f"error: TARGET: {raised.value}{hint}\n"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        # a problem at the root is said of the argument, as `hetsim run` says --target's
        ("[1]", "TARGET: expected a target name or a mapping, got [1]"),
        ("{}", "TARGET: expected a 'kind' or a 'tag', got neither"),
        # one with a path keeps it
        ('{"kind": "cdua"}', "kind: unknown kind 'cdua' (did you mean 'cuda'?)"),
    ],
)
def test_show_names_the_target_argument_for_a_problem_at_the_root(
    capsys: pytest.CaptureFixture[str], spec: str, said: str
) -> None:
    assert main(["platform", "show", spec]) == 1
    assert capsys.readouterr() == ("", f"error: {said}\n")
