"""Binding: a compiled `VmProgram` plus one run's shapes become the engine's steps.

Everything fixed for a run is computed here, before ``env.run()``: the byte size of every slot
(from the tensors' `Meta`), every duration (`hetsim.cost` formulas of the platform's parameters),
the engine objects each step touches (streams, memories), the link hops of every copy, and, in
functional mode, the compiled kernel closures. `run_program` then runs the engine once.

Host-side costs per instruction (the formulas are in ``docs/runtime.md``):

- every instruction: ``dispatch_us(executor)``;
- ALLOC and FREE add the runtime's ``alloc_us`` / ``free_us``;
- LAUNCH and COPY add ``launch_us`` of the device whose stream takes the work;
- SYNC adds ``sync_us`` of the device, once its stream has drained.

Device side: a kernel takes ``kernel_us(device, cost)``; a CALL takes ``kernel_us(host, cost)``
on the host; a copy holds each link of its route for ``transfer_us(link, size_bytes)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.cost import (
    alloc_us,
    dispatch_us,
    free_us,
    kernel_timer,
    launch_us,
    sync_us,
    transfer_us,
)
from hetsim.errors import SimulationError
from hetsim.ir import Op
from hetsim.kernels import Cost, Meta, lookup
from hetsim.platform import Platform
from hetsim.runtime import (
    TESTS,
    Alloc,
    BranchShape,
    Call,
    Copy,
    Free,
    Invoke,
    Launch,
    Ret,
    Sync,
    VmProgram,
)
from hetsim.sim.engine import Simulation
from hetsim.sim.records import RunRecord
from hetsim.sim.steps import (
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    FreeStep,
    Hop,
    LaunchStep,
    RetStep,
    Run,
    Step,
    SyncStep,
)

__all__ = ["BoundProgram", "bind", "run_program", "simulation_for"]


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True, eq=False)
class BoundProgram:
    """A program ready to run on one `Simulation`: steps, slot names, what exists at time 0."""

    code: tuple[Step, ...]
    slot_names: tuple[str, ...]
    resident: tuple[AllocStep, ...]
    ready: tuple[int, ...]
    values: list[Any] | None

    def __repr__(self) -> str:
        return f"<BoundProgram steps={len(self.code)} slots={len(self.slot_names)}>"


def simulation_for(program: VmProgram, platform: Platform, *, trace: bool = True) -> Simulation:
    """A fresh `Simulation` with the platform's memories and links and a stream per used device."""
    used = {ins.processor for ins in program.code if isinstance(ins, Launch | Copy)}
    streams = [path for path in platform.processors if path in used]
    memories = {name: memory.capacity_bytes for name, memory in platform.memories.items()}
    return Simulation(program.host, streams, memories, platform.links, trace=trace)


class _Binder:
    """The per-run facts every instruction binder reads."""

    def __init__(
        self,
        program: VmProgram,
        platform: Platform,
        sim: Simulation,
        metas: Mapping[str, Meta],
        dims: Mapping[str, int],
        values: list[Any] | None,
    ) -> None:
        self.program = program
        self.platform = platform
        self.sim = sim
        self.metas = metas
        self.dims = dims
        self.values = values
        level = platform.levels[program.level]
        self.dispatch_us = dispatch_us(level.executor)
        self.alloc_us = alloc_us(level.runtime) if level.runtime is not None else 0.0
        self.free_us = free_us(level.runtime) if level.runtime is not None else 0.0
        self.none_slot = len(program.slots)  # always holds None: omitted optional inputs
        self.sizes = [_nbytes(metas[slot.tensor]) for slot in program.slots]
        # Ops of one type, attributes and shapes cost the same: rule and formula run once each.
        self.timed: dict[Hashable, tuple[float, Mapping[str, Any]]] = {}
        self.launch_us = {path: launch_us(p) for path, p in platform.processors.items()}
        self.timers = {path: kernel_timer(p) for path, p in platform.processors.items()}

    def slot_index(self, slot: int | None) -> int:
        return self.none_slot if slot is None else slot

    def op_cost(self, number: int) -> Cost:
        op = self.program.ops[number]
        metas = self.metas
        inputs = [metas[name] if name else None for name in op.inputs]
        outputs = [metas[name] for name in op.outputs if name]
        return lookup(op).cost(op, inputs, outputs)

    def op_time(self, number: int, processor: str) -> tuple[float, Mapping[str, Any]]:
        """``kernel_us`` of op `number` on `processor`, and its span args."""
        op = self.program.ops[number]
        key = _signature(op, self.metas, processor)
        found = self.timed.get(key) if key is not None else None
        if found is None:
            cost = self.op_cost(number)
            args = {
                "op_type": op.type,
                "flops": cost.flops,
                "bytes": cost.bytes_total,
                "op_class": cost.op_class,
            }
            found = (self.timers[processor](cost), args)
            if key is not None:
                self.timed[key] = found
        return found

    def runner(self, number: int, inputs: Sequence[int | None], outputs: Sequence[int]) -> Run:
        values = self.values
        if values is None:
            return _nothing
        op = self.program.ops[number]
        kernel = lookup(op).compile(op, self.program.graph.opset)
        ins = tuple(self.slot_index(s) for s in inputs)
        outs = tuple(outputs)

        def run() -> None:
            results = kernel([values[i] for i in ins])
            for slot, result in zip(outs, results, strict=False):
                values[slot] = result

        return run


def _nbytes(meta: Meta) -> int:
    return math.prod(meta.shape) * meta.dtype.itemsize


def _signature(op: Op, metas: Mapping[str, Meta], processor: str) -> Hashable | None:
    """What an op's duration depends on: type, attributes, shapes, dtypes, processor.

    ``None`` when an attribute is not hashable (tensor attributes): such ops are not memoized.
    """
    shapes = tuple((m.shape, m.dtype) for m in (metas[n] for n in (*op.inputs, *op.outputs) if n))
    attrs = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in op.attrs.items())
    key = (op.type, processor, attrs, shapes, op.inputs.count(""))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _alloc(ins: Alloc, b: _Binder) -> AllocStep:
    slot = b.program.slots[ins.tensor]
    size = b.sizes[ins.tensor]
    memory = b.sim.memories[ins.memory]
    cost = b.dispatch_us + b.alloc_us
    args = {"bytes": size, "memory": ins.memory}
    return AllocStep(
        f"alloc {slot.name}", cost, memory, size, slot.name, ins.processor, ins.op, args
    )


def _free(ins: Free, b: _Binder) -> FreeStep:
    slot = b.program.slots[ins.tensor]
    size = b.sizes[ins.tensor]
    args = {"bytes": size, "memory": ins.memory}
    return FreeStep(
        f"free {slot.name}", b.dispatch_us + b.free_us, b.sim.memories[ins.memory], size,
        ins.tensor, args,
    )  # fmt: skip


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
    return LaunchStep(
        f"launch {op.name}", b.dispatch_us, op.name, b.launch_us[ins.processor],
        b.sim.streams[ins.processor], kernel, ins.waits, ins.outputs,
        b.runner(ins.op, ins.inputs, ins.outputs), args,
    )  # fmt: skip


def _copy(ins: Copy, b: _Binder) -> CopyStep:
    src, dst = b.program.slots[ins.src], b.program.slots[ins.dst]
    size = b.sizes[ins.src]
    links = b.platform.links
    hops = tuple(Hop(name, transfer_us(links[name], size)) for name in ins.route)
    run = _nothing
    values = b.values
    if values is not None:
        source, target = ins.src, ins.dst

        def run() -> None:  # arrays are never written in place, so a copy shares the value
            values[target] = values[source]

    args = {"bytes": size, "src": src.memory, "dst": dst.memory}
    return CopyStep(
        f"copy {dst.name}", b.dispatch_us, dst.name, b.launch_us[ins.processor],
        b.sim.streams[ins.processor], hops, size, ins.waits, (ins.dst,), run, args,
    )  # fmt: skip


def _sync(ins: Sync, b: _Binder) -> SyncStep:
    device = b.platform.processors[ins.processor]
    return SyncStep(
        f"sync {ins.processor}", b.dispatch_us, b.sim.streams[ins.processor], sync_us(device), {}
    )


def _branch(ins: BranchShape, b: _Binder) -> BranchStep:
    name = f"branch {ins.dim} {ins.test} {ins.value}"
    test = TESTS[ins.test]
    value = ins.value

    def holds(dim: int) -> bool:
        return test(dim, value)

    args = {"dim": ins.dim, "value": b.dims[ins.dim]}
    return BranchStep(name, b.dispatch_us, b.dims[ins.dim], holds, ins.target, args)


def _invoke(ins: Invoke, b: _Binder) -> Step:
    raise SimulationError(
        f"INVOKE {ins.level}: expected a level this engine can run, got a nested level "
        "(nested invocation is not yet supported)"
    )


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


def _constant_values(program: VmProgram) -> dict[str, np.ndarray]:
    """Initializers plus the outputs of the folded ops, computed once."""
    graph = program.graph
    values: dict[str, Any] = dict(graph.initializers)
    for op in program.folded:
        kernel = lookup(op).compile(op, graph.opset)
        results = kernel([values[name] if name else None for name in op.inputs])
        values.update((name, r) for name, r in zip(op.outputs, results, strict=False) if name)
    return values


def bind(
    program: VmProgram,
    platform: Platform,
    sim: Simulation,
    metas: Mapping[str, Meta],
    *,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
) -> BoundProgram:
    """Resolve `program` for one run on `sim`: sizes, durations and (with `inputs`) kernels.

    Parameters
    ----------
    program
        The compiled level.
    platform
        The platform it was compiled for.
    sim
        The simulation it will run on (`simulation_for`).
    metas
        Every tensor's `Meta` for this run (`hetsim.kernels.propagate`).
    dims
        The run's symbolic dims (for BRANCH_SHAPE).
    inputs
        Input arrays: functional mode. ``None``: timing mode, no values computed.
    """
    n_slots = len(program.slots)
    values: list[Any] | None = None
    if inputs is not None:
        values = [None] * (n_slots + 1)
        constants = _constant_values(program)
        for slot in program.constants:
            values[slot] = constants[program.slots[slot].tensor]
        for name, slot in program.inputs.items():
            values[slot] = inputs[name]
    binder = _Binder(program, platform, sim, metas, dict(dims or {}), values)
    code = tuple(BINDERS[type(ins)](ins, binder) for ins in program.code)
    owner = {p.memory: p.path for p in platform.processors.values() if p.owns_memory}
    resident = tuple(
        AllocStep(
            "load",
            0.0,
            sim.memories[program.slots[slot].memory],
            binder.sizes[slot],
            program.slots[slot].name,
            owner.get(program.slots[slot].memory, program.host),
            "(load)",
            {},
        )
        for slot in (*program.inputs.values(), *program.constants)
    )
    ready = (*program.inputs.values(), *program.constants)
    names = (*(slot.name for slot in program.slots), "(none)")
    return BoundProgram(code, names, resident, ready, values)


def run_program(
    program: VmProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    *,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    is_functional: bool = True,
    trace: bool = True,
) -> RunRecord:
    """Bind `program` and run it once on a fresh `Simulation`; return the engine's record.

    In functional mode `inputs` must hold every graph input; in timing mode they are only
    passed through to the record.
    """
    sim = simulation_for(program, platform, trace=trace)
    given = dict(inputs or {})
    bound = bind(program, platform, sim, metas, dims=dims, inputs=given if is_functional else None)
    return sim.run(
        bound.code,
        bound.slot_names,
        ready=bound.ready,
        resident=bound.resident,
        values=bound.values,
        placement=program.placement,
        inputs=given,
    )
