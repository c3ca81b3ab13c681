"""Pictures of a `Platform`: a text tree for the terminal and a PNG drawing (matplotlib).

This module only reads a platform; `hetsim platform show` (in `hetsim.cli`) prints and saves them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hetsim.errors import HetsimError
from hetsim.located.paths import output_path
from hetsim.platform.elements import Level, Link, Processor
from hetsim.platform.graph import Platform, check_platform
from hetsim.units import counted, format_bytes

__all__ = ["draw", "png_path", "render_tree"]

ROLE_COLORS = {"host": "#4c78a8", "coprocessor": "#72b7b2", "accelerator": "#f58518"}
"""Fill colour of each processor role in `draw`."""


def render_tree(platform: Platform) -> str:
    """The platform as an indented tree: levels, processors with roles, memories and links.

    Each processor line names its role, kind, compute parameters and memory; a memory it owns is
    followed by its capacity and bandwidth, and by the link that joins it to the level above.

    Raises
    ------
    HetsimError
        `platform` is not a `Platform` (`check_platform`).
    """
    root = check_platform(platform, "render_tree").levels[""]
    lines = [f"{platform.name}  {_level_summary(root)}"]
    lines += _tree_lines(platform, root, prefix="")
    return "\n".join(lines)


def _tree_lines(platform: Platform, level: Level, prefix: str) -> Iterator[str]:
    children = (level.host, *level.devices)
    uplinks = {link.b: link for link in platform.links.values()}
    for index, child in enumerate(children):
        is_last = index == len(children) - 1
        branch, indent = ("└── ", "    ") if is_last else ("├── ", "│   ")
        if child in platform.levels:
            nested = platform.levels[child]
            yield f"{prefix}{branch}{child}  [level] {_level_summary(nested)}"
            yield from _tree_lines(platform, nested, prefix + indent)
        else:
            yield f"{prefix}{branch}{_processor_line(platform, platform.processors[child])}"
            processor = platform.processors[child]
            link = uplinks.get(processor.memory)
            if link is not None and processor.owns_memory:
                yield f"{prefix}{indent}    {_link_line(link)}"


def _level_summary(level: Level) -> str:
    executor = level.executor.kind if level.executor else "-"
    runtime = level.runtime.kind if level.runtime else "-"
    text = f"executor={executor} runtime={runtime}"
    if not level.is_root:
        text += f" control_latency={level.control_latency_us} us"
    return text


def _processor_line(platform: Platform, processor: Processor) -> str:
    attrs = processor.attrs
    cores = counted(attrs["cores"], "core")
    compute = f"{cores} × {attrs['freq_ghz']} GHz × {attrs['flops_per_cycle']} flop/cycle"
    memory = platform.memories[processor.memory]
    if processor.owns_memory:
        where = (
            f"memory {memory.name} ({format_bytes(memory.capacity_bytes)}, "
            f"{memory.bandwidth_gbps} GB/s)"
        )
    else:
        where = f"shares {memory.name}"
    return f"{processor.path}  [{processor.role}] {processor.kind}: {compute}; {where}"


def _link_line(link: Link) -> str:
    return f"link {link.name}: {link.bandwidth_gbps} GB/s, {link.latency_us} us"


def png_path(path: object, what: str) -> Path:
    """`path`, checked as the PNG file the chart function `what` writes, before any work: a str
    or an `os.PathLike`, naming no other format than PNG (the charts are written as PNG to the
    path given, suffix or none, and PNG bytes under ``.jpg`` or ``.svg`` would mislead whatever
    opens the file), a file (not a directory) in a directory that exists: `output_path`'s
    rule, as `hetsim.report` and `hetsim.compare` check their files.

    Raises
    ------
    HetsimError
        Any of those, naming `what`.

    Examples
    --------
    >>> png_path("plan.png", "draw"), png_path("plan", "draw")
    (PosixPath('plan.png'), PosixPath('plan'))
    >>> png_path("plan.jpg", "draw")
    Traceback (most recent call last):
    hetsim.errors.HetsimError: draw: expected a .png path (or none), got 'plan.jpg'
    >>> png_path(None, "draw")
    Traceback (most recent call last):
    hetsim.errors.HetsimError: draw: expected a path (a str or an os.PathLike), got None
    >>> png_path("no-such-dir/plan.png", "draw")
    Traceback (most recent call last):
    hetsim.errors.HetsimError: draw: expected a file in an existing directory, got \
'no-such-dir/plan.png' (no directory 'no-such-dir')
    """
    return output_path(path, what, ".png")


def draw(platform: Platform, path: str | Path) -> Path:
    """Draw the platform to a PNG file at `path` (ending in ``.png``); return the path.

    Processors are boxes coloured by role, one row per tree depth; each memory sits under the
    processor that owns it. Solid arrows are control edges, dashed lines data links (labelled
    with bandwidth and latency), dotted lines join a processor to the memory it computes from.

    Raises
    ------
    HetsimError
        `platform` is not a `Platform`, `path` is not a file it can write (not a path, a
        suffix other than ``.png``, a directory, a missing directory: `png_path`), or matplotlib
        is not installed.
    OSError
        Writing failed anyway (a read-only folder, a full disk).
    """
    check_platform(platform, "draw")
    out = png_path(path, "draw")
    try:  # optional dependency: plotting only (the charts above this layer: report.figures)
        from matplotlib.figure import Figure
    except ImportError as err:
        raise HetsimError("draw: expected matplotlib (pip install hetsim[plot]), got none") from err

    places = _places(platform)
    width = max(x for x, _ in places.values()) + 1
    depth = -min(y for _, y in places.values()) + 1
    figure = Figure(figsize=(max(4.0, 2.6 * width), max(3.0, 1.1 * depth)))
    axes = figure.add_subplot()
    axes.set_axis_off()
    _draw_edges(platform, axes, places)
    for name, (x, y) in places.items():
        processor = platform.processors.get(name)
        color = ROLE_COLORS[processor.role] if processor else "#e0e0e0"
        label = f"{name}\n{processor.kind}" if processor else name
        shape = "round,pad=0.3" if processor else "square,pad=0.25"
        axes.text(
            x,
            y,
            label,
            ha="center",
            va="center",
            fontsize=8,
            bbox={"boxstyle": shape, "facecolor": color, "edgecolor": "#333333"},
        )
    axes.set_xlim(-0.7, width - 0.3)
    axes.set_ylim(-depth + 0.4, 0.6)
    axes.set_title(f"platform {platform.name}", fontsize=10)
    figure.savefig(out, format="png", dpi=100, bbox_inches="tight")
    return out


def _draw_edges(platform: Platform, axes: Any, places: dict[str, tuple[float, float]]) -> None:
    for u, v, data in platform.graph.edges(data=True):
        if data["type"] == "control":
            axes.annotate(
                "",
                xy=places[v],
                xytext=places[u],
                arrowprops={"arrowstyle": "-|>", "color": "#333333", "shrinkA": 14, "shrinkB": 14},
                zorder=3,
            )
    for link in platform.links.values():
        (xa, ya), (xb, yb) = places[link.a], places[link.b]
        axes.plot([xa, xb], [ya, yb], linestyle="--", color="#b22222")
        axes.text(
            (xa + xb) / 2,
            (ya + yb) / 2,
            f"{link.bandwidth_gbps} GB/s\n{link.latency_us} us",
            fontsize=7,
            color="#b22222",
            ha="center",
            va="center",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )
    for processor in platform.processors.values():
        (xp, yp), (xm, ym) = places[processor.path], places[processor.memory]
        axes.plot([xp, xm], [yp, ym], linestyle=":", color="#777777")


def _places(platform: Platform) -> dict[str, tuple[float, float]]:
    """A position for every processor and memory: a column each, in tree order; a row per depth."""
    places: dict[str, tuple[float, float]] = {}
    for column, processor in enumerate(platform.processors.values()):
        row = -2.0 * (_depth(platform, processor) + (processor.role == "accelerator"))
        places[processor.path] = (float(column), row)
        if processor.owns_memory:
            places[processor.memory] = (float(column), row - 1.0)
    return places


def _depth(platform: Platform, processor: Processor) -> int:
    """How many levels lie above the processor's level."""
    depth, level = 0, platform.levels[processor.level]
    while level.parent is not None:
        depth, level = depth + 1, platform.levels[level.parent]
    return depth
