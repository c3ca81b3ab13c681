"""The generic check of every op in `OPS`: values, shape rule, cost, and that every op has a case.

Values are compared with onnx's ReferenceEvaluator on a one-node model (or the case's hand-written
reference), shapes and dtypes with the op's shape rule, and the cost must be non-negative and
within a plausible bound of the tensor sizes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, TensorType
from hetsim.kernels import OP_CLASSES, OPS, Meta, execute
from tests.kernels.case import Case, case_metas, case_op, run_reference
from tests.kernels.cases_attention import CASES as ATTENTION_CASES
from tests.kernels.cases_basic import CASES as BASIC_CASES
from tests.kernels.cases_llm import CASES as LLM_CASES
from tests.kernels.cases_qlinear import CASES as QLINEAR_CASES
from tests.kernels.cases_qoperator import CASES as QOPERATOR_CASES
from tests.kernels.cases_quant import CASES as QUANT_CASES
from tests.kernels.cases_resize import CASES as RESIZE_CASES
from tests.kernels.cases_rnn import CASES as RNN_CASES
from tests.kernels.cases_sampling import CASES as SAMPLING_CASES
from tests.kernels.cases_vision import CASES as VISION_CASES

if importlib.util.find_spec("tests.kernels.cases_nn") is not None:
    from tests.kernels.cases_nn import CASES as NN_CASES
else:  # the NN table is written in parallel; until it lands, its ops fail the coverage test
    NN_CASES = []

CASES: list[Case] = [
    *BASIC_CASES,
    *NN_CASES,
    *RESIZE_CASES,
    *QUANT_CASES,
    *QLINEAR_CASES,
    *QOPERATOR_CASES,
    *RNN_CASES,
    *ATTENTION_CASES,
    *LLM_CASES,
    *SAMPLING_CASES,
    *VISION_CASES,
]


def _run(case: Case) -> list[np.ndarray]:
    kernel = OPS[case.op_type].compile(case_op(case), case.opset)
    return [np.asarray(a) for a in kernel(case.arrays)]


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


def test_every_registered_op_has_a_case() -> None:
    assert sorted(set(OPS) - {c.op_type for c in CASES}) == []


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # onnx's Sigmoid
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_kernel_matches_reference(case: Case) -> None:
    expected = run_reference(case)
    got = _run(case)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_shape_rule_matches_kernel(case: Case) -> None:
    metas = OPS[case.op_type].infer(case_op(case), case.opset, case_metas(case))
    got = _run(case)
    assert [(m.shape, m.dtype) for m in metas] == [(g.shape, g.dtype) for g in got]


MODE_CLASSED = {"Resize", "Upsample"}
"""Ops whose cost's class follows an attribute: ``nearest`` copies (data movement), ``linear``
and ``cubic`` interpolate (elementwise)."""


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_cost_is_plausible(case: Case) -> None:
    definition = OPS[case.op_type]
    op, metas = case_op(case), case_metas(case)
    outputs = definition.infer(op, case.opset, metas)
    cost = definition.cost(op, metas, outputs)
    elements = sum(m.size for m in [*metas, *outputs] if m is not None)
    largest_in = max((m.size for m in metas if m is not None), default=1)
    out_elements = sum(m.size for m in outputs)
    assert cost.op_class in OP_CLASSES
    # the class a kernel is timed by is the one the op registers (Shape, Size and Constant had
    # cost as data_movement under class other); Resize's follows its mode (docs/cost-model.md)
    if case.op_type not in MODE_CLASSED:
        assert cost.op_class == definition.op_class
    assert cost.bytes_read >= 0
    assert cost.bytes_written >= 0
    # the costliest elementwise rule, exact Gelu, is 83 streaming passes per element
    assert 0 <= cost.flops <= 2 * out_elements * largest_in + 83 * elements


@pytest.mark.parametrize("case", BASIC_CASES, ids=lambda c: c.id)
def test_execute_runs_the_single_op_graph(case: Case) -> None:
    op = case_op(case)
    present = {k: np.asarray(v) for k, v in case.inputs.items() if v is not None}
    graph = Graph(
        case.id,
        (op,),
        {
            k: TensorType(v.shape, v.dtype.name)
            for k, v in present.items()
            if k not in case.constant
        },
        op.outputs,
        {k: present[k] for k in case.constant},
        case.opset,
    )
    feeds = {k: v for k, v in present.items() if k not in case.constant}
    got = execute(graph, feeds)
    for name, expected in zip(op.outputs, _run(case), strict=True):
        np.testing.assert_array_equal(got[name], expected)


# One dtype swapped for another that ONNX allows in the same place, for the one-type check below.
OTHER_DTYPE = {
    np.dtype(np.float32): np.dtype(np.float64),
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.int32): np.dtype(np.int64),
}


def _one_type_groups(case: Case) -> list[tuple[str, list[int]]]:
    """The type variables ONNX's schema of `case`'s op (at its opset) gives two or more of the
    case's present inputs, each with those inputs' positions; none for an op outside onnx. Only
    types an input's dtype can be swapped in (`OTHER_DTYPE`)."""
    defs = pytest.importorskip("onnx.defs")
    try:
        schema = defs.get_schema(case.op_type, case.opset)
    except defs.SchemaError:
        return []
    present = [i for i, v in enumerate(case.arrays) if v is not None]
    variadic = defs.OpSchema.FormalParameterOption.Variadic
    groups: dict[str, list[int]] = {}
    for index, formal in enumerate(schema.inputs):
        # a variadic input is the last formal one: it takes every position from there on
        positions = present[index:] if formal.option == variadic else [index]
        groups.setdefault(formal.type_str, []).extend(p for p in positions if p in present)
    # a type only one dtype fills (And's bool) cannot be given two
    return [
        (name, positions)
        for name, positions in groups.items()
        if len(positions) > 1 and np.asarray(case.arrays[positions[-1]]).dtype in OTHER_DTYPE
    ]


ONE_TYPE_CASES = [
    # every position of the group in turn: a check that covers only part of a group (X apart
    # from BatchNormalization's parameters before opset 15) fails for the others
    pytest.param(case, position, id=f"{case.id}-{name}-{position}")
    for case in CASES
    for name, positions in _one_type_groups(case)
    for position in positions
]


@pytest.mark.parametrize(("case", "position"), ONE_TYPE_CASES)
def test_inputs_onnx_gives_one_type_must_share_a_dtype(case: Case, position: int) -> None:
    # ONNX's schema is the reference: inputs of one type variable that differ make an invalid
    # model, and numpy would promote them in the kernel to a dtype the shape rule did not give
    metas = case_metas(case)
    meta = metas[position]
    assert meta is not None
    swapped = np.asarray(case.arrays[position]).astype(OTHER_DTYPE[meta.dtype])
    metas[position] = Meta.of(swapped, keep_value=meta.value is not None)
    message = f"op {case_op(case).name} ({case.op_type}): expected inputs of one dtype, got "
    with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
        OPS[case.op_type].infer(case_op(case), case.opset, metas)


def test_the_docs_list_every_registered_op() -> None:
    text = (Path(__file__).parents[2] / "docs" / "architecture.md").read_text()
    listed = re.search(r"<!-- ops: [^\n]*-->\n(.*?)\n<!-- /ops -->", text, re.S)
    assert listed is not None, "docs/architecture.md: the ops list markers are missing"
    assert listed.group(1).replace("\n", " ").split(", ") == sorted(OPS)


def _required_at(op_type: str, opset: int) -> int:
    """How many leading inputs hetsim requires of `op_type` at `opset` (`OpDef.required`)."""
    required = OPS[op_type].required
    return required[max(since for since in required if since <= opset)]


def _onnx_required(op_type: str, opset: int) -> int | None:
    """How many leading inputs ONNX's schema of `op_type` at `opset` requires (a variadic one
    counts once); None for an op outside onnx."""
    defs = pytest.importorskip("onnx.defs")
    try:
        schema = defs.get_schema(op_type, opset)
    except defs.SchemaError:
        return None
    option = defs.OpSchema.FormalParameterOption
    count = 0
    for formal in schema.inputs:
        if formal.option == option.Optional:
            break
        count += 1
        if formal.option == option.Variadic:
            break
    return count


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_required_inputs_are_at_most_what_onnx_requires(case: Case) -> None:
    # never refuse a model ONNX accepts; a few ask less than their schema, on purpose: Gemm
    # before opset 11 (its C), Resize at opsets 10 to 12 (left to its spec), QLinearConv and
    # QLinearMatMul (zero points read as 0)
    onnx_required = _onnx_required(case.op_type, case.opset)
    if onnx_required is None:
        pytest.skip(f"{case.op_type} is not an onnx op")
    assert _required_at(case.op_type, case.opset) <= onnx_required


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_each_required_input_omitted_is_refused_by_rule_and_kernel(case: Case) -> None:
    op, definition = case_op(case), OPS[case.op_type]
    for position in range(_required_at(case.op_type, case.opset)):
        names = tuple("" if i == position else n for i, n in enumerate(op.inputs))
        omitted = dataclasses.replace(op, inputs=names)
        metas = [None if i == position else m for i, m in enumerate(case_metas(case))]
        message = f"op {op.name} ({op.type}): expected input {position} (a tensor), got none "
        with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
            definition.infer(omitted, case.opset, metas)
        with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
            definition.compile(omitted, case.opset)
