"""A calibration run: the probes of a plan timed at their thread counts, then fitted.

Owns `calibrate()` → `Calibration` (the machine, every raw sample, and each fitted parameter
with the sentence saying how it was fitted). The plans are `hetsim.calibrate.plan`, probes and
timing `hetsim.calibrate.probe`, the fitting `hetsim.calibrate.parameters` (its arithmetic
`hetsim.calibrate.fit`), and writing the tag file is `hetsim.calibrate.tagfile`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hetsim.calibrate.machine import describe_machine
from hetsim.calibrate.parameters import Fitted, fit_parameters
from hetsim.calibrate.plan import (
    BLAS_CLASSES,
    CHAIN_LENGTH,
    CHAIN_ROUNDS,
    CHAIN_SIZE,
    PLANS,
    STREAM_PREFIX,
    TINY_PROBES,
    Plan,
    ProbeFactory,
)
from hetsim.calibrate.probe import (
    Sample,
    chain_graph,
    eager_runner,
    flush_buffer,
    op_probe,
    time_cold,
    time_interleaved,
)
from hetsim.errors import HetsimError, Problem, close_name, is_count

__all__ = ["Calibration", "calibrate", "is_thread_count", "steps", "thread_range"]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A machine, its raw samples, and the fitted parameters by name (``efficiency.conv``)."""

    machine: Mapping[str, Any]
    plan: str
    samples: tuple[Sample, ...]
    fitted: Mapping[str, Fitted] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Calibration {self.machine.get('cpu')!r} plan={self.plan} n={len(self.samples)}>"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: machine, plan, fitted parameters and every raw sample."""
        return {
            "machine": dict(self.machine),
            "plan": self.plan,
            "fitted": {k: {"value": f.value, "how": f.how} for k, f in self.fitted.items()},
            "samples": [s.to_dict() for s in self.samples],
        }


def thread_range() -> str:
    """What BLAS threads a calibration takes: an integer from 1 to this machine's CPUs. 0 had
    been read as "all", a float or a str failed inside threadpoolctl, and 1000 on a 2-CPU
    machine fitted every efficiency to its floor and wrote ``cores: 1000`` into the tag.

    >>> thread_range().startswith("expected an integer from 1 to this machine's CPUs")
    True
    """
    return f"expected an integer from 1 to this machine's CPUs ({os.cpu_count() or 1})"


def is_thread_count(threads: object) -> bool:
    """Whether `threads` is in `thread_range`."""
    return is_count(threads, 1) and int(threads) <= (os.cpu_count() or 1)  # type: ignore[call-overload]


def _checked_plan(plan: object, threads: object) -> Plan:
    """`PLANS[plan]`, once `plan` and `threads` (`thread_range`) are checked."""
    if not (isinstance(plan, str) and plan in PLANS):
        close = close_name(plan, PLANS) if isinstance(plan, str) else None
        problem = Problem("plan", f"expected one of {', '.join(PLANS)}", repr(plan), close)
        raise HetsimError(problem.message)
    if not is_thread_count(threads):
        raise HetsimError(Problem("threads", thread_range(), repr(threads)).message)
    return PLANS[plan]


def _jobs(plan: Plan, threads: int) -> list[tuple[str, int, ProbeFactory]]:
    """(op class, threads, probe factory) for every probe of `plan`.

    Every probe runs at `threads`; the BLAS-backed classes (matmul, conv) also at 1 thread
    when `threads` is more, for the record. The tiny kernels are timed apart: one interleaved
    round of them after every probe (`calibrate`).
    """
    jobs: list[tuple[str, int, ProbeFactory]] = []
    for group, probes in plan.probes.items():
        jobs += [(group, threads, make) for make in probes]
        if group in BLAS_CLASSES and threads > 1:
            jobs += [(group, 1, make) for make in probes]
    for group, probes in plan.streams.items():
        jobs += [(f"{STREAM_PREFIX}{group}", threads, make) for make in probes]
    return jobs


def calibrate(
    plan: str = "full",
    *,
    threads: int | None = None,
    advance: Callable[[str], None] | None = None,
) -> Calibration:
    """Measure this machine with hetsim's own kernels and fit a CPU target's parameters.

    Parameters
    ----------
    plan
        A key of `PLANS`: ``"full"`` (under a minute) or ``"quick"`` (seconds).
    threads
        BLAS threads the target models (default: all, as numpy uses); matmul and conv are also
        measured at 1 thread for the record.
    advance
        Called with a label after each probe (a progress bar's step); `steps` counts them.

    Raises
    ------
    HetsimError
        An unknown `plan`, or `threads` neither None nor a positive integer.
    """
    chosen = _checked_plan(plan, 1 if threads is None else threads)
    from threadpoolctl import threadpool_limits

    machine = dict(describe_machine())
    used = threads or int(machine["threads"])
    machine["blas_threads_modelled"] = used
    tick = advance or (lambda _label: None)
    samples: list[Sample] = []
    flush = flush_buffer(machine.get("l2_bytes"))
    tiny = [make() for make in TINY_PROBES]
    tiny_us: list[list[float]] = [[] for _ in tiny]
    for group, count, make in _jobs(chosen, used):
        probe = make()
        with threadpool_limits(limits=count, user_api="blas"):
            us = time_cold(probe.call, repeats=chosen.repeats, flush=flush)
            # the tiny kernels, a round after every probe: their samples span the whole run
            for index, one in enumerate(time_interleaved([p.call for p in tiny], repeats=1)):
                tiny_us[index] += one
        cost = probe.cost
        work = float(cost.bytes_with_scratch)  # the local target's lowering is numpy
        samples.append(
            Sample(
                probe.name, group, count, float(cost.flops), work, tuple(us), cost.op_class,
                cost.gemm_dim,
            )
        )  # fmt: skip
        tick(f"{probe.name} ({count} thread{'s' if count > 1 else ''})")
    for probe, us in zip(tiny, tiny_us, strict=True):
        cost = probe.cost
        work = float(cost.bytes_with_scratch)  # the local target's lowering is numpy
        samples.append(
            Sample(probe.name, "tiny", used, float(cost.flops), work, tuple(us), cost.op_class)
        )
        tick(f"{probe.name} (interleaved)")
    graph, inputs = chain_graph(CHAIN_LENGTH, CHAIN_SIZE)
    relu = op_probe("Relu", ((CHAIN_SIZE,),))  # the chain's kernel, repeated as the chain does
    with threadpool_limits(limits=used, user_api="blas"):
        loop, alone = time_interleaved(
            [eager_runner(graph, inputs), relu.call], repeats=chosen.repeats, rounds=CHAIN_ROUNDS
        )
    samples.append(Sample(f"eager chain {CHAIN_LENGTH}", "loop", used, 0.0, 0.0, tuple(loop)))
    samples.append(Sample(relu.name, "loop-kernel", used, relu.cost.flops, 0.0, tuple(alone)))
    tick("eager dispatch loop")
    return Calibration(machine, plan, tuple(samples), fit_parameters(machine, samples))


def steps(plan: str, threads: int) -> int:
    """How many times `calibrate` calls `advance` for `plan` at `threads` BLAS threads (checked
    as `calibrate` checks them)."""
    return len(_jobs(_checked_plan(plan, threads), threads)) + len(TINY_PROBES) + 1
