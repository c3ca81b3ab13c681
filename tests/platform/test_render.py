"""render_tree and draw: the text tree, exactly, and a PNG that opens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetsim.errors import HetsimError
from hetsim.platform import build_platform, draw, render_tree
from tests.platform.fakes import deep, seed_soc

SEED_TREE = """\
seed-soc  executor=vm runtime=cpp
├── host  [host] arm: 4 cores × 1.5 GHz × 8 flop/cycle; memory host.mem (4.0 GiB, 10.0 GB/s)
└── vdevice0  [level] executor=graph runtime=crt control_latency=5.0 us
    ├── vdevice0/host  [coprocessor] riscv: 4 cores × 1.0 GHz × 2 flop/cycle; \
memory vdevice0/host.mem (1.0 GiB, 8.0 GB/s)
    │       link host.mem--vdevice0/host.mem: 8.0 GB/s, 2.0 us
    └── vdevice0/npu  [accelerator] accel: 1 core × 1.0 GHz × 2000 flop/cycle; \
shares vdevice0/host.mem"""


def test_render_tree_shows_levels_roles_memories_and_links() -> None:
    assert render_tree(build_platform(seed_soc())) == SEED_TREE


def test_render_tree_names_every_processor_and_link_once() -> None:
    platform = build_platform(deep())
    text = render_tree(platform)
    for name in [*platform.processors, *platform.links]:
        assert text.count(f" {name}  [" if name in platform.processors else f"link {name}:") == 1


def test_draw_writes_a_png(tmp_path: Path) -> None:
    out = draw(build_platform(deep()), tmp_path / "deep.png")
    assert out == tmp_path / "deep.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (None, "draw: expected a path (a str or an os.PathLike), got None"),
        ("plan.svg", "draw: expected a .png path (or none), got 'plan.svg'"),
    ],
)
def test_draw_names_a_path_it_cannot_write(path: object, message: str) -> None:
    # None raised TypeError: expected str, bytes or os.PathLike object, not NoneType
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        draw(build_platform(deep()), path)  # type: ignore[arg-type]


def test_draw_names_a_missing_directory_before_drawing(tmp_path: Path) -> None:
    # it raised FileNotFoundError from matplotlib, after drawing
    path = tmp_path / "missing" / "deep.png"
    message = (
        f"draw: expected a file in an existing directory, got {str(path)!r} "
        f"(no directory {str(path.parent)!r})"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        draw(build_platform(deep()), path)


def test_draw_takes_a_platform_only(tmp_path: Path) -> None:
    message = (
        "draw: expected platform a Platform (hetsim.platform.build_platform gives one), got str"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        draw("x86-h100", tmp_path / "p.png")  # type: ignore[arg-type]
