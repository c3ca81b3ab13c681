"""The binders: each VM instruction of a compiled program, with one run's sizes and costs,
becomes the engine's step (`BINDERS`); `bind` (`hetsim.sim.bind`) drives them.

Owns the per-program facts a binder reads (`Binder`) and the numpy kernels a functional run
calls, compiled once per graph (`compiled_kernel`). Where each slot lives and what it weighs, the
ops' costs and each processor's launch cost and kernel timer are the slot space's
(`hetsim.sim.slots`). The formulas are in ``docs/cost-model.md``; when each is paid, in
``docs/runtime.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hetsim.cost import (
    alloc_us,
    dispatch_us,
    free_us,
    invoke_us,
    sync_us,
    transfer_us,
)
from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op
from hetsim.ir.cache import SIMULATOR_BUDGET, GraphCache
from hetsim.kernels import Kernel, lookup
from hetsim.platform import Platform
from hetsim.runtime import (
    TESTS,
    Alloc,
    BranchShape,
    Call,
    Copy,
    Free,
    Instruction,
    Invoke,
    Launch,
    LevelProgram,
    Ret,
    Sync,
)
from hetsim.sim.slots import SlotSpace, new_tuple
from hetsim.sim.steps import (
    STAGE_OP,
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
    "BINDERS",
    "DESCRIPTOR_BYTES",
    "Binder",
    "clear_kernels",
    "compiled_kernel",
]

DESCRIPTOR_BYTES = 16
"""Bytes of one tensor descriptor in an INVOKE request or completion (address and size, two
64-bit words; assumed)."""


class Binder:
    """The per-run facts every instruction binder reads."""

    def __init__(
        self,
        program: LevelProgram,
        platform: Platform,
        dims: Mapping[str, int],
        space: SlotSpace,
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
        self.costs = space.numbered_costs()
        self.timers = space.timers
        # ALLOC and FREE span args, one dict per (size, memory): steps only read them.
        self.memory_args: dict[tuple[int, str], Mapping[str, Any]] = {}
        # memories a routed COPY stages in, or a FREE gives back to at a stream's time
        # (`two_clock_memories`)
        self.staged: set[str] = set()

    def slot_index(self, slot: int | None) -> int:
        return self.none_slot if slot is None else slot

    def op_time(self, number: int, processor: str) -> tuple[float, Mapping[str, Any]]:
        """``kernel_us`` of op `number` on `processor`, and its span args."""
        op = self.program.ops[number]
        cost = self.costs[number]
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

    def steps(self, code: Sequence[Instruction]) -> tuple[Step, ...]:
        """The step of each instruction of `code` (this program's, relocated), in order.

        ALLOC, FREE and LAUNCH, one or more of each per op, are bound here in one loop with the
        tables in locals; every other instruction by its function in `BINDERS`. With a call per
        instruction, binding a 1e5-op chain took 2.8-2.9 µs per op, against 2.3 (best of 5, three
        alternating rounds; docs/runtime.md, "Performance").
        """
        slots, sizes, ops, op_time = self.slots, self.sizes, self.program.ops, self.op_time
        timed, costs = self.timed, self.costs  # `op_time`'s table, read here where it has one
        memory_args, launch_us, dispatch = self.memory_args, self.launch_us, self.dispatch_us
        alloc_cost, free_cost = dispatch + self.alloc_us, dispatch + self.free_us
        is_functional = self.is_functional
        steps: list[Step] = []
        append = steps.append
        instruction: Any  # unpacked by position, as each branch's type has it
        for instruction in code:
            kind = instruction.__class__
            if kind is Alloc:
                tensor, memory, processor, op_name, writer = instruction
                name, size = slots[tensor].name, sizes[tensor]
                args = memory_args.get((size, memory))
                if args is None:
                    args = memory_args[size, memory] = {"bytes": size, "memory": memory}
                append(new_tuple(AllocStep, (
                    f"alloc {name}", alloc_cost, memory, size, name, processor, op_name, args,
                    writer,
                )))  # fmt: skip
            elif kind is Free:
                tensor, memory, after = instruction
                if after:
                    _check_after(instruction, self)
                size = sizes[tensor]
                args = memory_args.get((size, memory))
                if args is None:
                    args = memory_args[size, memory] = {"bytes": size, "memory": memory}
                append(new_tuple(FreeStep, (
                    f"free {slots[tensor].name}", free_cost, memory, size, tensor, args, after,
                )))  # fmt: skip
            elif kind is Launch:
                number, processor, inputs, outputs, waits = instruction
                op = ops[number]
                found = timed.get((processor, op.type, id(costs[number])))  # `op_time`'s key
                kernel_us, args = found if found is not None else op_time(number, processor)
                run = self.runner(number, inputs, outputs) if is_functional else no_run
                append(new_tuple(LaunchStep, (
                    f"launch {op.name}", dispatch, op.name, launch_us[processor], processor,
                    kernel_us, waits, outputs, run, args,
                )))  # fmt: skip
            else:
                append(BINDERS[kind](instruction, self))
        return tuple(steps)


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


def _check_after(ins: Free, b: Binder) -> None:
    """A FREE given back at a stream's time (`two_clock_memories`) names streams `b`'s platform
    has, none of them the program's host (a FREE written by hand may)."""
    for stream in ins.after:
        b.platform.processors[stream]  # a KeyError names one it lacks
        if stream == b.program.host:  # written by hand: the compilers name device streams
            raise SimulationError(
                f"FREE {b.slots[ins.tensor].name}: expected device streams to wait for, got "
                f"{stream!r}, the program's host"
            )
    b.staged.add(ins.memory)


def _call(ins: Call, b: Binder) -> CallStep:
    op = b.program.ops[ins.op]
    compute_us, args = b.op_time(ins.op, b.program.host)
    return CallStep(
        f"call {op.name}", b.dispatch_us, op.name, compute_us,
        b.runner(ins.op, ins.inputs, ins.outputs), ins.outputs, args,
    )  # fmt: skip


def _copy(ins: Copy, b: Binder) -> CopyStep:
    src, dst = b.slots[ins.src], b.slots[ins.dst]
    size = b.sizes[ins.src]
    links = b.platform.links
    args = {"bytes": size, "src": src.memory, "dst": dst.memory}
    hops: list[Hop] = []
    stages: list[AllocStep] = []
    at = src.memory
    for name in ins.route:  # store and forward: the tensor waits whole between two hops
        if hops:
            stages.append(AllocStep(f"stage {dst.name}", 0.0, at, size, dst.name,
                                    ins.processor, STAGE_OP, args))  # fmt: skip
        hops.append(Hop(name, transfer_us(links[name], size)))
        at = links[name].other_end(at)
    if stages:
        b.staged.update(stage.memory for stage in stages)
    run: Run = no_run
    if b.is_functional:
        source, target = ins.src, ins.dst

        def copy_value(values: list[Any]) -> None:  # arrays are never written in place
            values[target] = values[source]  # copies share them

        run = copy_value

    return CopyStep(
        f"copy {dst.name}", b.dispatch_us, dst.name, b.launch_us[ins.processor],
        ins.processor, tuple(hops), size, ins.waits, (ins.dst,), run, args, tuple(stages),
    )  # fmt: skip


def _sync(ins: Sync, b: Binder) -> SyncStep:
    device = b.platform.processors[ins.processor]
    return SyncStep(f"sync {ins.processor}", b.dispatch_us, ins.processor, sync_us(device), {})


def _branch_problem(ins: BranchShape, b: Binder) -> str | None:
    """What a BRANCH_SHAPE (written by hand: the compilers emit none) lacks to run, if anything."""
    length = len(b.program.code)
    if ins.test not in TESTS:
        expected, got = f"a test in {sorted(TESTS)}", repr(ins.test)
    elif not isinstance(ins.value, int | np.integer) or isinstance(ins.value, bool):
        expected, got = "an integer value to compare the dim with", repr(ins.value)
    elif ins.dim not in b.dims:
        expected, got = f"a size for dim {ins.dim!r} (bind it with dims=)", f"dims {sorted(b.dims)}"
    elif not 0 <= ins.target < length:
        expected, got = f"a target in the program's code [0, {length})", repr(ins.target)
    else:
        return None
    return f"BRANCH_SHAPE {ins.dim} {ins.test}: expected {expected}, got {got}"


def _branch(ins: BranchShape, b: Binder) -> BranchStep:
    problem = _branch_problem(ins, b)
    if problem is not None:
        raise SimulationError(problem)
    name = f"branch {ins.dim} {ins.test} {ins.value}"
    test = TESTS[ins.test]
    value = ins.value

    def holds(dim: int) -> bool:
        return test(dim, value)

    args = {"dim": ins.dim, "value": b.dims[ins.dim]}
    return BranchStep(name, b.dispatch_us, b.dims[ins.dim], holds, ins.target, args)


def _invoke(ins: Invoke, b: Binder) -> InvokeStep:
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
    b: Binder,
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


def _ret(ins: Ret, b: Binder) -> RetStep:
    return RetStep("ret", b.dispatch_us, dict(ins.outputs), {})


BINDERS: Mapping[type, Callable[[Any, Binder], Step]] = {
    Call: _call,
    Copy: _copy,
    Sync: _sync,
    BranchShape: _branch,
    Invoke: _invoke,
    Ret: _ret,
}
"""Instruction type -> the function that binds it to a step: every type but the three a
program has one or more of per op (ALLOC, FREE, LAUNCH), which `Binder.steps` binds itself."""
