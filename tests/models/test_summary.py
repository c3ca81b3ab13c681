"""The model summary and ``hetsim model show``: tallies, bound dims, text and JSON, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hetsim.cli import main
from hetsim.errors import ModelError
from hetsim.ir import GraphBuilder, TensorType
from hetsim.kernels import OPS, propagate
from hetsim.models import ZOO, load_model, summarize


def test_mlp_summary_counts_ops_parameters_and_matmul_flops() -> None:
    summary = summarize(load_model("mlp"))
    assert [(t.type, t.count) for t in summary.op_types] == [("Gemm", 3), ("Relu", 2)]
    assert summary.parameter_count == 64 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10
    assert summary.parameter_bytes == 4 * summary.parameter_count
    gemm, relu = summary.op_types
    multiply_adds = 64 * 128 + 128 * 64 + 64 * 10
    assert gemm.flops == pytest.approx(2 * multiply_adds, rel=0.01)
    assert relu.flops == 128 + 64
    assert relu.bytes_read == relu.bytes_written == 4 * (128 + 64)
    assert summary.op_count == 5
    assert summary.outputs == {"fc3": TensorType((1, 10), "float32")}


def test_totals_are_the_sums_of_each_ops_cost_rule() -> None:
    graph = load_model("cnn")
    metas = propagate(graph, {})
    costs = [
        OPS[op.type].cost(
            op, [metas[n] if n else None for n in op.inputs], [metas[n] for n in op.outputs]
        )
        for op in graph.ops
    ]
    summary = summarize(graph)
    assert summary.flops == sum(c.flops for c in costs)
    assert summary.bytes_read == sum(c.bytes_read for c in costs)
    assert summary.bytes_written == sum(c.bytes_written for c in costs)
    assert sum(t.count for t in summary.op_types) == len(graph.ops)


def test_op_types_are_ordered_heaviest_first() -> None:
    flops = [t.flops for t in summarize(load_model("cnn")).op_types]
    assert flops == sorted(flops, reverse=True)


def test_symbolic_dims_bind_and_scale_the_work() -> None:
    graph = load_model("transformer")
    short, long = summarize(graph, {"seq": 8}), summarize(graph, {"seq": 16})
    assert short.inputs == {"x": TensorType((1, 8, 64), "float32")}
    assert long.outputs == {"residual2": TensorType((1, 16, 64), "float32")}
    assert short.dims == {"seq": 8}
    assert short.defaulted == ()
    assert 2 * short.flops < long.flops < 4 * short.flops  # linear layers x2, attention x4


def test_missing_dims_default_to_one_and_are_reported() -> None:
    summary = summarize(load_model("transformer"))
    assert summary.dims == {"seq": 1}
    assert summary.defaulted == ("seq",)
    assert "dims:       seq=1 (default)" in summary.format()


def test_unknown_dim_suggests_the_close_one() -> None:
    with pytest.raises(
        ModelError,
        match=r"^model transformer: expected one of its symbolic dims \(seq\), got 'sq' "
        r"\(did you mean 'seq'\?\)$",
    ):
        summarize(load_model("transformer"), {"sq": 4})


def test_parameters_count_initializers_of_every_dtype() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (2, 3))
    y = b.op("Reshape", x, np.array([3, 2], np.int64))
    summary = summarize(b.build(y))
    assert summary.parameter_count == 2
    assert summary.parameter_bytes == 16


def test_to_dict_is_json_ready() -> None:
    data = json.loads(json.dumps(summarize(load_model("mlp")).to_dict()))
    assert data["name"] == "mlp"
    assert data["inputs"] == {"x": {"shape": [1, 64], "dtype": "float32"}}
    assert [t["type"] for t in data["op_types"]] == ["Gemm", "Relu"]
    assert data["parameter_count"] == 17226


def test_show_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "show", "mlp"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        "model mlp (opset 17, 5 ops)",
        "input:      x float32[1, 64]",
        "output:     fc3 float32[1, 10]",
        "parameters: 17,226 (67.3 KiB)",
    ]
    assert out[-2].split()[:2] == ["Gemm", "3"]
    assert out[-1].split() == ["Relu", "2", "192", "FLOP", "768", "B", "768", "B"]


def test_huge_dims_keep_the_columns_apart(capsys: pytest.CaptureFixture[str]) -> None:
    # "MatMul  8256000098304.00 GFLOP14901164054.9 GiB...": units stopped at G, widths were fixed
    assert main(["model", "show", "transformer", "--dims", "seq=1000000000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[5] == "work:       280.00 EFLOP, read 41.6 EiB, written 41.6 EiB"
    header, rule, matmul = out[7], out[8], out[9]
    assert matmul.split() == ["MatMul", "8", "256.00", "EFLOP", "13.9", "EiB", "13.9", "EiB"]
    assert len(matmul) == len(header) == len(rule)  # every column as wide as its widest cell


def test_show_json_with_dims(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "show", "transformer", "--dims", "seq=128", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dims"] == {"seq": 128}
    assert data["inputs"]["x"]["shape"] == [1, 128, 64]


def test_show_unknown_model_prints_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "show", "resnt50"]) == 1
    assert capsys.readouterr().err == (
        "error: load_model: expected a zoo name or a path to an .onnx file, got 'resnt50' "
        "(did you mean 'resnet50'?)\n"
    )


def test_show_bad_dims_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:  # a usage error, as in run and plan show
        main(["model", "show", "transformer", "--dims", "seq=long"])
    assert exit_info.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith(
            "error: argument --dims: expected name=value pairs such as seq=128, got 'seq=long'"
        )
    )


def test_a_dim_given_in_two_options_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    # as a usage error, the same as 'seq=4,seq=8' in one option (it was an error of another form)
    with pytest.raises(SystemExit) as exited:
        main(["model", "show", "transformer", "--dims", "seq=4", "--dims", "seq=8"])
    assert exited.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith("error: argument --dims: expected each dim once, got 'seq' twice")
    )


def test_show_resnet50(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "show", "resnet50"]) == 0
    out = capsys.readouterr().out
    assert "model resnet50 (opset 9, 176 ops)" in out
    assert "input:      gpu_0/data_0 float32[1, 3, 224, 224]" in out
    conv = next(line for line in out.splitlines() if line.startswith("Conv "))
    count, flops, unit = conv.split()[1:4]
    assert (count, unit) == ("53", "GFLOP")
    assert float(flops) == pytest.approx(8.18, rel=0.01)  # ResNet-50: 4.09 G multiply-adds


def test_list_prints_the_zoo_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "list"]) == 0
    assert capsys.readouterr().out.split() == list(ZOO)


def test_show_an_onnx_file_with_symbolic_dims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((8, 2), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "proj",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        [weight],
    )
    path = tmp_path / "proj.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    assert main(["model", "show", str(path), "--dims", "batch=4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"]["x"]["shape"] == [4, 8]
    assert data["outputs"]["y"]["shape"] == [4, 2]
    assert data["parameter_count"] == 16
    assert data["op_types"][0]["flops"] == 2 * 4 * 8 * 2
