"""Predicted against measured: simulated latency on a target next to `hetsim.execute`'s wall time.

Owns one comparison per model (`compare_model`) and the summary over many (`summarize`): the
simulated makespan (timing mode) on a target, the median wall time of several eager runs of the
same graph on the same inputs on this machine, and the error in percent. Run on the ``local``
target that `hetsim calibrate` writes, it says whether the calibrated model can be trusted.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hetsim.api import make_inputs, simulate
from hetsim.calibrate.probe import time_us
from hetsim.errors import HetsimError, is_count
from hetsim.kernels import compile_program
from hetsim.models import load_model, naming_model_file

__all__ = [
    "DIMS",
    "SAMPLE_US",
    "WARMUP_US",
    "Comparison",
    "compare_model",
    "error_pct",
    "pool",
    "summarize",
]

DIMS: dict[str, int] = {"seq": 64}
"""Sizes of symbolic dims for models that have them (the zoo transformer's ``seq``)."""


def error_pct(predicted: float, measured: float) -> float:
    """Signed error of a prediction in percent of the measurement.

    >>> error_pct(110.0, 100.0), error_pct(75.0, 100.0)
    (10.0, -25.0)
    >>> error_pct(1.0, 0.0)
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: error_pct: expected a positive measured time, got 0.0
    """
    if not measured > 0:  # NaN too
        raise HetsimError(f"error_pct: expected a positive measured time, got {measured!r}")
    return (predicted - measured) / measured * 100.0


@dataclass(frozen=True, slots=True)
class Comparison:
    """One model: simulated latency, measured wall-time samples (µs), and the error."""

    model: str
    ops: int
    predicted_us: float
    measured_us: tuple[float, ...]
    breakdown_us: Mapping[str, float]

    @property
    def median_us(self) -> float:
        """The median of the measured samples."""
        return float(statistics.median(self.measured_us))

    @property
    def error_pct(self) -> float:
        """Signed error of the prediction against the median measurement, in percent."""
        return error_pct(self.predicted_us, self.median_us)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, raw samples included."""
        return {
            "model": self.model,
            "ops": self.ops,
            "predicted_us": self.predicted_us,
            "measured_median_us": self.median_us,
            "measured_us": list(self.measured_us),
            "error_pct": self.error_pct,
            "breakdown_us": dict(self.breakdown_us),
        }


WARMUP_US = 50_000.0
"""Eager runs before timing go on for this long (at least one run): first-touch allocations,
BLAS start-up, and the caches and predictors that loading and simulating the model disturbed."""
SAMPLE_US = 10_000.0
"""A timed sample is the mean of as many consecutive runs as fit in this (at least one)."""


@naming_model_file
def compare_model(
    model: Any, target: Any, *, repeats: int = 5, seed: int = 0, fused: bool = False
) -> Comparison:
    """Simulate `model` on `target` and time `repeats` samples of its eager run here.

    The measurement is the steady state the simulation models: runs first go on for
    `WARMUP_US`, then each sample is the mean of consecutive runs lasting `SAMPLE_US` (one run
    of a model slower than that), so a model of a few µs is not timed cold, once.

    Parameters
    ----------
    model
        A zoo name, an .onnx path or a `Graph` (`hetsim.models.load_model`).
    target
        What `hetsim.simulate` takes; the calibrated ``local`` tag to check this machine.
    repeats
        Timed samples; their median is compared.
    seed
        Seed of the inputs (`hetsim.api.make_inputs`), the same for both runs.
    fused
        Time `hetsim.execute`'s default run (BatchNormalizations and per-channel Mul/Add folded
        into Convs) instead of the op-by-op run. The simulator runs every op as the graph states
        it, so the op-by-op run (the default here) is the like-for-like measurement; the fused
        one shows what a runtime that fuses would take.
    """
    if not is_count(repeats, 1):  # 0 divided by zero, -1 gave no samples, 1.5 a TypeError
        raise HetsimError(f"compare_model: expected repeats an integer >= 1, got {repeats!r}")
    graph = load_model(model)
    dims = {k: v for k, v in DIMS.items() if k in graph.symbols}
    inputs = make_inputs(graph, seed, dims)
    result = simulate(graph, target, inputs=inputs, mode="timing", dims=dims, trace=False)
    program = compile_program(graph, fuse_ops=fused)
    start = time.perf_counter()
    program.run(inputs)
    while (time.perf_counter() - start) * 1e6 < WARMUP_US:
        program.run(inputs)
    samples = time_us(lambda: program.run(inputs), repeats=repeats, budget_us=SAMPLE_US * repeats)
    name = model if isinstance(model, str) else graph.name
    return Comparison(
        name, len(graph.ops), result.makespan_us, tuple(samples), dict(result.breakdown_us)
    )


def summarize(comparisons: list[Comparison]) -> dict[str, float]:
    """Median and largest absolute error (percent) over `comparisons`.

    >>> c = [Comparison("a", 1, 110.0, (100.0,), {}), Comparison("b", 1, 70.0, (100.0,), {})]
    >>> summarize(c)
    {'median_abs_error_pct': 20.0, 'max_abs_error_pct': 30.0}
    """
    errors = [abs(c.error_pct) for c in comparisons]
    if not errors:
        raise HetsimError("summarize: expected one or more comparisons, got none")
    return {
        "median_abs_error_pct": float(statistics.median(errors)),
        "max_abs_error_pct": float(max(errors)),
    }


def pool(rounds: list[list[Comparison]]) -> list[Comparison]:
    """One comparison per model over several rounds (each its own calibration and timing).

    The prediction is the median of the rounds' predictions and the measurement pools every
    round's samples, so a round whose calibration and timed runs met different loads on a
    shared machine weighs no more than any other. Rounds are matched by model name (not by
    position: rounds of the same models in another order mixed them), in the first round's order.

    Raises
    ------
    HetsimError
        A round that names a model twice, or compares other models than the first round.

    Examples
    --------
    >>> a = [Comparison("mlp", 5, 10.0, (9.0,), {}), Comparison("cnn", 12, 50.0, (40.0,), {})]
    >>> b = [Comparison("cnn", 12, 70.0, (80.0,), {}), Comparison("mlp", 5, 14.0, (11.0, 12.0), {})]
    >>> [(c.model, c.predicted_us, c.measured_us) for c in pool([a, b])]
    [('mlp', 12.0, (9.0, 11.0, 12.0)), ('cnn', 60.0, (40.0, 80.0))]
    >>> pool([a, b[:1]])
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: pool: expected rounds[1] to compare the models of rounds[0] \
(mlp, cnn), got cnn
    """
    by_model = [_by_model(comparisons, index) for index, comparisons in enumerate(rounds)]
    order = list(by_model[0]) if by_model else []
    for index, models in enumerate(by_model):
        if set(models) != set(order):
            expected = f"expected rounds[{index}] to compare the models of rounds[0]"
            raise HetsimError(
                f"pool: {expected} ({', '.join(order)}), got {', '.join(models) or 'none'}"
            )
    pooled = []
    for model in order:
        same = [models[model] for models in by_model]
        first = same[0]
        samples = tuple(us for c in same for us in c.measured_us)
        predicted = float(statistics.median(c.predicted_us for c in same))
        pooled.append(Comparison(first.model, first.ops, predicted, samples, first.breakdown_us))
    return pooled


def _by_model(comparisons: list[Comparison], index: int) -> dict[str, Comparison]:
    """Round `index`'s comparisons by model name, in its order; each model once."""
    found: dict[str, Comparison] = {}
    for comparison in comparisons:
        if comparison.model in found:
            raise HetsimError(
                f"pool: expected each model once in rounds[{index}], got {comparison.model!r} twice"
            )
        found[comparison.model] = comparison
    return found
