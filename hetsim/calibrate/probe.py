"""Probes: one-op graphs run with hetsim's own numpy kernels, and the timer that measures them.

Owns what a calibration measures and how one sample is taken: a `Probe` is a one-op graph with
its inputs, its `Cost` (from the op's cost rule, the same numbers the simulator uses) and the
compiled kernel; `time_us` times a call, and a `Sample` records a probe's timings. Which probes
make a calibration is `hetsim.calibrate.plan`, and how their samples are fitted
`hetsim.calibrate.parameters` and `hetsim.calibrate.fit`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.calibrate.machine import FALLBACK_L2_BYTES
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import Cost, compile_program, lookup, propagate

__all__ = [
    "FLUSH_L2S",
    "Probe",
    "Sample",
    "chain_graph",
    "eager_runner",
    "flush_buffer",
    "matmul_probe",
    "median",
    "op_probe",
    "time_cold",
    "time_interleaved",
    "time_us",
]

SEED = 0
"""Seed of every probe's input arrays."""


@dataclass(frozen=True, slots=True, eq=False)
class Probe:
    """One op, ready to run: `call()` runs its kernel once on fixed inputs.

    Examples
    --------
    >>> p = matmul_probe(4)
    >>> p.name, p.cost.flops, p.cost.op_class
    ('matmul 4', 128.0, 'matmul')
    >>> p.call()[0].shape
    (4, 4)
    """

    name: str
    graph: Graph
    cost: Cost
    call: Callable[[], list[np.ndarray]]

    def __repr__(self) -> str:
        return f"<Probe {self.name} flops={self.cost.flops:g}>"


def _probe(name: str, graph: Graph, inputs: dict[str, np.ndarray]) -> Probe:
    op = graph.ops[0]
    metas = propagate(graph, None, inputs)
    ins = [metas.get(i) if i else None for i in op.inputs]
    outs = [metas[o] for o in op.outputs]
    cost = lookup(op).cost(op, ins, outs)
    kernel = lookup(op).compile(op, graph.opset)
    args = [inputs.get(i, graph.initializers.get(i)) for i in op.inputs]
    return Probe(name, graph, cost, lambda: kernel(args))


def _rand(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def matmul_probe(n: int) -> Probe:
    """An ``n × n`` by ``n × n`` float32 MatMul (``2n³`` flops)."""
    rng = np.random.default_rng(SEED)
    b = GraphBuilder(f"matmul{n}")
    y = b.op("MatMul", b.input("a", (n, n)), b.initializer(_rand(rng, (n, n)), "w"), name="mm")
    return _probe(f"matmul {n}", b.build(y), {"a": _rand(rng, (n, n))})


def op_probe(
    op_type: str,
    shapes: tuple[tuple[int, ...], ...],
    *,
    weights: tuple[tuple[int, ...], ...] = (),
    **attrs: Any,
) -> Probe:
    """A float32 `op_type` on random inputs of `shapes`, then random weights of `weights`.

    >>> p = op_probe("MaxPool", ((1, 2, 8, 8),), kernel_shape=[2, 2], strides=[2, 2])
    >>> p.name, p.cost.op_class, p.call()[0].shape
    ('MaxPool 1x2x8x8', 'reduction', (1, 2, 4, 4))
    """
    rng = np.random.default_rng(SEED)
    b = GraphBuilder(op_type.lower())
    names = [b.input(f"x{i}", shape) for i, shape in enumerate(shapes)]
    # positive weights: a variance (BatchNormalization) must be, and no kernel minds
    names += [
        b.initializer(np.abs(_rand(rng, shape)) + 0.5, f"w{i}") for i, shape in enumerate(weights)
    ]
    y = b.op(op_type, *names, name="op", **attrs)
    inputs = {f"x{i}": _rand(rng, shape) for i, shape in enumerate(shapes)}
    label = "x".join(map(str, shapes[0]))
    return _probe(f"{op_type} {label}", b.build(y), inputs)


def chain_graph(length: int, size: int = 4) -> tuple[Graph, dict[str, np.ndarray]]:
    """A chain of `length` Relu ops on `size` floats, and its input: one loop step per op.

    >>> g, inputs = chain_graph(3)
    >>> [op.type for op in g.ops], inputs["x"].shape
    (['Relu', 'Relu', 'Relu'], (4,))
    """
    b = GraphBuilder(f"chain{length}")
    h = b.input("x", (size,))
    for i in range(length):
        h = b.op("Relu", h, name=f"r{i}")
    return b.build(h), {"x": _rand(np.random.default_rng(SEED), (size,))}


def eager_runner(graph: Graph, inputs: dict[str, np.ndarray]) -> Callable[[], Any]:
    """A call that runs `graph` through hetsim's eager loop (`hetsim.kernels` `Program.run`)."""
    program = compile_program(graph, fuse_ops=False)
    return lambda: program.run(inputs)


def time_us(call: Callable[[], Any], *, repeats: int, budget_us: float = 20_000.0) -> list[float]:
    """`repeats` samples of the time of one `call()`, in µs; each sample averages a batch.

    The batch is as many calls as fit in ``budget_us / repeats`` (at least one), found from a
    first, untimed call, so a fast call is not dominated by the clock's resolution.

    >>> samples = time_us(lambda: None, repeats=3)
    >>> len(samples), all(s >= 0 for s in samples)
    (3, True)
    """
    start = time.perf_counter()
    call()
    first_us = (time.perf_counter() - start) * 1e6
    number = max(1, int(budget_us / repeats / max(first_us, 0.05)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - start) * 1e6 / number)
    return samples


FLUSH_L2S = 4
"""A cold sample first writes a buffer this many times the L2 cache (L2 is not exactly LRU)."""


def flush_buffer(l2: int | None) -> np.ndarray:
    """The buffer `time_cold` writes before each call: `FLUSH_L2S` × the L2 size (or
    `FALLBACK_L2_BYTES` where the machine does not say).

    >>> flush_buffer(1 << 20).nbytes
    4194304
    """
    size = FLUSH_L2S * (l2 or FALLBACK_L2_BYTES)
    return np.zeros(size // 8, np.float64)


def time_cold(call: Callable[[], Any], *, repeats: int, flush: np.ndarray) -> list[float]:
    """`repeats` samples (µs), each one `call()` right after writing `flush` (at least 3).

    In a model a kernel runs after its predecessors' work, which left its data in the shared
    outer cache at best, not in the core's own L1 and L2; a kernel called again and again in a
    loop (`time_us`) may find them hot and run faster: how much depends on the machine and its
    load (docs/validation.md: a Relu over a 3.2 MB activation read 1.21-1.46x after writing
    96 MiB, 2.5x at an earlier sitting, and no difference after this function's 4 x L2 on a
    machine with 1 MiB of L2).
    Writing a few times the L2 before each call is the middle ground a model's kernels see.

    >>> samples = time_cold(lambda: None, repeats=2, flush=flush_buffer(1 << 16))
    >>> len(samples), all(t >= 0 for t in samples)
    (3, True)
    """
    clock = time.perf_counter
    call()  # first-call allocations and imports
    samples = []
    for _ in range(max(3, repeats)):
        np.add(flush, 1.0, out=flush)
        start = clock()
        call()
        samples.append((clock() - start) * 1e6)
    return samples


def time_interleaved(
    calls: Sequence[Callable[[], Any]], *, repeats: int, rounds: int = 20
) -> list[list[float]]:
    """`repeats` samples (µs) per call of `calls`, run in turn, as a model's ops run.

    One round calls each of `calls` once, in order, timing each call alone; a sample is the
    median of a call's times over `rounds` rounds. A kernel that runs between other kernels
    (a model) finds colder caches and predictors than one repeated in a loop (`time_us`): on
    the development machine the ten tiny kernels of the plan took 1.08-1.42 times as long
    interleaved in 57 of 60 readings (one BLAS thread, medians of 15, three runs on 2026-12-07;
    in one round three kernels were slow in the loop instead: docs/validation.md).

    >>> samples = time_interleaved([lambda: None, lambda: None], repeats=3, rounds=2)
    >>> len(samples), [len(s) for s in samples], all(t >= 0 for s in samples for t in s)
    (2, [3, 3], True)
    """
    clock = time.perf_counter
    samples: list[list[float]] = [[] for _ in calls]
    for call in calls:  # warm-up: first-call allocations and imports
        call()
    for _ in range(repeats):
        times: list[list[float]] = [[] for _ in calls]
        for _ in range(rounds):
            for index, call in enumerate(calls):
                start = clock()
                call()
                times[index].append(clock() - start)
        for index, seconds in enumerate(times):
            samples[index].append(statistics.median(seconds) * 1e6)
    return samples


def median(values: list[float]) -> float:
    """The median of `values` (a float). >>> median([3.0, 1.0, 2.0]) → 2.0."""
    return float(statistics.median(values))


@dataclass(frozen=True, slots=True)
class Sample:
    """The timed samples (µs per call) of one probe at one thread count."""

    probe: str
    op_class: str
    threads: int
    flops: float
    bytes: float
    us: tuple[float, ...]
    kernel_class: str = ""
    """The op class of the probe's `Cost` (a ``tiny`` probe's class gives its fixed cost)."""
    gemm_dim: int = 0
    """The probe's `Cost.gemm_dim`: the smallest dimension of its GEMM (0: not a GEMM)."""

    @property
    def median_us(self) -> float:
        """The median of the samples."""
        return median(list(self.us))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "probe": self.probe,
            "op_class": self.op_class,
            "threads": self.threads,
            "flops": self.flops,
            "bytes": self.bytes,
            "us": list(self.us),
            "median_us": self.median_us,
            "kernel_class": self.kernel_class,
            "gemm_dim": self.gemm_dim,
        }
