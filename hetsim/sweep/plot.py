"""A sweep's metric over its swept parameters, drawn with matplotlib (imported when drawing).

The first swept parameter is the x axis; every other combination of parameters (model, policy,
strategy, the other swept values) is one line. A sweep that varies nothing is one bar per point.
Which records to draw and how to rank them is `hetsim.sweep.results`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, SweepError, close_name, is_items
from hetsim.platform import png_path
from hetsim.report.figures import new_figure
from hetsim.sweep.results import metric_value

__all__ = ["plot_lines", "plot_sweep"]


def plot_lines(
    records: Iterable[Mapping[str, Any]], varied: Sequence[str], metric: str = "makespan_us"
) -> dict[str, list[tuple[Any, float]]]:
    """The lines a plot draws: label -> (x value, metric) pairs in x order; failed points left out.

    Raises
    ------
    SweepError
        `varied` is not a list of names, or names a parameter that no record has.

    Examples
    --------
    >>> runs = [{"index": i, "status": "ok", "params": {"model": "mlp", "bw": bw},
    ...          "result": {"makespan_us": 10.0 / bw}} for i, bw in enumerate([4, 2])]
    >>> plot_lines(runs, ["bw"])
    {'model=mlp': [(2, 5.0), (4, 2.5)]}
    >>> plot_lines(runs, ["BW"])
    Traceback (most recent call last):
    ...
    hetsim.errors.SweepError: varied[0]: expected a parameter of the records (model, bw), got \
'BW' (did you mean 'bw'?)
    """
    records = list(records)
    _check_varied(records, varied)
    lines: dict[str, list[tuple[Any, float]]] = {}
    x_key = varied[0] if varied else "model"
    for record in records:
        value = metric_value(record, metric)
        if math.isnan(value):
            continue
        params = record["params"]
        others = {k: v for k, v in params.items() if k != x_key and k in (*varied, "model")}
        others |= {k: params[k] for k in ("partition", "cuda_graph") if k in params}
        label = ", ".join(f"{k}={v}" for k, v in others.items()) or metric
        lines.setdefault(label, []).append((params[x_key], value))
    return {label: sorted(points, key=lambda p: _order(p[0])) for label, points in lines.items()}


def _check_varied(records: list[Mapping[str, Any]], varied: Sequence[str]) -> None:
    """Each name of `varied` is a parameter of `records` (one that is not raised a KeyError);
    records without one name none (the caller says there is nothing to draw)."""
    if isinstance(varied, str) or not is_items(varied):  # a str drew along its first letter
        raise SweepError([Problem("varied", "expected a list of parameter names", repr(varied))])
    known = list(dict.fromkeys(key for record in records for key in record["params"]))
    expected = f"expected a parameter of the records ({', '.join(known)})"
    problems = [
        Problem(f"varied[{i}]", expected, repr(name), close_name(name, known))
        for i, name in enumerate(varied)
        if records and name not in known
    ]
    if problems:
        raise SweepError(problems)


def _order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


def plot_sweep(
    records: Iterable[Mapping[str, Any]],
    varied: Sequence[str],
    path: str | Path,
    metric: str = "makespan_us",
) -> Path:
    """Draw `metric` over the first swept parameter (one line per other combination) to `path`
    (a PNG: `hetsim.platform.png_path`).

    Raises
    ------
    SweepError
        No point to draw (every one failed: the plot was an empty frame), a name in `varied`
        that is not a parameter of the records (`plot_lines`), or a metric value that is not a
        finite number (`metric_value`).
    HetsimError
        matplotlib is not installed, or `path` is not a file it can write: not a path, a
        suffix other than ``.png``, a directory, a missing directory (`png_path`).
    OSError
        Writing failed anyway (a read-only folder, a full disk).
    """
    out = png_path(path, "plot_sweep")
    records = list(records)
    lines = plot_lines(records, varied, metric)
    if not lines:
        got = f"none of {len(records)} (each failed)" if records else "no records"
        raise SweepError([Problem("plot", f"expected a point with a value of {metric}", got)])
    figure = new_figure("plot_sweep", 8, 5)
    axes = figure.add_subplot()
    # values that are not numbers (an ops list) go on a categorical axis: at places set here,
    # in `plot_lines`' order, as matplotlib orders categories as it first meets them (a line
    # lacking a failed middle point put that value last, and the next line zig-zagged)
    values = {repr(x): x for points in lines.values() for x, _ in points}  # lists are values
    is_categorical = any(not isinstance(x, int | float) for x in values.values())
    categories = sorted(values.values(), key=_order) if is_categorical else []
    place = {repr(v): float(i) for i, v in enumerate(categories)}
    width = 0.8 / len(lines)  # bars side by side at each model, one per label
    for number, (label, points) in enumerate(lines.items()):
        xs = [place[repr(x)] if is_categorical else x for x, _ in points]
        if varied:
            axes.plot(xs, [y for _, y in points], marker="o", label=label)
        else:  # nothing varied: the models are no axis to draw a line along
            at = [x + (number - (len(lines) - 1) / 2) * width for x in xs]
            axes.bar(at, [y for _, y in points], width=width, label=label)
    if is_categorical:
        axes.set_xticks(list(place.values()), [str(v) for v in categories])
    axes.set_xlabel(varied[0] if varied else "model")
    axes.set_ylabel(metric)
    axes.grid(alpha=0.3)
    if len(lines) > 1:
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(out, format="png", dpi=100)
    return out
