"""Comparing CUDA-graph strategies over many iterations: the driver behind ``hetsim compare``.

`compare` runs a model under each strategy for every iteration of a trace of shapes and gives a
`Comparison` (`hetsim.compare.comparison`); the trace comes from a file or a spec
(`hetsim.compare.traces`).
"""

from hetsim.compare.comparison import Comparison, StrategyRun, check_trace, compare
from hetsim.compare.traces import (
    DEFAULT_ITERATIONS,
    DEFAULT_SEQ_DIST,
    DISTRIBUTIONS,
    MAX_ITERATIONS,
    dims_trace,
    load_shapes,
)

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_SEQ_DIST",
    "DISTRIBUTIONS",
    "MAX_ITERATIONS",
    "Comparison",
    "StrategyRun",
    "check_trace",
    "compare",
    "dims_trace",
    "load_shapes",
]
