"""Every op's `Cost` at a plan's shapes, one cost-rule call per distinct op signature.

Owns `op_signature`, what an op's cost (and so its duration) depends on: its type, attributes
and the identities of its input and output metas. `hetsim.kernels.propagate` gives every tensor
of one shape and dtype (without a value) one shared `Meta`, so a chain of 1e5 equal ops has one
signature and runs its cost rule once. The cost rules themselves are `hetsim.kernels`'; the
formulas that turn a cost into time are `hetsim.cost`'s. `hetsim.sim.bind` keys its durations
on the same signature.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from hetsim.ir import Op
from hetsim.kernels import Cost, Meta, lookup

__all__ = ["op_costs", "op_signature"]


def op_signature(op: Op, metas: Mapping[str, Meta]) -> Hashable | None:
    """What an op's cost depends on: type, attributes, input and output metas (by identity).

    Identity is cheap (no shape tuples built and hashed per op) and exact while `metas` keeps
    every `Meta` alive, so an ``id`` is never reused. ``None`` when an attribute is not hashable
    (a tensor attribute): such an op is not memoized.

    Examples
    --------
    >>> from hetsim.ir import Graph, TensorType
    >>> from hetsim.kernels import propagate
    >>> g = Graph("g", (Op("Relu", "a", ("x",), ("y",)), Op("Relu", "b", ("y",), ("z",))),
    ...           {"x": TensorType((2,), "float32")}, ("z",))
    >>> metas = propagate(g)
    >>> op_signature(g.ops[0], metas) == op_signature(g.ops[1], metas)
    True
    """
    attrs: tuple[Any, ...] = ()
    if op.attrs:
        attrs = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in op.attrs.items())
        try:
            hash(attrs)
        except TypeError:
            return None
    get = metas.get  # inlined for speed: an omitted tensor ("") keys as id(None)
    return (op.type, attrs, *map(id, map(get, op.inputs)), None,
            *map(id, map(get, op.outputs)))  # fmt: skip


def op_costs(ops: Sequence[Op], metas: Mapping[str, Meta]) -> dict[str, Cost]:
    """Op name -> its `Cost` for the tensors' `metas` (ops of one signature share one object).

    Examples
    --------
    >>> from hetsim.ir import Graph, TensorType
    >>> from hetsim.kernels import propagate
    >>> g = Graph("g", (Op("Relu", "a", ("x",), ("y",)),), {"x": TensorType((2,), "float32")},
    ...           ("y",))
    >>> op_costs(g.ops, propagate(g))["a"]
    Cost(flops=2, bytes_read=8, bytes_written=8, op_class='elementwise')
    """
    costs = {}
    seen: dict[Hashable, Cost] = {}
    for op in ops:
        key = op_signature(op, metas)
        cost = seen.get(key) if key is not None else None
        if cost is None:
            ins = [metas.get(name) if name else None for name in op.inputs]
            outs = [metas[name] for name in op.outputs if name]
            cost = lookup(op).cost(op, ins, outs)
            if key is not None:
                seen[key] = cost
        costs[op.name] = cost
    return costs
