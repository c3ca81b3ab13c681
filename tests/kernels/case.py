"""One single-op test case for the every-op check, and the two ways to build it.

A `Case` is data: an op type, named inputs, attributes and an opset. `case_op` turns it into a
hetsim `Op`, `case_model` into a one-node ONNX model that onnx's `ReferenceEvaluator` runs, and
`case_metas` into the input `Meta` list that the op's shape rule sees. `cases_basic.py` and
`cases_nn.py` hold the tables; `test_every_op.py` runs every case.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.meta import Meta

__all__ = ["Case", "case_metas", "case_model", "case_op", "run_reference"]

Reference = Callable[..., Sequence[np.ndarray]]


@dataclass(frozen=True)
class Case:
    """One op applied to concrete inputs.

    Parameters
    ----------
    op_type
        The ONNX op type, a key of `hetsim.kernels.OPS`.
    inputs
        Input name -> array, in the op's input order; ``None`` marks an omitted optional input
        (written as ``""`` in the node).
    attrs
        Attributes as Python values (int, float, str, lists, numpy arrays for tensor attributes).
    opset
        The default-domain opset the model declares; it selects the op's version.
    id
        The pytest id; unique across all tables.
    outputs
        Number of op outputs (Split has several).
    constant
        Names of inputs that are model constants (initializers): their values are known to the
        shape rule, as a Reshape's `shape` or a Slice's `starts` are in a real model.
    reference
        A hand-written reference, ``reference(*input_arrays) -> list of outputs``, used instead of
        onnx's ReferenceEvaluator where that one is wrong or missing; `why` says which.
    rtol, atol
        Tolerances of the value comparison.
    """

    op_type: str
    inputs: Mapping[str, np.ndarray | None]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    opset: int = 17
    id: str = ""
    outputs: int = 1
    constant: tuple[str, ...] = ()
    reference: Reference | None = None
    why: str = ""
    rtol: float = 1e-5
    atol: float = 1e-6

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(f"y{i}" for i in range(self.outputs))

    @property
    def arrays(self) -> list[np.ndarray | None]:
        """Input arrays in order, ``None`` for omitted ones."""
        return list(self.inputs.values())


def case_op(case: Case) -> Op:
    """The hetsim `Op` of `case`."""
    names = tuple("" if v is None else k for k, v in case.inputs.items())
    return Op(case.op_type, f"{case.op_type.lower()}0", names, case.output_names, dict(case.attrs))


def case_metas(case: Case) -> list[Meta | None]:
    """Input metas as the shape rule sees them: values only for `case.constant` inputs."""
    return [
        None if v is None else Meta.of(np.asarray(v), keep_value=k in case.constant)
        for k, v in case.inputs.items()
    ]


def case_model(case: Case) -> Any:
    """A one-node `onnx.ModelProto` computing `case`; constant inputs become initializers."""
    from onnx import helper, numpy_helper

    op = case_op(case)
    node = helper.make_node(case.op_type, list(op.inputs), list(op.outputs), name=op.name)
    for key, value in case.attrs.items():
        if isinstance(value, np.ndarray):
            value = numpy_helper.from_array(value, key)
        node.attribute.append(helper.make_attribute(key, value))
    present = {k: np.asarray(v) for k, v in case.inputs.items() if v is not None}
    graph_inputs = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
        for k, v in present.items()
        if k not in case.constant
    ]
    initializers = [numpy_helper.from_array(present[k], k) for k in case.constant]
    outputs = [helper.make_empty_tensor_value_info(name) for name in op.outputs]
    graph = helper.make_graph([node], case.id or case.op_type, graph_inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])
    model.ir_version = min(model.ir_version, 10)
    return model


def run_reference(case: Case) -> list[np.ndarray]:
    """Expected outputs: `case.reference` if given, else onnx's ReferenceEvaluator."""
    if case.reference is not None:
        return [np.asarray(a) for a in case.reference(*case.arrays)]
    from onnx.reference import ReferenceEvaluator

    feeds = {
        k: np.asarray(v) for k, v in case.inputs.items() if v is not None and k not in case.constant
    }
    return [np.asarray(a) for a in ReferenceEvaluator(case_model(case)).run(None, feeds)]
