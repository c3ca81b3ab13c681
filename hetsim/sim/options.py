"""`SimOptions`: the options of one simulated run, checked once and frozen.

`hetsim.simulate` builds them from its keyword arguments; a sweep builds one per point. Only
`hetsim.cli` reads the environment; nothing here does.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from hetsim.errors import Problem, SimulationError, as_bool
from hetsim.ir import check_dims
from hetsim.runtime.cuda_graph import (
    DEFAULT_BUCKETS,
    STRATEGIES,
    check_buckets,
    strategy_problem,
)

__all__ = ["MODES", "SimOptions"]

MODES = ("functional", "timing")
"""``functional``: numpy computes every value; ``timing``: shapes only. Times are identical."""


@dataclass(frozen=True, slots=True)
class SimOptions:
    """How to run one simulation.

    Parameters
    ----------
    mode
        One of `MODES`.
    dims
        Sizes of symbolic dims (``{"seq": 128}``), each an integer >= 0
        (`hetsim.ir.check_dims`); the rest come from the input arrays.
    trace
        Keep every span (traces, Gantt charts, the breakdown); ``False`` keeps busy totals per
        resource and category only (``RunRecord.extra["busy_us"]``), for large sweeps.
    cuda_graph
        CUDA-graph strategy, one of `hetsim.runtime.cuda_graph.STRATEGIES` (docs/cuda-graphs.md).
    buckets
        Bucket sizes the ``buckets`` strategy pads symbolic dims up to (positive, increasing).
    fuse
        Functional mode: compute values with `hetsim.execute`'s fused kernels (BatchNormalization
        folded into Convs, Relus in place; `hetsim.sim.fusion`), so the outputs equal
        ``execute(graph, inputs)``; ``False``: every op as the graph states it, as
        ``execute(graph, inputs, fuse=False)``. Simulated times are the same either way.

    Examples
    --------
    >>> SimOptions.of(mode="timing", dims={"seq": 8})
    SimOptions(mode='timing', dims=mappingproxy({'seq': 8}), trace=True, cuda_graph='none')
    >>> SimOptions.of(trace_spans=False)
    Traceback (most recent call last):
    ...
    hetsim.errors.SimulationError: simulate: unknown option 'trace_spans' (did you mean 'trace'?)
    """

    mode: str = "functional"
    dims: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    trace: bool = True
    cuda_graph: str = "none"
    buckets: tuple[int, ...] = field(default=DEFAULT_BUCKETS, repr=False)
    fuse: bool = field(default=True, repr=False)

    @property
    def is_functional(self) -> bool:
        """Whether numpy computes values."""
        return self.mode == "functional"

    @classmethod
    def of(cls, **options: Any) -> SimOptions:
        """Check keyword options and freeze them.

        Raises
        ------
        SimulationError
            An unknown option (with the closest name), a mode not in `MODES`, a strategy not in
            `STRATEGIES`, bad buckets, or a `trace` or `fuse` that is not a bool.
        ModelError
            `dims` that are not a mapping of names to integers >= 0 (`hetsim.ir.check_dims`).
        """
        names = [f.name for f in fields(cls)]
        for name in options:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                problem = Problem(
                    "simulate", f"unknown option {name!r}", hint=close[0] if close else None
                )
                raise SimulationError(problem.message)
        mode = options.get("mode", "functional")
        if not isinstance(mode, str) or mode not in MODES:
            raise SimulationError(
                Problem("simulate", "expected mode 'functional' or 'timing'", repr(mode)).message
            )
        dims = check_dims(options.get("dims"))
        cuda_graph = options.get("cuda_graph", "none")
        if not isinstance(cuda_graph, str) or cuda_graph not in STRATEGIES:  # a list: unhashable
            raise SimulationError(strategy_problem(cuda_graph).message)
        buckets = check_buckets(options.get("buckets", DEFAULT_BUCKETS))
        trace = _flag("trace", options.get("trace", True))
        fuse = _flag("fuse", options.get("fuse", True))
        return cls(
            mode=mode, dims=dims, trace=trace, cuda_graph=cuda_graph, buckets=buckets, fuse=fuse
        )


def _flag(name: str, value: object) -> bool:
    """Option `name`'s `value`, True or False (numpy's bool as Python's, as numpy integers are
    taken for ints); anything else is refused: "no" would read as True."""
    value = as_bool(value)
    if not isinstance(value, bool):
        expected = f"expected {name} True or False"
        raise SimulationError(Problem("simulate", expected, repr(value)).message)
    return value
