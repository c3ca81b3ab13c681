"""A whole plan compiled: one program per level invocation, the root's first.

`compile_plan` walks a `hetsim.partition.Plan` from the root level down. The root level's
segments become the root program; each segment placed on a nested level becomes one INVOKE in
its parent's code and one program of its own, compiled from the segments the nested level cut
from it (`Plan.children`), by the compiler of that level's executor kind (`COMPILERS`): VM
bytecode (`hetsim.runtime.vm`) or a graph executor's static node list
(`hetsim.runtime.graph_executor`). Programs are numbered in the order they are compiled, so a
parent's number is smaller than its children's; INVOKE names its callee's number.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op, check_graph, op_label
from hetsim.partition import Plan, Segment, fold
from hetsim.partition.folding import dims_of_op, dims_read
from hetsim.platform import Platform, check_platform
from hetsim.runtime.bytecode import VmProgram
from hetsim.runtime.graph_executor import GraphProgram, check_static, compile_graph
from hetsim.runtime.vm import LevelCompiler, Unit, UnitPlacement, _new

__all__ = ["COMPILERS", "LevelProgram", "PlanProgram", "compile_plan", "compile_vm"]

LevelProgram = VmProgram | GraphProgram
"""The program of one invocation of one level."""


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)  # bound programs: bind.bound_for
class PlanProgram:
    """Every program of a plan: `programs[0]` is the root level's, the rest nested invocations.

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.partition import partition
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> model = load_model("cnn")
    >>> compiled = compile_plan(model, soc, partition(model, soc))
    >>> compiled
    <PlanProgram cnn programs=2 levels=['', 'vdevice0']>
    >>> [type(p).__name__ for p in compiled.programs]
    ['VmProgram', 'GraphProgram']
    """

    plan: Plan
    programs: tuple[LevelProgram, ...]

    @property
    def root(self) -> LevelProgram:
        """The root level's program."""
        return self.programs[0]

    def __repr__(self) -> str:
        levels = list(dict.fromkeys(p.level for p in self.programs))
        return f"<PlanProgram {self.plan.graph} programs={len(self.programs)} levels={levels}>"

    def listing(self) -> str:
        """Every program's listing under a header naming its number, level and host."""
        return "\n".join(
            f"program {number}: level {p.level or '(root)'} on {p.host} "
            f"({type(p).__name__})\n{p.listing()}"
            for number, p in enumerate(self.programs)
        )


class _Context:
    """What every level's compilation reads: the plan, the ops by name, the programs so far."""

    def __init__(self, graph: Graph, platform: Platform, plan: Plan) -> None:
        self.graph = graph
        self.platform = platform
        self.plan = plan
        constants, folded, ops = fold(graph)
        self.constants = constants
        self.folded = tuple(folded)
        self.ops = tuple(ops)
        self.names = tuple([op.name for op in ops])
        self._number: dict[str, int] | None = None
        self.programs: list[LevelProgram | None] = []
        unbound = {s for t in graph.inputs.values() for s in t.symbols} - set(plan.dims)
        self.unbound = sorted(unbound)
        self.dynamic = frozenset(plan.dynamic)
        self._reading: dict[str, frozenset[str]] | None = None

    def numbers(self, names: tuple[str, ...]) -> Iterable[int]:
        """The numbers of the ops named `names` (in `ops`): counted, where they are every op in
        order (a level of one segment), as a lookup per name in a table of 1e6 misses the
        caches; else looked up in a table made at the first call (a KeyError names one unknown)."""
        if names == self.names:
            return range(len(names))
        if self._number is None:
            self._number = {name: n for n, name in enumerate(self.names)}
        number = self._number
        return [number[name] for name in names]

    def dims_read_by(self, ops: Sequence[Op]) -> dict[str, int]:
        """The plan's compile-time dims that a shape of `ops` depends on (tracked by dependence,
        as `Plan.dynamic`): a graph executor's static shapes hold for those only, so a run that
        pads another (``cuda_graph="buckets"``) leaves its level as compiled."""
        if self._reading is None:  # per dim, the ops that would be dynamic were it unbound
            self._reading = dims_read(self.graph, self.ops, list(self.plan.dims))
        names = {op.name for op in ops}
        return {
            name: size for name, size in self.plan.dims.items()
            if not self._reading[name].isdisjoint(names)
        }  # fmt: skip

    def unbound_read_by(self, op: Op) -> list[str]:
        """The dims unbound at compile time that a shape of `op` depends on (for an error: a
        walk of the graph per dim)."""
        return dims_of_op(self.graph, self.ops, self.unbound, op.name)

    def compile_level(
        self,
        level: str,
        segments: Sequence[Segment],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
    ) -> int:
        """Compile one invocation of `level` (and, first, its nested invocations); its number."""
        number = len(self.programs)
        self.programs.append(None)
        units: list[Unit] = []
        for segment in segments:
            if segment.is_nested:
                child = self.compile_level(
                    segment.device,
                    self.plan.children(segment.id),
                    segment.inputs,
                    segment.outputs,
                )
                units.append(
                    Unit(segment.id, segment.device, segment.inputs, segment.outputs, None,
                         child, "invoke")
                )  # fmt: skip
                continue
            ops = self.ops
            for name, index in zip(segment.ops, self.numbers(segment.ops), strict=True):
                op = ops[index]
                units.append(  # Unit.of_op, inlined for speed (one per op)
                    _new(Unit, (name, segment.device, op.inputs, op.outputs, index, None, op.type))
                )
        executor = self.platform.levels[level].executor
        kind = executor.kind if executor is not None else "vm"
        compiler = COMPILERS.get(kind)
        if compiler is None:
            close = difflib.get_close_matches(kind, list(COMPILERS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SimulationError(
                f"level {level or '(root)'}: expected an executor kind in {sorted(COMPILERS)}, "
                f"got {kind!r}{hint}"
            )
        placed = tuple(units)
        self.programs[number] = compiler(
            self, level, placed, UnitPlacement(placed), inputs, outputs
        )
        return number


def _compile_vm(
    ctx: _Context,
    level: str,
    units: tuple[Unit, ...],
    placement: Mapping[str, str],
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
) -> LevelProgram:
    is_root = level == ""
    compiler = LevelCompiler(
        ctx.graph, ctx.platform, level, ctx.ops, ctx.constants, units, placement,
        caller_outputs=not is_root,
    )  # fmt: skip
    return compiler.compile(inputs, outputs, folded=ctx.folded if is_root else ())


def _compile_graph(
    ctx: _Context,
    level: str,
    units: tuple[Unit, ...],
    placement: Mapping[str, str],
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
) -> LevelProgram:
    ops = tuple(ctx.ops[u.op] for u in units if u.op is not None)
    check_static(level or "(root)", ops, ctx.dynamic, ctx.unbound_read_by)
    is_root = level == ""
    compiler = LevelCompiler(
        ctx.graph, ctx.platform, level, ctx.ops, ctx.constants, units, placement,
        caller_outputs=not is_root,
    )  # fmt: skip
    folded = ctx.folded if is_root else ()
    return compile_graph(compiler, inputs, outputs, ctx.dims_read_by(ops), folded=folded)


COMPILERS: Mapping[str, Callable[..., LevelProgram]] = {
    "vm": _compile_vm,
    "graph": _compile_graph,
}
"""Executor kind -> the compiler of one invocation of a level it runs."""


def compile_plan(graph: Graph, platform: Platform, plan: Plan) -> PlanProgram:
    """Compile `plan` of `graph` on `platform`: the root program and one per invocation.

    Parameters
    ----------
    graph
        The model the plan was made for.
    platform
        The platform it was made for.
    plan
        `hetsim.partition.partition`'s plan.

    Raises
    ------
    SimulationError
        An argument of the wrong type, a plan made for another graph or platform, an op with
        dynamic shapes on a graph-executor level (`check_static`), or an executor kind no
        compiler knows.
    """
    given = (("graph", graph, Graph), ("platform", platform, Platform), ("plan", plan, Plan))
    for name, value, kind in given:
        if not isinstance(value, kind):
            raise SimulationError(
                f"compile_plan: expected {name} a {kind.__name__}, got {type(value).__name__}"
            )
    if (plan.graph, plan.platform) != (graph.name, platform.name):
        raise SimulationError(
            f"compile_plan: expected a plan of graph {graph.name} on platform {platform.name}, "
            f"got a plan of {plan.graph} on {plan.platform}"
        )
    ctx = _Context(graph, platform, plan)
    root = plan.levels[""]
    inputs = tuple(name for name in graph.inputs if name not in ctx.constants)
    try:
        ctx.compile_level("", root.segments, inputs, graph.outputs)
    except KeyError as err:  # names alike, contents not: an op or a level the plan has
        raise SimulationError(
            f"compile_plan: expected a plan of graph {graph.name} on platform {platform.name}, "
            f"got one that names {err.args[0]!r}, which they lack (a plan of another graph or "
            "platform of the same name?)"
        ) from err
    programs = tuple(p for p in ctx.programs if p is not None)
    assert len(programs) == len(ctx.programs), "a program was not compiled"
    return PlanProgram(plan, programs)


def compile_vm(graph: Graph, platform: Platform, placement: Mapping[str, str]) -> VmProgram:
    """Compile the root level's placed ops to VM bytecode (the rules: `hetsim.runtime.vm`).

    Parameters
    ----------
    graph
        The model, ops in topological order.
    platform
        The platform the placement refers to.
    placement
        Op name -> processor path: the root host or a plain device of the root level. A plan
        with nested levels compiles with `hetsim.runtime.compile_plan`.

    Raises
    ------
    SimulationError
        An op with no placement, a placement on a processor the root level does not drive (a
        nested level included), or a copy between memories no device stream can carry.
    HetsimError
        `graph` is not a `Graph` (a `ModelError`), `platform` not a `Platform`, or `placement`
        not a mapping (a `SimulationError`).
    """
    check_graph(graph, "compile_vm")
    check_platform(platform, "compile_vm")
    if not isinstance(placement, Mapping):
        raise SimulationError(
            "compile_vm: expected placement a mapping of op name -> processor path "
            f"(hetsim.runtime.place gives one), got {type(placement).__name__}"
        )
    constants, folded, ops = fold(graph)
    try:
        units = tuple(Unit.of_op(n, op, placement[op.name]) for n, op in enumerate(ops))
    except KeyError as err:  # found on failure only: nothing per op when every one is placed
        op = next(op for op in ops if op.name not in placement)
        raise SimulationError(
            f"placement: expected a processor for every op of graph {graph.name}, got none for "
            f"{op_label(op)}"
        ) from err
    level = platform.levels[""]
    return LevelCompiler(
        graph, platform, level.path, tuple(ops), constants, units, placement
    ).compile(tuple(graph.inputs), graph.outputs, folded=tuple(folded))
