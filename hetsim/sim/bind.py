"""Binding: a compiled `VmProgram` plus one run's shapes become the engine's steps.

Everything fixed for a run is computed here, before ``env.run()``: the byte size of every slot
(from the tensors' `Meta`), every duration (`hetsim.cost` formulas of the platform's parameters),
the streams and memories each step touches (by name), the link hops of every copy, and, in
functional mode, the compiled kernel closures and the constants' values. The result, a
`BoundProgram`, is plain data that no run changes: `bound_for` keeps it for the next run of the
same program at the same shapes, and `run_program` runs the engine once with a fresh value table.
Each instruction's step is made by its binder (`hetsim.sim.binders.Binder.steps`).

Host-side costs per instruction (the formulas are in ``docs/cost-model.md``; when each is paid,
in ``docs/runtime.md``):

- every instruction: ``dispatch_us(executor)``;
- ALLOC and FREE add the runtime's ``alloc_us`` / ``free_us``;
- LAUNCH and COPY add ``launch_us`` of the device whose stream takes the work;
- SYNC adds ``sync_us`` of the device, once its stream has drained.

Device side: a kernel takes ``kernel_us(device, cost)``; a CALL takes ``kernel_us(host, cost)``
on the host; a copy holds each link of its route for ``transfer_us(link, size_bytes)``.

A compiled plan (`hetsim.runtime.PlanProgram`) has one program per level invocation; they are
bound into one slot space (program ``i``'s slots start at the sum of the earlier programs'
sizes), so the engine keeps one value and readiness table. An INVOKE costs the caller's
``dispatch_us``; its request takes ``invoke_us(level, DESCRIPTOR_BYTES × (arguments +
results))`` and its completion ``invoke_us(level, DESCRIPTOR_BYTES × results)``.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np

from hetsim.errors import SimulationError
from hetsim.ir.cache import SIMULATOR_BUDGET, GraphCache
from hetsim.kernels import Cost, Meta, read_only
from hetsim.platform import Platform
from hetsim.runtime import (
    MNEMONICS,
    Copy,
    Free,
    GraphProgram,
    Invoke,
    Launch,
    LevelProgram,
    PlanProgram,
    Ret,
)
from hetsim.sim.binders import Binder, compiled_kernel
from hetsim.sim.engine import Simulation
from hetsim.sim.fusion import constant_values, fused_runs
from hetsim.sim.records import RunRecord
from hetsim.sim.slots import SlotSpace, new_tuple, programs_of, relocated
from hetsim.sim.steps import (
    LOAD_OP,
    AllocStep,
    Step,
    no_run,
    two_clock_memories,
)

__all__ = [
    "BoundProgram",
    "bind",
    "bound_for",
    "clear_bound",
    "run_program",
    "simulation_for",
]


@dataclass(frozen=True, slots=True, eq=False)
class BoundProgram:
    """A program ready to run: steps, slot names, what exists at time 0, the constants' values.

    It names the engine state it touches and holds no run's values, so it runs on any number of
    simulations (each run gets its own value table from `values_for`).

    Parameters
    ----------
    code
        The root program's steps.
    slot_names
        The tensor each slot holds (slot ``len(slot_names) - 1`` is always empty: omitted
        optional inputs read it).
    resident
        Allocations that exist at time 0: graph inputs, constants, a graph executor's storage.
    ready
        Slots ready at time 0.
    programs
        ``(host, steps)`` of every program by number (the root's first), for INVOKE.
    inputs
        Graph input name -> its slot.
    constants
        ``(slot, value)`` of every constant slot in functional mode; ``None`` in timing mode.
    deferred
        The memories two clocks change (`hetsim.sim.steps.two_clock_memories`): a run counts
        them in simulated time and checks them when it ends.
    """

    code: tuple[Step, ...]
    slot_names: tuple[str, ...]
    resident: tuple[AllocStep, ...]
    ready: tuple[int, ...]
    programs: tuple[tuple[str, tuple[Step, ...]], ...] = ()
    inputs: Mapping[str, int] = dataclasses.field(default_factory=dict)
    constants: tuple[tuple[int, Any], ...] | None = None
    deferred: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"<BoundProgram steps={len(self.code)} slots={len(self.slot_names)}>"

    def values_for(self, inputs: Mapping[str, Any]) -> list[Any] | None:
        """A fresh value table for one run: the constants and `inputs` (every graph input) in
        their slots; ``None`` in timing mode.

        Raises
        ------
        SimulationError
            A graph input missing from `inputs` in functional mode.
        """
        if self.constants is None:
            return None
        missing = [name for name in self.inputs if name not in inputs]
        if missing:
            raise SimulationError(
                f"functional run: expected a value for every graph input "
                f"{sorted(self.inputs)}, got none for {missing}"
            )
        values: list[Any] = [None] * len(self.slot_names)
        for slot, value in self.constants:
            values[slot] = value
        for name, slot in self.inputs.items():
            values[slot] = inputs[name]
        return values


def simulation_for(
    program: LevelProgram | PlanProgram, platform: Platform, *, trace: bool = True
) -> Simulation:
    """A fresh `Simulation` with the platform's memories and links and a stream per used device.

    The record lists every processor of the platform, idle ones included.
    """
    used = _streams_used(program)
    streams = [path for path in platform.processors if path in used]
    memories = {name: memory.capacity_bytes for name, memory in platform.memories.items()}
    root = programs_of(program)[0]
    return Simulation(
        root.host, streams, memories, platform.links, processors=platform.processors, trace=trace
    )


_QUEUED = (Launch, Copy, Invoke)
_streams: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


def _streams_used(program: LevelProgram | PlanProgram) -> frozenset[str]:
    """The processors whose streams `program` queues work (or a FREE's bytes: `Free.after`)
    on, found once per program (a scan
    of every instruction: about 6% of a warm run of a 1e3-op chain, when done every run)."""
    found = _streams.get(program)
    if found is None:
        streams: set[str] = set()
        for p in programs_of(program):
            for ins in p.code:
                kind = type(ins)
                if kind in _QUEUED:
                    streams.add(ins.processor)  # type: ignore[union-attr]  # each has one
                elif kind is Free and ins.after:  # type: ignore[union-attr]
                    streams.update(ins.after)  # type: ignore[union-attr]
        found = _streams[program] = frozenset(streams)
    return found


def _check_ends(program: LevelProgram) -> None:
    """The interpreter runs a program until its RET: code that does not end with one (written
    by hand: the compilers always end with RET) would run past its end. Once per program."""
    last = program.code[-1] if program.code else None
    if type(last) is not Ret:
        got = MNEMONICS.get(type(last), type(last).__name__) if last is not None else "no code"
        raise SimulationError(
            f"program of level {program.level or '(root)'} of {program.graph.name}: expected "
            f"code that ends with RET, got {got}"
        )


def _check_dims(program: LevelProgram, dims: Mapping[str, int], metas: Mapping[str, Meta]) -> None:
    """A graph executor's shapes are compiled: the run must bind its dims to the same sizes,
    whether `dims` names them or only the shapes of the graph inputs in `metas` carry them."""
    if not isinstance(program, GraphProgram) or not program.dims:
        return
    bound = [(name, size, f"{name}={size}") for name, size in dims.items()]
    for tensor, declared in program.graph.inputs.items():
        meta = metas.get(tensor)
        if meta is not None:
            bound.extend(
                (dim, size, f"{dim}={size} (from input {tensor!r}, {list(meta.shape)})")
                for dim, size in zip(declared.shape, meta.shape, strict=False)
                if isinstance(dim, str)
            )
    for name, size, said in bound:
        compiled = program.dims.get(name)
        if compiled is not None and size != compiled:
            raise SimulationError(
                f"graph executor {program.level or '(root)'}: expected {name}={compiled} (its "
                f"static shapes), got {said}"
            )


def bind(
    program: LevelProgram | PlanProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    *,
    dims: Mapping[str, int] | None = None,
    is_functional: bool = False,
    costs: Mapping[str, Cost] | None = None,
    fuse: bool = True,
) -> BoundProgram:
    """Resolve `program` for runs at one set of shapes: sizes, durations and (functional) kernels.

    Parameters
    ----------
    program
        The compiled level, or a compiled plan (every level invocation).
    platform
        The platform it was compiled for.
    metas
        Every tensor's `Meta` for this run (`hetsim.kernels.propagate`).
    dims
        The run's symbolic dims (for BRANCH_SHAPE, and checked against a graph executor's).
    is_functional
        Bind the kernels and the constants' values: its runs compute every value. Otherwise
        timing mode: no values computed.
    costs
        Op name -> `Cost` for these `metas`, as `hetsim.partition.costs.op_costs` gives them (ops of
        one signature share one object), when the caller has them; else computed here.
    fuse
        In functional mode, compute values with `hetsim.execute`'s fused kernels
        (`hetsim.sim.fusion`); ``False``: every op as the graph states it. Times are the same.

    Raises
    ------
    SimulationError
        A run's dims that differ from those a graph executor's shapes were compiled for, a
        tensor without a `Meta` or an op without a `Cost`, or a program that names a processor,
        link or level `platform` lacks (compiled for another platform).
    """
    programs = programs_of(program)
    root = programs[0]
    run_dims = dict(dims or {})
    try:
        space = SlotSpace(programs, platform, metas, costs)
    except KeyError as err:  # caught, not checked: nothing per slot on the common path
        raise SimulationError(
            f"bind: expected a Meta for every tensor of graph {root.graph.name} (as "
            f"hetsim.kernels.propagate gives them), got none for {err.args[0]!r}"
        ) from err
    constants: tuple[tuple[int, Any], ...] | None = None
    if is_functional:
        graph = root.graph
        table = constant_values(graph, root.folded, partial(compiled_kernel, graph), fuse=fuse)
        constants = tuple(  # kept for every run: an output may hand one out
            (base + slot, read_only(table[p.slots[slot].tensor]))
            for p, base in zip(programs, space.offsets, strict=True)
            for slot in p.constants
        )
    codes = relocated(program, programs, space.offsets)
    if is_functional and fuse:
        space.fused = fused_runs(root.graph, root.ops, codes, len(space.slots))
    bound: list[tuple[str, tuple[Step, ...]]] = []
    staged: set[str] = set()
    for p, p_code in zip(programs, codes, strict=True):
        _check_dims(p, run_dims, metas)
        _check_ends(p)
        try:
            binder = Binder(p, platform, run_dims, space, is_functional=is_functional)
            code = binder.steps(p_code)
            staged |= binder.staged
        except KeyError as err:  # caught, not checked: nothing per instruction when all is well
            message = _missing(p, platform, space, err.args[0] if err.args else None)
            if message is None:
                raise
            raise SimulationError(message) from err
        if p is not root and is_functional:
            kernels = tuple(getattr(step, "run", no_run) for step in code)
            code = tuple(
                cast(Any, step)._replace(run=no_run) if hasattr(step, "run") else step
                for step in code
            )
            space.runs[len(bound)] = (code, kernels)
        bound.append((p.host, code))
    owner = {p.memory: p.path for p in platform.processors.values() if p.owns_memory}

    def load(slot: int, host: str) -> AllocStep:
        found = space.slots[slot]
        return new_tuple(AllocStep, (
            "load", 0.0, found.memory, space.sizes[slot], found.name,
            owner.get(found.memory, host), LOAD_OP, {}, "",
        ))  # fmt: skip

    resident = [load(slot, root.host) for slot in root.inputs.values()]
    ready = list(root.inputs.values())
    loaded: set[tuple[str, str]] = set()  # a weight is resident once per memory
    for p, base in zip(programs, space.offsets, strict=True):
        for slot in p.constants:
            ready.append(base + slot)
            if (p.slots[slot].tensor, p.slots[slot].memory) not in loaded:
                loaded.add((p.slots[slot].tensor, p.slots[slot].memory))
                resident.append(load(base + slot, p.host))
        if isinstance(p, GraphProgram):
            resident.extend(load(base + a.tensor, p.host) for a in p.storage)
    names = (*(slot.name for slot in space.slots), "(none)")
    return BoundProgram(
        bound[0][1], names, tuple(resident), tuple(ready), tuple(bound), dict(root.inputs),
        constants, two_clock_memories(bound) if len(bound) > 1 else frozenset(staged),
    )  # fmt: skip


def _missing(program: LevelProgram, platform: Platform, space: SlotSpace, key: Any) -> str | None:
    """The message of a name binding `program` did not find: an op's cost, or a part of the
    platform (a program compiled for another platform: a processor, a link, a level); None
    for any other key (an internal error, left as it is)."""
    where = f"bind: program of level {program.level or '(root)'} of {program.graph.name}"
    if not isinstance(key, str):
        return None
    if key not in space.costs and any(op.name == key for op in program.ops):
        return f"{where}: expected a Cost for every op (costs=), got none for op {key!r}"
    named = (platform.processors, platform.links, platform.levels, platform.memories)
    if any(key in names for names in named):
        return None
    return (
        f"{where}: expected platform {platform.name} to have {key!r}, which the program names, "
        "got none (a program compiled for another platform?)"
    )


BOUND_PER_PROGRAM = 4
"""Bindings `bound_for` keeps per compiled program (the most recently made first)."""

_bound: weakref.WeakKeyDictionary[Any, GraphCache[BoundProgram]] = weakref.WeakKeyDictionary()


def bound_for(
    program: LevelProgram | PlanProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    *,
    dims: Mapping[str, int] | None = None,
    is_functional: bool = False,
    costs: Mapping[str, Cost] | None = None,
    fuse: bool = True,
) -> BoundProgram:
    """`bind(...)`, reused while the platform, metas and costs are the same objects and the
    dims, mode and `fuse` are equal (`hetsim.ir.cache.GraphCache`), for as long as `program` lives.

    A bound program is a pure function of those and no run changes it, so a loop over inputs
    of one shape (or `hetsim.compare`'s iterations) binds once: a warm timing-mode `simulate`
    of ResNet-50 took 1.8-2.2 ms binding anew, 0.66-0.77 ms reusing it. The
    bindings are kept with the program, `BOUND_PER_PROGRAM` of them, and go with it: a program
    compiled for one call (a ``cost`` plan, a rules file) leaves nothing behind.
    """
    graph = programs_of(program)[0].graph
    kept = _bound.get(program)
    if kept is None:
        kept = _bound[program] = GraphCache(BOUND_PER_PROGRAM, SIMULATOR_BUDGET)
    return kept.get(
        graph,
        partial(
            bind,
            program,
            platform,
            metas,
            dims=dims,
            is_functional=is_functional,
            costs=costs,
            fuse=fuse,
        ),
        held=(platform, metas, costs),
        extra=(is_functional, is_functional and fuse, tuple(sorted((dims or {}).items()))),
    )


def clear_bound() -> None:
    """Forget every bound program `bound_for` keeps, whatever program it belongs to."""
    _bound.clear()


def run_program(
    program: LevelProgram | PlanProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    *,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    is_functional: bool = True,
    trace: bool = True,
    costs: Mapping[str, Cost] | None = None,
    fuse: bool = True,
) -> RunRecord:
    """Run `program` once on a fresh `Simulation`, bound by `bound_for`; return the record.

    In functional mode `inputs` must hold every graph input; in timing mode they are only
    passed through to the record. `costs` and `fuse`: as `bind` takes them.
    """
    sim = simulation_for(program, platform, trace=trace)
    given = dict(inputs or {})
    bound = bound_for(
        program, platform, metas, dims=dims, is_functional=is_functional, costs=costs, fuse=fuse
    )
    placement = program.plan.placement if isinstance(program, PlanProgram) else program.placement
    record = sim.run(
        bound.code,
        bound.slot_names,
        ready=bound.ready,
        resident=bound.resident,
        values=bound.values_for(given),
        placement=placement,
        inputs=given,
        programs=bound.programs,
        deferred=bound.deferred,
    )
    return dataclasses.replace(record, extra={**record.extra, "levels": levels_of(platform)})


def levels_of(platform: Platform) -> dict[str, dict[str, Any]]:
    """Each level's host, processors and links (those whose device end is a memory of the
    level): a run record's ``extra["levels"]``, for the report."""
    return {
        path: {
            "host": level.host,
            "processors": [p.path for p in platform.processors.values() if p.level == path],
            "links": [
                link.name
                for link in platform.links.values()
                if platform.memories[link.b].level == path
            ],
        }
        for path, level in platform.levels.items()
    }
