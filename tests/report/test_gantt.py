"""The Gantt PNG: written, sized by its rows, colored by category, and matplotlib optional."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import HetsimError
from hetsim.ir import GraphBuilder
from hetsim.report import Result, plot_gantt
from hetsim.report.gantt import (
    BOTTOM_IN,
    CATEGORY_COLORS,
    DPI,
    LEGEND_WIDTH_IN,
    PLOT_WIDTH_IN,
    TOP_IN,
)
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
    # the link): 1.5 + 0.4 * 6 inches high, at 100 dpi; its labels, a 7-inch time axis and the
    # legend wide.
    height, width, _ = image.shape
    assert height == 390
    assert (PLOT_WIDTH_IN + LEGEND_WIDTH_IN) * DPI < width < 1300


def _white(pixels: np.ndarray) -> np.ndarray:
    return np.all(pixels[..., :3] > 0.99, axis=-1)


def test_long_row_labels_widen_the_chart_and_are_not_cut(tmp_path: Path) -> None:
    # a 10-inch figure fitted by tight_layout cut them short on the left (and warned)
    from matplotlib.image import imread

    long = "riscv_coprocessor_complex_npu_subsystem_cluster0_primary_accel"
    target = {"kind": "hetero", "devices": [{"kind": "hetero", "name": long, "devices": ["npu"]}]}
    result = simulate("cnn", target, mode="timing")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = result.plot_gantt(tmp_path / "long.png")
    image = imread(path)
    assert image.shape[1] > 1300  # wider than the 10 inches it had
    assert _white(image[:, :3]).all()  # the longest label ends inside the picture


def test_spans_narrower_than_a_pixel_are_drawn_where_they_are(tmp_path: Path) -> None:
    # 3000 kernels of about 1 us on gpu0, evenly spread over 14 ms (0.7 px each): snapped to
    # whole pixels, they were drawn as a few solid blocks with long gaps between them
    from matplotlib.image import imread

    builder = GraphBuilder("chain")
    tensor = builder.input("x", (1, 256))
    for i in range(3000):
        tensor = builder.op("Relu" if i % 2 else "Sigmoid", tensor)
    result = simulate(builder.build(tensor), "x86-h100", mode="timing")
    image = imread(result.plot_gantt(tmp_path / "chain.png"))
    rows = 3  # host exec, gpu0 stream0, the link
    height, width, _ = image.shape
    top, bottom = TOP_IN * DPI, height - BOTTOM_IN * DPI
    gpu_row = round(top + (1.5 / rows) * (bottom - top))
    right = width - LEGEND_WIDTH_IN * DPI
    lane = image[gpu_row, int(right - PLOT_WIDTH_IN * DPI) + 5 : int(right) - 5]
    assert not _white(lane).any()


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
    assert imread(path).shape[0] == 350  # 4 processors and 1 link: 1.5 + 0.4 * 5 inches


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
