"""A Gantt chart of a run as a PNG: one row per processor or link stream, colored by category.

Owns the picture only; rows come from `hetsim.report.lanes`. matplotlib is optional, so it is
imported when a chart is drawn, and only its object API is used (a `Figure` with the Agg canvas),
never `pyplot`, so drawing changes no global backend or state.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hetsim.report.arguments import check_record, output_path
from hetsim.report.figures import new_figure
from hetsim.report.lanes import check_traced, lanes
from hetsim.sim.records import CATEGORIES, RunRecord, Span

__all__ = ["CATEGORY_COLORS", "plot_gantt"]

CATEGORY_COLORS: Mapping[str, str] = MappingProxyType(
    dict(
        zip(
            CATEGORIES,
            ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"),
            strict=True,
        )
    )
)
"""The fill color of each span category (matplotlib's tab10 palette)."""

OTHER_COLOR = "#7f7f7f"
ROW_HEIGHT_IN = 0.4
DPI = 100
PLOT_WIDTH_IN = 7.0
"""The width of the time axis; the figure adds the widths of the row labels and the legend."""
LEGEND_WIDTH_IN = 1.3
LABEL_PAD_IN = 0.2
TOP_IN, BOTTOM_IN = 0.5, 0.6
"""Room above the plot (the title) and below it (the time axis and its label)."""


def _rows(record: RunRecord) -> list[tuple[str, list[Span]]]:
    rows: dict[tuple[str, str], list[Span]] = {}
    for resource, streams in lanes(record).items():
        for stream in streams or ("",):  # an idle resource still gets its (empty) row
            rows[resource, stream] = []
    for span in record.spans:
        rows[span.resource, span.stream].append(span)
    return [(f"{resource} {stream}".strip(), spans) for (resource, stream), spans in rows.items()]


def _fit_labels(figure: Any, axes: Any, height: float) -> None:
    """Widen `figure` to hold its row labels, as rendered, left of a time axis `PLOT_WIDTH_IN`
    wide (tight_layout in a figure of a fixed width cut long labels short, and warned)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()  # type: ignore[no-untyped-call]
    widths = [label.get_window_extent(renderer).width for label in axes.get_yticklabels()]
    labels_in = LABEL_PAD_IN + max(widths, default=0.0) / DPI
    width = labels_in + PLOT_WIDTH_IN + LEGEND_WIDTH_IN
    figure.set_size_inches(width, height)
    figure.subplots_adjust(
        left=labels_in / width,
        right=1 - LEGEND_WIDTH_IN / width,
        bottom=BOTTOM_IN / height,
        top=1 - TOP_IN / height,
    )


def plot_gantt(record: RunRecord, path: str | Path) -> Path:
    """Draw `record` as a timeline PNG at `path` (ending in ``.png``) and return the path.

    Rows run top to bottom in platform order; each span is a bar from its start to its end, filled
    with its category's color; the legend names the categories present.

    Raises
    ------
    HetsimError
        When matplotlib is not installed, `record` is neither a `RunRecord` nor a `Result`, or
        `path` is not a file it can write: not a path, a suffix other than ``.png``, a
        directory, a missing directory (`hetsim.report.arguments.output_path`).
    SimulationError
        The run kept no spans (``simulate(..., trace=False)``).
    OSError
        Writing failed anyway (a read-only folder, a full disk).
    """
    record = check_record(record, "plot_gantt")
    check_traced(record, "plot_gantt")
    out = output_path(path, "plot_gantt", ".png")
    rows = _rows(record)
    height = TOP_IN + BOTTOM_IN + 0.4 + ROW_HEIGHT_IN * max(len(rows), 1)
    figure = new_figure("plot_gantt", PLOT_WIDTH_IN + LEGEND_WIDTH_IN, height, DPI)
    from matplotlib.patches import Patch  # installed: new_figure found matplotlib

    axes = figure.add_subplot()
    present: dict[str, None] = {}
    for index, (_, spans) in enumerate(rows):
        for category in dict.fromkeys(s.category for s in spans):
            bars = [(s.start_us, s.duration_us) for s in spans if s.category == category]
            color = CATEGORY_COLORS.get(category, OTHER_COLOR)
            # not snapped to whole pixels: bars narrower than one were drawn as a few solid
            # blocks with long gaps between them, idle stretches the run never had
            axes.broken_barh(
                bars, (index - 0.4, 0.8), facecolors=color, edgecolor="none", snap=False
            )
            present[category] = None
    axes.set_yticks(range(len(rows)), [label for label, _ in rows])
    _fit_labels(figure, axes, height)
    axes.set_ylim(max(len(rows), 1) - 0.5, -0.5)
    axes.set_xlim(0, max(record.makespan_us, 1e-9))
    axes.set_xlabel("simulated time (µs)")
    axes.set_title(f"makespan {record.makespan_us:,.3f} µs")  # as the run's table shows it
    ordered = [c for c in CATEGORIES if c in present] + sorted(set(present) - set(CATEGORIES))
    handles = [Patch(color=CATEGORY_COLORS.get(c, OTHER_COLOR), label=c) for c in ordered]
    if handles:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    figure.savefig(out, format="png")
    return out
