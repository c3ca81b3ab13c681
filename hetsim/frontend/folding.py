"""Constant folding of an imported graph: every op whose outputs are known before the run (its
inputs constants, or its outputs known from static shapes) becomes initializers, computed with the
kernels of `hetsim.kernels.OPS`. A kernel that fails here is reported as `execute` reports it
(`hetsim.kernels.checks.raise_kernel_error`): an OpError naming the op, or a SimulationError
for arrays this machine cannot allocate; a shape rule that fails, as `propagate` reports it
(`hetsim.kernels.propagate.infer_metas`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op
from hetsim.kernels import OPS, Meta
from hetsim.kernels.checks import raise_kernel_error
from hetsim.kernels.propagate import infer_metas

__all__ = ["fold_constants"]


def fold_constants(graph: Graph, *, keep: Sequence[str] = ()) -> Graph:
    """Replace every op whose outputs are known before the run with initializers.

    An op is folded when all its inputs are constant (it runs once, here, with its kernel), or
    when its shape rule knows the value of every output from static input shapes (``Shape`` of
    a statically shaped tensor, and the arithmetic on it). Initializers that no remaining op
    reads are dropped (the ``__SHAPE`` tensors of ConstantOfShape weights, for instance). Ops
    of the types in `keep` stay (and so do the ops that read them).

    Examples
    --------
    >>> from hetsim.ir import GraphBuilder
    >>> b = GraphBuilder("scaled")
    >>> x = b.input("x", (2,))
    >>> two = b.op("Add", np.ones(2, np.float32), np.ones(2, np.float32))
    >>> g = fold_constants(b.build(b.op("Mul", x, two)))
    >>> [op.type for op in g.ops], g.initializers["add0"].tolist()
    (['Mul'], [2.0, 2.0])
    """
    constants: dict[str, np.ndarray] = dict(graph.initializers)
    metas: dict[str, Meta] = {n: Meta.of(a) for n, a in constants.items()}
    metas.update(
        (n, Meta(t.shape, np.dtype(t.dtype)))  # type: ignore[arg-type]
        for n, t in graph.inputs.items()
        if t.is_static
    )
    kept: list[Op] = []
    for op in graph.ops:
        values = None if op.type in keep else _fold(op, graph.opset, constants, metas)
        if values is None:
            kept.append(op)
            continue
        for name, value in zip(op.outputs, values, strict=False):
            if name:
                constants[name] = value
                metas[name] = Meta.of(value)
    used = {n for op in kept for n in op.inputs} | set(graph.outputs)
    produced = set(graph.inputs).union(*(op.outputs for op in kept))
    value_types, value_dtypes = graph.declared_for((produced | used).__contains__)
    return Graph(
        name=graph.name,
        ops=tuple(kept),
        inputs=graph.inputs,
        outputs=graph.outputs,
        initializers={n: a for n, a in constants.items() if n in used and n not in produced},
        opset=graph.opset,
        value_types=value_types,
        value_dtypes=value_dtypes,
    )


def _fold(
    op: Op, opset: int, constants: Mapping[str, np.ndarray], metas: dict[str, Meta]
) -> Sequence[np.ndarray] | None:
    """The output values of `op` if they are known before the run; its metas when inferable."""
    definition = OPS[op.type]
    if all(not n or n in constants for n in op.inputs):
        # the shape rule checks what the kernel trusts: a malformed op is a ModelError here
        infer_metas(op, opset, [metas[n] if n else None for n in op.inputs])
        kernel = definition.compile(op, opset)
        try:
            return kernel([constants[n] if n else None for n in op.inputs])
        except Exception as err:  # a Gather index out of range, a ConstantOfShape too large
            # folded when the model is loaded, whatever the mode of a later run
            raise_kernel_error(op, err, no_room="a constant, computed when the model is loaded")
    if not all(not n or n in metas for n in op.inputs):
        return None
    try:
        outputs = infer_metas(op, opset, [metas[n] if n else None for n in op.inputs])
    except ModelError:
        # Folding is an optimization: an op whose shape rule needs what only a run knows (a
        # computed Reshape target) stays, and propagate() or execute() reports any real fault.
        return None
    values = [m.value for m in outputs]
    if all(v is not None for v in values):
        return values  # type: ignore[return-value]
    metas.update(zip(op.outputs, outputs, strict=False))
    return None
