"""The SimPy engine: one `Simulation` holds all mutable state of a run.

It owns the SimPy environment (``env.now`` is simulated µs) and the simulated resources:

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
  before the previous user of the memory); an allocation that does not fit is a
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
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import simpy
from simpy.events import Event, Timeout

from hetsim.errors import SimulationError
from hetsim.platform import empty_memory_note
from hetsim.sim.graphs import GraphStep, run_graph
from hetsim.sim.records import RunRecord, Spans
from hetsim.sim.resources import EXEC, LINK, STREAM, MemoryState, Row, Stream
from hetsim.sim.steps import (
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    FreeStep,
    InvokeStep,
    LaunchStep,
    RetStep,
    Step,
    SyncStep,
)
from hetsim.units import format_bytes

__all__ = ["Executor", "Simulation"]


def _where(now: float) -> str:
    return f"sim at {round(now, 3)} us"


def _out_of_memory(step: AllocStep, memory: MemoryState, t: float) -> SimulationError:
    """The error of an ALLOC whose bytes do not fit `memory`: the memory, tensor and op."""
    free = memory.capacity_bytes - memory.used_bytes
    why = empty_memory_note(memory.name, memory.capacity_bytes)
    return SimulationError(
        f"{_where(t)}, {step.processor}: out of memory in {memory.name} "
        f"(need {format_bytes(step.size_bytes)}, {format_bytes(free)} free) "
        f"for tensor {step.tensor} of op {step.op}{why}"
    )


class _Totals:
    """Busy time per (resource, category) when spans are not kept."""

    def __init__(self) -> None:
        self.busy_us: defaultdict[tuple[str, str], float] = defaultdict(float)
        busy = self.busy_us

        def record(row: Row) -> None:  # a closure: no attribute lookups per span
            busy[row[0], row[3]] += row[5] - row[4]

        self.record: Callable[[Row], None] = record


class Executor:
    """The interpreter state of one level's program: its host, code, program counter and clock.

    The root program and every nested invocation each get one; `Simulation` loads the running
    one's state into its own attributes (``host``, ``t``, ``pc``, ...) so that step handlers read
    and write plain attributes (see `Simulation.run`).
    """

    __slots__ = ("code", "host", "is_done", "outputs", "pc", "sync_wait", "t")

    def __init__(self, host: str, code: Sequence[Step], t: float = 0.0) -> None:
        self.host = host
        self.code = code
        self.pc = 0
        self.t = t
        self.is_done = False
        self.outputs: Mapping[str, int] = {}
        self.sync_wait: str | None = None

    def __repr__(self) -> str:
        return f"<Executor {self.host} pc={self.pc} t={round(self.t, 3)}>"


class Simulation:
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
        self.waiters: defaultdict[int, list[Stream]] = defaultdict(list)
        self._rows: list[Row] = []
        self._totals = _Totals()
        # Decided once for most spans: a list append when tracing, else a closure adding to the
        # totals. The most frequent ones (an ALLOC's, a FREE's and a LAUNCH's on the host, a
        # kernel's on its stream) test `is_tracing` and, untraced, add to `busy_us` in place:
        # the call and its row cost twice the addition (warm runs: docs/runtime.md).
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
        self._handlers: dict[type, Callable[[Any], Event | None]] = {
            AllocStep: self._alloc,
            FreeStep: self._free,
            CallStep: self._call,
            LaunchStep: self._launch,
            CopyStep: self._launch,
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

        Raises
        ------
        SimulationError
            Out of memory, or a deadlock.
        """
        self._code = code
        self.slot_names = slot_names
        self.ready = [None] * len(slot_names)
        for slot in ready:
            self.ready[slot] = 0.0
        self.values = values if values is not None else [None] * len(slot_names)
        for step in resident:
            self._take(step, 0.0)
        self.programs = programs
        root = Executor(self.host, code)
        self.executors.append(root)
        self.env.process(self._interpret(root))
        self.env.run()
        self._load(root)
        if any(not e.is_done for e in self.executors) or any(
            s.is_busy for s in self.streams.values()
        ):
            raise SimulationError(self._deadlock_message())
        record = self._record(placement or {}, inputs or {}, values is not None)
        self._release()
        return record

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

    def _load(self, executor: Executor) -> None:
        self.host, self._code, self.pc, self.t = (
            executor.host, executor.code, executor.pc, executor.t,
        )  # fmt: skip
        self._is_done, self._outputs, self._sync_wait = (
            executor.is_done, executor.outputs, executor.sync_wait,
        )  # fmt: skip

    def _save(self, executor: Executor) -> None:
        executor.pc, executor.t, executor.is_done = self.pc, self.t, self._is_done
        executor.outputs, executor.sync_wait = self._outputs, self._sync_wait

    def _interpret(self, executor: Executor) -> Generator[Event, Any, None]:
        self._load(executor)
        code = self._code
        handlers = self._handlers
        while not self._is_done:
            step = code[self.pc]
            self.pc += 1
            wait = handlers[step.__class__](step)
            if wait is not None:
                self._save(executor)
                # first callback: the handler's own callbacks then see this executor's state
                wait.callbacks.insert(0, lambda _: self._load(executor))
                yield wait
        self._save(executor)

    def _dispatch(self, step: Any, flow: int | None = None) -> float:
        """Record the host time of the instruction itself and advance the host clock past it."""
        t = self.t
        end: float = t + step.cost_us
        self.record((self.host, EXEC, step.name, "dispatch", t, end, flow, None, step.args))
        self.t = end
        return end

    # -- for step handlers outside this module (hetsim.sim.graphs) ---------------------------

    def dispatch(self, step: Any) -> float:
        """Pay `step`'s own host time (``cost_us``) as a dispatch span; return the new host time."""
        return self._dispatch(step)

    def execute(self, step: Any) -> Event | None:
        """Run `step` through its handler, as the interpreter does."""
        return self._handlers[step.__class__](step)

    def take(self, step: AllocStep) -> None:
        """Take `step`'s bytes at the host's time, without its instruction cost (or fail: OOM)."""
        self._take(step, self.t)

    def give(self, step: FreeStep) -> None:
        """Give `step`'s bytes back and drop its value, without its instruction cost."""
        self.memories[step.memory].used_bytes -= step.size_bytes
        self.values[step.slot] = None

    def new_flow(self) -> int:
        """A fresh flow id: an arrow from a host dispatch to the device work it started."""
        self._flows += 1
        return self._flows

    def _take(self, step: AllocStep, t: float) -> None:
        memory = self.memories[step.memory]
        used = memory.used_bytes + step.size_bytes
        if used > memory.capacity_bytes:
            raise _out_of_memory(step, memory, t)
        memory.used_bytes = used
        if used > memory.peak_bytes:
            memory.peak_bytes = used

    def _alloc(self, step: AllocStep) -> None:
        t = self.t
        # inlined for speed: what _take does
        memory = self.memories[step.memory]
        used = memory.used_bytes + step.size_bytes
        if used > memory.capacity_bytes:
            raise _out_of_memory(step, memory, t)
        memory.used_bytes = used
        if used > memory.peak_bytes:
            memory.peak_bytes = used
        # inlined for speed (here and in _free): what _dispatch does
        end = t + step.cost_us
        if self.is_tracing:
            self.record((self.host, EXEC, step.name, "dispatch", t, end, None, None, step.args))
        else:
            self.busy_us[self.host, "dispatch"] += end - t
        self.t = end

    def _free(self, step: FreeStep) -> None:
        self.memories[step.memory].used_bytes -= step.size_bytes
        self.values[step.slot] = None
        t = self.t
        end = t + step.cost_us
        if self.is_tracing:
            self.record((self.host, EXEC, step.name, "dispatch", t, end, None, None, step.args))
        else:
            self.busy_us[self.host, "dispatch"] += end - t
        self.t = end

    def _call(self, step: CallStep) -> None:
        start = self._dispatch(step)
        end = start + step.compute_us
        step.run(self.values)
        self.record((self.host, EXEC, step.op, "compute", start, end, None, None, step.args))
        self.t = end
        for slot in step.produces:
            self.ready[slot] = end

    def _launch(self, step: LaunchStep | CopyStep) -> None:
        self._flows += 1
        flow = self._flows
        host, record, name, args = self.host, self.record, step.name, step.args
        # inlined for speed: what _dispatch does
        t = self.t
        start = t + step.cost_us
        end = start + step.launch_us
        if self.is_tracing:
            record((host, EXEC, name, "dispatch", t, start, flow, None, args))
            record((host, EXEC, name, "launch", start, end, None, None, args))
        else:
            busy = self.busy_us
            busy[host, "dispatch"] += start - t
            busy[host, "launch"] += end - start
        self.t = end
        step.run(self.values)
        self.streams[step.stream].push((step, end, flow))

    def _sync(self, step: SyncStep) -> Event | None:
        start = self._dispatch(step)
        stream = self.streams[step.stream]
        drained_us = stream.drain_us()
        if drained_us is None:
            self._sync_wait = f"{stream.processor}/{stream.name}"
            event = stream.drained()
            event.callbacks.append(lambda _: self._synced(step, start, self.env.now))
            return event
        self._synced(step, start, drained_us)
        return None

    def _synced(self, step: SyncStep, start: float, drained_us: float) -> None:
        self._sync_wait = None
        t = start
        if drained_us > t:
            self.record((self.host, EXEC, step.name, "sync_wait", t, drained_us, None, None, {}))
            t = drained_us
        end = t + step.sync_us
        self.record((self.host, EXEC, step.name, "sync_wait", t, end, None, None, step.args))
        self.t = end

    def _branch(self, step: BranchStep) -> None:
        self._dispatch(step)
        if step.test(step.value):
            self.pc = step.target

    def _invoke(self, step: InvokeStep) -> None:
        self._flows += 1
        flow = self._flows
        self._dispatch(step, flow)
        step.run(self.values)
        self.streams[step.stream].push((step, self.t, flow))

    def invoke(
        self, stream: Stream, item: tuple[InvokeStep, float, int | None], start: float
    ) -> Generator[Event, Any, None]:
        """The SimPy process of one INVOKE: request, the nested executor's run, completion."""
        step, _, flow = item
        env = self.env
        if start > env.now:
            yield env.timeout(start - env.now)
        request_end = start + step.request_us
        self.record((step.level_host, EXEC, step.name, "invoke", start, request_end, None, flow,
                     step.args))  # fmt: skip
        yield env.timeout(step.request_us)
        ready = self.ready
        for _, target in step.arguments:
            ready[target] = request_end
        host, code = self.programs[step.program]
        nested = Executor(host, code, request_end)
        self.executors.append(nested)
        yield env.process(self._interpret(nested))
        done = env.now
        end = done + step.return_us
        self.record(
            (step.level_host, EXEC, f"return {step.op}", "invoke", done, end, None, None, {})
        )
        yield env.timeout(step.return_us)
        self.mark_ready(step.produces, end)
        stream.advance()

    def _ret(self, step: RetStep) -> Event | None:
        end = self._dispatch(step)
        self._outputs = step.outputs
        self._is_done = True
        now = self.env.now
        return Timeout(self.env, end - now) if end > now else None

    def transfer(
        self, stream: Stream, item: tuple[CopyStep, float, int | None], start: float
    ) -> Generator[Event, Any, None]:
        """The SimPy process of one copy: hold each link of the route in turn."""
        step, _, flow = item
        env = self.env
        if start > env.now:
            yield env.timeout(start - env.now)
        for link, duration_us in step.hops:
            resource = self.links[link]
            with resource.request() as request:
                yield request
                begin = env.now
                yield env.timeout(duration_us)
            self.record((link, LINK, step.name, "transfer", begin, env.now, None, None, step.args))
            self.link_bytes[link] += step.size_bytes
        now = env.now
        self.record(
            (stream.processor, STREAM, step.name, "transfer", start, now, None, flow, step.args)
        )
        self.mark_ready(step.produces, now)
        stream.advance()

    def mark_ready(self, slots: tuple[int, ...], now: float) -> None:
        """Tensors in `slots` are ready at `now`; wake the streams that wait for them."""
        ready = self.ready
        waiters = self.waiters
        for slot in slots:
            ready[slot] = now
            if waiters:  # usually empty: skip the lookup
                for stream in waiters.pop(slot, ()):
                    stream.resume()

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
        return f"{_where(now)}: deadlock: " + "; ".join(waits)

    def _overflow_message(self, rows: Sequence[Row]) -> str:
        """What made the run's time infinite: every parameter is finite, but sums of ones near
        the largest float (1.8e308 µs) are not."""
        first = next((r for r in rows if not r[5] < math.inf), None)
        if first is not None:
            what = f"the time of {first[0]}'s {first[3]} ({first[2]!r}) overflows"
        else:  # untraced: only the totals, which every span after the overflow spoils
            spoiled = [f"{res}'s {cat}" for (res, cat), us in sorted(self._totals.busy_us.items())
                       if not us < math.inf]  # fmt: skip
            what = f"the times of {', '.join(spoiled) or 'the run'} overflow"
        return (
            f"{_where(self.env.now)}: expected a finite makespan, got inf: {what} (a time "
            "parameter of the platform near 1e308 µs?)"
        )

    def _record(
        self, placement: Mapping[str, str], inputs: Mapping[str, np.ndarray], has_values: bool
    ) -> RunRecord:
        rows = sorted(self._rows, key=itemgetter(4))  # stable: same-time rows keep order
        spans = Spans(tuple(rows))  # made into `Span`s when first read
        outputs = {name: self.values[slot] for name, slot in self._outputs.items()}
        busy: dict[str, dict[str, float]] = {}
        for (resource, category), total in sorted(self._totals.busy_us.items()):
            busy.setdefault(resource, {})[category] = total
        makespan = max(
            self.env.now,
            *(e.t for e in self.executors),
            *(s.tail_us for s in self.streams.values()),
        )
        if not makespan < math.inf:
            raise SimulationError(self._overflow_message(rows))
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
