"""Binding: a compiled `VmProgram` plus one run's shapes become the engine's steps.

Everything fixed for a run is computed here, before ``env.run()``: the byte size of every slot
(from the tensors' `Meta`), every duration (`hetsim.cost` formulas of the platform's parameters),
the streams and memories each step touches (by name), the link hops of every copy, and, in
functional mode, the compiled kernel closures and the constants' values. The result, a
`BoundProgram`, is plain data that no run changes: `bound_for` keeps it for the next run of the
same program at the same shapes, and `run_program` runs the engine once with a fresh value table.

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
import math
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np

from hetsim.cost import (
    alloc_us,
    dispatch_us,
    free_us,
    invoke_us,
    kernel_timer,
    launch_us,
    sync_us,
    transfer_us,
)
from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op
from hetsim.ir.cache import SIMULATOR_BUDGET, GraphCache
from hetsim.kernels import Cost, Kernel, Meta, lookup, read_only
from hetsim.partition.costs import op_costs
from hetsim.platform import Platform
from hetsim.runtime import (
    TESTS,
    Alloc,
    BranchShape,
    Call,
    Copy,
    Free,
    GraphProgram,
    Instruction,
    Invoke,
    Launch,
    LevelProgram,
    PlanProgram,
    Ret,
    Sync,
)
from hetsim.sim.engine import Simulation
from hetsim.sim.fusion import constant_values, fused_runs
from hetsim.sim.records import RunRecord
from hetsim.sim.steps import (
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    FreeStep,
    Hop,
    InvokeStep,
    LaunchStep,
    RetStep,
    Run,
    Step,
    SyncStep,
    kernel_run,
    no_run,
)

__all__ = [
    "DESCRIPTOR_BYTES",
    "BoundProgram",
    "bind",
    "bound_for",
    "clear_bound",
    "run_program",
    "simulation_for",
]

DESCRIPTOR_BYTES = 16
"""Bytes of one tensor descriptor in an INVOKE request or completion (address and size, two
64-bit words; assumed)."""


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
    """

    code: tuple[Step, ...]
    slot_names: tuple[str, ...]
    resident: tuple[AllocStep, ...]
    ready: tuple[int, ...]
    programs: tuple[tuple[str, tuple[Step, ...]], ...] = ()
    inputs: Mapping[str, int] = dataclasses.field(default_factory=dict)
    constants: tuple[tuple[int, Any], ...] | None = None

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


def _programs(program: LevelProgram | PlanProgram) -> tuple[LevelProgram, ...]:
    return program.programs if isinstance(program, PlanProgram) else (program,)


def simulation_for(
    program: LevelProgram | PlanProgram, platform: Platform, *, trace: bool = True
) -> Simulation:
    """A fresh `Simulation` with the platform's memories and links and a stream per used device.

    The record lists every processor of the platform, idle ones included.
    """
    used = _streams_used(program)
    streams = [path for path in platform.processors if path in used]
    memories = {name: memory.capacity_bytes for name, memory in platform.memories.items()}
    root = _programs(program)[0]
    return Simulation(
        root.host, streams, memories, platform.links, processors=platform.processors, trace=trace
    )


_QUEUED = (Launch, Copy, Invoke)
_streams: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


def _streams_used(program: LevelProgram | PlanProgram) -> frozenset[str]:
    """The processors whose streams `program` queues work on, found once per program (a scan
    of every instruction: about 6% of a warm run of a 1e3-op chain, when done every run)."""
    found = _streams.get(program)
    if found is None:
        found = _streams[program] = frozenset(
            ins.processor  # type: ignore[union-attr]  # _QUEUED: the instructions with one
            for p in _programs(program)
            for ins in p.code
            if type(ins) in _QUEUED
        )
    return found


class _Binder:
    """The per-run facts every instruction binder reads."""

    def __init__(
        self,
        program: LevelProgram,
        platform: Platform,
        dims: Mapping[str, int],
        space: _SlotSpace,
        *,
        is_functional: bool,
    ) -> None:
        self.program = program
        self.space = space
        self.slots = space.slots
        self.sizes = space.sizes
        self.platform = platform
        self.dims = dims
        self.is_functional = is_functional
        level = platform.levels[program.level]
        self.dispatch_us = dispatch_us(level.executor)
        self.alloc_us = alloc_us(level.runtime) if level.runtime is not None else 0.0
        self.free_us = free_us(level.runtime) if level.runtime is not None else 0.0
        self.none_slot = len(space.slots)  # always holds None: omitted optional inputs
        self.timed = space.timed
        self.launch_us = space.launch_us
        self.timers = space.timers
        # ALLOC and FREE span args, one dict per (size, memory): steps only read them.
        self.memory_args: dict[tuple[int, str], Mapping[str, Any]] = {}

    def memory_args_of(self, size: int, memory: str) -> Mapping[str, Any]:
        """The span args of an ALLOC or FREE of `size` bytes in `memory` (shared, read only)."""
        key = (size, memory)
        found = self.memory_args.get(key)
        if found is None:
            found = self.memory_args[key] = {"bytes": size, "memory": memory}
        return found

    def slot_index(self, slot: int | None) -> int:
        return self.none_slot if slot is None else slot

    def op_time(self, number: int, processor: str) -> tuple[float, Mapping[str, Any]]:
        """``kernel_us`` of op `number` on `processor`, and its span args."""
        op = self.program.ops[number]
        cost = self.space.costs[op.name]
        # `op_costs` shares one Cost per op signature: the formula runs once per processor.
        key = (processor, op.type, id(cost))
        found = self.timed.get(key)
        if found is None:
            args = {
                "op_type": op.type,
                "flops": cost.flops,
                "bytes": cost.bytes_total,
                "op_class": cost.op_class,
            }
            found = self.timed[key] = (self.timers[processor](cost), args)
        return found

    def runner(self, number: int, inputs: Sequence[int | None], outputs: Sequence[int]) -> Run:
        if not self.is_functional:
            return no_run
        fused = self.space.fused.get(number)
        if fused is not None:  # a fused group's head or one of the ops it absorbed
            return fused
        op = self.program.ops[number]
        kernel = compiled_kernel(self.program.graph, op)
        return kernel_run(kernel, tuple(self.slot_index(s) for s in inputs), tuple(outputs), op)


KERNEL_CACHE_GRAPHS = 4
"""Graphs whose compiled kernels `compiled_kernel` keeps (the most recently first seen)."""
_kernels: GraphCache[dict[int, tuple[Op, Kernel]]] = GraphCache(
    KERNEL_CACHE_GRAPHS, SIMULATOR_BUDGET
)


def compiled_kernel(graph: Graph, op: Op) -> Kernel:
    """The numpy kernel of `op` (an op of `graph`), compiled once per graph.

    A functional run calls every op's kernel; compiling it (attributes read, window geometry
    and Conv plans worked out per shape) took a 1-thread functional ResNet-50 simulate from 141
    to 130 ms when kept. As `hetsim.execute` keeps its compiled programs, this keeps the kernels
    of the last `KERNEL_CACHE_GRAPHS` graphs (`hetsim.ir.cache.GraphCache`); the graph holds its
    ops alive, so an op's ``id`` is not reused while cached.
    """
    kernels = _kernels.get(graph, dict)
    found = kernels.get(id(op))
    if found is None or found[0] is not op:
        found = kernels[id(op)] = (op, lookup(op).compile(op, graph.opset))
    return found[1]


def clear_kernels() -> None:
    """Forget every kernel `compiled_kernel` keeps."""
    _kernels.clear()


def _nbytes(meta: Meta) -> int:
    return math.prod(meta.shape) * meta.dtype.itemsize


def _sizes(slots: Sequence[Any], metas: Mapping[str, Meta]) -> list[int]:
    """Bytes of each slot's tensor; computed once per `Meta` (metas are shared per shape)."""
    known: dict[int, int] = {}
    sizes = []
    for slot in slots:
        meta = metas[slot.tensor]
        size = known.get(id(meta))
        if size is None:
            size = known[id(meta)] = _nbytes(meta)
        sizes.append(size)
    return sizes


class _SlotSpace:
    """The slots of every program of a plan, numbered one after the other, the costs of the ops
    they share (`op_costs` of the run's metas, unless the caller has them), and each processor's
    launch cost and kernel timer."""

    def __init__(
        self,
        programs: Sequence[LevelProgram],
        platform: Platform,
        metas: Mapping[str, Meta],
        costs: Mapping[str, Cost] | None = None,
    ) -> None:
        self.programs = tuple(programs)
        processors = platform.processors.items()
        self.launch_us = {path: launch_us(p) for path, p in processors}
        self.timers = {path: kernel_timer(p) for path, p in processors}
        # every program of a plan numbers the same ops (`hetsim.runtime.compile_plan`)
        self.costs = costs if costs is not None else op_costs(self.programs[0].ops, metas)
        # (processor, op type, id of its Cost) -> kernel µs and span args: ops of one signature
        # share a Cost, so each formula runs once per processor
        self.timed: dict[Hashable, tuple[float, Mapping[str, Any]]] = {}
        offsets, total = [], 0
        for p in programs:
            offsets.append(total)
            total += len(p.slots)
        self.offsets = tuple(offsets)
        self.slots = tuple(slot for p in programs for slot in p.slots)
        self.sizes = _sizes(self.slots, metas)
        # program number -> (its steps, each step's value computation): a nested program's
        # steps compute nothing when the engine runs them; the caller's INVOKE runs these.
        self.runs: dict[int, tuple[tuple[Step, ...], tuple[Run, ...]]] = {}
        # op number -> what it computes in a fused functional run (`hetsim.sim.fusion`)
        self.fused: dict[int, Run] = {}


_new = tuple.__new__
"""``_new(AllocStep, (...))`` makes a step as ``AllocStep(...)`` does, without the Python-level
``__new__`` of a named tuple: for speed, in the binders of the instructions a program has one
or more of per op (ALLOC, FREE, LAUNCH) and in relocating a nested program's instructions."""


SLOT_FIELDS: Mapping[type, tuple[str, ...]] = {
    Alloc: ("tensor",),
    Free: ("tensor",),
    Call: ("inputs", "outputs"),
    Launch: ("inputs", "outputs", "waits"),
    Copy: ("src", "dst", "waits"),
    Invoke: ("inputs", "outputs", "waits"),
    Sync: (),
    BranchShape: (),
}
"""Instruction type -> its fields that hold slots (RET's outputs are pairs, moved apart)."""


_SLOT_INDICES: Mapping[type, frozenset[int]] = {
    kind: frozenset(cast(Any, kind)._fields.index(name) for name in names)
    for kind, names in SLOT_FIELDS.items()
}
"""`SLOT_FIELDS` as positions in each instruction tuple."""


def _relocate(ins: Instruction, offset: int) -> Any:
    """`ins` with every slot moved by `offset` (a nested program's place in the slot space)."""
    if offset == 0:
        return ins
    if isinstance(ins, Ret):
        return Ret(tuple((name, slot + offset) for name, slot in ins.outputs))
    indices = _SLOT_INDICES.get(type(ins), frozenset())

    def moved(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(None if s is None else s + offset for s in value)
        return value + offset

    # by position with tuple.__new__, for speed: `_replace` by field name took 10-17% of
    # binding a nested plan (ResNet-50 on arm-riscv-soc: 1.63-1.89 ms against 1.45-1.57)
    return _new(type(ins), [moved(v) if i in indices else v for i, v in enumerate(ins)])


_relocations: weakref.WeakKeyDictionary[Any, tuple[Sequence[Instruction], ...]] = (
    weakref.WeakKeyDictionary()
)


def _relocated(
    program: LevelProgram | PlanProgram,
    programs: tuple[LevelProgram, ...],
    offsets: tuple[int, ...],
) -> tuple[Sequence[Instruction], ...]:
    """Each program's code with its slots moved to its place in the slot space (`_relocate`),
    made once per compiled program: a pure function of it, and a sweep over cost parameters
    binds one program for every point (relocating took 12% of a SqueezeNet point)."""
    found = _relocations.get(program)
    if found is None:
        found = _relocations[program] = tuple(
            # the root program's slots start at 0: nothing to relocate
            tuple([_relocate(ins, base) for ins in p.code]) if base else p.code
            for p, base in zip(programs, offsets, strict=True)
        )
    return found


def _alloc(ins: Alloc, b: _Binder) -> AllocStep:
    slot = b.slots[ins.tensor]
    size = b.sizes[ins.tensor]
    cost = b.dispatch_us + b.alloc_us
    args = b.memory_args_of(size, ins.memory)
    return _new(
        AllocStep,
        (f"alloc {slot.name}", cost, ins.memory, size, slot.name, ins.processor, ins.op, args),
    )


def _free(ins: Free, b: _Binder) -> FreeStep:
    slot = b.slots[ins.tensor]
    size = b.sizes[ins.tensor]
    args = b.memory_args_of(size, ins.memory)
    return _new(FreeStep, (
        f"free {slot.name}", b.dispatch_us + b.free_us, ins.memory, size, ins.tensor, args,
    ))  # fmt: skip


def _call(ins: Call, b: _Binder) -> CallStep:
    op = b.program.ops[ins.op]
    compute_us, args = b.op_time(ins.op, b.program.host)
    return CallStep(
        f"call {op.name}", b.dispatch_us, op.name, compute_us,
        b.runner(ins.op, ins.inputs, ins.outputs), ins.outputs, args,
    )  # fmt: skip


def _launch(ins: Launch, b: _Binder) -> LaunchStep:
    op = b.program.ops[ins.op]
    kernel, args = b.op_time(ins.op, ins.processor)
    return _new(LaunchStep, (
        f"launch {op.name}", b.dispatch_us, op.name, b.launch_us[ins.processor],
        ins.processor, kernel, ins.waits, ins.outputs,
        b.runner(ins.op, ins.inputs, ins.outputs), args,
    ))  # fmt: skip


def _copy(ins: Copy, b: _Binder) -> CopyStep:
    src, dst = b.slots[ins.src], b.slots[ins.dst]
    size = b.sizes[ins.src]
    links = b.platform.links
    hops = tuple(Hop(name, transfer_us(links[name], size)) for name in ins.route)
    run: Run = no_run
    if b.is_functional:
        source, target = ins.src, ins.dst

        def copy_value(values: list[Any]) -> None:  # arrays are never written in place
            values[target] = values[source]  # copies share them

        run = copy_value

    args = {"bytes": size, "src": src.memory, "dst": dst.memory}
    return CopyStep(
        f"copy {dst.name}", b.dispatch_us, dst.name, b.launch_us[ins.processor],
        ins.processor, hops, size, ins.waits, (ins.dst,), run, args,
    )  # fmt: skip


def _sync(ins: Sync, b: _Binder) -> SyncStep:
    device = b.platform.processors[ins.processor]
    return SyncStep(f"sync {ins.processor}", b.dispatch_us, ins.processor, sync_us(device), {})


def _branch(ins: BranchShape, b: _Binder) -> BranchStep:
    name = f"branch {ins.dim} {ins.test} {ins.value}"
    test = TESTS[ins.test]
    value = ins.value

    def holds(dim: int) -> bool:
        return test(dim, value)

    args = {"dim": ins.dim, "value": b.dims[ins.dim]}
    return BranchStep(name, b.dispatch_us, b.dims[ins.dim], holds, ins.target, args)


def _invoke(ins: Invoke, b: _Binder) -> InvokeStep:
    space = b.space
    if not 0 < ins.program < len(space.programs):
        raise SimulationError(
            f"INVOKE {ins.level}: expected the number of a nested program "
            f"({len(space.programs) - 1} compiled), got {ins.program}"
        )
    callee = space.programs[ins.program]
    base = space.offsets[ins.program]
    ret = callee.code[-1]
    assert isinstance(ret, Ret), f"program {ins.program} does not end with RET"
    returned = dict(ret.outputs)
    arguments = tuple(
        (slot, base + callee.inputs[b.slots[slot].tensor])
        for slot in ins.inputs
        if slot is not None
    )
    results = tuple((base + returned[b.slots[slot].tensor], slot) for slot in ins.outputs)
    level = b.platform.levels[ins.level]
    request = DESCRIPTOR_BYTES * (len(arguments) + len(results))
    args = {"segment": ins.segment, "bytes": request, "program": ins.program}
    return InvokeStep(
        f"invoke {ins.level}", b.dispatch_us, ins.segment, ins.level, callee.host,
        ins.processor, invoke_us(level, request),
        invoke_us(level, DESCRIPTOR_BYTES * len(results)), ins.program, arguments, results,
        ins.waits, ins.outputs, _invocation_runner(b, ins.program, arguments, results), args,
    )  # fmt: skip


def _invocation_runner(
    b: _Binder,
    program: int,
    arguments: tuple[tuple[int, int], ...],
    results: tuple[tuple[int, int], ...],
) -> Run:
    """Compute one invocation's values in its program's order: arguments in, results out."""
    if not b.is_functional:
        return no_run
    runs = b.space.runs

    def run(values: list[Any]) -> None:
        for source, target in arguments:
            values[target] = values[source]
        code, kernels = runs[program]  # bound by then: callees are bound before callers run
        pc = 0
        while True:
            step = code[pc]
            pc += 1
            if step.__class__ is RetStep:
                break
            if step.__class__ is BranchStep:
                if step.test(step.value):
                    pc = step.target
                continue
            kernels[pc - 1](values)
        for source, target in results:
            values[target] = values[source]

    return run


def _ret(ins: Ret, b: _Binder) -> RetStep:
    return RetStep("ret", b.dispatch_us, dict(ins.outputs), {})


BINDERS: Mapping[type, Callable[[Any, _Binder], Step]] = {
    Alloc: _alloc,
    Free: _free,
    Call: _call,
    Launch: _launch,
    Copy: _copy,
    Sync: _sync,
    BranchShape: _branch,
    Invoke: _invoke,
    Ret: _ret,
}
"""Instruction type -> the function that binds it to a step."""


def _check_dims(program: LevelProgram, dims: Mapping[str, int]) -> None:
    """A graph executor's shapes are compiled: the run must bind its dims to the same sizes."""
    if not isinstance(program, GraphProgram):
        return
    for name in sorted(program.graph.symbols):
        compiled = program.dims.get(name)
        if compiled is not None and name in dims and dims[name] != compiled:
            raise SimulationError(
                f"graph executor {program.level or '(root)'}: expected {name}={compiled} (its "
                f"static shapes), got {name}={dims[name]}"
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
        Op name -> `Cost` for these `metas`, as `hetsim.partition.op_costs` gives them (ops of
        one signature share one object), when the caller has them; else computed here.
    fuse
        In functional mode, compute values with `hetsim.execute`'s fused kernels
        (`hetsim.sim.fusion`); ``False``: every op as the graph states it. Times are the same.

    Raises
    ------
    SimulationError
        A run's dims that differ from those a graph executor's shapes were compiled for.
    """
    programs = _programs(program)
    root = programs[0]
    run_dims = dict(dims or {})
    space = _SlotSpace(programs, platform, metas, costs)
    constants: tuple[tuple[int, Any], ...] | None = None
    if is_functional:
        graph = root.graph
        table = constant_values(graph, root.folded, partial(compiled_kernel, graph), fuse=fuse)
        constants = tuple(  # kept for every run: an output may hand one out
            (base + slot, read_only(table[p.slots[slot].tensor]))
            for p, base in zip(programs, space.offsets, strict=True)
            for slot in p.constants
        )
    relocated = _relocated(program, programs, space.offsets)
    if is_functional and fuse:
        space.fused = fused_runs(root.graph, root.ops, relocated, len(space.slots))
    bound: list[tuple[str, tuple[Step, ...]]] = []
    for p, p_code in zip(programs, relocated, strict=True):
        _check_dims(p, run_dims)
        binder = _Binder(p, platform, run_dims, space, is_functional=is_functional)
        code = tuple([BINDERS[type(ins)](ins, binder) for ins in p_code])
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
        return _new(AllocStep, (
            "load", 0.0, found.memory, space.sizes[slot], found.name,
            owner.get(found.memory, host), "(load)", {},
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
        constants,
    )  # fmt: skip


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
    graph = _programs(program)[0].graph
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
    )
    return dataclasses.replace(record, extra={**record.extra, "levels": levels_of(platform)})


def levels_of(platform: Platform) -> dict[str, dict[str, Any]]:
    """Each level's host and processors: a run record's ``extra["levels"]``, for the report."""
    return {
        path: {
            "host": level.host,
            "processors": [p.path for p in platform.processors.values() if p.level == path],
        }
        for path, level in platform.levels.items()
    }
