"""What partitioning reads of a graph before placing anything: its constants and the ops folded
from them (`fold`), and the ops whose shapes are unknown at compile time (`dynamic_ops`): steps
1 and 2 of `hetsim.partition.core`'s rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hetsim.ir import Graph, Op

__all__ = ["dims_of_op", "dims_read", "dynamic_ops", "fold"]


def fold(graph: Graph) -> tuple[frozenset[str], tuple[Op, ...], tuple[Op, ...]]:
    """Constants, folded ops (constants only in) and the ops that remain, in graph order.

    Examples
    --------
    >>> import numpy as np
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Neg", "n", ("w",), ("v",)), Op("Add", "a", ("x", "v"), ("y",))),
    ...     {"x": TensorType((2,), "float32")}, ("y",), {"w": np.ones(2, "float32")})
    >>> constants, folded, kept = fold(g)
    >>> sorted(constants), [o.name for o in folded], [o.name for o in kept]
    (['v', 'w'], ['n'], ['a'])
    """
    constants = {name for name in graph.initializers if name not in graph.inputs}
    known = {*constants, ""}  # an omitted input ("") does not stop folding
    folded, kept = [], []
    for op in graph.ops:
        if known.issuperset(op.inputs):
            folded.append(op)
            constants.update(name for name in op.outputs if name)
            known.update(op.outputs)
        else:
            kept.append(op)
    return frozenset(constants), tuple(folded), tuple(kept)


def dynamic_ops(graph: Graph, ops: Sequence[Op], dims: Mapping[str, int]) -> frozenset[str]:
    """The names of the ops among `ops` that read a tensor whose shape depends on a symbolic dim
    not bound in `dims` (tracked by dependence from the graph inputs).

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Relu", "r", ("x",), ("y",)), Op("Neg", "n", ("w",), ("v",))),
    ...     {"x": TensorType(("seq",), "float32"), "w": TensorType((2,), "float32")}, ("y", "v"))
    >>> sorted(dynamic_ops(g, g.ops, {})), sorted(dynamic_ops(g, g.ops, {"seq": 8}))
    (['r'], [])
    """
    shaped = {n for n, t in graph.inputs.items() if any(s not in dims for s in t.symbols)}
    if not shaped:
        return frozenset()
    dynamic = set()
    for op in ops:
        if any(name in shaped for name in op.inputs):
            dynamic.add(op.name)
            shaped.update(op.outputs)
    return frozenset(dynamic)


def dims_read(graph: Graph, ops: Sequence[Op], names: Sequence[str]) -> dict[str, frozenset[str]]:
    """Per symbolic dim of `names`, the ops among `ops` whose shapes depend on it: those
    `dynamic_ops` finds with that dim alone unbound (one walk per dim).

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Relu", "r", ("x",), ("y",)), Op("Neg", "n", ("w",), ("v",))),
    ...     {"x": TensorType(("batch",), "float32"), "w": TensorType(("seq",), "float32")},
    ...     ("y", "v"))
    >>> {dim: sorted(read) for dim, read in dims_read(g, g.ops, ["batch", "seq"]).items()}
    {'batch': ['r'], 'seq': ['n']}
    """
    every = graph.symbols
    return {
        name: dynamic_ops(graph, ops, {other: 0 for other in every if other != name})
        for name in names
    }


def dims_of_op(graph: Graph, ops: Sequence[Op], names: Sequence[str], op: str) -> list[str]:
    """The dims of `names`, in their order, that a shape of op `op` depends on (`dims_read`:
    a walk of the graph per dim, for a message).

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Add", "a", ("x", "w"), ("y",)),),
    ...     {"x": TensorType(("batch",), "float32"), "w": TensorType(("seq",), "float32")},
    ...     ("y",))
    >>> dims_of_op(g, g.ops, ["seq", "batch"], "a")
    ['seq', 'batch']
    """
    read = dims_read(graph, ops, names)
    return [name for name in names if op in read[name]]
