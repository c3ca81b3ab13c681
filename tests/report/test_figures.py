"""Every chart hetsim draws leaves matplotlib's backend as it was, and says what to install
without matplotlib: three of them called ``matplotlib.use("Agg")`` and pyplot, which switched a
notebook's inline backend away for the rest of its session."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hetsim.api import simulate
from hetsim.calibrate.accuracy import Comparison as Measured
from hetsim.calibrate.bench import BenchRow
from hetsim.calibrate.benchreport import plot_accuracy, plot_bench
from hetsim.compare import compare
from hetsim.errors import HetsimError
from hetsim.platform import build_platform
from hetsim.platform.render import draw
from hetsim.sweep import plot_sweep

matplotlib = pytest.importorskip("matplotlib")

ROWS = [
    BenchRow(
        tag, variant, "chain", (1, 10), (2.0, 11.0), (0.0, 0.0), per_op_us=1.0, later_us=(2.0, 11.0)
    )
    for tag in ("a", "b")
    for variant in ("vm", "graph")
]
RECORD = {"index": 0, "status": "ok", "params": {"model": "mlp"}, "result": {"makespan_us": 2.0}}

CHARTS: dict[str, Callable[[Path], Any]] = {
    "plot_bench": lambda path: plot_bench(ROWS, path),
    "plot_accuracy": lambda path: plot_accuracy([Measured("mlp", 5, 3.0, (2.0, 4.0), {})], path),
    "plot_sweep": lambda path: plot_sweep([RECORD], [], path),
    "plot": lambda path: compare("cnn", "x86-h100", ["none"], iterations=1).plot(path),
    "plot_gantt": lambda path: simulate("mlp", "x86-h100", mode="timing").plot_gantt(path),
    "draw": lambda path: draw(build_platform("x86-h100"), path),
}


@pytest.fixture
def svg_backend() -> Iterator[None]:
    """matplotlib on its svg backend (no display needed), as a notebook is on its own."""
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    yield
    matplotlib.use(before)


@pytest.mark.usefixtures("svg_backend")
@pytest.mark.parametrize("name", list(CHARTS))
def test_a_chart_leaves_the_backend_as_it_was(name: str, tmp_path: Path) -> None:
    path = CHARTS[name](tmp_path / "chart.png")
    assert Path(path).read_bytes()[:4] == b"\x89PNG"
    assert matplotlib.get_backend() == "svg"


@pytest.mark.parametrize("name", list(CHARTS))
def test_a_chart_without_matplotlib_says_what_to_install(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(HetsimError) as caught:
        CHARTS[name](tmp_path / "chart.png")
    assert str(caught.value) == f"{name}: expected matplotlib (pip install hetsim[plot]), got none"
