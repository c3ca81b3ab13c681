"""hetsim.calibrate: measure this machine, fit a target to it, and check the simulator against it.

`calibrate()` times hetsim's own numpy kernels (`probe`) as a plan says (`plan`), fits the
parameters of a CPU target (`parameters`, `fit`; `run`) and `write_tag` writes them as the
``local`` tag (`tagfile`); `compare_model` puts a simulated latency next to a measured one
(`accuracy`); `bench_dispatch` measures the simulated dispatch overhead of every runtime level
on every shipped platform (`bench`).
"""

from __future__ import annotations

from hetsim.calibrate.accuracy import Comparison, compare_model, error_pct, summarize
from hetsim.calibrate.bench import VARIANTS, BenchRow, bench_dispatch, platform_tags
from hetsim.calibrate.fit import Line, fit_line, median_rate, theil_sen
from hetsim.calibrate.machine import describe_machine
from hetsim.calibrate.parameters import Fitted
from hetsim.calibrate.plan import PLANS
from hetsim.calibrate.probe import Sample
from hetsim.calibrate.run import (
    Calibration,
    calibrate,
    is_thread_count,
    steps,
    thread_range,
)
from hetsim.calibrate.tagfile import LOCAL_TAG, tag_text, write_tag

__all__ = [
    "LOCAL_TAG",
    "PLANS",
    "VARIANTS",
    "BenchRow",
    "Calibration",
    "Comparison",
    "Fitted",
    "Line",
    "Sample",
    "bench_dispatch",
    "calibrate",
    "compare_model",
    "describe_machine",
    "error_pct",
    "fit_line",
    "is_thread_count",
    "median_rate",
    "platform_tags",
    "steps",
    "summarize",
    "tag_text",
    "theil_sen",
    "thread_range",
    "write_tag",
]
