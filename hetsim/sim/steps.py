"""Bound VM steps: the instructions the engine executes, with every number already resolved.

`hetsim.runtime.vm` compiles a level to symbolic instructions (`hetsim.runtime.bytecode`:
tensors and processors by name, shapes possibly symbolic). `hetsim.sim.bind` turns them into
these steps once the run's dims are known: byte sizes, durations from `hetsim.cost`, the names
of the streams, memories and links they use, and (in functional mode) the kernel closures. The
interpreter (`hetsim.sim.interpreter`) only reads them.

Steps are plain data: they name the engine state they touch (a stream by its processor's path, a
memory by its name) and a `Run` takes the run's value table as its argument, so one bound program
runs on any number of simulations, one after another or at once (`hetsim.sim.bind.bound_for`
keeps them for the next run of the same program and shapes).

Steps are named tuples, so the interpreter unpacks them as plain tuples (fast) and people read
them by field name. Every step starts with `name` (the instruction as a trace shows it) and
`cost_us` (host time the instruction itself takes: ``dispatch_us`` plus any runtime cost).
Tensors are *slots*: indices into the run's value and readiness tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from hetsim.ir import Op
from hetsim.kernels.checks import raise_kernel_error

__all__ = [
    "GRAPH_POOL_OP",
    "LOAD_OP",
    "STAGE_OP",
    "AllocStep",
    "BranchStep",
    "CallStep",
    "CopyStep",
    "FreeStep",
    "Hop",
    "InvokeStep",
    "LaunchStep",
    "Release",
    "RetStep",
    "Run",
    "Step",
    "SyncStep",
    "kernel_run",
    "no_run",
    "two_clock_memories",
]

LOAD_OP = "(load)"
"""The op of an `AllocStep` made before the run: a graph input's, a weight's, a graph executor's
storage."""

STAGE_OP = "(stage)"
"""The op of a routed COPY's staging `AllocStep`: the tensor held whole in a memory between two
hops (its ``args`` name the copy's source and destination memories)."""

GRAPH_POOL_OP = "(graph pool)"
"""The op of a CUDA graph's `AllocStep`: the memory its nodes take while it runs (its
`tensor` is the graph's name)."""

Run = Callable[[list[Any]], None]
"""Computes an op's outputs into the value table it is given (functional mode), or does nothing
(timing)."""


def no_run(_values: list[Any]) -> None:
    """The `Run` of a step that computes nothing (timing mode, an op a fused group absorbed)."""
    return


def kernel_run(
    kernel: Callable[[list[Any]], Sequence[Any]],
    inputs: tuple[int, ...],
    outputs: tuple[int, ...],
    op: Op,
) -> Run:
    """The `Run` that calls `kernel` (op `op`'s) on the values of slots `inputs` and writes its
    results to slots `outputs`; a kernel that fails names `op` (`raise_kernel_error`).

    A kernel gives one result per output position, an omitted output's (``""``) too, where the
    VM makes slots only for the named outputs: with an omitted output before a named one (an
    LSTM's ``("", "Y_h")``), the results are taken at the named positions.
    """
    if "" in op.outputs:  # rare: the positions of the named outputs
        named = [i for i, name in enumerate(op.outputs) if name]
        if len(named) == len(outputs):
            return _named_run(kernel, inputs, tuple(zip(outputs, named, strict=True)), op)

    def run(values: list[Any]) -> None:
        try:
            results = kernel([values[i] for i in inputs])
        except Exception as err:
            raise_kernel_error(op, err)
        for slot, result in zip(outputs, results, strict=False):
            values[slot] = result

    return run


def _named_run(
    kernel: Callable[[list[Any]], Sequence[Any]],
    inputs: tuple[int, ...],
    targets: tuple[tuple[int, int], ...],
    op: Op,
) -> Run:
    """`kernel_run`'s `Run` writing the result at each ``(slot, position)`` of `targets`."""

    def run(values: list[Any]) -> None:
        try:
            results = kernel([values[i] for i in inputs])
        except Exception as err:
            raise_kernel_error(op, err)
        for slot, position in targets:
            values[slot] = results[position]

    return run


class AllocStep(NamedTuple):
    """ALLOC: take `size_bytes` of `memory` (its name) for `tensor` (an op's output or a copy's
    target); `writer` is `Alloc.writer` (``""``: it reuses nothing)."""

    name: str
    cost_us: float
    memory: str
    size_bytes: int
    tensor: str
    processor: str
    op: str
    args: Mapping[str, Any]
    writer: str = ""


class FreeStep(NamedTuple):
    """FREE: give back `size_bytes` of `memory` (its name); the value in `slot` is dropped.

    The bytes come back at the host's time, or, with `after` (streams, as `Free.after`), when
    the last of those streams reaches the FREE (a `Release` queued on each)."""

    name: str
    cost_us: float
    memory: str
    size_bytes: int
    slot: int
    args: Mapping[str, Any]
    after: tuple[str, ...] = ()


class Release:
    """A FREE's bytes on their way back: queued on each stream of `FreeStep.after`, they come
    back when the last of those streams reaches it, at the latest of the times it did
    (`hetsim.sim.resources.Stream`); one per FREE run.

    Where one stream alone holds them up (`is_pooled`), the host that freed them may hand them,
    before then, to its own allocations that stream's work writes (`AllocStep.writer`): that
    work runs after the work before the FREE, as a stream-ordered allocator reuses a block.
    Which allocation takes what is worked out in simulated time when the memory is settled
    (`hetsim.sim.resources.MemoryState.settle`, `pooled` the bytes no allocation took yet).

    >>> step = FreeStep("free a", 1.0, "host.mem", 1000, 3, {}, ("npu", "gpu0"))
    >>> release = Release(step, 5.0)
    >>> release.reached(9.0), release.reached(7.0), release.at_us, release.is_pooled
    (False, True, 9.0, False)
    """

    __slots__ = ("at_us", "is_pooled", "left", "memory", "name", "pooled", "size_bytes")
    waits: tuple[int, ...] = ()  # a stream item's: it waits for no tensor

    def __init__(self, step: FreeStep, t: float) -> None:
        self.name = step.name
        self.memory = step.memory
        self.size_bytes = step.size_bytes
        self.left = len(step.after)
        self.at_us = t  # the host's FREE: no stream gives the bytes back before it
        self.is_pooled = self.left == 1
        self.pooled = 0

    def __repr__(self) -> str:
        return f"<Release {self.name} {self.size_bytes} B of {self.memory}, {self.left} left>"

    def reached(self, t: float) -> bool:
        """A stream reached it at `t`; whether that was the last (the bytes come back)."""
        if t > self.at_us:
            self.at_us = t
        self.left -= 1
        return self.left == 0


class CallStep(NamedTuple):
    """CALL: run a kernel on the host itself for `compute_us`."""

    name: str
    cost_us: float
    op: str
    compute_us: float
    run: Run
    produces: tuple[int, ...]
    args: Mapping[str, Any]


class LaunchStep(NamedTuple):
    """LAUNCH: pay `launch_us` on the host, then queue the kernel on the stream of processor
    `stream` (asynchronous).

    The kernel starts once the stream reaches it and every slot in `waits` (tensors produced on
    other streams) is ready; it runs for `kernel_us`.
    """

    name: str
    cost_us: float
    op: str
    launch_us: float
    stream: str
    kernel_us: float
    waits: tuple[int, ...]
    produces: tuple[int, ...]
    run: Run
    args: Mapping[str, Any]


class Hop(NamedTuple):
    """One link of a copy's route and the time the copy holds it."""

    link: str
    duration_us: float


class CopyStep(NamedTuple):
    """COPY: pay `launch_us` on the host, then queue a transfer on the stream of processor
    `stream` along `hops`; `stages` take the memories between them (store and forward: the
    tensor waits whole in each, from its arrival until the next hop delivers)."""

    name: str
    cost_us: float
    op: str
    launch_us: float
    stream: str
    hops: tuple[Hop, ...]
    size_bytes: int
    waits: tuple[int, ...]
    produces: tuple[int, ...]
    run: Run
    args: Mapping[str, Any]
    stages: tuple[AllocStep, ...] = ()


class InvokeStep(NamedTuple):
    """INVOKE: pay dispatch on the host, then queue one invocation of a nested level on the
    stream of processor `stream`.

    When the stream reaches it: the request takes `request_us` (span on `level_host`), the
    `arguments` (parent slot, nested slot) are handed over, the nested executor runs program
    number `program` on `level_host`, and the completion takes `return_us`, after which the
    `results` (nested slot, parent slot) are handed back and `produces` are ready.

    `run` computes the invocation's values (functional mode) when the caller executes the
    INVOKE, as a LAUNCH's kernel runs when the host executes it: the nested program's own steps
    are bound without values, so values never depend on timing.
    """

    name: str
    cost_us: float
    op: str
    level: str
    level_host: str
    stream: str
    request_us: float
    return_us: float
    program: int
    arguments: tuple[tuple[int, int], ...]
    results: tuple[tuple[int, int], ...]
    waits: tuple[int, ...]
    produces: tuple[int, ...]
    run: Run
    args: Mapping[str, Any]


class SyncStep(NamedTuple):
    """SYNC: wait until the stream of processor `stream` has finished everything queued so far,
    then pay `sync_us`."""

    name: str
    cost_us: float
    stream: str
    sync_us: float
    args: Mapping[str, Any]


class BranchStep(NamedTuple):
    """BRANCH_SHAPE: jump to `target` when ``test(value)`` holds for a bound symbolic dim."""

    name: str
    cost_us: float
    value: int
    test: Callable[[int], bool]
    target: int
    args: Mapping[str, Any]


class RetStep(NamedTuple):
    """RET: end the program; `outputs` maps each graph output to its slot."""

    name: str
    cost_us: float
    outputs: Mapping[str, int]
    args: Mapping[str, Any]


Step = (
    AllocStep
    | FreeStep
    | CallStep
    | LaunchStep
    | CopyStep
    | InvokeStep
    | SyncStep
    | BranchStep
    | RetStep
)


def two_clock_memories(programs: Sequence[tuple[str, Sequence[Any]]]) -> frozenset[str]:
    """The memories that two clocks change in a run of `programs` (``(host, steps)``, the
    root's first): a routed copy's staging memory, changed at the engine's time, a memory a
    FREE gives back to at a stream's time (`FreeStep.after`), and a memory that two programs'
    hosts allocate in. Their changes come out of simulated-time order, so a
    run checks them when it ends (`hetsim.sim.resources.MemoryState.settle`).

    `hetsim.sim.bind.bind` gives this set as `BoundProgram.deferred`: for one program, from
    the staging it binds (no walk over the steps), else by this walk.

    >>> stage = AllocStep("stage x", 0.0, "host.mem", 8, "x", "gpu0", STAGE_OP, {})
    >>> copy = CopyStep("copy x", 1.0, "x", 0.0, "gpu0", (), 8, (), (0,), None, {}, (stage,))
    >>> sorted(two_clock_memories([("host", (copy,))]))
    ['host.mem']
    """
    found: set[str] = set()
    hosts: dict[str, str] = {}
    for host, code in programs:
        for step in code:
            cls = step.__class__
            if cls is CopyStep:
                found.update(stage.memory for stage in step.stages)
            elif (cls is AllocStep or cls is FreeStep) and hosts.setdefault(
                step.memory, host
            ) != host:
                found.add(step.memory)
            if cls is FreeStep and step.after:  # given back at a stream's time
                found.add(step.memory)
    return frozenset(found)
