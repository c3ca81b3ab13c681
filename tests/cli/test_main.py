"""The command line's own rules: every command registered, missing extras named."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hetsim import cli


def test_every_command_group_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    listed = capsys.readouterr().out
    for name in cli.COMMAND_MODULES:
        assert f"    {name}" in listed


def _command_raising(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make every command fail as an import of `module` would."""

    def run(args: argparse.Namespace) -> int:
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)

    parse = argparse.ArgumentParser.parse_args
    monkeypatch.setattr(
        argparse.ArgumentParser,
        "parse_args",
        lambda self, argv=None: argparse.Namespace(**{**vars(parse(self, argv)), "func": run}),
    )


def test_a_missing_optional_module_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _command_raising(monkeypatch, "threadpoolctl")
    assert cli.main(["targets", "list"]) == 1
    assert capsys.readouterr().err == (
        "error: threadpoolctl is not installed; it comes with hetsim's 'calibrate' extra: "
        'pip install "hetsim[calibrate]" (from a clone: pip install -e ".[calibrate]")\n'
    )


def test_a_missing_module_of_no_extra_is_a_bug_and_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    _command_raising(monkeypatch, "no_such_module")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        cli.main(["targets", "list"])


@pytest.mark.parametrize("command", [["model", "show"], ["run"]])
def test_an_unsupported_op_names_the_op_its_closest_type_and_where_types_are_listed(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it printed every supported op, some 160 names, after the one it was about
    onnx = pytest.importorskip("onnx")
    tensor = onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, [2])
    node = onnx.helper.make_node("Rellu", ["x"], ["y"], name="act")
    x, y = (onnx.helper.make_value_info(name, tensor) for name in "xy")
    graph = onnx.helper.make_graph([node], "g", [x], [y])
    path = tmp_path / "m.onnx"
    onnx.save(onnx.helper.make_model(graph), path)
    target = ["--target", "cuda"] if command == ["run"] else []
    assert cli.main([*command, str(path), *target]) == 1
    assert capsys.readouterr().err == (
        f"error: {path}: op act (Rellu): unsupported op Rellu (did you mean 'Relu'?); "
        "hetsim.kernels.OPS holds the supported op types (docs/architecture.md, Kernels, lists "
        "them)\n"
    )


def test_an_error_shows_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a device's name, printed as it was, broke the error's line and reached the terminal
    path = tmp_path / "t.yaml"
    path.write_text('kind: hetero\ndevices:\n  - kind: cuda\n    "fr\\x1b[2Jq": 1\n')
    assert cli.main(["targets", "show", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"error: {path}:4: devices[dev0].fr\\x1b[2Jq: unknown attribute\n"
    )
    assert cli.main(["targets", "show", str(tmp_path / "no\nfile.yaml")]) == 1
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("command", ["run", "plan", "compare"])
def test_a_bad_target_at_its_root_is_said_of_the_target_option(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # run and compare said "target:" (simulate's argument), plan nothing; a problem with a path
    # (a file's line, a kind's attribute) keeps it
    assert cli.main([command, "mlp", "--target", "{}"]) == 1
    assert capsys.readouterr().err == "error: --target: expected a 'kind' or a 'tag', got neither\n"
    spec = tmp_path / "t.yaml"
    spec.write_text("kind: cuda\ncores: 0\n")
    assert cli.main([command, "mlp", "--target", str(spec)]) == 1
    assert capsys.readouterr().err == f"error: {spec}:2: cores: expected an integer >= 1, got 0\n"


def test_notes_and_text_output_show_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a stale declared shape's note named the tensor as it was: its escape reached the terminal
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    name = "y\x1b[31mRED"
    node = helper.make_node("Relu", ["x"], [name], name="r")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info(name, TensorProto.FLOAT, [5])
    path = tmp_path / "stale.onnx"
    model = helper.make_graph([node], "g", [x], [y])
    onnx.save(helper.make_model(model, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert cli.main(["run", str(path), "--target", "cuda"]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert r"tensor y\x1b[31mRED: shape [4], where the model declares [5]" in err
    # and on stdout, where plan, model show and compare print names as text
    for command in (["plan", str(path), "--target", "cuda"], ["model", "show", str(path)]):
        assert cli.main(command) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out
        assert r"y\x1b[31mRED" in out
