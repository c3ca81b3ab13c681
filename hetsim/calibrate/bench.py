"""The dispatch-overhead benchmark: what one dispatch costs at each runtime level, and when it
dominates.

Owns the benchmark graphs (a chain and a fan-out of tiny kernels), the runtime variants it
compares on every shipped platform tag (`VARIANTS`: the VM, the graph executor, a nested level,
CUDA-graph replay), the fit of makespan over op count (intercept: fixed cost; slope: per-op
overhead, less the benchmark op's own kernel where the level's host runs it; a fan-out's over its
branches, its Sum in the fixed cost) and the op size below which that overhead outlasts the
kernel. Each variant's ops go to the first of its devices that runs them
(`bench_device`, by the partitioner's capability rule). A variant a tag cannot set up (no device
runs the ops, a runtime that cannot run the executor) is reported as not available, with the
reason; its numbers are never made up.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from hetsim.api import platform_of, simulate
from hetsim.calibrate.benchchecks import check_ops, check_tags
from hetsim.calibrate.fit import fit_line
from hetsim.cost import kernel_us
from hetsim.errors import HetsimError
from hetsim.ir import Graph, GraphBuilder, Op
from hetsim.kernels import Cost, propagate, propagate_costs
from hetsim.partition import partition, refusals
from hetsim.platform import Platform, Processor
from hetsim.runtime import compile_plan
from hetsim.runtime.cuda_graph import capture_program
from hetsim.sim.capture import run_graph_program
from hetsim.sim.graphs import GraphCache
from hetsim.target import RUNTIMES, TAGS, Target
from hetsim.target.tags import shipped_tag_dir

__all__ = [
    "DEFAULT_OPS",
    "SHAPES",
    "TYPICAL_OP_ELEMENTS",
    "VARIANTS",
    "BenchRow",
    "Variant",
    "bench_dispatch",
    "check_ops",
    "check_tags",
    "crossover_elements",
    "fanout_graph",
    "platform_tags",
    "serial_kernel_us",
]

DEFAULT_OPS = (1, 10, 100, 1000, 10000)
"""Op counts of the benchmark graphs."""
TYPICAL_OP_ELEMENTS = 64 * 56 * 56
"""A typical op: a Relu over ResNet-50's first-stage activation (1×64×56×56 float32)."""
MAX_CROSSOVER_ELEMENTS = 1 << 40
TIE_RTOL = 1e-9
"""A kernel time this close (relative) to the overhead reaches it. The fitted slope carries float
error (about 1e-13 relative), which had put x86-h100's graph-executor crossover at 954 751
elements, one past (3.34 − 1.06) µs × 3.35e6 B/µs / 8 B = 954 750; one element changes the
kernel time of a crossover under 1e8 elements by more than this, so only a tie moves."""


def fanout_graph(width: int, size: int = 4, dtype: str = "float32") -> Graph:
    """`width` Relu ops that all read the input, summed by one Sum: ``width + 1`` ops.

    >>> g = fanout_graph(3)
    >>> [op.type for op in g.ops]
    ['Relu', 'Relu', 'Relu', 'Sum']
    """
    b = GraphBuilder(f"fanout{width}")
    x = b.input("x", (size,), dtype)
    branches = [b.op("Relu", x, name=f"r{i}") for i in range(width)]
    return b.build(b.op("Sum", *branches, name="sum"))


def chain_of(length: int, dtype: str = "float32") -> Graph:
    """`chain_graph`'s chain of Relus, its input of `dtype`."""
    b = GraphBuilder(f"chain{length}")
    h = b.input("x", (4,), dtype)
    for i in range(length):
        h = b.op("Relu", h, name=f"r{i}")
    return b.build(h)


SHAPES: dict[str, Callable[[int, str], Graph]] = {
    "chain": chain_of,
    "fanout": lambda n, dtype: fanout_graph(n, dtype=dtype),
}
"""Benchmark graph shape → builder from an op count and a dtype."""

PREFERRED_DTYPES = ("float32", "float16", "bfloat16", "int8", "int16", "int32")
"""The element type of the benchmark graphs: the first of these the benchmarked device computes
in (float32 where it can; an INT8 NPU gets int8, not float32 ops it would refuse)."""


def _computes(processor: Target) -> str:
    """The first of `PREFERRED_DTYPES` `processor` computes in, else the first it does."""
    computes = processor.attrs.get("dtypes") or ("float32",)
    return next((d for d in PREFERRED_DTYPES if d in computes), computes[0])


def _root_choices(target: Target) -> list[str]:
    return [d.name for d in target.devices if d.kind != "hetero"] + ["host"]


def _levels(target: Target) -> list[str]:
    return [path for path, node in target.walk() if node.kind == "hetero" and path]


def _gpus(target: Target) -> list[str]:
    return [d.name for d in target.devices if d.kind == "cuda"]


@dataclass(frozen=True, slots=True)
class Variant:
    """A runtime level to benchmark: which tags it applies to, how it is set up and where the
    benchmark's ops go."""

    name: str
    doc: str
    applies: Callable[[Target], bool]
    setup: Callable[[Target], tuple[Target, dict[str, Any]]]
    """The target to simulate and the options of `simulate`, less the rules placing the ops."""
    choices: Callable[[Target], list[str]] = _root_choices
    """Where the ops may go, in order: `bench_device` takes the first that runs them."""
    among: str = "device of the root level"
    """What `choices` are, in the reason given when none of them runs the ops."""
    places: tuple[str, ...] | None = None
    """The op types put on the choice (None: every one of the graph's); others by capability."""

    def placed(self, shape: str) -> tuple[str, ...]:
        """The op types of `shape`'s graphs this variant puts on its choice."""
        return self.places or op_types(shape)


def _with_executor(target: Target, executor: str) -> Target:
    """`target` with its root level run by `executor` (its own settings if it already is)."""
    assert target.executor is not None, "a platform's root level has an executor"
    assert target.runtime is not None, "a platform's root level has a runtime"
    if target.executor.kind == executor:
        return target
    runs = RUNTIMES[target.runtime.kind].executors
    if runs and executor not in runs:
        raise HetsimError(
            f"the root runtime {target.runtime.kind!r} cannot run the {executor!r} executor"
            f" (it runs {', '.join(map(repr, runs))})"
        )
    return target.override({"executor": executor})


def op_types(shape: str) -> tuple[str, ...]:
    """The op types of `shape`'s graphs, in graph order.

    >>> op_types("chain"), op_types("fanout")
    (('Relu',), ('Relu', 'Sum'))
    """
    return tuple(dict.fromkeys(op.type for op in SHAPES[shape](1, "float32").ops))


def bench_device(target: Target, variant: Variant, shape: str) -> tuple[str, str]:
    """Where `variant` puts `shape`'s ops on `target` and the dtype the graphs take there.

    The first of the variant's choices that runs every op type it places there
    (`hetsim.partition.refusals`, the partitioner's own rule), in the first dtype its devices
    compute in that it runs them all in.

    Raises
    ------
    HetsimError
        When none of the choices runs them, naming each one and why not.

    Examples
    --------
    >>> bench_device(Target("rk3588"), VARIANTS["vm"], "chain")
    ('npu', 'float16')
    >>> bench_device(Target("x86-h100"), VARIANTS["vm"], "fanout")
    ('gpu0', 'float32')
    """
    platform, nodes = platform_of(target), dict(target.walk())
    types = variant.placed(shape)
    ops = [Op(name, name.lower(), ("x",), ("y",)) for name in types]
    tried: dict[str, str] = {}  # a path's first refusal: one reason says why it was passed over
    for choice in variant.choices(target):
        for dtype in _dtypes(nodes[choice]):
            dtypes = frozenset({dtype})
            refused = [r for op in ops for r in refusals(platform, choice, op, False, dtypes)]
            if not refused:
                return choice, dtype
            for path, reason in refused:
                tried.setdefault(path, reason)
    listed = ", ".join(f"{path} ({reason})" for path, reason in tried.items())
    raise HetsimError(f"no {variant.among} runs {' and '.join(types)}; tried {listed}")


def _dtypes(node: Target) -> list[str]:
    """The dtypes the graphs may take on `node`: its processors', in order (a level's devices',
    not its host's: a nested level is offered the ops its devices run)."""
    if node.kind != "hetero":
        return [_computes(node)]
    return list(dict.fromkeys(d for device in node.devices for d in _dtypes(device)))


def _rules(device: str, types: tuple[str, ...]) -> dict[str, Any]:
    return {"partition": "rules", "rules": [{"op": t, "device": device} for t in types]}


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "vm",
            "the root level run by a VM: the ops on its first plain device that runs them (else"
            " on its host)",
            lambda t: True,
            lambda t: (_with_executor(t, "vm"), {}),
        ),
        Variant(
            "graph",
            "the root level run by a graph executor instead of the VM, same placement",
            lambda t: True,
            lambda t: (_with_executor(t, "graph"), {}),
        ),
        Variant(
            "nested",
            "the root level invoking its first nested level that runs the Relus (tags with one;"
            " a fan-out's Sum stays with the root)",
            lambda t: bool(_levels(t)),
            lambda t: (t, {}),
            _levels,
            "nested level",
            ("Relu",),
        ),
        Variant(
            "cuda-graph",
            "the root VM replaying the whole model as one CUDA graph (tags with a root GPU)",
            lambda t: bool(_gpus(t)),
            lambda t: (_with_executor(t, "vm"), {"cuda_graph": "whole"}),
            _gpus,
            "GPU of the root level",
        ),
    )
}
"""Variant name → how to benchmark it."""


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One tag × variant × shape: makespans by op count and what they fit to.

    `fixed_us` is the intercept of the line through (`ops`, `later_us`) (a fan-out's over its
    branches, one less than its `ops`), `per_op_us` its slope less `kernel_per_op_us`: the
    per-op overhead; `capture_per_op_us` the slope of `capture_us`. `crossover_elements` is 0
    where dispatch never dominates (`crossover_elements`).
    """

    tag: str
    variant: str
    shape: str
    ops: tuple[int, ...] = ()
    makespan_us: tuple[float, ...] = ()
    capture_us: tuple[float, ...] = ()
    per_op_us: float | None = None
    capture_per_op_us: float | None = None
    fixed_us: float | None = None
    processor: str = ""
    typical_kernel_us: float | None = None
    crossover_elements: int | None = None
    note: str = ""
    dtype: str = "float32"
    """The element type of the benchmark graphs (`bench_device`): what the device computes in."""
    later_us: tuple[float, ...] = ()
    """The makespan of a later run at each op count: a CUDA graph's replay (the first run, in
    `makespan_us`, captures); the first run's makespan at the other levels (`bench_row` fills
    it; left empty, `plot_bench` draws `makespan_us`)."""
    kernel_per_op_us: float = 0.0
    """The ops' own kernel time per op that the slope includes, taken out of it to give
    `per_op_us` (the slope is their sum): the slope, over `ops`, of the kernel time the levels'
    hosts spent running the ops themselves (`serial_kernel_us`); 0 where a device ran them."""

    @property
    def is_available(self) -> bool:
        """Whether the row carries measured numbers (not a 'not available' note)."""
        return self.per_op_us is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        row = dataclasses.asdict(self)
        for name in ("ops", "makespan_us", "capture_us", "later_us"):
            row[name] = list(row[name])
        return row


def platform_tags() -> list[str]:
    """The shipped tags that name a whole platform (a ``hetero`` root), sorted."""
    shipped = shipped_tag_dir()
    names = []
    for name in TAGS:
        tag = TAGS.get(name)
        is_shipped = shipped is not None and Path(tag.source).is_relative_to(shipped)
        if is_shipped and isinstance(tag.data, dict) and tag.data.get("kind") == "hetero":
            names.append(name)
    return sorted(n for n in names if _has_own_memory(Target(n)))


def _has_own_memory(target: Target) -> bool:
    """False for a level meant to be attached under another host (it computes from that host's
    memory, so it cannot run alone)."""
    return target.host is not None and target.host.attrs["memory_gib"] > 0


def crossover_elements(processor: Processor, overhead_us: float, itemsize: int = 4) -> int:
    """The fewest Relu elements (of `itemsize` bytes) whose kernel time on `processor` reaches
    `overhead_us`; 0 when a one-element Relu already does.

    Below it, the per-op dispatch overhead takes longer than the op itself: an op of `e`
    elements is dominated by its dispatch exactly when ``e < crossover_elements(...)``, so 0
    says never. A kernel time within `TIE_RTOL` of the overhead reaches it.

    >>> cpu = Processor("host", "host", "x86-cpu", "", {"cores": 1, "freq_ghz": 1.0,
    ...     "flops_per_cycle": 1, "efficiency": {"elementwise": 1.0}, "mem_bandwidth_gbps": 8,
    ...     "kernel_latency_us": 1.0}, "host.mem")
    >>> crossover_elements(cpu, 2.0)  # 1 µs more at 8 B/element, 8 GB/s: 1000 elements
    1000
    >>> crossover_elements(cpu, 2.2 - 0.9)  # 1.3000000000000003 µs: 300 elements, not 301
    300
    >>> crossover_elements(cpu, 0.5)  # less than the kernel's own 1 µs latency: never
    0
    """

    def is_below(elements: int) -> bool:
        kernel = _relu_us(processor, elements, itemsize)
        return kernel < overhead_us and not math.isclose(kernel, overhead_us, rel_tol=TIE_RTOL)

    if not is_below(1):
        return 0
    low, high = 1, 2
    while is_below(high) and high < MAX_CROSSOVER_ELEMENTS:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if is_below(mid) else (low, mid)
    return high


def _relu_us(processor: Processor, elements: int, itemsize: int = 4) -> float:
    size = itemsize * elements
    return kernel_us(processor, Cost(float(elements), size, size, "elementwise"))


def serial_kernel_us(graph: Graph, platform: Platform, placement: Mapping[str, str]) -> float:
    """The kernel time of `graph`'s ops that a level's host ran itself (`placement`: op name →
    processor path): what a run spends in kernels between its dispatches.

    A level's host (role ``host`` or ``coprocessor``) runs its ops itself: each CALL's kernel
    (its `kernel_us`, by the op's cost rule) takes its time between two dispatches. A device's
    kernels run on its stream while the host dispatches the next op, and count nothing here:
    while they are shorter, the run's time per op is the host's (a CUDA-graph replay's, the
    device's per node, which replaces the kernel's latency).

    >>> platform = platform_of(Target("arm-riscv-soc"))
    >>> serial_kernel_us(chain_of(1), platform, {"r0": "host"})  # 1.0 + 32 B at 12.8 GB/s
    1.0025
    >>> serial_kernel_us(chain_of(1), platform, {"r0": "vdevice0/host"})  # 1.5 + 32 B at 11.2
    1.502857142857143
    >>> serial_kernel_us(chain_of(1), platform, {"r0": "vdevice0/npu"})
    0.0
    """
    processors = platform.processors
    hosts = {path for path in set(placement.values()) if processors[path].role != "accelerator"}
    if not hosts:  # no cost walk where devices ran every op (the GPU rows)
        return 0.0
    _metas, costs = propagate_costs(graph)
    # the ops of one shape share a `Cost` (`propagate_costs`): one kernel_us per kind of op
    kinds = Counter((placement[op.name], costs[op.name]) for op in graph.ops)
    return sum(
        count * kernel_us(processors[path], cost)
        for (path, cost), count in kinds.items()
        if path in hosts
    )


class _Run(NamedTuple):
    """One timing run of a benchmark graph."""

    makespan_us: float
    capture_us: float
    processor: str
    """The processor that ran most ops."""
    later_us: float
    """What every later run at these shapes takes (`_replay_us` under a CUDA-graph strategy)."""
    serial_us: float
    """The kernel time the levels' hosts spent running ops themselves (`serial_kernel_us`)."""


def _run(graph: Graph, target: Target, options: dict[str, Any]) -> _Run:
    """One timing run of `graph` on `target` with `options`."""
    result = simulate(graph, target, mode="timing", trace=False, **options)
    busiest = Counter(result.placement.values()).most_common(1)
    capture = result.breakdown_us.get("capture", 0.0)
    later = _replay_us(graph, target, options) if options.get("cuda_graph") else result.makespan_us
    serial = serial_kernel_us(graph, platform_of(target), result.placement)
    return _Run(result.makespan_us, capture, busiest[0][0] if busiest else "host", later, serial)


def _replay_us(graph: Graph, target: Target, options: dict[str, Any]) -> float:
    """The makespan of a second run at the same shapes, which replays the graphs the first
    captured: a first run less its capture still pays the host's dispatch of every instruction
    of the region (docs/cuda-graphs.md), which a replay skips."""
    platform = platform_of(target)
    plan = partition(graph, platform, options.get("partition", "capability"), options.get("rules"))
    program = capture_program(compile_plan(graph, platform, plan), platform, options["cuda_graph"])
    metas, cache = propagate(graph, {}), GraphCache()
    run = partial(run_graph_program, program, platform, metas, cache, is_functional=False)
    run(trace=False)
    return run(trace=False).makespan_us


def bench_row(tag: str, variant: Variant, shape: str, ops: Sequence[int]) -> BenchRow:
    """Benchmark one tag × variant × shape over `ops` op counts (or say why it cannot)."""
    target = Target(tag)
    if not variant.applies(target):
        return BenchRow(tag, variant.name, shape, note="n/a for this tag")
    try:
        chosen, options = variant.setup(target)
        device, dtype = bench_device(chosen, variant, shape)
        options = {**options, **_rules(device, variant.placed(shape))}
        runs = [_run(SHAPES[shape](n, dtype), chosen, options) for n in ops]
    except HetsimError as err:
        return BenchRow(tag, variant.name, shape, note=f"not available: {err}")
    counts = [n + (shape == "fanout") for n in ops]  # the graph's ops: a fan-out's Sum too
    makespans = tuple(run.makespan_us for run in runs)
    captures = tuple(run.capture_us for run in runs)
    # capture is paid once per new shape; a later run replays (the first run less its capture
    # had kept the region's host dispatches: 2.37 µs per op on x86-h100 for a replay's 0.86).
    # Fitted over N, what grows: a fan-out's Sum, paid once, is part of the fixed cost (over
    # its op count, a Sum cheaper than a branch made the intercept negative).
    later = tuple(run.later_us for run in runs)
    line = fit_line(ops, later)
    capture_line = fit_line(ops, captures)
    # a host's own kernels lie between its dispatches: each op adds its kernel too (a fan-out's
    # branch, the Sum's read of one more input), which is the op's time, not its dispatch
    kernel_per_op = fit_line(ops, [run.serial_us for run in runs]).slope
    per_op = _unless_noise(line.slope - kernel_per_op, max(later))
    fixed = _unless_noise(line.intercept, max(later))
    capture_per_op = _unless_noise(capture_line.slope, max(captures))
    processor = platform_of(chosen).processors.get(runs[-1].processor)
    typical = crossover = None
    if processor is not None:
        itemsize = np.dtype(dtype).itemsize
        typical = _relu_us(processor, TYPICAL_OP_ELEMENTS, itemsize)
        crossover = crossover_elements(processor, per_op, itemsize)
    return BenchRow(
        tag,
        variant.name,
        shape,
        tuple(counts),
        makespans,
        captures,
        per_op,
        capture_per_op,
        fixed,
        runs[-1].processor,
        typical,
        crossover,
        dtype=dtype,
        later_us=later,
        kernel_per_op_us=kernel_per_op,
    )


NOISE = 1e-9
"""A fitted figure within this fraction of the largest time it was fitted over is the fit's float
rounding, and is 0: a CUDA-graph replay's per-op overhead read -6.28e-16 µs on `cuda` (its
replays of 1 and 2 ops took the same 16.04 µs). The least overhead a shipped tag's row shows is
0.1 µs (``hetsim bench dispatch --json``), far above it: 1e-9 of the largest time fitted there,
158,108 µs, is 0.00016."""


def _unless_noise(value: float, scale: float) -> float:
    """`value`, or 0.0 where it is within `NOISE` of `scale`.

    >>> _unless_noise(-6.28e-16, 16.04), _unless_noise(0.05, 16.04)
    (0.0, 0.05)
    """
    return 0.0 if abs(value) <= NOISE * abs(scale) else value


def bench_dispatch(
    tags: Sequence[str] | None = None,
    ops: Sequence[int] = DEFAULT_OPS,
    *,
    advance: Callable[[str], None] | None = None,
) -> list[BenchRow]:
    """Every tag × variant × shape row (`tags` default: every shipped platform tag).

    Parameters
    ----------
    tags
        Tag (or kind) names, one or more; None (the default): `platform_tags()`.
    ops
        Op counts to simulate; the slope over them (less the op's own kernel where the level's
        host runs it) is the per-op overhead.
    advance
        Called with a label after each row (a progress bar's step).

    Raises
    ------
    HetsimError
        `ops` that `check_ops` refuses; a `TargetError` for `tags` that `check_tags` refuses
        (an empty list, an item that is not a name).
    """
    counts = check_ops(ops)
    tick = advance or (lambda _label: None)
    rows = []
    chosen = platform_tags() if tags is None else check_tags(tags)
    for tag in chosen:
        for variant in VARIANTS.values():
            for shape in SHAPES:
                rows.append(bench_row(tag, variant, shape, counts))
                tick(f"{tag} {variant.name} {shape}")
    return rows
