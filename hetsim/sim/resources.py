"""The engine's resources: device streams (in-order queues) and memory counters.

`hetsim.sim.engine.Simulation` owns one of each per device and memory of a run and drives them;
the rules they follow are written in that module's docstring and in docs/runtime.md.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Generator, Mapping
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from simpy import Environment
from simpy.events import Event, Timeout

from hetsim.sim.steps import LaunchStep, Release

if TYPE_CHECKING:
    from hetsim.sim.engine import Simulation

__all__ = ["EXEC", "LINK", "STREAM", "MemoryState", "Row", "Stream", "wait_until"]

EXEC = "exec"
"""The thread name of an executor on its host in spans and traces."""
STREAM = "stream0"
"""The thread name of a device's (single) stream."""
LINK = "link"
"""The thread name of a link in spans and traces."""

Row = tuple[str, str, str, str, float, float, int | None, int | None, Mapping[str, Any]]


def wait_until(env: Environment, at_us: float) -> Generator[Event, Any, None]:
    """Wait until ``env.now`` is exactly `at_us`.

    SimPy fires a timeout at ``now + delay``; with ``delay = at_us - now`` that sum may round one
    ulp below `at_us`, and work that a clock (the host's, a stream's) starts at `at_us` began, by
    ``env.now``, before it: a copy of no time ended before it started. A delay whose sum would
    round past `at_us` is taken one ulp shorter, and what is left is waited again: the
    difference of two floats that close is exact, so the sum lands on `at_us`.
    """
    while env.now < at_us:
        now = env.now
        delay = at_us - now
        if now + delay > at_us:
            delay = math.nextafter(delay, 0.0)
        yield Timeout(env, delay)


class MemoryState:
    """Bytes in use of one memory during a run, and the peak reached.

    Changed by one clock alone (one host's), a memory's changes come in time order, and
    `used_bytes`, `peak_bytes` and an ALLOC's capacity check are exact as they happen. Changed by
    two (a routed copy staged here at the engine's time, a memory that two levels' hosts
    allocate in: each clock runs ahead of the other), they come out of time order: such a
    memory `is_deferred` (set before the run, `hetsim.sim.bind.two_clock_memories`), keeps every
    change with its simulated time (`changes`: time, bytes, what, pool; what is the ALLOC step,
    ``None`` for a FREE, or a `hetsim.sim.steps.Release` going into the pool named, or, pool
    ``None``, out of it), and `settle` works out its peak and its first ALLOC past the capacity
    in time order when the run ends, a FREE that waits for one stream leaving its bytes to the
    freeing host's next allocations that stream writes until it is reached.

    Examples
    --------
    >>> m = MemoryState("gpu0.mem", 100)
    >>> m
    <MemoryState gpu0.mem 0/100 B>
    """

    __slots__ = ("capacity_bytes", "changes", "is_deferred", "name", "peak_bytes", "used_bytes")

    def __init__(self, name: str, capacity_bytes: int) -> None:
        self.name = name
        self.capacity_bytes = capacity_bytes
        self.used_bytes = 0
        self.peak_bytes = 0
        # (time, bytes, what, pool): an ALLOC (its step, and the pool it may reuse from), a
        # FREE (None), a Release into its pool (at the FREE) or out of it (when reached)
        self.changes: list[tuple[float, int, Any, Any]] = []
        self.is_deferred = False

    def __repr__(self) -> str:
        return f"<MemoryState {self.name} {self.used_bytes}/{self.capacity_bytes} B>"

    def settle(self) -> tuple[Any, float, int, int] | None:
        """Replay the changes in time order (a stable sort: changes at one time keep the order
        they were made in): set `peak_bytes`, and return the first ALLOC that passed the
        capacity, with its time, the bytes in use before it and the bytes it needed beyond those
        it reused, if any.

        An ALLOC naming a pool (``(writer, host)``) first takes the bytes of the Releases in
        it, oldest first: those a FREE of that host left to that stream, not back yet
        (`hetsim.sim.steps.Release`); it takes only the rest anew.

        >>> m = MemoryState("host.mem", 10)
        >>> m.changes = [(4.0, 6, "a", None), (1.0, 6, "b", None), (2.0, -6, None, None)]
        >>> m.settle(), m.peak_bytes  # made in this order they held 12 B, never so in time
        (None, 6)
        >>> m.changes.append((3.0, 6, "c", None))
        >>> m.settle()  # in time order: b, its free, c, then a finds 6 B in use
        ('a', 4.0, 6, 6)
        """
        used = peak = 0
        capacity = self.capacity_bytes
        pools: dict[Any, deque[Any]] = {}
        for t, size, what, pool in sorted(self.changes, key=itemgetter(0)):
            if what is None:  # a FREE
                used += size
                continue
            if what.__class__ is Release:
                if pool is not None:  # its bytes, left to a stream's next allocations
                    what.pooled = what.size_bytes
                    pools.setdefault(pool, deque()).append(what)
                else:  # reached: what no allocation took comes back
                    used -= what.pooled
                    what.pooled = 0
                continue
            held = pools.get(pool) if pool is not None else None
            while held and size > 0:
                release = held[0]
                taken = min(size, release.pooled)
                release.pooled -= taken
                size -= taken
                if release.pooled == 0:
                    held.popleft()
            if size > 0:
                if used + size > capacity:
                    return what, t, used, size
                used += size
                if used > peak:
                    peak = used
        self.peak_bytes = peak
        return None


class Stream:
    """An in-order queue of device work (kernels, copies, invocations) on one processor.

    A FREE that waits for the stream (`hetsim.sim.steps.Release`) is queued too: it takes no
    time, and its bytes come back when the stream reaches it (when the work queued before it
    ends) and every other stream it waits for has too.

    Items are ``(step, issue_us, flow)``; each starts at ``max(issue_us, end of the work before
    it, ready time of each tensor it waits for)``. A kernel whose waited tensors have known ready
    times when the stream reaches it is scheduled on the spot, with no SimPy event: its span is
    recorded, its outputs get their ready time (its end, possibly ahead of ``env.now``) and the
    stream's clock `tail_us` moves to its end, as the host's clock runs ahead of ``env.now``. A
    copy or an invocation shares links and nested hosts with other actors, so it runs as a SimPy
    process, and a kernel waiting for a tensor whose ready time is not known yet blocks; while
    either lasts the stream `is_busy` and later items queue behind it.
    """

    __slots__ = (
        "_blocked",
        "_drains",
        "_queue",
        "_sim",
        "compute_us",
        "is_busy",
        "name",
        "processor",
        "tail_us",
    )

    def __init__(self, sim: Simulation, processor: str) -> None:
        self._sim = sim
        self.processor = processor
        self.name = STREAM
        self._queue: deque[tuple[Any, float, int | None]] = deque()
        self._blocked: tuple[Any, float, int | None] | None = None
        self._drains: list[Event] = []
        self.tail_us = 0.0
        self.is_busy = False
        # untraced, the kernels' time since the engine last read it (`take_compute_us`): an
        # attribute added to per kernel, where a dict keyed by (processor, category) cost more
        self.compute_us = 0.0

    def __repr__(self) -> str:
        return f"<Stream {self.processor}/{self.name} queued={len(self._queue)}>"

    def push(self, item: tuple[Any, float, int | None]) -> None:
        """Queue `item`; it starts at once unless a copy, invocation or wait is in progress.

        Started, it goes first, then the items queued behind it, until one must wait for SimPy
        (`resume` and `advance` push an item when the stream is free again).
        """
        if self.is_busy:
            self._queue.append(item)
            return
        sim = self._sim
        ready = sim.ready
        queue = self._queue
        while True:
            step, issue_us, flow = item
            start = self.tail_us
            if issue_us > start:
                start = issue_us
            for slot in step.waits:
                ready_us = ready[slot]
                if ready_us is None:
                    self._blocked = item
                    self.is_busy = True
                    sim.waiters[slot].append(self)
                    return
                if ready_us > start:
                    start = ready_us
            cls = step.__class__
            if cls is LaunchStep:
                end = start + step.kernel_us
                if sim.is_tracing:
                    sim.record(
                        (self.processor, STREAM, step.op, "compute", start, end, None, flow,
                         step.args)
                    )  # fmt: skip
                else:  # what the untraced record does, kept here (`take_compute_us`)
                    self.compute_us += end - start
                self.tail_us = end
                # inlined for speed: mark_ready, when no stream waits for anything
                if sim.waiters:
                    sim.mark_ready(step.produces, end)
                else:
                    for slot in step.produces:
                        ready[slot] = end
            elif cls is Release:  # a FREE's bytes: back once the work before it is done
                if step.reached(start):
                    sim.give_back(step)
            else:
                self.is_busy = True
                sim.env.process(sim.stream_processes[cls](self, item, start))
                return
            if not queue:
                break
            item = queue.popleft()
        if self._drains:
            self._signal_drains()

    def take_compute_us(self) -> float:
        """The kernels' time this stream added up since the last call (untraced runs)."""
        taken, self.compute_us = self.compute_us, 0.0
        return taken

    def drained(self) -> Event:
        """An event that fires when everything queued so far has finished."""
        event = Event(self._sim.env)
        self._drains.append(event)
        return event

    def drain_us(self) -> float | None:
        """When everything queued so far finishes, if that is known already (else ``None``).

        Known unless a copy, an invocation or a wait for a tensor is in progress.
        """
        return None if self.is_busy else self.tail_us

    def waiting_for(self) -> str | None:
        """What the stream waits for, if anything (for deadlock reports)."""
        if self._blocked is None:
            return None
        step = self._blocked[0]
        ready = self._sim.ready
        missing = [self._sim.slot_names[s] for s in step.waits if ready[s] is None]
        return f"tensor {missing[0]!r} before {step.name!r}"

    def resume(self) -> None:
        """A tensor the blocked item waits for became ready: try to start it again."""
        item = self._blocked
        assert item is not None, f"{self!r}: resumed without a blocked item"
        self._blocked = None
        self.is_busy = False
        self.push(item)

    def advance(self) -> None:
        """The running copy or invocation finished: start what queued behind it."""
        self.is_busy = False
        now = self._sim.env.now
        if now > self.tail_us:
            self.tail_us = now
        if self._queue:
            self.push(self._queue.popleft())
        elif self._drains:
            self._signal_drains()

    def _signal_drains(self) -> None:
        """Fire the drain events at `tail_us`, when the last scheduled kernel ends."""
        env = self._sim.env
        if self.tail_us > env.now:
            Timeout(env, self.tail_us - env.now).callbacks.append(self._drained)
        else:
            self._drained(None)

    def _drained(self, _: Event | None) -> None:
        if self.is_busy or not self._drains:  # more work came: `advance` signals again
            return
        if self.tail_us > self._sim.env.now:  # more kernels came after the timeout was set
            self._signal_drains()
            return
        for event in self._drains:
            event.succeed()
        self._drains.clear()
