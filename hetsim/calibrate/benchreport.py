"""Text tables and log-log plots of the dispatch benchmark and the accuracy comparison.

Owns how `BenchRow`s and `Comparison`s are shown: a plain-text table each (what the commands and
benchmark scripts print) and a PNG each (matplotlib, imported when a plot is asked for).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hetsim.calibrate.accuracy import Comparison, summarize
from hetsim.calibrate.bench import BenchRow
from hetsim.platform import png_path
from hetsim.report.figures import new_figure

__all__ = ["accuracy_table", "bench_table", "plot_accuracy", "plot_bench"]


def _table(
    rows: Sequence[Sequence[str]], text_columns: int, notes: dict[int, str] | None = None
) -> str:
    """Columns padded to their widest cell (the first `text_columns` left, the rest right); a
    note replaces a row's cells after the text columns."""
    notes = notes or {}
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [
            cell.ljust(w) if i < text_columns or index == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        if index in notes:
            cells = [*cells[:text_columns], notes[index]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


BENCH_HEADER = (
    "tag",
    "level",
    "shape",
    "per-op us",
    "fixed us",
    "capture/op us",
    "runs on",
    "typical op us",
    "dominates below",
)


def bench_table(rows: Sequence[BenchRow]) -> str:
    """One line per tag × level × shape: per-op and fixed cost, and the crossover (in elements
    of the graphs' dtype: float32 unless the device computes in another, then named; "never"
    where even a one-element op outlasts the overhead).

    >>> print(bench_table([BenchRow("soc", "vm", "chain", (1, 2), (3.0, 5.0), (0.0, 0.0), 2.0,
    ...     0.0, 1.0, "npu", 1.5, 700), BenchRow("soc", "vm", "fanout", note="n/a"),
    ...     BenchRow("soc", "graph", "chain", (1, 2), (3.0, 3.5), (0.0, 0.0), 0.5, 0.0, 2.5,
    ...     "npu", 1.5, 0)]))
    tag  level  shape   per-op us  fixed us  capture/op us  runs on  typical op us  dominates below
    soc  vm     chain           2         1              0      npu            1.5     700 elements
    soc  vm     fanout  n/a
    soc  graph  chain         0.5       2.5              0      npu            1.5            never
    """
    lines: list[tuple[str, ...]] = [BENCH_HEADER]
    notes = {}
    for r in rows:
        if not r.is_available:
            notes[len(lines)] = r.note
            lines.append((r.tag, r.variant, r.shape, *[""] * (len(BENCH_HEADER) - 3)))
            continue
        lines.append(
            (
                r.tag,
                r.variant,
                r.shape,
                _num(r.per_op_us),
                _num(r.fixed_us),
                _num(r.capture_per_op_us),
                r.processor,
                _num(r.typical_kernel_us),
                _crossover(r),
            )
        )
    return _table(lines, 3, notes)


def _crossover(row: BenchRow) -> str:
    """The "dominates below" cell: "never" for a crossover of 0 (`crossover_elements`)."""
    if row.crossover_elements == 0:
        return "never"
    dtype = "" if row.dtype == "float32" else f" ({row.dtype})"
    return f"{row.crossover_elements} elements{dtype}"


def accuracy_table(comparisons: Sequence[Comparison]) -> str:
    """One line per model: ops, predicted and measured µs, error; then the summary.

    >>> print(accuracy_table([Comparison("mlp", 5, 11.0, (10.0, 9.0, 12.0), {})]))
    model  ops  predicted us  measured us  error %
    mlp      5            11           10     10.0
    median |error| 10.0%, max |error| 10.0%
    """
    lines = [("model", "ops", "predicted us", "measured us", "error %")]
    for c in comparisons:
        lines.append(
            (
                c.model,
                str(c.ops),
                _num(c.predicted_us, 4),
                _num(c.median_us, 4),
                f"{c.error_pct:.1f}",
            )
        )
    summary = summarize(list(comparisons))
    return (
        _table(lines, 1) + f"\nmedian |error| {summary['median_abs_error_pct']:.1f}%, "
        f"max |error| {summary['max_abs_error_pct']:.1f}%"
    )


def plot_bench(rows: Sequence[BenchRow], path: str | Path) -> Path:
    """Log-log makespan over op count, one line per tag × level (chain shape); a PNG.

    Each line is what the table's per-op and fixed costs are fitted to (`BenchRow.later_us`): a
    CUDA graph's replay, not its first run less the capture, which still pays the host's
    dispatch of every instruction.
    """
    out = png_path(path, "plot_bench")
    fig = new_figure("plot_bench", 9, 6)
    ax = fig.add_subplot()
    chains = [r for r in rows if r.is_available and r.shape == "chain"]
    # a color per tag, a line and marker per variant: 17 lines shared the 10 default colors, so
    # that two tags' lines looked alike
    colors = {tag: f"C{i % 10}" for i, tag in enumerate(dict.fromkeys(r.tag for r in chains))}
    variants = list(dict.fromkeys(r.variant for r in chains))
    for r in chains:
        style = _STYLES[variants.index(r.variant) % len(_STYLES)]
        later = r.later_us or r.makespan_us  # a row made without its later runs: its first
        ax.loglog(r.ops, later, style, color=colors[r.tag], label=f"{r.tag} {r.variant}")
    ax.set_xlabel("ops in the chain")
    ax.set_ylabel("simulated makespan of a later run (us; a CUDA graph replays)")
    ax.set_title("Dispatch overhead: chains of tiny kernels")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=120)
    return out


_STYLES = ("o-", "s--", "^:", "D-.", "v-")
"""The line and marker of each dispatch variant in `plot_bench`."""


def plot_accuracy(comparisons: Sequence[Comparison], path: str | Path) -> Path:
    """Predicted against measured latency, log-log, with the ±25% band; a PNG."""
    out = png_path(path, "plot_accuracy")
    fig = new_figure("plot_accuracy", 7, 7)
    ax = fig.add_subplot()
    measured = [c.median_us for c in comparisons]
    predicted = [c.predicted_us for c in comparisons]
    ax.loglog(measured, predicted, "o")
    for c in comparisons:
        ax.annotate(c.model, (c.median_us, c.predicted_us), fontsize="small")
    low, high = min(measured + predicted) / 2, max(measured + predicted) * 2
    ax.plot([low, high], [low, high], "k-", lw=0.8)
    for factor in (0.75, 1.25):
        ax.plot([low, high], [low * factor, high * factor], "k:", lw=0.8)
    ax.set_xlabel("measured hetsim.execute wall time (us, median)")
    ax.set_ylabel("simulated latency on 'local' (us)")
    ax.set_title("hetsim predictions against this machine (dotted: ±25%)")
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=120)
    return out
