"""CUDA-graph offload: capturable regions of a VM program, the strategies, and the rewrite.

A *region* is a maximal run of instructions that a CUDA stream capture can record, as TVM's
``rewrite_cuda_graph`` pass finds them: LAUNCHes on one ``cuda`` device (without waits on another
stream), the ALLOCs and FREEs of that device's memory around them (they become the graph's
internal buffers), and copies that stay on the device. A host CALL, a SYNC, a copy to or from
host memory, an allocation elsewhere, a branch (or a branch target), an INVOKE or a RET ends the
region: the program is split there. A run without a LAUNCH is not a region.

`capture_program` picks regions by strategy (`STRATEGIES`) and rewrites the program so each
region is one `CudaGraph` instruction. The instruction is keyed at run time by (region, shape
key): `hetsim.sim.graphs` captures on the first run of a key and replays afterwards. Costs are
`hetsim.cost.cuda_graph`'s; ``docs/cuda-graphs.md`` has the whole story.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from hetsim.errors import Problem, SimulationError
from hetsim.platform import Platform
from hetsim.runtime.bytecode import (
    Alloc,
    BranchShape,
    Call,
    Copy,
    Free,
    Instruction,
    Invoke,
    Launch,
    Sync,
    VmProgram,
)
from hetsim.runtime.program import PlanProgram

__all__ = [
    "DEFAULT_BUCKETS",
    "NOTHING_TO_CAPTURE",
    "NOTHING_TO_PAD",
    "STRATEGIES",
    "CapturedProgram",
    "CudaGraph",
    "Region",
    "Strategy",
    "bucket_dims",
    "capture_program",
    "check_buckets",
    "find_regions",
    "strategy_problem",
]

DEFAULT_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
"""Bucket sizes of the ``buckets`` strategy: powers of two, as vLLM's capture sizes grow."""
NOTHING_TO_CAPTURE = "no CUDA kernels to capture: every kernel runs eagerly"
"""The note of ``regions`` when the root level launches no capturable kernel."""
NOTHING_TO_PAD = f"{NOTHING_TO_CAPTURE}, without padding"
"""The note of a ``buckets`` run with no region to capture: its dims are not padded."""


@dataclass(frozen=True, slots=True)
class Region:
    """Instructions ``code[start:stop]`` of a program, capturable as one graph on `processor`.

    `deferred` are FREEs of other memories inside that range (host bookkeeping, no stream work):
    they run just after the graph instead, so they do not split it.

    Examples
    --------
    >>> Region("g0", "gpu0", 2, 9, 3)
    <Region g0 gpu0 code[2:9] nodes=3>
    >>> Region("g0", "gpu0", 2, 6, 1, deferred=(4,)).body
    (2, 3, 5)
    """

    id: str
    processor: str
    start: int
    stop: int
    nodes: int
    deferred: tuple[int, ...] = ()

    @property
    def body(self) -> tuple[int, ...]:
        """Indices of the VM instructions the graph holds, in order."""
        return tuple(i for i in range(self.start, self.stop) if i not in self.deferred)

    def __repr__(self) -> str:
        return (
            f"<Region {self.id} {self.processor} code[{self.start}:{self.stop}] nodes={self.nodes}>"
        )


class CudaGraph(NamedTuple):
    """CUDA_GRAPH: run region `region` on `processor` as a graph; `body` indexes the VM code."""

    region: str
    processor: str
    body: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Strategy:
    """A way to choose regions: `select(program, regions) -> (chosen, notes)`."""

    name: str
    doc: str
    select: Callable[[VmProgram, tuple[Region, ...]], tuple[tuple[Region, ...], tuple[str, ...]]]
    is_bucketed: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class CapturedProgram:
    """A VM program rewritten for CUDA-graph offload.

    Parameters
    ----------
    program
        The root level's VM program, unchanged: its `code` is what `body` and `origin` index.
    strategy
        The `STRATEGIES` name that chose `regions`.
    regions
        The captured regions, in program order.
    code
        The rewritten code: each region became one `CudaGraph`; branch targets are renumbered.
    origin
        For each instruction of `code`, the index of the VM instruction it stands for (a
        region's first instruction for a `CudaGraph`).
    buckets
        Bucket sizes that symbolic dims are padded up to (``buckets`` strategy), else ``()``.
    notes
        Why work stayed eager: the instructions that split regions, a whole-program fallback.
    source
        What was compiled, to bind as a whole: a `PlanProgram` (nested levels run as before),
        or `program` itself.
    """

    program: VmProgram
    strategy: str
    regions: tuple[Region, ...]
    code: tuple[Instruction | CudaGraph, ...]
    origin: tuple[int, ...]
    buckets: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    source: VmProgram | PlanProgram | None = None

    @property
    def compiled(self) -> VmProgram | PlanProgram:
        """The program to bind: `source`, else `program`."""
        return self.source if self.source is not None else self.program

    def __repr__(self) -> str:
        return (
            f"<CapturedProgram {self.program.graph.name} strategy={self.strategy} "
            f"regions={len(self.regions)} instructions={len(self.code)}>"
        )

    @property
    def is_bucketed(self) -> bool:
        """Whether symbolic dims are padded up to a bucket before a region runs."""
        return bool(self.buckets)

    def listing(self) -> str:
        """The rewritten code as text: VM instructions as `VmProgram.listing` prints them."""
        lines = self.program.listing().splitlines()
        regions = {r.id: r for r in self.regions}
        out = []
        for pc, (ins, origin) in enumerate(zip(self.code, self.origin, strict=True)):
            if isinstance(ins, CudaGraph):
                region = regions[ins.region]
                text = (
                    f"{'CUDA_GRAPH':<12} {ins.region} on {ins.processor}: {region.nodes} "
                    f"kernel{'s' * (region.nodes != 1)}, VM code[{region.start}:{region.stop}]"
                )
            elif isinstance(ins, BranchShape):
                text = f"{'BRANCH_SHAPE':<12} if {ins.dim} {ins.test} {ins.value} goto {ins.target}"
            else:
                text = lines[origin][6:]
            out.append(f"{pc:4d}  {text}")
        return "\n".join(out)


def _capturable(ins: Instruction, device: str, memory: str) -> bool:
    """Whether `ins` can sit inside a capture on `device`, which computes from `memory`.

    A copy qualifies only when it stays in that memory (no link): any link leads to host-visible
    memory or to another device, which one device's graph cannot hold.
    """
    if isinstance(ins, Launch):
        return ins.processor == device and not ins.waits
    if isinstance(ins, Alloc | Free):
        return ins.memory == memory
    if isinstance(ins, Copy):
        return ins.processor == device and not ins.route
    return False


def _device_of(ins: Instruction, capturing: frozenset[str]) -> str | None:
    """The cuda device a LAUNCH without cross-stream waits would start a region on."""
    if isinstance(ins, Launch) and ins.processor in capturing and not ins.waits:
        return ins.processor
    return None


def find_regions(program: VmProgram, platform: Platform) -> tuple[Region, ...]:
    """The maximal capturable regions of `program`, in program order (rules: module docstring).

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.platform import build_platform
    >>> from hetsim.runtime import compile_vm, place
    >>> from hetsim.target import Target
    >>> platform = build_platform(Target("x86-h100"))
    >>> model = load_model("mlp")
    >>> program = compile_vm(model, platform, place(model, platform))
    >>> find_regions(program, platform)
    (<Region g0 gpu0 code[2:17] nodes=5>,)
    """
    capturing = frozenset(p.path for p in platform.processors.values() if p.kind == "cuda")
    targets = {ins.target for ins in program.code if isinstance(ins, BranchShape)}
    regions: list[Region] = []
    code = program.code
    pc = 0
    while pc < len(code):
        device = _device_of(code[pc], capturing)
        if device is None:
            pc += 1
            continue
        memory = platform.processors[device].memory
        start = pc
        while start > 0 and start not in targets and _is_leading(code[start - 1], memory):
            start -= 1
        stop = last_launch = pc
        deferred = []
        while stop < len(code) and (stop == pc or stop not in targets):
            ins = code[stop]
            if isinstance(ins, Free) and ins.memory != memory:
                deferred.append(stop)
            elif not _capturable(ins, device, memory):
                break
            elif isinstance(ins, Launch):
                last_launch = stop
            stop += 1
        # what follows the last launch stays outside, except the FREEs of the graph's buffers
        stop = last_launch + 1
        while stop < len(code) and _is_trailing(code[stop], memory):
            stop += 1
        nodes = sum(isinstance(code[i], Launch) for i in range(start, stop))
        kept = tuple(i for i in deferred if i < stop)
        regions.append(Region(f"g{len(regions)}", device, start, stop, nodes, kept))
        pc = stop
    return tuple(regions)


def _is_trailing(ins: Instruction, memory: str) -> bool:
    """A FREE of the device's memory just after a region's last launch: one of its buffers."""
    return isinstance(ins, Free) and ins.memory == memory


def _is_leading(ins: Instruction, memory: str) -> bool:
    """An ALLOC of the device's memory just before a region: the graph's internal buffer."""
    return isinstance(ins, Alloc) and ins.memory == memory


SPLITTERS = (Sync, Call, Invoke, BranchShape)
"""The instructions a note names first when they split two regions: host work and control."""


def _breakers(program: VmProgram, regions: tuple[Region, ...]) -> tuple[str, ...]:
    """Notes naming what split each pair of neighbouring regions on a device."""
    notes = []
    lines = program.listing().splitlines()
    for before, after in itertools.pairwise(regions):
        if before.processor != after.processor:
            continue
        between = range(before.stop, after.start)
        named = [i for i in between if isinstance(program.code[i], SPLITTERS)] or [between[0]]
        words = [" ".join(lines[i][6:].split()[:2]).lower() for i in named]
        notes.append(f"{before.id} and {after.id} split by {', '.join(map(repr, words))}")
    return tuple(notes)


def _none(
    program: VmProgram, regions: tuple[Region, ...]
) -> tuple[tuple[Region, ...], tuple[str, ...]]:
    return (), ()


def _regions(
    program: VmProgram, regions: tuple[Region, ...]
) -> tuple[tuple[Region, ...], tuple[str, ...]]:
    if not regions:
        return (), (NOTHING_TO_CAPTURE,)
    return regions, _breakers(program, regions)


def _buckets(
    program: VmProgram, regions: tuple[Region, ...]
) -> tuple[tuple[Region, ...], tuple[str, ...]]:
    if not regions:  # padding would only change the shapes of eager runs
        return (), (NOTHING_TO_PAD,)
    return _regions(program, regions)


def _whole(
    program: VmProgram, regions: tuple[Region, ...]
) -> tuple[tuple[Region, ...], tuple[str, ...]]:
    launches = sum(isinstance(ins, Launch) for ins in program.code)
    if len(regions) == 1 and regions[0].nodes == launches:
        return regions, ()
    if not launches:
        return (), ("no kernel launches to capture",)
    captured = sum(r.nodes for r in regions)
    reasons: tuple[str, ...] = (f"{len(regions)} regions hold {captured} of {launches} kernels",)
    reasons = (*reasons, *_breakers(program, regions))
    text = "; ".join(reasons)
    return (), (f"expected one capturable region, got {text}: it runs eagerly",)


STRATEGIES: Mapping[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("none", "every kernel launched eagerly", _none),
        Strategy("whole", "one graph for the whole GPU program, else eager", _whole),
        Strategy("regions", "every maximal capturable region is a graph", _regions),
        Strategy(
            "buckets",
            "regions, with dims padded up to a bucket: one graph per bucket",
            _buckets,
            is_bucketed=True,
        ),
    )
}
"""CUDA-graph strategies by the name `simulate(cuda_graph=...)` and ``--cuda-graph`` take."""


def capture_program(
    compiled: VmProgram | PlanProgram,
    platform: Platform,
    strategy: str = "regions",
    buckets: tuple[int, ...] = DEFAULT_BUCKETS,
    devices: Collection[str] | None = None,
) -> CapturedProgram:
    """Rewrite the root VM program so the regions `strategy` picks are `CudaGraph` instructions.

    `compiled` is a root level's `VmProgram` or a whole `PlanProgram` (its root program is
    rewritten; nested levels are left as they are). `devices`: capture only these processors'
    kernels (the devices whose ``cuda_graph`` attribute is set); ``None``: every CUDA device's.

    Raises
    ------
    SimulationError
        An unknown strategy (with the closest name).

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.platform import build_platform
    >>> from hetsim.runtime import compile_vm, place
    >>> from hetsim.target import Target
    >>> platform = build_platform(Target("x86-h100"))
    >>> model = load_model("mlp")
    >>> program = compile_vm(model, platform, place(model, platform))
    >>> rewritten = capture_program(program, platform, "regions")
    >>> print(rewritten.listing())
       0  ALLOC        x@gpu0.mem in gpu0.mem
       1  COPY         x -> x@gpu0.mem on gpu0 via host.mem--gpu0.mem
       2  CUDA_GRAPH   g0 on gpu0: 5 kernels, VM code[2:17]
       3  ALLOC        fc3@host.mem in host.mem
       4  COPY         fc3 -> fc3@host.mem on gpu0 via host.mem--gpu0.mem
       5  SYNC         gpu0
       6  RET          fc3=fc3@host.mem
    """
    found = STRATEGIES.get(strategy)
    if found is None:
        raise SimulationError(strategy_problem(strategy).message)
    program = compiled.root if isinstance(compiled, PlanProgram) else compiled
    if not isinstance(program, VmProgram):
        raise SimulationError(
            f"cuda_graph {strategy}: expected a root level run by a VM, got "
            f"{type(program).__name__} (a graph executor has no VM program to capture from)"
        )
    regions = find_regions(program, platform)
    skipped: tuple[str, ...] = ()
    if devices is not None:
        regions = tuple(r for r in regions if r.processor in devices)
        skipped = tuple(
            f"{path}: cuda_graph is set, but only the root level's kernels are captured "
            f"(it is at level {platform.processors[path].level})"
            for path in sorted(devices)
            if platform.processors[path].level != program.level
        )
    chosen, notes = found.select(program, regions)
    notes = (*skipped, *notes)
    is_bucketed = found.is_bucketed and bool(chosen)  # nothing captured: nothing padded
    starts = {r.start: r for r in chosen}
    code: list[Instruction | CudaGraph] = []
    origin: list[int] = []
    renumber: dict[int, int] = {}
    pc = 0
    while pc < len(program.code):
        renumber[pc] = len(code)
        origin.append(pc)
        region = starts.get(pc)
        if region is not None:
            code.append(CudaGraph(region.id, region.processor, region.body))
            for index in region.deferred:
                renumber[index] = len(code)
                origin.append(index)
                code.append(program.code[index])
            pc = region.stop
        else:
            code.append(program.code[pc])
            pc += 1
    code = [
        ins._replace(target=renumber[ins.target]) if isinstance(ins, BranchShape) else ins
        for ins in code
    ]
    return CapturedProgram(
        program, strategy, chosen, tuple(code), tuple(origin),
        tuple(buckets) if is_bucketed else (), notes,
        compiled if compiled is not program else None,
    )  # fmt: skip


def strategy_problem(strategy: object) -> Problem:
    """The problem of an unknown strategy name: where, what was expected, what came, a hint."""
    names = sorted(STRATEGIES)
    close = difflib.get_close_matches(str(strategy), names, n=1)
    return Problem(
        "cuda_graph",
        f"expected one of {', '.join(names)}",
        repr(strategy),
        close[0] if close else None,
    )


def check_buckets(buckets: object) -> tuple[int, ...]:
    """`buckets` as a tuple, checked: positive integers in increasing order.

    Raises
    ------
    SimulationError
        Anything else.

    Examples
    --------
    >>> check_buckets([16, 32])
    (16, 32)
    >>> check_buckets((32, 16))
    Traceback (most recent call last):
    ...
    hetsim.errors.SimulationError: buckets: expected increasing positive integers, got (32, 16)
    """
    items = tuple(buckets) if isinstance(buckets, list | tuple) else (buckets,)
    found = tuple(b for b in items if isinstance(b, int) and not isinstance(b, bool) and b > 0)
    if not found or len(found) != len(items) or any(a >= b for a, b in itertools.pairwise(found)):
        expected = "expected increasing positive integers"
        raise SimulationError(Problem("buckets", expected, repr(buckets)).message)
    return found


def bucket_dims(dims: Mapping[str, int], buckets: tuple[int, ...]) -> dict[str, int] | None:
    """Each dim padded up to the smallest bucket that holds it; ``None`` if one exceeds them all.

    Examples
    --------
    >>> bucket_dims({"seq": 37}, (16, 32, 64))
    {'seq': 64}
    >>> bucket_dims({"seq": 65}, (16, 32, 64)) is None
    True
    """
    padded = {}
    ordered = sorted(buckets)
    for name, value in dims.items():
        bucket = next((b for b in ordered if b >= value), None)
        if bucket is None:
            return None
        padded[name] = bucket
    return padded
