"""The generic check of every op in `OPS`: values, shape rule, cost, and that every op has a case.

Values are compared with onnx's ReferenceEvaluator on a one-node model (or the case's hand-written
reference), shapes and dtypes with the op's shape rule, and the cost must be non-negative and
within a plausible bound of the tensor sizes.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from hetsim.ir import Graph, TensorType
from hetsim.kernels import OP_CLASSES, OPS, execute
from tests.kernels.case import Case, case_metas, case_op, run_reference
from tests.kernels.cases_basic import CASES as BASIC_CASES

if importlib.util.find_spec("tests.kernels.cases_nn") is not None:
    from tests.kernels.cases_nn import CASES as NN_CASES
else:  # the NN table is written in parallel; until it lands, its ops fail the coverage test
    NN_CASES = []

CASES: list[Case] = [*BASIC_CASES, *NN_CASES]


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
