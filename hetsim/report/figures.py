"""A matplotlib `Figure` for a chart hetsim draws, without pyplot.

matplotlib is optional (the ``plot`` extra), so it is imported when a chart is drawn; only its
object API is used (a `Figure`, drawn by the Agg canvas that ``savefig`` picks for a PNG), never
`pyplot`, so drawing changes no global backend or state: ``matplotlib.use("Agg")`` inside a
chart function switched a notebook's backend away from its inline one.
"""

from __future__ import annotations

from typing import Any

from hetsim.errors import HetsimError

__all__ = ["new_figure"]


def new_figure(who: str, width_in: float, height_in: float, dpi: int = 100) -> Any:
    """A blank `matplotlib.figure.Figure` of the size given, for the chart function `who`.

    Raises
    ------
    HetsimError
        matplotlib is not installed (``who: expected matplotlib (pip install hetsim[plot]),
        got none``).
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as err:
        raise HetsimError(
            f"{who}: expected matplotlib (pip install hetsim[plot]), got none"
        ) from err
    return Figure(figsize=(width_in, height_in), dpi=dpi)
