"""The Gantt PNG: written, sized by its rows, colored by category, and matplotlib optional."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.report import Result, plot_gantt
from hetsim.report.gantt import CATEGORY_COLORS
from tests.report.scenarios import two_level_record

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    from matplotlib.image import imread

    path = tmp_path_factory.mktemp("gantt") / "run.png"
    assert Result.from_record(two_level_record()).plot_gantt(path) == path
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    return imread(path)


def _colors(image: np.ndarray) -> set[str]:
    rgb = np.round(image[..., :3] * 255).astype(np.int64).reshape(-1, 3)
    packed = np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2])
    return {f"#{int(value):06x}" for value in packed}


def test_gantt_is_a_png_sized_by_its_rows(image: np.ndarray) -> None:
    # Six rows (host exec, gpu0 stream0 and stream1, vdevice0/host exec, vdevice0/npu stream0,
    # the link): 1.5 + 0.4 * 6 inches high, 10 inches wide, at 100 dpi.
    assert image.shape == (390, 1000, 4)


def test_gantt_fills_bars_with_the_color_of_each_present_category(image: np.ndarray) -> None:
    colors = _colors(image)
    for category in ("dispatch", "launch", "compute", "transfer", "sync_wait", "invoke"):
        assert CATEGORY_COLORS[category] in colors, category
    assert CATEGORY_COLORS["capture"] not in colors


def test_gantt_of_an_empty_run_keeps_a_row_per_resource(tmp_path: Path) -> None:
    from matplotlib.image import imread

    record = two_level_record(makespan_us=0.0, spans=(), link_bytes={})
    path = plot_gantt(record, tmp_path / "empty.png")
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert imread(path).shape == (350, 1000, 4)  # 4 processors and 1 link: 1.5 + 0.4 * 5 inches


def test_gantt_without_matplotlib_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(
        HetsimError,
        match=r"^plot_gantt: expected matplotlib \(pip install hetsim\[plot\]\), got none$",
    ):
        plot_gantt(two_level_record(), tmp_path / "x.png")


@pytest.mark.parametrize("name", ["gantt.jpg", "gantt.svg"])
def test_gantt_goes_to_a_png_path_only(tmp_path: Path, name: str) -> None:
    # it wrote PNG bytes under any name; a path without a suffix is written as given
    with pytest.raises(HetsimError) as caught:
        plot_gantt(two_level_record(), tmp_path / name)
    assert str(caught.value) == (
        f"plot_gantt: expected a .png path (or none), got {str(tmp_path / name)!r}"
    )
    assert not (tmp_path / name).exists()
    assert plot_gantt(two_level_record(), tmp_path / "GANTT.PNG").exists()
    assert plot_gantt(two_level_record(), tmp_path / "gantt").exists()
