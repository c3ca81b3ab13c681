"""The engine's resources: device streams (in-order queues) and memory counters.

`hetsim.sim.engine.Simulation` owns one of each per device and memory of a run and drives them;
the rules they follow are written in that module's docstring and in docs/runtime.md.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simpy.events import Event, Timeout

from hetsim.sim.steps import LaunchStep

if TYPE_CHECKING:
    from hetsim.sim.engine import Simulation

__all__ = ["EXEC", "LINK", "STREAM", "MemoryState", "Row", "Stream"]

EXEC = "exec"
"""The thread name of an executor on its host in spans and traces."""
STREAM = "stream0"
"""The thread name of a device's (single) stream."""
LINK = "link"
"""The thread name of a link in spans and traces."""

Row = tuple[str, str, str, str, float, float, int | None, int | None, Mapping[str, Any]]


class MemoryState:
    """Bytes in use of one memory during a run, and the peak reached.

    Examples
    --------
    >>> m = MemoryState("gpu0.mem", 100)
    >>> m
    <MemoryState gpu0.mem 0/100 B>
    """

    __slots__ = ("capacity_bytes", "name", "peak_bytes", "used_bytes")

    def __init__(self, name: str, capacity_bytes: int) -> None:
        self.name = name
        self.capacity_bytes = capacity_bytes
        self.used_bytes = 0
        self.peak_bytes = 0

    def __repr__(self) -> str:
        return f"<MemoryState {self.name} {self.used_bytes}/{self.capacity_bytes} B>"


class Stream:
    """An in-order queue of device work (kernels and copies) on one processor.

    Items are ``(step, issue_us, flow)``. At most one item runs; the next starts when it ends.
    """

    __slots__ = (
        "_blocked",
        "_done",
        "_drains",
        "_item",
        "_queue",
        "_sim",
        "_start_us",
        "end_us",
        "idle_since_us",
        "is_busy",
        "name",
        "processor",
    )

    def __init__(self, sim: Simulation, processor: str) -> None:
        self._sim = sim
        self.processor = processor
        self.name = STREAM
        self._queue: deque[tuple[Any, float, int]] = deque()
        self._item: tuple[Any, float, int] | None = None
        self._blocked: tuple[Any, float, int] | None = None
        self._drains: list[Event] = []
        self._start_us = 0.0
        self.end_us: float | None = None
        self.idle_since_us = 0.0
        self.is_busy = False
        self._done = self._kernel_done  # bound once: one callback object for every kernel

    def __repr__(self) -> str:
        return f"<Stream {self.processor}/{self.name} queued={len(self._queue)}>"

    def push(self, item: tuple[Any, float, int]) -> None:
        """Queue `item`; it starts at once when the stream is idle."""
        if self.is_busy:
            self._queue.append(item)
        else:
            self.is_busy = True
            self._begin(item)

    def drained(self) -> Event:
        """An event that fires when everything queued so far has finished."""
        event = Event(self._sim.env)
        self._drains.append(event)
        return event

    def drain_us(self) -> float | None:
        """When everything queued so far finishes, if that is known already (else ``None``).

        Known when the stream is idle, or runs a kernel (its end is fixed) with nothing queued.
        """
        if not self.is_busy:
            return self.idle_since_us
        return self.end_us if not self._queue else None

    def waiting_for(self) -> str | None:
        """What the stream waits for, if anything (for deadlock reports)."""
        if self._blocked is None:
            return None
        step = self._blocked[0]
        ready = self._sim.ready
        missing = [self._sim.slot_names[s] for s in step.waits if ready[s] is None]
        return f"tensor {missing[0]!r} before {step.name!r}"

    def _begin(self, item: tuple[Any, float, int]) -> None:
        step, issue_us, _ = item
        sim = self._sim
        now = sim.env.now
        start = issue_us if issue_us > now else now
        self.end_us = None
        ready = sim.ready
        for slot in step.waits:
            ready_us = ready[slot]
            if ready_us is None:
                self._blocked = item
                sim.waiters[slot].append(self)
                return
            if ready_us > start:
                start = ready_us
        self._item = item
        self._start_us = start
        if step.__class__ is LaunchStep:
            self.end_us = start + step.kernel_us
            Timeout(sim.env, self.end_us - now).callbacks.append(self._done)
        else:
            sim.env.process(sim.stream_processes[step.__class__](self, item, start))

    def resume(self) -> None:
        """A tensor the blocked item waits for became ready: try to start it again."""
        item = self._blocked
        assert item is not None, f"{self!r}: resumed without a blocked item"
        self._blocked = None
        self._begin(item)

    def _kernel_done(self, event: Event) -> None:
        step, _, flow = self._item  # type: ignore[misc]
        sim = self._sim
        now = sim.env.now
        sim.record(
            (self.processor, STREAM, step.op, "compute", self._start_us, now, None, flow, step.args)
        )
        # inlined for speed: mark_ready, when no stream waits for anything
        if sim.waiters:
            sim.mark_ready(step.produces, now)
        else:
            ready = sim.ready
            for slot in step.produces:
                ready[slot] = now
        # inlined for speed: advance, when more work is queued
        if self._queue:
            self._begin(self._queue.popleft())
        else:
            self.advance()

    def advance(self) -> None:
        """The running item finished: start the next one, or become idle and signal drains."""
        if self._queue:
            self._begin(self._queue.popleft())
            return
        self._item = None
        self.is_busy = False
        self.end_us = None
        self.idle_since_us = self._sim.env.now
        for event in self._drains:
            event.succeed()
        self._drains.clear()
