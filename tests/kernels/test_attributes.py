"""The attribute names each op takes (`hetsim.kernels.attributes`) and the check of an op's names.

The table must say what onnx's schemas (and onnxruntime's, for its ``com.microsoft`` ops) say, the
kernels must read no name their op never takes, and an op with a name its type does not take at
the graph's opset is a ModelError naming the op, the name and the names it takes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

import hetsim
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, execute
from hetsim.kernels.attributes import ATTRIBUTES, EXTENSIONS
from tests.kernels.case import case_metas, case_op
from tests.kernels.test_every_op import CASES

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _graph(op: Op, opset: int = 17, initializers: Mapping[str, np.ndarray] | None = None) -> Graph:
    inputs = {"x": TensorType((2, 3), "float32")}
    return Graph("g", (op,), inputs, ("y",), dict(initializers or {}), opset)


def _schema_names(by_opset: Mapping[int, frozenset[str]], extra: frozenset[str]) -> dict:
    return {since: names - extra for since, names in by_opset.items()}


def test_every_registered_op_has_an_entry() -> None:
    assert sorted(set(OPS) ^ set(ATTRIBUTES)) == []


def test_default_domain_names_are_onnx_schemas() -> None:
    defs = pytest.importorskip("onnx.defs")
    from hetsim.frontend.onnx import NEWEST_OPSET

    versions: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain == "" and schema.since_version <= NEWEST_OPSET:
            versions.setdefault(schema.name, []).append(
                (schema.since_version, frozenset(schema.attributes))
            )
    expected = {}
    for op_type in (t for t, d in OPS.items() if d.domain == ""):
        kept: dict[int, frozenset[str]] = {}
        for since, names in sorted(versions[op_type]):
            if not kept or kept[max(kept)] != names:  # a version kept where its names change
                kept[since] = names
        expected[op_type] = kept
    found = {
        t: _schema_names(ATTRIBUTES[t], EXTENSIONS.get(t, frozenset()))
        for t, d in OPS.items()
        if d.domain == ""
    }
    assert found == expected


def test_com_microsoft_names_are_onnxruntime_schemas() -> None:
    state = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state")
    schemas = {s.name: s for s in state.get_all_operator_schema() if s.domain == "com.microsoft"}
    microsoft = sorted(t for t, d in OPS.items() if d.domain == "com.microsoft")
    expected = {t: {schemas[t].since_version: frozenset(schemas[t].attributes)} for t in microsoft}
    found = {t: _schema_names(ATTRIBUTES[t], EXTENSIONS.get(t, frozenset())) for t in microsoft}
    assert found == expected


class _Reads(dict[str, Any]):
    """An op's attributes that note each name a kernel asks for, present or not."""

    def __init__(self, attrs: Mapping[str, Any], reads: set[str]) -> None:
        super().__init__(attrs)
        self.reads = reads

    def get(self, name: str, default: Any = None) -> Any:
        self.reads.add(name)
        return super().get(name, default)

    def __getitem__(self, name: str) -> Any:
        self.reads.add(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self.reads.add(str(name))
        return super().__contains__(name)


# Names that a helper several op types share asks for, where ONNX gives one of those types no
# such attribute: the check refuses the name first, so the helper gets its default
SHARED_READS: dict[str, set[str]] = {
    # `window.read_window_attrs`, shared with the pools
    **{t: {"ceil_mode"} for t in ("Conv", "ConvInteger", "ConvTranspose", "QLinearConv")},
    # `rnn`'s spec reads every cell's flags
    "GRU": {"input_forget"},
    "LSTM": {"linear_before_reset"},
    "RNN": {"input_forget", "linear_before_reset"},
    # `shape.versioned` reads the attribute form before the opset of the input form (Pad's
    # axes), which these ops never had
    "Pad": {"axes"},
    # the cost rule it shares with Resize
    "Upsample": {"antialias"},
    # `qoperator` reads those of QLinearAveragePool and QLinearSoftmax for all eight
    **{
        t: {"channels_last", "opset"} - ATTRIBUTES[t][1]
        for t, d in OPS.items()
        if d.domain == "com.microsoft" and t != "QGemm"
    },
}


def test_kernels_read_no_name_their_op_never_takes() -> None:
    reads: dict[str, set[str]] = {}
    for case in CASES:
        op = case_op(case)
        noted = reads.setdefault(op.type, set())
        op = Op(op.type, op.name, op.inputs, op.outputs, _Reads(op.attrs, noted))
        definition = OPS[op.type]
        metas = case_metas(case)
        with np.errstate(all="ignore"):
            outputs = definition.infer(op, case.opset, metas)
            definition.cost(op, metas, outputs)
            definition.compile(op, case.opset)(case.arrays)
    never = {
        op_type: sorted(names - set().union(*ATTRIBUTES[op_type].values()))
        for op_type, names in reads.items()
    }
    assert {t: n for t, n in never.items() if n} == {t: sorted(n) for t, n in SHARED_READS.items()}


REFUSED = [
    pytest.param(
        Op("Softmax", "a", ("x",), ("y",), {"axs": 0}),
        17,
        "op a (Softmax): expected attributes of Softmax (axis), got 'axs' (did you mean 'axis'?)",
        id="misspelled",
    ),
    pytest.param(
        Op("Gemm", "g", ("x", "x"), ("y",), {"transb": 1}),
        17,
        "op g (Gemm): expected attributes of Gemm at opset 17 (alpha, beta, transA, transB), "
        "got 'transb' (did you mean 'transB'?)",
        id="other-case",
    ),
    pytest.param(
        Op("ReduceSum", "r", ("x",), ("y",), {"axes": [1]}),
        17,
        "op r (ReduceSum): expected attributes of ReduceSum at opset 17 (keepdims, "
        "noop_with_empty_axes), got 'axes' (an attribute of ReduceSum at opsets 1-12)",
        id="an-input-since",  # summed every axis
    ),
    pytest.param(
        Op("Clip", "c", ("x",), ("y",), {"min": 2.0}),
        17,
        "op c (Clip): expected no attributes (Clip takes none at opset 17), got 'min' (an "
        "attribute of Clip at opsets 1-10)",
        id="none-taken",  # clipped nothing
    ),
    pytest.param(
        Op("Add", "a", ("x", "x"), ("y",), {"broadcast": 1, "bias": 2}),
        17,
        "op a (Add): expected no attributes (Add takes none at opset 17), got 'broadcast' (an "
        "attribute of Add at opsets 1-6), 'bias'",
        id="each-listed",
    ),
    pytest.param(
        Op("Resize", "r", ("x", "", "s"), ("y",), {"antialias": 1}),
        13,
        "op r (Resize): expected attributes of Resize at opset 13 (coordinate_transformation_mode, "
        "cubic_coeff_a, exclude_outside, extrapolation_value, mode, nearest_mode), got "
        "'antialias' (an attribute of Resize at opsets 18 and later)",
        id="strict-by-opset",  # its kernel reads antialias from opset 18 on
    ),
    pytest.param(
        Op("QLinearSoftmax", "q", ("x",), ("y",), {"axis": 1, "opst": 13}),
        17,
        "op q (QLinearSoftmax): expected attributes of QLinearSoftmax (axis, opset), got "
        "'opst' (did you mean 'opset'?)",
        id="com-microsoft",
    ),
]


@pytest.mark.parametrize(("op", "opset", "message"), REFUSED)
def test_execute_refuses_a_name_the_op_does_not_take(op: Op, opset: int, message: str) -> None:
    graph = _graph(op, opset, {"s": np.ones(2, np.float32)} if "s" in op.inputs else None)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        hetsim.execute(graph, {"x": X})


def test_simulate_refuses_a_misspelled_name() -> None:
    graph = _graph(Op("Softmax", "a", ("x",), ("y",), {"axs": 0}))
    message = (
        "op a (Softmax): expected attributes of Softmax (axis), got 'axs' (did you mean 'axis'?)"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        hetsim.simulate(graph, "x86-h100", mode="timing")


def test_a_name_of_a_later_version_is_taken_at_an_earlier_opset() -> None:
    # Shape's start is of opset 15 on; its kernel reads it at any opset
    graph = _graph(Op("Shape", "s", ("x",), ("y",), {"start": 1}), opset=13)
    assert execute(graph, {"x": X})["y"].tolist() == [3]


def test_a_name_of_an_earlier_version_is_taken_at_its_opset() -> None:
    graph = _graph(Op("ReduceSum", "r", ("x",), ("y",), {"axes": [1]}), opset=11)
    assert execute(graph, {"x": X})["y"].tolist() == [[3.0], [12.0]]


def test_an_onnx_model_with_a_misspelled_name_is_refused() -> None:
    onnx = pytest.importorskip("onnx")
    from hetsim.frontend import load_onnx

    helper = onnx.helper
    node = helper.make_node("Softmax", ["x"], ["y"], name="a", axs=0)
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    model = helper.make_model(
        helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    message = (
        "op a (Softmax): expected attributes of Softmax (axis), got 'axs' (did you mean 'axis'?)"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        hetsim.execute(load_onnx(model), {"x": X})


@pytest.mark.parametrize(
    ("op_type", "attrs", "inputs"),
    [
        ("CumSum", {"exclusive": 2}, ("x", "axis")),
        ("Resize", {"mode": "cubic", "exclude_outside": 2}, ("x", "", "scales")),
        ("ReduceSum", {"keepdims": -1}, ("x",)),
    ],
)
def test_a_flag_other_than_0_or_1_is_refused(
    op_type: str, attrs: dict[str, int | str], inputs: tuple[str, ...]
) -> None:
    # read as "nonzero is set", exclusive=2 ran as exclusive; onnxruntime refuses it
    name, value = next((k, v) for k, v in attrs.items() if isinstance(v, int))
    op = Op(op_type, "f", inputs, ("y",), attrs)
    message = f"op f ({op_type}): expected {name} 0 or 1, got {value}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS[op_type].compile(op, 13)
