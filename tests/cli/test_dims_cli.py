"""``--dims`` in ``run``, ``plan`` and ``model show``: the same checks and messages everywhere,
and what ``plan`` says of dims it was not given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsim.api import simulate
from hetsim.cli import main
from hetsim.partition import ESTIMATE_DIM

UNKNOWN_SQ = (
    "error: model transformer: expected one of its symbolic dims (seq), got 'sq' "
    "(did you mean 'seq'?)\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "transformer", "--target", "x86-h100", "--mode", "timing"],
        ["plan", "transformer", "--target", "x86-h100"],
        ["model", "show", "transformer"],
    ],
    ids=["run", "plan", "model-show"],
)
def test_an_unknown_dim_name_suggests_the_close_one(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # run and plan ignored it: plan printed "dims: sq=4" and planned for seq=1
    assert main([*argv, "--dims", "sq=4"]) == 1
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", UNKNOWN_SQ)


@pytest.mark.parametrize("command", [["run", "mlp", "--mode", "timing"], ["plan", "mlp"]])
def test_a_dim_of_a_static_model_is_an_error(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--target", "x86-h100", "--dims", "batch=4"]) == 1
    assert capsys.readouterr().err == (
        "error: model mlp: expected one of its symbolic dims (none), got 'batch'\n"
    )


@pytest.mark.parametrize("command", ["run", "plan"])
def test_a_zero_dim_is_taken_and_a_negative_one_refused(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # seq=0 was refused, though a zero-length input array ran: empty tensors are valid ONNX
    argv = [command, "transformer", "--target", "x86-h100"]
    assert main([*argv, "--dims", "seq=0", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    if command == "run":
        expected = simulate("transformer", "x86-h100", dims={"seq": 0}).makespan_us
        assert printed["makespan_us"] == pytest.approx(expected, rel=1e-12)
    else:
        assert printed["dims"] == {"seq": 0}
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--dims", "seq=-1"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim {command}: error: argument --dims: seq: expected an integer >= 0, got -1"
    )


@pytest.mark.parametrize("command", ["run", "plan"])
@pytest.mark.parametrize("value", ["", " , "])
def test_a_dims_option_without_a_pair_is_refused(
    command: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # ran at the model's default sizes, as if --dims were not given (an unset shell variable)
    with pytest.raises(SystemExit) as exit_info:
        main([command, "transformer", "--target", "x86-h100", "--dims", value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim {command}: error: argument --dims: expected one or more name=value pairs such "
        f"as seq=128, got {value!r}"
    )


def test_plan_without_dims_says_which_size_it_estimated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "transformer", "--target", "x86-h100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "plan of transformer on x86-h100 (policy capability)",
        f"unbound dims: seq (dynamic; flops and bytes estimated at seq={ESTIMATE_DIM}; "
        "bind with --dims seq=N)",
    ]
    assert lines[-1] == "dynamic (kept off static levels): 33 ops"


def test_plan_with_dims_lists_them_and_estimates_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "transformer", "--target", "x86-h100", "--dims", "seq=4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "dims: seq=4"
    assert not any(line.startswith("unbound dims:") for line in lines)


def test_plan_json_names_the_estimated_dims(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "transformer", "--target", "x86-h100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["dims"], data["estimate_dims"]) == ({}, {"seq": ESTIMATE_DIM})
    assert main(["plan", "transformer", "--target", "x86-h100", "--dims", "seq=4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["dims"], data["estimate_dims"]) == ({"seq": 4}, {})


def test_functional_inputs_too_big_for_the_host_memory_are_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # numpy's _ArrayMemoryError came out of make_inputs as a traceback
    argv = ["run", "transformer", "--target", "x86-h100", "--dims", "seq=99999999999"]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        "error: input 'x' (float32[1, 99999999999, 64]): out of memory in host.mem "
        "(need 23.3 TiB, 1.0 TiB free)\n"
    )


def test_buckets_without_a_cuda_device_runs_unpadded_with_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # padded seq=5 to 8, and the graph executor compiled for seq=5 refused it
    argv = ["run", "transformer", "--target", "arm-riscv-soc", "--dims", "seq=5", "--json"]
    assert main([*argv, "--cuda-graph", "buckets"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "note: --cuda-graph buckets: no CUDA kernels at the root level to capture: every kernel "
        "runs eagerly, without padding\n"
    )
    assert main(argv) == 0
    eager = json.loads(capsys.readouterr().out)
    assert json.loads(captured.out)["makespan_us"] == eager["makespan_us"]


def _one_op_model(path: Path, op_type: str, **inputs: tuple[str, list[int]]) -> Path:
    """An ONNX file at `path` of one op `y` of `op_type` on graph `inputs` (name -> (element
    type, shape)), opset 17."""
    onnx = pytest.importorskip("onnx")
    helper, types = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [helper.make_node(op_type, list(inputs), ["y"], name="y")],
        path.stem,
        [helper.make_tensor_value_info(n, getattr(types, t), s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info("y", types.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("command", [["plan"], ["model", "show"]])
def test_a_shape_read_from_a_graph_input_is_said_in_the_command_s_terms(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # they said "(pass it in inputs)": neither command takes inputs
    path = _one_op_model(tmp_path / "reshaped.onnx", "Reshape", x=("FLOAT", [2, 3]),
                         s=("INT64", [2]))  # fmt: skip
    target = ["--target", "x86-h100"] if command == ["plan"] else []
    assert main([*command, str(path), *target]) == 1
    name = " ".join(command)
    assert capsys.readouterr().err == (
        f"error: {path}: op y (Reshape): expected a known value for input 1 (shape), got graph "
        f"input 's', whose value hetsim {name} cannot take (hetsim run --inputs FILE reads it)\n"
    )


@pytest.mark.parametrize("command", [["run"], ["plan"], ["compare"], ["model", "show"]])
def test_an_op_that_fails_as_a_command_runs_names_the_model_file(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # errors found while loading the file named it; a shape found wrong later did not
    path = _one_op_model(tmp_path / "mismatched.onnx", "MatMul", a=("FLOAT", [1, 4]),
                         b=("FLOAT", [5, 3]))  # fmt: skip
    target = [] if command == ["model", "show"] else ["--target", "x86-h100"]
    assert main([*command, str(path), *target]) == 1
    assert capsys.readouterr().err == (
        f"error: {path}: op y (MatMul): expected the last dim of A to match the rows of B, "
        "got [1, 4] and [5, 3]\n"
    )


def _odd_dims_model(path: Path, dims: tuple[str, str] = ("Min(s0, 10)", "a=b")) -> Path:
    """An ONNX file at `path` of one Relu whose input's dims are named `dims`: by default
    ``Min(s0, 10)`` and ``a=b``, names that exporters write (any string is a dim name)."""
    onnx = pytest.importorskip("onnx")
    helper, types = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="y")],
        "odd",
        [helper.make_tensor_value_info("x", types.FLOAT, list(dims))],
        [helper.make_tensor_value_info("y", types.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("command", ["run", "plan", "model-show"])
@pytest.mark.parametrize(
    "dims",
    [["Min(s0, 10)=4,a=b=2"], ["Min(s0, 10)=4", "a=b=2"], [" a=b = 2 , Min(s0, 10) = 4"]],
    ids=["one-option", "two-options", "spaced"],
)
def test_a_dim_named_with_a_comma_or_an_equals_sign_is_taken(
    command: str, dims: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the first "=" split a pair and every comma ended one: neither name could be given
    path = str(_odd_dims_model(tmp_path / "odd.onnx"))
    argv = {
        "run": ["run", path, "--target", "x86-h100"],
        "plan": ["plan", path, "--target", "x86-h100"],
        "model-show": ["model", "show", path],
    }[command]
    options = [item for value in dims for item in ("--dims", value)]
    assert main([*argv, *options, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    if command == "plan":
        assert printed["dims"] == {"Min(s0, 10)": 4, "a=b": 2}
    else:
        assert printed["inputs"]["x"]["shape"] == [4, 2]


@pytest.mark.parametrize(
    ("value", "pair"),
    [("seq=4,batch", "batch"), ("seq=long,batch=2", "seq=long"), ("=4", "=4")],
)
def test_a_part_without_a_size_is_still_no_pair(
    value: str, pair: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a part without "=" starts a name: one left at the end, or a value not an integer, is refused
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", "transformer", "--target", "x86-h100", "--dims", value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim plan: error: argument --dims: expected name=value pairs such as seq=128, "
        f"got {pair!r}"
    )


@pytest.mark.parametrize("command", ["run", "plan", "model-show"])
def test_dims_left_without_a_size_before_a_comma_are_said_to_be_several(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "batch,seq=128" sizes one dim named "batch,seq" (a name may hold a comma), which the
    # model lacks: the error suggested 'batch' alone, as if a typo
    path = str(_odd_dims_model(tmp_path / "two.onnx", ("batch", "seq")))
    argv = {
        "run": ["run", path, "--target", "x86-h100"],
        "plan": ["plan", path, "--target", "x86-h100"],
        "model-show": ["model", "show", path],
    }[command]
    assert main([*argv, "--dims", "batch, seq=128"]) == 1
    assert capsys.readouterr() == (
        "",
        "error: model odd: expected one of its symbolic dims (batch, seq), got 'batch, seq': "
        "several dims, each with a size (batch=N, seq=N)?\n",
    )
