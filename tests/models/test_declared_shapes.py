"""A tensor whose shape differs from the one the model declares for it (a stale ONNX
``value_info`` or output type) gets a note and the run goes on, as onnxruntime warns and runs;
a declared dtype that differs is refused (`tests/kernels`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.cli import main
from hetsim.ir import Graph, Op, TensorType


def _chain(
    declared: dict[str, tuple[int | str, ...]], inputs: tuple[int | str, ...] = (2, 3)
) -> Graph:
    """Five Relus from t0 to t5, with the declared shapes of `declared`."""
    ops = tuple(Op("Relu", f"r{i}", (f"t{i}",), (f"t{i + 1}",)) for i in range(5))
    types = {name: TensorType(shape, "float32") for name, shape in declared.items()}
    return Graph("g", ops, {"t0": TensorType(inputs, "float32")}, ("t5",), value_types=types)


def test_a_stale_output_shape_is_noted_and_the_outputs_are_the_computed_ones() -> None:
    graph = _chain({"t5": (8, 3)})
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    result = simulate(graph, "x86-h100", inputs={"t0": x})
    assert result.record.extra["shape_notes"] == [
        "tensor t5: shape [2, 3], where the model declares [8, 3]"
    ]
    np.testing.assert_array_equal(result.outputs["t5"], np.maximum(x, 0))
    assert result.to_dict()["extra"]["shape_notes"] == result.record.extra["shape_notes"]


@pytest.mark.parametrize(
    ("declared", "inputs"),
    [
        ({"t5": (2, 3), "t2": (2, 3)}, (2, 3)),  # as computed
        ({"t5": ("batch", 3)}, (2, 3)),  # a symbol the model does not bind: any size
        ({"t5": ("n", 3)}, ("n", 3)),  # the input's symbol, bound by the run
    ],
    ids=["equal", "unbound-symbol", "bound-symbol"],
)
def test_shapes_that_agree_get_no_note(
    declared: dict[str, tuple[int | str, ...]], inputs: tuple[int | str, ...]
) -> None:
    dims = {"n": 2} if "n" in inputs else {}
    result = simulate(_chain(declared, inputs), "x86-h100", mode="timing", dims=dims)
    assert "shape_notes" not in result.record.extra


def test_a_rank_that_differs_is_noted_and_many_are_counted() -> None:
    declared = {"t1": (2, 3, 1), "t2": (6,), "t3": (2, 4), "t4": (1, 3), "t5": (9, 9)}
    result = simulate(_chain(declared), "x86-h100", mode="timing")
    assert result.record.extra["shape_notes"] == [
        "tensor t1: shape [2, 3], where the model declares [2, 3, 1]; tensor t2: shape [2, 3], "
        "where the model declares [6]; tensor t3: shape [2, 3], where the model declares [2, 4]"
        "; and 2 more"
    ]


def test_hetsim_run_prints_the_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    onnx = pytest.importorskip("onnx")
    helper, f = onnx.helper, onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        "stale",
        [helper.make_tensor_value_info("x", f, ["N", 3])],
        [helper.make_tensor_value_info("y", f, [8, 3])],  # the batch it was exported at
    )
    path = tmp_path / "stale.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert main(["run", str(path), "--target", "x86-h100", "--dims", "N=2"]) == 0
    assert "note: tensor y: shape [2, 3], where the model declares [8, 3]\n" in (
        capsys.readouterr().err
    )
