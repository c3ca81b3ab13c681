"""Plotting a sweep: what it refuses to draw."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hetsim.errors import SweepError
from hetsim.sweep import plot_sweep


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


def test_one_point_is_drawn(tmp_path: Path) -> None:
    record = {
        "index": 0,
        "status": "ok",
        "params": {"model": "mlp"},
        "result": {"makespan_us": 2.0},
    }
    assert plot_sweep([record], [], tmp_path / "p.png").stat().st_size > 0
