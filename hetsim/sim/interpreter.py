"""The VM interpreter: the executors, and what each bound step does in simulated time.

`Interpreter` is the part of `hetsim.sim.engine.Simulation` that runs programs; the simulation
sets up the state it reads and writes (SimPy env, streams, memories, links, value and readiness
tables) and turns the run into a record. Here:

- `Executor`: the interpreter state of one level's program. Each executor runs as a SimPy process
  (`Interpreter._interpret`) that executes one step after another: ALLOC, FREE, LAUNCH and COPY
  in its own loop, every other step through the handler of its type (``_call``, ``_sync``, ...;
  the table is built with the simulation).
- the SimPy processes of the work a stream runs as a process: a copy (`Interpreter.transfer`) and
  a nested invocation (`Interpreter.invoke`). Kernels are scheduled by the stream itself
  (`hetsim.sim.resources.Stream`).
- `dispatch`, `take`, `give`, `new_flow` and `record`, for step handlers defined outside the
  engine (`hetsim.sim.graphs`).

The rules the handlers follow are in `hetsim.sim.engine`'s docstring and docs/runtime.md. The
handlers and the loop are tuned (local aliases, bound methods, spans added to the totals in
place): `benchmarks/sim_speed.py` times them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

import simpy
from simpy.events import Event, Timeout

from hetsim.errors import OutOfMemoryError, printable
from hetsim.platform import empty_memory_note
from hetsim.runtime.bytecode import RETURN_OP
from hetsim.sim.resources import EXEC, LINK, STREAM, MemoryState, Row, Stream, wait_until
from hetsim.sim.steps import (
    GRAPH_POOL_OP,
    LOAD_OP,
    STAGE_OP,
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    FreeStep,
    InvokeStep,
    LaunchStep,
    Release,
    RetStep,
    Step,
    SyncStep,
)
from hetsim.units import format_bytes, format_sizes

__all__ = ["Executor", "Interpreter", "out_of_memory", "where"]


def where(now: float) -> str:
    """The *where* of an engine error: the simulated time."""
    return f"sim at {round(now, 3)} us"


def out_of_memory(
    step: AllocStep,
    memory: MemoryState,
    t: float,
    placement: Mapping[str, str],
    used: int | None = None,
    new_bytes: int | None = None,
) -> OutOfMemoryError:
    """The error of an ALLOC whose bytes do not fit `memory`: the memory, and what needed them:
    a tensor and its op; a tensor placed before the run; a tensor an invocation of a nested
    level moves (its op a segment's id, as `hetsim plan` lists it: told apart from an op by
    where it allocates, the invoked level's host, where an op allocates on the processor
    `placement` gives it; an op of the segment's name placed on that host by a rule is the one
    case it cannot tell); a result copied into the level host's memory to return; a routed copy
    staged between hops; a CUDA graph's memory pool. `used`: the bytes in use then, where not
    `memory.used_bytes` (an ALLOC found past the capacity once the run is over, `settle`);
    `new_bytes`: the bytes it needs beyond those it reuses, freed for its stream
    (`MemoryState.settle`)."""
    free = memory.capacity_bytes - (memory.used_bytes if used is None else used)
    tensor, op = printable(step.tensor), printable(step.op)  # a model's names are any text
    if step.op == LOAD_OP:
        what = f"tensor {tensor}, placed before the run starts"
    elif step.op == GRAPH_POOL_OP:
        what = f"the memory pool of {tensor}"
    elif step.op == STAGE_OP:
        what = f"tensor {tensor} staged on its way {step.args['src']} -> {step.args['dst']}"
    elif step.op == RETURN_OP:
        what = f"tensor {tensor}, a result copied into its level host's memory to return"
    # an op allocates where it runs, an invocation on its level's host (a program run alone
    # has no placement; an op named as a segment, s0, runs elsewhere)
    elif not placement or placement.get(step.op) == step.processor:
        what = f"tensor {tensor} of op {op}"
    else:
        level = step.processor.rpartition("/")[0]  # the invoked level's host allocates
        what = f"tensor {tensor} of segment {op} (an invocation of {level})"
    size = step.size_bytes if new_bytes is None else new_bytes
    need, room = format_sizes(size, free)
    reused = step.size_bytes - size
    also = f"; it reuses another {format_bytes(reused)} freed for its stream" if reused else ""
    return OutOfMemoryError(
        f"{where(t)}, {step.processor}: out of memory in {memory.name} "
        f"(need {need}, {room} free{also}) for {what}"
        f"{empty_memory_note(memory.name, memory.capacity_bytes)}",
        t,
    )


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


class Interpreter:
    """The executors and step handlers of a `Simulation`, which sets the state they use.

    Only one executor runs at a time, so the running one's state (``host``, ``t``, ``pc``, ...)
    lives in the simulation's own attributes: step handlers read and write plain attributes, and
    the executor's are loaded when its process (re)starts and saved when it yields.
    """

    # Set by `Simulation.__init__` and `Simulation.run`; declared here for the type checker.
    env: simpy.Environment
    host: str
    streams: dict[str, Stream]
    memories: dict[str, MemoryState]
    links: dict[str, simpy.Resource]
    link_bytes: dict[str, int]
    ready: list[float | None]
    values: list[Any]
    waiters: defaultdict[int, list[Stream]]
    record: Callable[[Row], None]
    busy_us: defaultdict[tuple[str, str], float]
    is_tracing: bool
    t: float
    pc: int
    executors: list[Executor]
    programs: Sequence[tuple[str, Sequence[Step]]]
    placement: Mapping[str, str]
    _code: Sequence[Step]
    _outputs: Mapping[str, int]
    _is_done: bool
    _flows: int
    _sync_wait: str | None
    _handlers: dict[type, Callable[[Any], Event | None]]

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
        """Run `executor`'s program, a step at a time, until its RET.

        ALLOC, FREE and LAUNCH, the steps a program has one or more of per op, and COPY (run
        as a LAUNCH is) are run here in the loop, with the tables in locals; every other step
        by its handler (`_handlers`). With a handler call per step, the engine run of a 1e5-op
        chain took 2.3-2.4 µs per op untraced and 2.4-2.5 traced, against 1.8 and 2.1-2.2
        (best of 5, three alternating rounds; docs/runtime.md, "Performance"); with the program
        counter, the clock and the flow id in locals rather than attributes, 1.74-1.79 and
        2.45-2.53 against 1.67-1.70 and 2.29-2.40 (the same way).
        """
        self._load(executor)
        code = self._code
        handlers = self._handlers
        memories, streams, values, busy = self.memories, self.streams, self.values, self.busy_us
        record, is_tracing, host = self.record, self.is_tracing, self.host
        dispatched, launched = (host, "dispatch"), (host, "launch")
        # the program counter, the host's clock and the last flow id, kept in locals between
        # handlers: the handlers (and the other executors, while this one waits) read and
        # write them as attributes, saved before each handler call and read back after
        pc, t, flows = self.pc, self.t, self._flows
        # untraced, the host's dispatch and launch time of the loop's own steps, added to
        # `busy` before each handler call (the program's RET among them): a dict update per
        # step cost more than the addition
        dispatching = launching = 0.0
        step: Any  # read by the fields of the type each branch tests for
        while True:
            step = code[pc]
            pc += 1
            kind = step.__class__
            if kind is AllocStep or kind is FreeStep:
                if kind is AllocStep:  # what `_take` does, inlined
                    memory = memories[step.memory]
                    used = memory.used_bytes + step.size_bytes
                    if memory.is_deferred:
                        pool = (step.writer, host) if step.writer else None
                        memory.changes.append((t, step.size_bytes, step, pool))
                    elif used > memory.capacity_bytes:
                        raise out_of_memory(step, memory, t, self.placement)
                    memory.used_bytes = used
                    if used > memory.peak_bytes:
                        memory.peak_bytes = used
                else:  # what `give` does, inlined
                    if step.after:
                        self._queue_release(step, t)
                    else:
                        memory = memories[step.memory]
                        memory.used_bytes -= step.size_bytes
                        if memory.is_deferred:
                            memory.changes.append((t, -step.size_bytes, None, None))
                    values[step.slot] = None
                end = t + step.cost_us  # the instruction's own host time: `_dispatch`, inlined
                if is_tracing:
                    record((host, EXEC, step.name, "dispatch", t, end, None, None, step.args))
                else:
                    dispatching += end - t
                t = end
                continue
            if kind is LaunchStep or kind is CopyStep:  # queued on a stream (a copy too)
                flows += 1
                start = t + step.cost_us
                end = start + step.launch_us
                if is_tracing:
                    record((host, EXEC, step.name, "dispatch", t, start, flows, None, step.args))
                    record((host, EXEC, step.name, "launch", start, end, None, None, step.args))
                else:
                    dispatching += start - t
                    launching += end - start
                t = end
                step.run(values)
                streams[step.stream].push((step, end, flows))
                continue
            self.pc, self.t, self._flows = pc, t, flows
            if dispatching:
                busy[dispatched] += dispatching
                dispatching = 0.0
            if launching:
                busy[launched] += launching
                launching = 0.0
            wait = handlers[kind](step)
            if wait is not None:
                self._save(executor)
                # first callback: the handler's own callbacks then see this executor's state
                wait.callbacks.insert(0, lambda _: self._load(executor))
                yield wait
            if self._is_done:
                break
            pc, t, flows = self.pc, self.t, self._flows
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

    def take(self, step: AllocStep) -> None:
        """Take `step`'s bytes at the host's time, without its instruction cost (or fail: OOM);
        the host's allocation: it may reuse bytes left to its writer (`_take`)."""
        self._take(step, self.t, reuses=True)

    def give(self, step: FreeStep) -> None:
        """Give `step`'s bytes back (at once, or when its streams reach it: `FreeStep.after`)
        and drop its value, without its instruction cost."""
        if step.after:
            self._queue_release(step, self.t)
        else:
            self.give_bytes(step.memory, step.size_bytes, self.t)
        self.values[step.slot] = None

    def new_flow(self) -> int:
        """A fresh flow id: an arrow from a host dispatch to the device work it started."""
        self._flows += 1
        return self._flows

    def _take(self, step: AllocStep, t: float, *, reuses: bool = False) -> None:
        """Take `step`'s bytes in its memory at simulated time `t` (or fail: OOM; for a memory
        checked when the run ends, `MemoryState.is_deferred`, note it). `reuses`: an
        allocation of this host's, which may take bytes its FREEs left to the stream that writes
        it (`AllocStep.writer`, `MemoryState.settle`); staging and what is resident before the
        run reuse nothing."""
        memory = self.memories[step.memory]
        used = memory.used_bytes + step.size_bytes
        if memory.is_deferred:
            pool = (step.writer, self.host) if reuses and step.writer else None
            memory.changes.append((t, step.size_bytes, step, pool))
        elif used > memory.capacity_bytes:
            raise out_of_memory(step, memory, t, self.placement)
        memory.used_bytes = used
        if used > memory.peak_bytes:
            memory.peak_bytes = used

    def give_bytes(self, name: str, size: int, t: float) -> None:
        """Give `size` bytes back to memory `name` at simulated time `t`."""
        memory = self.memories[name]
        memory.used_bytes -= size
        if memory.is_deferred:
            memory.changes.append((t, -size, None, None))

    def give_back(self, release: Release) -> None:
        """Give back what `release` holds, now that every stream reached it, at its time:
        where it is pooled, what no allocation took by then (`MemoryState.settle`)."""
        if not release.is_pooled:
            self.give_bytes(release.memory, release.size_bytes, release.at_us)
            return
        memory = self.memories[release.memory]
        memory.used_bytes -= release.size_bytes
        memory.changes.append((release.at_us, 0, release, None))

    def _queue_release(self, step: FreeStep, t: float) -> None:
        """Queue `step`'s bytes on each stream of its `after`: they come back when the last
        reaches them (`hetsim.sim.resources.Stream`), in a memory counted in simulated time.
        Held up by one stream, they are left, until then, to this host's next allocations that
        stream writes (`MemoryState.settle`)."""
        release = Release(step, t)
        if release.is_pooled:
            memory = self.memories[step.memory]
            memory.changes.append((t, 0, release, (step.after[0], self.host)))
        for name in step.after:
            self.streams[name].push((release, t, None))

    def _call(self, step: CallStep) -> None:
        start = self._dispatch(step)
        end = start + step.compute_us
        step.run(self.values)
        self.record((self.host, EXEC, step.op, "compute", start, end, None, None, step.args))
        self.t = end
        for slot in step.produces:
            self.ready[slot] = end

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
        if start > env.now:  # most start at once: no generator made for them
            yield from wait_until(env, start)
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
        if start > env.now:  # most start at once: no generator made for them
            yield from wait_until(env, start)
        if step.stages:  # routed: store and forward through memories between hops
            yield from self._forward(step)
        else:  # one link, nearly every copy: nothing staged (benchmarks/sim_speed.py)
            for link, duration_us in step.hops:
                yield from self._hop(step, link, duration_us)
        now = env.now
        self.record(
            (stream.processor, STREAM, step.name, "transfer", start, now, None, flow, step.args)
        )
        self.mark_ready(step.produces, now)
        stream.advance()

    def _hop(self, step: CopyStep, link: str, duration_us: float) -> Generator[Event, Any, None]:
        """Carry `step`'s tensor over `link`, which it holds for `duration_us`."""
        env = self.env
        with self.links[link].request() as request:
            yield request
            begin = env.now
            yield env.timeout(duration_us)
        self.record((link, LINK, step.name, "transfer", begin, env.now, None, None, step.args))
        self.link_bytes[link] += step.size_bytes

    def _forward(self, step: CopyStep) -> Generator[Event, Any, None]:
        """Carry a routed copy hop by hop; between two, the tensor waits whole in the memory
        there (`step.stages`), taken when it arrives and given back when the next hop
        delivers."""
        staged: AllocStep | None = None
        for (link, duration_us), stage in zip(step.hops, (*step.stages, None), strict=True):
            yield from self._hop(step, link, duration_us)
            now = self.env.now
            if staged is not None:
                self.give_bytes(staged.memory, staged.size_bytes, now)
            staged = stage
            if stage is not None:
                self._take(stage, now)

    def mark_ready(self, slots: tuple[int, ...], now: float) -> None:
        """Tensors in `slots` are ready at `now`; wake the streams that wait for them."""
        ready = self.ready
        waiters = self.waiters
        for slot in slots:
            ready[slot] = now
            if waiters:  # usually empty: skip the lookup
                for stream in waiters.pop(slot, ()):
                    stream.resume()
