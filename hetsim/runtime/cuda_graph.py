"""CUDA-graph offload: the strategies that choose capturable regions, and the rewrite.

A region is a run of VM code that one CUDA stream capture can record; `find_regions`
(`hetsim.runtime.capture_regions`) finds them. `capture_program` picks regions by strategy
(`STRATEGIES`) and rewrites the program so each region is one `CudaGraph` instruction. The
instruction is keyed at run time by (region, shape key): `hetsim.sim.graphs` captures on the first
run of a key and replays afterwards. Costs are `hetsim.cost.cuda_graph`'s; ``docs/cuda-graphs.md``
has the whole story.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple, cast

from hetsim.errors import Problem, SimulationError, is_count, is_items
from hetsim.platform import Platform
from hetsim.runtime.bytecode import (
    MNEMONICS,
    BranchShape,
    Call,
    Copy,
    Instruction,
    Invoke,
    Launch,
    Sync,
    VmProgram,
    operands,
)
from hetsim.runtime.capture_regions import Region, find_regions
from hetsim.runtime.program import PlanProgram

__all__ = [
    "DEFAULT_BUCKETS",
    "NOTHING_TO_CAPTURE",
    "NOTHING_TO_PAD",
    "STRATEGIES",
    "CapturedProgram",
    "CudaGraph",
    "Strategy",
    "bucket_dims",
    "capture_program",
    "check_buckets",
    "strategy_problem",
    "uncaptured_notes",
]

DEFAULT_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
"""Bucket sizes of the ``buckets`` strategy: powers of two, as vLLM's capture sizes grow."""
NOTHING_TO_CAPTURE = "no CUDA kernels at the root level to capture: every kernel runs eagerly"
"""The note of ``regions`` and ``whole`` when the root level launches no capturable kernel."""
NOTHING_TO_PAD = f"{NOTHING_TO_CAPTURE}, without padding"
"""The note of a ``buckets`` run with no region to capture: its dims are not padded."""


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
                original = self.program.code[origin]
                text = f"{MNEMONICS[type(original)]:<12} {operands(self.program, original)}"
            out.append(f"{pc:4d}  {text}")
        return "\n".join(out)


SPLITTERS = (Sync, Call, Invoke, BranchShape)
"""The instructions a note names first when they split two regions: host work and control."""


def _breakers(program: VmProgram, regions: tuple[Region, ...]) -> tuple[str, ...]:
    """Notes naming what split each region from the one before it on its device: its host work
    and control (`SPLITTERS`), else the device work a capture there cannot hold
    (`_uncapturable`). The one before on its device, not in the program: a region of another
    device between two of one device's (two GPUs' chains interleaved) had left them unsaid."""
    notes = []
    last: dict[str, Region] = {}
    for after in regions:
        before = last.get(after.processor)
        last[after.processor] = after
        if before is None:
            continue
        between = range(before.stop, after.start)
        code = program.code
        named = [_word(program, code[i]) for i in between if isinstance(code[i], SPLITTERS)]
        if not named:
            named = [w for i in between if (w := _uncapturable(program, i, before)) is not None]
        why = ", ".join(map(repr, named)) if named else f"a branch target at {after.start}"
        notes.append(f"{before.id} and {after.id} split by {why}")
    return tuple(notes)


def _word(program: VmProgram, ins: Instruction) -> str:
    """An instruction as a note names it: its opcode in lower case and its operands up to its
    results (``call add(a@host.mem, b) -> c`` is ``call add(a@host.mem, b)``), names as given
    (read from the instruction: a name may hold `` -> ``)."""
    return f"{MNEMONICS[type(ins)].lower()} {operands(program, ins, results=False)}"


def _uncapturable(program: VmProgram, pc: int, region: Region) -> str | None:
    """What instruction `pc` does that a capture on `region`'s device cannot hold, or None: a
    launch on another stream or after a tensor another stream makes, a copy over a link (the
    ALLOCs and FREEs around them follow from these)."""
    ins, slots = program.code[pc], program.slots
    if isinstance(ins, Launch):
        name = program.ops[ins.op].name
        if ins.processor != region.processor:
            return f"launch {name} on {ins.processor}"
        if ins.waits:
            return f"launch {name} after {', '.join(slots[w].name for w in ins.waits)}"
    elif isinstance(ins, Copy) and ins.route:
        return f"copy {slots[ins.src].name} -> {slots[ins.dst].name}"
    return None


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
        return (), ("no kernel launches at the root level to capture",)
    if not regions:  # launches, none on a CUDA device: as `regions` says it
        return (), (NOTHING_TO_CAPTURE,)
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


def uncaptured_notes(platform: Platform, devices: Collection[str], root: str) -> tuple[str, ...]:
    """The notes of devices flagged ``cuda_graph`` (`devices`) whose kernels are not captured:
    those not at the root level `root`, whose program alone is captured."""
    return tuple(
        f"{path}: cuda_graph is set, but only the root level's kernels are captured "
        f"(it is at level {platform.processors[path].level})"
        for path in sorted(devices)
        if platform.processors[path].level != root
    )


def _nested_cuda(platform: Platform, root: str) -> str | None:
    """Why the root level `root` has no CUDA kernel to capture while the platform has CUDA
    devices: they are in nested levels, whose programs are never captured; None if none is.

    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> print(_nested_cuda(build_platform(Target("two-node-h100")), ""))
    the CUDA devices node0/gpu0, node1/gpu0 are in nested levels, whose programs are not \
captured (docs/cuda-graphs.md, Limits)
    >>> _nested_cuda(build_platform(Target("arm-riscv-soc")), "") is None
    True
    """
    paths = sorted(
        p.path for p in platform.processors.values() if p.kind == "cuda" and p.level != root
    )
    if not paths:
        return None
    named = ", ".join(paths)
    if len(paths) == 1:
        where = f"device {named} is in a nested level, whose program is"
    else:
        where = f"devices {named} are in nested levels, whose programs are"
    return f"the CUDA {where} not captured (docs/cuda-graphs.md, Limits)"


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
       0  ALLOC        x@gpu0.mem in gpu0.mem on gpu0
       1  COPY         x -> x@gpu0.mem on gpu0 via host.mem--gpu0.mem
       2  CUDA_GRAPH   g0 on gpu0: 5 kernels, VM code[2:17]
       3  ALLOC        fc3@host.mem in host.mem on gpu0
       4  COPY         fc3 -> fc3@host.mem on gpu0 via host.mem--gpu0.mem
       5  FREE         fc3 in gpu0.mem
       6  SYNC         gpu0
       7  RET          fc3=fc3@host.mem
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
        skipped = uncaptured_notes(platform, devices, program.level)
    chosen, notes = found.select(program, regions)
    # flagged devices (`devices`) of nested levels have their own notes, `skipped`
    if not regions and devices is None and (nested := _nested_cuda(platform, program.level)):
        notes = tuple(f"{note}; {nested}" for note in notes)
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


def strategy_problem(strategy: object, where: str = "cuda_graph") -> Problem:
    """The problem of an unknown strategy name at `where` (the argument that gave it): what was
    expected, what came, a hint."""
    names = sorted(STRATEGIES)
    close = difflib.get_close_matches(str(strategy), names, n=1)
    return Problem(
        where,
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
    >>> import numpy as np
    >>> check_buckets(np.array([16, 32]))
    (16, 32)
    >>> check_buckets((32, 16))
    Traceback (most recent call last):
    ...
    hetsim.errors.SimulationError: buckets: expected increasing positive integers, got (32, 16)
    """
    items: tuple[object, ...] = (buckets,)
    if is_items(buckets):
        items = tuple(buckets)
    # numpy ints too, as dims takes them; is_count saw each is an Integral
    found = tuple(int(cast(Integral, b)) for b in items if is_count(b, 1))
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
