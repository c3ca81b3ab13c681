"""The ``cost`` policy: an earliest-finish-time list scheduler (HEFT-like) over `hetsim.cost`.

Ops are ranked by upward rank (their mean time over the choices that can run them plus the
largest rank among their consumers) and taken in decreasing rank, ties in graph order (which
keeps the order topological). Each op goes to the choice where it would be done first (ties go
to the priority order):

    start  = max(choice free, each input ready in the choice's memory)
    ready  = producer's finish + route_us(route(producer memory, choice memory), bytes)
    finish = start + op_us(choice)
    done   = finish + route_us of each result no op of the level reads, back to the host's memory

A graph input of the level is ready at 0 in the level host's memory; constants are resident.
On a processor, ``op_us = dispatch_us(level executor) + launch_us (devices only) + kernel_us``;
on a nested level, the best of its devices' ``op_us`` (recursively), plus
``invoke_us(level, INVOKE_REQUEST_BYTES)`` when none of the op's producers is on that level
already (a new invocation). A processor whose memory the op's weights would overflow is no
choice unless none has room (`_Weights`). Both schedules, this one and the ``capability``
placement timed the same way, are estimated; the policy returns the one that finishes first
(capability's only when its weights fit), so it is never worse than ``capability`` by its own
estimate. The engine's simulated times may still differ: the
estimate ignores host dispatch contention and link contention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from hetsim.cost import dispatch_us, invoke_us, kernel_us, launch_us, route_us
from hetsim.errors import SimulationError
from hetsim.ir import Op
from hetsim.kernels import Cost
from hetsim.partition.context import LevelContext, refusals
from hetsim.partition.policies.capability import place_by_capability
from hetsim.partition.segments import data_edges
from hetsim.platform import Level, Platform

__all__ = ["INVOKE_REQUEST_BYTES", "estimate_us", "op_us", "place_by_cost"]

INVOKE_REQUEST_BYTES = 64
"""Assumed size of one invoke request (argument descriptors) for the estimate, in bytes."""

Picker = Callable[[Op, list[tuple[float, str]]], str]


def op_us(
    platform: Platform,
    level: Level,
    choice: str,
    op: Op,
    cost: Cost,
    is_dynamic: bool,
    dtypes: frozenset[str] = frozenset(),
) -> float:
    """Estimated time of `op` on `choice` of `level`, without transfers or invoke overhead.

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> relu = Op("Relu", "r", ("x",), ("y",))
    >>> cost = Cost(flops=1e6, bytes_read=4e6, bytes_written=4e6, op_class="elementwise")
    >>> op_us(soc, soc.levels[""], "host", relu, cost, False)  # 0.5 + 1.0 + 8e6 B / 12800 B/us
    626.5
    """
    nested = platform.levels.get(choice)
    if nested is not None:
        return min(
            op_us(platform, nested, device, op, cost, is_dynamic, dtypes)
            for device in nested.devices
            if not refusals(platform, device, op, is_dynamic, dtypes)
        )
    processor = platform.processors[choice]
    launch = 0.0 if choice == level.host else launch_us(processor)
    dispatch = dispatch_us(level.executor) if level.executor is not None else 0.0
    return dispatch + launch + kernel_us(processor, cost)


class _Scheduler:
    """One list schedule of a level's ops; `run(pick)` returns the choices and the makespan."""

    def __init__(self, context: LevelContext) -> None:
        self.context = context
        self.ops = context.ops
        self.producer = {t: op for op in self.ops for t in op.outputs if t}
        consumed = {t for op in self.ops for t in op.inputs}
        self.leaving = {
            op.name: [t for t in op.outputs if t and t not in consumed] for op in self.ops
        }
        self.host_memory = context.memory_of(context.level.host)
        self.times = {op.name: self._times(op) for op in self.ops}

    def _times(self, op: Op) -> dict[str, float]:
        """Choice -> `op_us`, for each choice that can run `op`, in priority order; infinite
        where the choice's rates give no finite time (a ``freq_ghz`` of 1e308), so the schedule
        keeps off it, as it keeps off what would overflow."""
        context, is_dynamic = self.context, op.name in self.context.dynamic
        cost, dtypes = context.costs[op.name], context.dtypes_of(op)
        times = {}
        for choice in context.candidates(op):
            try:
                times[choice] = op_us(
                    context.platform, context.level, choice, op, cost, is_dynamic, dtypes
                )
            except SimulationError:  # `kernel_us`: a rate or a time that is no finite number
                times[choice] = math.inf
        return times

    def _move_us(self, tensor: str, src: str, dst: str) -> float:
        """`route_us` of `tensor` from memory `src` to `dst`; infinite where a link's rates
        give no finite time (a ``bandwidth_gbps`` of 5e-324), so the schedule keeps off the
        choices it would reach, as `_times` keeps off a processor's."""
        if src == dst:
            return 0.0
        links = self.context.platform.route(src, dst)
        try:
            return route_us(links, self.context.metas[tensor].nbytes)
        except SimulationError:  # `transfer_us`: a time that is no finite number
            return math.inf

    def order(self) -> list[Op]:
        """Ops by decreasing upward rank, ties in graph order."""
        rank: dict[int, float] = {}
        successors: dict[int, list[int]] = {}
        for i, j in data_edges(self.ops):
            successors.setdefault(i, []).append(j)
        for i in reversed(range(len(self.ops))):
            times = self.times[self.ops[i].name].values()
            later = max((rank[j] for j in successors.get(i, ())), default=0.0)
            rank[i] = sum(times) / len(times) + later
        return [self.ops[i] for i in sorted(rank, key=lambda i: (-rank[i], i))]

    def _finish(
        self,
        op: Op,
        choice: str,
        free: dict[str, float],
        where: dict[str, str],
        finish: dict[str, float],
    ) -> float:
        memory = self.context.memory_of(choice)
        start = free.get(choice, 0.0)
        same_level = False
        for tensor in op.inputs:
            if not tensor or tensor in self.context.constants:
                continue
            made = self.producer.get(tensor)
            if made is None:
                start = max(start, self._move_us(tensor, self.host_memory, memory))
                continue
            same_level |= where[made.name] == choice
            source = self.context.memory_of(where[made.name])
            start = max(start, finish[made.name] + self._move_us(tensor, source, memory))
        nested = self.context.platform.levels.get(choice)
        invoke = invoke_us(nested, INVOKE_REQUEST_BYTES) if nested and not same_level else 0.0
        return start + invoke + self.times[op.name][choice]

    def _returned(self, op: Op, choice: str, finish: float) -> float:
        """When the op's results that leave the level are back in the level host's memory."""
        memory = self.context.memory_of(choice)
        back = (self._move_us(t, memory, self.host_memory) for t in self.leaving[op.name])
        return finish + max(back, default=0.0)

    def run(
        self, order: list[Op], pick: Picker, *, fit: bool = False
    ) -> tuple[dict[str, str], float]:
        """Schedule `order`; `pick` chooses among ``(done, choice)`` options per op.

        `fit`: offer only the choices whose memory still holds the op's weights (`_Weights`),
        unless none does (the plan's weight check then names the memory that overflows).
        """
        free: dict[str, float] = {}
        where: dict[str, str] = {}
        finish: dict[str, float] = {}
        weights = _Weights(self.context) if fit else None
        makespan = 0.0
        for op in order:
            choices: Mapping[str, float] = self.times[op.name]
            if weights is not None:
                choices = weights.fitting(op, choices)
            ends = {c: self._finish(op, c, free, where, finish) for c in choices}
            done = {c: self._returned(op, c, end) for c, end in ends.items()}
            choice = pick(op, [(t, c) for c, t in done.items()])
            where[op.name] = choice
            finish[op.name] = free[choice] = ends[choice]
            makespan = max(makespan, done[choice])
            if weights is not None:
                weights.hold(op, choice)
        return {op.name: where[op.name] for op in self.ops}, makespan


class _Weights:
    """The weights each memory of a level holds as a schedule places ops, against its capacity.

    A choice that is a processor holds its op's weights in its memory: one whose capacity they
    would overflow is no choice (a cost plan whose weights did not fit a small GPU was refused
    at the end, where the root host alone ran). A nested level is always offered: where its
    ops' weights go is its own schedule's choice. It starts from the weights the levels
    partitioned before left (`LevelContext.held`), and `commit` adds the level's own.
    """

    def __init__(self, context: LevelContext) -> None:
        self.context = context
        # memory -> the weights it holds: those earlier levels placed there (`context.held`)
        self.held = {memory: set(names) for memory, names in context.held.items()}
        metas = context.metas
        self.bytes = {m: sum(metas[t].nbytes for t in names) for m, names in self.held.items()}

    def _new(self, op: Op, memory: str) -> list[str]:
        constants, held = self.context.constants, self.held.get(memory, set())
        return [t for t in dict.fromkeys(op.inputs) if t in constants and t not in held]

    def fitting(self, op: Op, choices: Mapping[str, float]) -> Mapping[str, float]:
        """The choices among `choices` that have room for `op`'s weights; all when none has."""
        if self.context.constants.isdisjoint(op.inputs):
            return choices
        platform, metas = self.context.platform, self.context.metas
        fitting = {}
        for choice, time in choices.items():
            memory = self.context.memory_of(choice)
            need = sum(metas[t].nbytes for t in self._new(op, memory))
            room = platform.memories[memory].capacity_bytes - self.bytes.get(memory, 0)
            if choice in platform.levels or need <= room:
                fitting[choice] = time
        return fitting or choices

    def fit(self, placement: Mapping[str, str]) -> bool:
        """Whether the weights of the level's ops, placed by `placement`, fit every memory."""
        for op in self.context.ops:
            self.hold(op, placement[op.name])
        memories = self.context.platform.memories
        return all(held <= memories[m].capacity_bytes for m, held in self.bytes.items())

    def commit(self, placement: Mapping[str, str]) -> None:
        """Keep the weights of the level's ops, placed by `placement`, for the levels cut next
        (`LevelContext.held`)."""
        for op in self.context.ops:
            self.hold(op, placement[op.name])
        for memory, names in self.held.items():
            self.context.held.setdefault(memory, set()).update(names)

    def hold(self, op: Op, choice: str) -> None:
        """Place `op` on `choice`: its memory holds its weights from now on."""
        if choice in self.context.platform.levels or self.context.constants.isdisjoint(op.inputs):
            return
        memory = self.context.memory_of(choice)
        new = self._new(op, memory)
        self.held.setdefault(memory, set()).update(new)
        self.bytes[memory] = self.bytes.get(memory, 0) + sum(
            self.context.metas[t].nbytes for t in new
        )


def _earliest(op: Op, options: list[tuple[float, str]]) -> str:
    return min(options, key=lambda option: option[0])[1]


def estimate_us(context: LevelContext, placement: dict[str, str]) -> float:
    """The list scheduler's estimated makespan of the level's ops under a fixed `placement`."""
    scheduler = _Scheduler(context)
    return scheduler.run(scheduler.order(), lambda op, _: placement[op.name])[1]


def place_by_cost(context: LevelContext) -> dict[str, str]:
    """Op name -> the choice where it finishes first (HEFT-like), or capability's if faster.

    Raises
    ------
    PartitionError
        An op that no device, host included, can run.

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> relu = Op("Relu", "r", ("x",), ("y",))
    >>> costs = {"r": Cost(flops=1e6, bytes_read=4e6, bytes_written=4e6, op_class="elementwise")}
    >>> from hetsim.kernels import Meta
    >>> import numpy as np
    >>> metas = {t: Meta((1000, 1000), np.dtype("float32")) for t in ("x", "y")}
    >>> place_by_cost(LevelContext(soc, soc.levels[""], (relu,), metas, costs))
    {'r': 'host'}
    """
    scheduler = _Scheduler(context)
    order = scheduler.order()
    heft, heft_us = scheduler.run(order, _earliest, fit=True)
    capability = place_by_capability(context)
    _, capability_us = scheduler.run(order, lambda op, _: capability[op.name])
    # the faster of the two whose weights fit their memories (HEFT's own choices fit each op
    # where it can, yet an early op may fill the one memory a later op can use)
    heft_fits, capability_fits = _Weights(context).fit(heft), _Weights(context).fit(capability)
    faster = capability_us < heft_us if heft_fits == capability_fits else capability_fits
    chosen = capability if faster else heft
    _Weights(context).commit(chosen)
    return chosen
