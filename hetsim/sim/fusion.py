"""Fused values: a functional run computes what `hetsim.execute` computes, with its fused kernels.

`hetsim.kernels.fuse` folds the per-channel affine ops after a Conv (a BatchNormalization, a Mul
or an Add by a per-channel constant) into its weights, and runs a Relu in place after a Conv,
Add, Sum or Concat. `hetsim.execute` runs those fused kernels by default, as onnxruntime does.
A functional `hetsim.simulate` does too (``fuse=True``, the default): the op that absorbed the
others (the *head*) computes the group's result when it runs and writes it to the slot the
group's last op writes; the absorbed ops compute nothing. Its outputs then equal `execute`'s bit
for bit, and it skips the work `execute` skips (a functional ResNet-50: docs/runtime.md).

Only values change. Every op is still allocated, dispatched, launched, timed and freed as
compiled, wherever the plan put it, and the tensors between the ops of a group are allocated and
copied as before: they just hold no value (``None``), since only the group reads them. Values
do not depend on where or when an op runs, only on the order, which the group keeps: each of
its ops depends on the one before, so the head runs before any reader of the group's result.

A group is computed op by op instead when one of its ops is not run by exactly one CALL or
LAUNCH of the bound programs (it is when compiled by `hetsim.runtime.compile_plan`; the rule
guards hand-made programs). ``fuse=False`` computes every op as the graph states it, bit for bit
``execute(graph, inputs, fuse=False)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.ir import Graph, Op
from hetsim.ir.cache import SIMULATOR_BUDGET, GraphCache
from hetsim.kernels import Kernel, lookup
from hetsim.kernels.checks import raise_kernel_error
from hetsim.kernels.fuse import fused_of, with_epilogue
from hetsim.runtime import Call, Instruction, Launch
from hetsim.sim.steps import Run, kernel_run, no_run

__all__ = ["Group", "clear_groups", "constant_values", "fused_runs", "groups_of"]


@dataclass(frozen=True, slots=True)
class Group:
    """One head op and the ops whose work its fused kernel does.

    Parameters
    ----------
    head
        The op whose kernel computes the group (a Conv, Add, Sum or Concat of the graph).
    absorbed
        The ops after it that compute nothing, in graph order; the last one's outputs are the
        group's.
    kernel
        The fused op's compiled kernel (the epilogue included).
    inputs
        Per input of the fused op: the position of the head's input it reads, or ``None`` when
        it reads a folded constant.
    constants
        Per input of the fused op: the folded constant (``None`` where it reads the head's).
    outputs
        The group's output tensors: the last absorbed op's.
    """

    head: str
    absorbed: tuple[str, ...]
    kernel: Kernel
    inputs: tuple[int | None, ...]
    constants: tuple[np.ndarray | None, ...]
    outputs: tuple[str, ...]

    def __repr__(self) -> str:
        return f"<Group {self.head} absorbs {list(self.absorbed)}>"

    def compute(self, values: Sequence[Any]) -> list[Any]:
        """The group's outputs, from the values of the head's inputs (in its input order)."""
        pairs = zip(self.inputs, self.constants, strict=True)
        return self.kernel([values[i] if i is not None else c for i, c in pairs])


_groups: GraphCache[tuple[Group, ...]] = GraphCache(4, SIMULATOR_BUDGET)


def groups_of(graph: Graph) -> tuple[Group, ...]:
    """The fused groups of `graph`, as `hetsim.execute` runs them (made once per graph: the
    last four graphs are kept, `hetsim.ir.cache.GraphCache`).

    Examples
    --------
    >>> from hetsim.ir import GraphBuilder
    >>> b = GraphBuilder("g")
    >>> x = b.input("x", (1, 2), "float32")
    >>> groups_of(b.build(b.op("Relu", b.op("Add", x, x))))  # the Relu runs in place
    (<Group add0 absorbs ['relu0']>,)
    """
    return _groups.get(graph, lambda: _make_groups(graph))


def clear_groups() -> None:
    """Forget every graph's groups."""
    _groups.clear()


def _make_groups(graph: Graph) -> tuple[Group, ...]:
    fused = fused_of(graph)  # the folded weights `hetsim.execute` computes with
    by_name = {op.name: op for op in graph.ops}
    groups = []
    for op in fused.ops:
        absorbed = fused.absorbed.get(op.name)
        if not absorbed:
            continue
        head = by_name[op.name]  # weights are initializers, never graph inputs (`Graph`)
        kernel = lookup(op).compile(op, graph.opset)
        epilogue = fused.epilogues.get(op.outputs[0])
        if epilogue is not None:
            kernel = with_epilogue(kernel, epilogue)
        inputs = tuple(
            None if name in fused.constants else head.inputs.index(name) for name in op.inputs
        )
        constants = tuple(fused.constants.get(name) for name in op.inputs)
        groups.append(Group(op.name, absorbed, kernel, inputs, constants, op.outputs))
    return tuple(groups)


def fused_runs(
    graph: Graph, ops: Sequence[Op], code: Iterable[Iterable[Instruction]], none_slot: int
) -> dict[int, Run]:
    """Op number -> what it computes in a fused functional run, for the ops of every group
    whose ops are each run by exactly one CALL or LAUNCH in `code` (every bound program's
    instructions, relocated into one slot space): the head's fused kernel, writing to the slots
    of the last absorbed op's outputs; nothing for the absorbed ops. Other ops: not in it.

    `ops` are the ops the programs number; `none_slot` always holds ``None`` (omitted inputs).
    """
    groups = groups_of(graph)
    if not groups:
        return {}
    number = {op.name: n for n, op in enumerate(ops)}
    wanted = {number.get(name) for g in groups for name in (g.head, *g.absorbed)}
    found: dict[int, list[Call | Launch]] = {}
    for instructions in code:
        for ins in instructions:
            if (ins.__class__ is Call or ins.__class__ is Launch) and ins.op in wanted:
                found.setdefault(ins.op, []).append(ins)
    runs: dict[int, Run] = {}
    for group in groups:
        numbers = [number.get(name) for name in (group.head, *group.absorbed)]
        known = [n for n in numbers if n is not None and len(found.get(n, ())) == 1]
        if len(known) != len(numbers):
            continue
        head, last = found[known[0]][0], found[known[-1]][0]
        inputs = tuple(none_slot if s is None else s for s in head.inputs)
        runs[known[0]] = kernel_run(group.compute, inputs, tuple(last.outputs), ops[known[0]])
        runs.update((n, no_run) for n in known[1:])
    return runs


def constant_values(
    graph: Graph, folded: Sequence[Op], kernel_of: Callable[[Op], Kernel], *, fuse: bool
) -> dict[str, Any]:
    """Initializers plus the outputs of the `folded` ops (those computed from constants only),
    with `kernel_of(op)` compiling an op's kernel; with `fuse`, a group folded whole is computed
    by its fused kernel, as `hetsim.execute` folds it (its inner tensors then have no value:
    only the group reads them)."""
    values: dict[str, Any] = dict(graph.initializers)
    groups = {g.head: g for g in groups_of(graph)} if fuse and folded else {}
    names = {op.name for op in folded}
    skip: set[str] = set()
    for op in folded:
        if op.name in skip:
            continue
        group = groups.get(op.name)
        if group is not None and names.issuperset(group.absorbed):
            skip.update(group.absorbed)
            head_inputs = [values[name] if name else None for name in op.inputs]
            try:
                results = group.compute(head_inputs)
            except Exception as err:
                raise_kernel_error(op, err)
            values.update(zip(group.outputs, results, strict=False))
            continue
        kernel = kernel_of(op)
        try:
            results = kernel([values[name] if name else None for name in op.inputs])
        except Exception as err:
            raise_kernel_error(op, err)
        values.update((name, r) for name, r in zip(op.outputs, results, strict=False) if name)
    return values
