"""hetsim.sweep: design-space sweeps of `hetsim.simulate` on Dask distributed.

`spec` reads and checks a sweep file, `points` expands it to points (one target and model
each), `runner` runs the points (a local cluster, a scheduler by address, or this process) and
`results` reads, writes and ranks results files; `plot` draws a metric over the swept
parameters. The ``hetsim sweep`` command is `hetsim.cli.sweep`; the file format is in
``docs/sweeps.md``.
"""

from __future__ import annotations

from hetsim.sweep.loaded import MODELS_KEPT, clear_models, point_model
from hetsim.sweep.plot import plot_sweep
from hetsim.sweep.points import (
    EXPANDERS,
    OPTION_NAMES,
    Axis,
    Point,
    SweepSpec,
    override_tree,
    parse_path,
)
from hetsim.sweep.results import (
    FORMAT,
    METRICS,
    ResultsLog,
    best_points,
    is_tie,
    metric_value,
    no_effect,
    read_results,
)
from hetsim.sweep.runner import (
    CLUSTER_CONFIG,
    MAX_BATCH,
    RETRIES,
    TASKS_PER_WORKER,
    SweepProgress,
    batch_size,
    execute_batch,
    execute_point,
    execute_points,
    local_cluster,
    run_sweep,
    simulate_point,
)
from hetsim.sweep.spec import KEYS, METRIC_ROOTS, load_sweep, parse_sweep

__all__ = [
    "CLUSTER_CONFIG",
    "EXPANDERS",
    "FORMAT",
    "KEYS",
    "MAX_BATCH",
    "METRICS",
    "METRIC_ROOTS",
    "MODELS_KEPT",
    "OPTION_NAMES",
    "RETRIES",
    "TASKS_PER_WORKER",
    "Axis",
    "Point",
    "ResultsLog",
    "SweepProgress",
    "SweepSpec",
    "batch_size",
    "best_points",
    "clear_models",
    "execute_batch",
    "execute_point",
    "execute_points",
    "is_tie",
    "load_sweep",
    "local_cluster",
    "metric_value",
    "no_effect",
    "override_tree",
    "parse_path",
    "parse_sweep",
    "plot_sweep",
    "point_model",
    "read_results",
    "run_sweep",
    "simulate_point",
]
