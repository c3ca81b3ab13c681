"""Plotting a sweep: what it refuses to draw."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hetsim.errors import SweepError
from hetsim.sweep import plot_sweep
from tests.figures import keep_figures


def _failed(index: int) -> dict[str, Any]:
    params = {"model": "mlp", "executor.kind": ["vm", "graph"][index]}
    return {"index": index, "status": "failed", "params": params, "result": None, "error": "E"}


@pytest.mark.parametrize(
    ("records", "got"),
    [([_failed(0), _failed(1)], "none of 2 (each failed)"), ([], "no records")],
)
def test_a_plot_without_a_point_to_draw_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], got: str
) -> None:
    # it wrote an empty frame
    out = tmp_path / "p.png"
    message = f"plot: expected a point with a value of makespan_us, got {got}"
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        plot_sweep(records, ["executor.kind"], out)
    assert not out.exists()


DRAWN = [
    {"index": i, "status": "ok", "params": {"model": "mlp", "executor.dispatch_us": us},
     "result": {"makespan_us": 10.0 * us}}
    for i, us in enumerate([0.2, 0.3])
]  # fmt: skip


@pytest.mark.parametrize(
    ("varied", "message"),
    [
        (
            ["nope"],
            "varied[0]: expected a parameter of the records (model, executor.dispatch_us), "
            "got 'nope'",
        ),
        (
            ["executor.dispatch_us", "executor.dispatch"],
            "varied[1]: expected a parameter of the records (model, executor.dispatch_us), "
            "got 'executor.dispatch' (did you mean 'executor.dispatch_us'?)",
        ),
        (
            "executor.dispatch_us",
            "varied: expected a list of parameter names, got 'executor.dispatch_us'",
        ),
    ],
)
def test_a_varied_name_the_records_lack_is_named_with_those_they_have(
    tmp_path: Path, varied: Any, message: str
) -> None:
    # a bare KeyError('nope'); a second unknown name was ignored; a str drew along its "e"
    out = tmp_path / "p.png"
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        plot_sweep(DRAWN, varied, out)
    assert not out.exists()


def test_one_point_is_drawn(tmp_path: Path) -> None:
    record = {
        "index": 0,
        "status": "ok",
        "params": {"model": "mlp"},
        "result": {"makespan_us": 2.0},
    }
    assert plot_sweep([record], [], tmp_path / "p.png").stat().st_size > 0


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures `plot_sweep` draws, kept to be read."""
    import hetsim.sweep.plot as plot

    return keep_figures(monkeypatch, plot)


def test_values_that_are_not_numbers_keep_one_order_on_the_axis(
    tmp_path: Path, figures: list[Any]
) -> None:
    # matplotlib orders categories as it meets them: mlp's line, lacking its failed middle
    # point, put ['Relu'] before ['Gemm', 'Relu'], and cnn's line zig-zagged over them
    ops = [["*"], ["Gemm", "Relu"], ["Relu"]]
    records = [
        {"index": i, "status": "ok" if (model, i % 3) != ("mlp", 1) else "failed",
         "params": {"model": model, "ops": ops[i % 3]}, "result": {"makespan_us": float(i)}}
        for i, model in enumerate(["mlp"] * 3 + ["cnn"] * 3)
    ]  # fmt: skip
    plot_sweep(records, ["ops"], tmp_path / "p.png")
    (axes,) = figures[0].axes
    assert [t.get_text() for t in axes.get_xticklabels()] == [str(v) for v in ops]
    lines = {line.get_label(): list(line.get_xdata()) for line in axes.get_lines()}
    assert lines == {"model=mlp": [0.0, 2.0], "model=cnn": [0.0, 1.0, 2.0]}


def test_a_sweep_that_varies_nothing_is_drawn_as_bars(tmp_path: Path, figures: list[Any]) -> None:
    # the module says one bar per point: a line joined the models instead
    records = [
        {"index": i, "status": "ok", "params": {"model": model, "cuda_graph": graph},
         "result": {"makespan_us": float(i + 1)}}
        for i, (model, graph) in enumerate(
            [("mlp", "none"), ("mlp", "regions"), ("cnn", "none"), ("cnn", "regions")]
        )
    ]  # fmt: skip
    plot_sweep(records, [], tmp_path / "p.png")
    (axes,) = figures[0].axes
    assert axes.get_lines() == []
    assert [t.get_text() for t in axes.get_xticklabels()] == ["cnn", "mlp"]
    bars = sorted((p.get_x() + p.get_width() / 2, p.get_height()) for p in axes.patches)
    # none then regions at each model (cnn at 0, mlp at 1), 0.4 wide, side by side
    assert bars == [(-0.2, 3.0), (0.2, 4.0), (0.8, 1.0), (1.2, 2.0)]
