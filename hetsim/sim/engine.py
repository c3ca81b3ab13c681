"""The SimPy engine: one `Simulation` holds all mutable state of a run.

`Simulation` sets that state up, runs it to the end and turns it into a `RunRecord` (or the
`SimulationError` of a deadlock or an overflow); what each step does is the `Interpreter` it
extends (`hetsim.sim.interpreter`: the executors, one handler per step type, the copy and
invocation processes). It owns the SimPy environment (``env.now`` is simulated µs) and the
simulated resources:

- each **executor** (the root program's, and one per nested invocation: `Executor`) runs as a
  SimPy process on its level's host; INVOKE queues an invocation on the nested level host's
  stream, whose process (`Simulation.invoke`) pays the request, runs the nested executor and pays
  the completion (docs/runtime.md). Below, "the host" is the executor running at the moment.
- the **host** runs the VM interpreter as a SimPy process (`Simulation.run`). The host is the
  only actor that allocates, frees, calls host kernels and queues device work, so its program
  order decides those effects by itself: the interpreter keeps a local clock ``t`` that runs ahead
  of ``env.now`` and yields to SimPy only where another actor's progress matters (SYNC, and RET
  to end at the right time). A host that never waits creates no events at all.
- **device streams** (`Stream`): in-order queues, one ``stream0`` per device. A launch or copy
  queued at host time ``t`` starts at ``max(t, end of the previous item, ready time of each
  tensor it waits for)``. A kernel whose waited tensors have known ready times is scheduled
  when the stream reaches it, with no SimPy event: its outputs get their ready time (its end)
  at once, and the stream's clock runs ahead of ``env.now`` as the host's does. Copies and
  invocations are SimPy processes; their completion marks their outputs ready and wakes the
  streams waiting for them.
- **links**: one ``simpy.Resource`` of capacity 1 each, so transfers on a link are served one at a
  time, first come (by simulated request time) first served; a copy holds each hop of its route
  in turn (store and forward) and records one ``transfer`` span per hop.
- **memories** (`MemoryState`): byte counters with a capacity. Allocation and free happen at the
  host's time (a stream-ordered allocator: a kernel queued later on the same stream cannot run
  before the previous user of the memory), except a free that waits for streams using the tensor
  in a memory their device does not own (`FreeStep.after`: its bytes come back when each stream
  reaches it, `hetsim.sim.steps.Release`); an allocation that does not fit is a
  `SimulationError`, never a wait, so a blocking ``simpy.Container`` is not needed.

If SimPy's queue empties while the program or a stream still waits, the run stops with a
`SimulationError` that says what waits on what. Spans are recorded through one function bound at
construction: a list append when tracing, per-resource totals otherwise; the four most frequent
(an ALLOC's, a FREE's and a LAUNCH's host time, a kernel's) add to the totals in place when
untraced, which took a warm untraced run of a 1e3-op chain from 1.77 to 1.43 ms.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Generator, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import simpy
from simpy.events import Event

from hetsim.errors import OutOfMemoryError, SimulationError, TimeOverflowError
from hetsim.kernels.arrays import owned_outputs
from hetsim.sim.graphs import GraphStep, run_graph
from hetsim.sim.interpreter import Executor, Interpreter, out_of_memory, where
from hetsim.sim.records import RunRecord, Spans
from hetsim.sim.resources import MemoryState, Row, Stream
from hetsim.sim.steps import (
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    InvokeStep,
    RetStep,
    Step,
    SyncStep,
    two_clock_memories,
)

__all__ = ["Simulation"]


class _Totals:
    """Busy time per (resource, category) when spans are not kept."""

    def __init__(self) -> None:
        self.busy_us: defaultdict[tuple[str, str], float] = defaultdict(float)
        busy = self.busy_us

        def record(row: Row) -> None:  # a closure: no attribute lookups per span
            busy[row[0], row[3]] += row[5] - row[4]

        self.record: Callable[[Row], None] = record


class Simulation(Interpreter):
    """All the mutable state of one simulated run: SimPy env, streams, links, memories.

    Parameters
    ----------
    host
        Path of the processor that runs the VM.
    streams
        Paths of the devices that get a stream.
    memories
        Capacity in bytes of each memory, by name.
    links
        Link names.
    processors
        Every processor of the platform, for the record (idle ones included); by default the
        host and the streams.
    trace
        Keep every span (for traces and plots); otherwise keep busy totals only.

    Examples
    --------
    >>> sim = Simulation("host", ["gpu0"], {"host.mem": 1024}, [])
    >>> sim
    <Simulation host=host streams=['gpu0'] memories=['host.mem'] links=[]>
    """

    def __init__(
        self,
        host: str,
        streams: Iterable[str],
        memories: Mapping[str, int],
        links: Iterable[str],
        *,
        processors: Iterable[str] | None = None,
        trace: bool = True,
    ) -> None:
        self.env = simpy.Environment()
        self.host = host
        self.streams = {path: Stream(self, path) for path in streams}
        self.memories = {name: MemoryState(name, cap) for name, cap in memories.items()}
        self.links = {name: simpy.Resource(self.env, capacity=1) for name in links}
        self.link_bytes = dict.fromkeys(self.links, 0)
        self.ready: list[float | None] = []
        self.values: list[Any] = []
        self.slot_names: Sequence[str] = ()
        self.placement: Mapping[str, str] = {}
        self.waiters: defaultdict[int, list[Stream]] = defaultdict(list)
        self._rows: list[Row] = []
        self._totals = _Totals()
        # Decided once for most spans: a list append when tracing, else a closure adding to the
        # totals. The most frequent ones (an ALLOC's, a FREE's and a LAUNCH's on the host, a
        # kernel's on its stream) test `is_tracing` and, untraced, add their durations up in
        # place (the interpreter's locals, `Stream.compute_us`), put into `busy_us` later: the
        # call and its row cost twice the addition (warm runs: docs/runtime.md).
        self.record: Callable[[Row], None] = self._rows.append if trace else self._totals.record
        self.busy_us = self._totals.busy_us
        self.is_tracing = trace
        self.t = 0.0
        self.pc = 0
        self._code: Sequence[Step] = ()
        self._outputs: Mapping[str, int] = {}
        self._is_done = False
        self._flows = 0
        self._sync_wait: str | None = None
        self.processors = tuple(processors) if processors is not None else None
        self.executors: list[Executor] = []
        self.programs: Sequence[tuple[str, Sequence[Step]]] = ()
        # A step that queues work on a stream: the SimPy process that runs it there (kernels,
        # the most frequent, are a timeout callback in `Stream` instead).
        self.stream_processes: dict[
            type,
            Callable[[Stream, tuple[Any, float, int | None], float], Generator[Event, Any, None]],
        ] = {CopyStep: self.transfer, InvokeStep: self.invoke}
        # the handler of every step but ALLOC, FREE, LAUNCH and COPY, which the interpreter's
        # loop runs itself (`Interpreter._interpret`)
        self._handlers: dict[type, Callable[[Any], Event | None]] = {
            CallStep: self._call,
            SyncStep: self._sync,
            BranchStep: self._branch,
            InvokeStep: self._invoke,
            RetStep: self._ret,
            GraphStep: lambda step: run_graph(self, step),
        }

    def __repr__(self) -> str:
        return (
            f"<Simulation host={self.host} streams={list(self.streams)} "
            f"memories={list(self.memories)} links={list(self.links)}>"
        )

    # -- running ----------------------------------------------------------------------------

    def run(
        self,
        code: Sequence[Step],
        slot_names: Sequence[str],
        *,
        ready: Iterable[int] = (),
        resident: Iterable[AllocStep] = (),
        values: list[Any] | None = None,
        placement: Mapping[str, str] | None = None,
        inputs: Mapping[str, np.ndarray] | None = None,
        programs: Sequence[tuple[str, Sequence[Step]]] = (),
        deferred: Collection[str] | None = None,
    ) -> RunRecord:
        """Run `code` from time 0 to its RET and return what happened.

        Each executor (the root's, and one per nested invocation) is a SimPy process. Only one
        runs at a time, so the running one's state lives in this object's attributes: it is
        loaded when its process (re)starts and saved when it yields; a step handler that
        returns an event may add callbacks to it, which run with the executor's state loaded.

        Parameters
        ----------
        code
            Bound steps; the program starts at index 0.
        slot_names
            The tensor held by each slot (for messages).
        ready
            Slots ready at time 0 (graph inputs, constants).
        resident
            Allocations that exist before the run (graph inputs, constants); they take no time.
        values
            The value table (functional mode), indexed by slot; ``None`` in timing mode.
        placement, inputs
            Passed through to the record.
        programs
            ``(host, steps)`` of every program by number, for INVOKE (number 0 is the root's).
        deferred
            The memories two clocks change (`BoundProgram.deferred`): counted in simulated time
            and checked against their capacity when the run ends (`MemoryState.settle`);
            ``None``: found from the steps (`two_clock_memories`).

        Raises
        ------
        SimulationError
            Out of memory, or a deadlock.
        """
        self._code = code
        self.slot_names = slot_names
        self.placement = placement or {}
        self.ready = [None] * len(slot_names)
        for slot in ready:
            self.ready[slot] = 0.0
        self.values = values if values is not None else [None] * len(slot_names)
        if deferred is None:
            deferred = two_clock_memories(programs or ((self.host, code),))
        for name in deferred:
            self.memories[name].is_deferred = True
        for step in resident:
            self._take(step, 0.0)
        self.programs = programs
        root = Executor(self.host, code)
        self.executors.append(root)
        self.env.process(self._interpret(root))
        try:
            self.env.run()
        except OutOfMemoryError as err:  # a deferred memory may have run out earlier, among
            earlier = self._deferred_overflow()  # the changes the engine has reached so far:
            # every change up to the engine's time is made (the hosts run ahead of it, and a
            # stream gives bytes back at its time or later), none past it for certain
            if (
                earlier is not None
                and (earlier.at_us or 0.0) <= self.env.now
                and (err.at_us is None or (earlier.at_us or 0.0) < err.at_us)
            ):
                raise earlier from err
            raise
        self._load(root)
        if any(not e.is_done for e in self.executors) or any(
            s.is_busy for s in self.streams.values()
        ):
            raise SimulationError(self._deadlock_message())
        earliest = self._deferred_overflow()  # in simulated time, now that every change is made
        if earliest is not None:
            raise earliest
        record = self._record(placement or {}, inputs or {}, values is not None)
        self._release()
        return record

    def _deferred_overflow(self) -> OutOfMemoryError | None:
        """Replay in time order each memory that two clocks changed (`MemoryState.settle`):
        the error of the earliest ALLOC, in simulated time, that did not fit one, as it would
        have been when made; None if each fit (the memories' peaks are then set)."""
        found = []
        for memory in self.memories.values():
            if memory.is_deferred:
                crossing = memory.settle()
                if crossing is not None:
                    step, t, used, new_bytes = crossing
                    found.append(out_of_memory(step, memory, t, self.placement, used, new_bytes))
        return min(found, key=lambda err: err.at_us or 0.0, default=None)

    def _release(self) -> None:
        """Drop the run's steps and rows once it is recorded.

        Streams reference this simulation and it them: a cycle that only Python's cyclic
        collector frees, and `simulate` pauses it. Without the references, the steps go as
        soon as their caller drops them (or stay only in the bound-program cache,
        `hetsim.sim.bind.bound_for`), not when the collector next runs; and the rows, which the
        record's spans copy, go now rather than after the collector has traversed every one.
        """
        self._code = ()
        self.programs = ()
        for executor in self.executors:
            executor.code = ()
        self._rows.clear()
        for memory in self.memories.values():
            if memory.is_deferred:
                memory.changes = []  # kept for `settle` alone

    # -- results ----------------------------------------------------------------------------

    def _deadlock_message(self) -> str:
        waits = []
        for executor in self.executors:
            if not executor.is_done:
                step = executor.code[executor.pc - 1]
                what = f"{executor.sync_wait} to finish" if executor.sync_wait else "nothing"
                waits.append(f"{executor.host} waits for {what} at {step.name!r}")
        for stream in self.streams.values():
            reason = stream.waiting_for()
            if reason is not None:
                waits.append(f"{stream.processor}/{stream.name} waits for {reason}")
        now = max(self.env.now, *(e.t for e in self.executors))
        return f"{where(now)}: deadlock: " + "; ".join(waits)

    def _overflow_message(self, rows: Sequence[Row]) -> str:
        """What made the run's time infinite: every parameter is finite, but sums of ones near
        the largest float (1.8e308 µs) are not."""
        endless = [r for r in rows if not r[5] < math.inf]
        # a wait that never ends is the overflow's effect: name what it waited for, if traced
        first = next((r for r in endless if r[3] != "sync_wait"), endless[0] if endless else None)
        if first is not None:
            what = f"the time of {first[0]}'s {first[3]} ({first[2]!r}) overflows"
        else:  # untraced: only the totals, which every span after the overflow spoils
            spoiled = [f"{res}'s {cat}" for (res, cat), us in sorted(self._busy_totals().items())
                       if not us < math.inf]  # fmt: skip
            what = f"the times of {', '.join(spoiled) or 'the run'} overflow"
        return (
            f"{where(self.env.now)}: expected a finite makespan, got inf: {what} (a time "
            "parameter of the platform near 1e308 µs?)"
        )

    def _busy_totals(self) -> Mapping[tuple[str, str], float]:
        """Busy µs per (resource, category) of an untraced run, the streams' kernels included
        (each stream adds those up itself: `Stream.take_compute_us`)."""
        busy = self._totals.busy_us
        for stream in self.streams.values():
            taken = stream.take_compute_us()
            if taken:
                busy[stream.processor, "compute"] += taken
        return busy

    def _record(
        self, placement: Mapping[str, str], inputs: Mapping[str, np.ndarray], has_values: bool
    ) -> RunRecord:
        rows = sorted(self._rows, key=itemgetter(4))  # stable: same-time rows keep order
        spans = Spans(tuple(rows))  # made into `Span`s when first read
        outputs = {name: self.values[slot] for name, slot in self._outputs.items()}
        if has_values:
            outputs = owned_outputs(outputs, inputs)
        busy: dict[str, dict[str, float]] = {}
        for (resource, category), total in sorted(self._busy_totals().items()):
            busy.setdefault(resource, {})[category] = total
        makespan = max(
            self.env.now,
            *(e.t for e in self.executors),
            *(s.tail_us for s in self.streams.values()),
        )
        if not makespan < math.inf:
            raise TimeOverflowError(self._overflow_message(rows))
        return RunRecord(
            makespan_us=makespan,
            spans=spans,
            processors=self.processors or (self.host, *self.streams),
            links=tuple(self.links),
            link_bytes=dict(self.link_bytes),
            peak_memory_bytes={name: m.peak_bytes for name, m in self.memories.items()},
            placement=dict(placement),
            inputs=dict(inputs),
            outputs=outputs if has_values else {},
            extra={} if self.is_tracing else {"busy_us": busy},
        )
