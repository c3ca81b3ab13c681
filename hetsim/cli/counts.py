"""Integer options with bounds (``--iterations``, ``--workers``), checked when the command line is
read.

`count_type` builds the argparse ``type`` of such an option: a value outside its bounds is a usage
error that names the option, before the command spends any time, rather than an `OverflowError`
or a machine out of memory deep in the run. Each command owns its bounds, and says why in the
constant that holds them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["count_type", "integer", "parse_count", "parse_seed"]


def integer(text: str) -> int | None:
    """`text` as an integer (a negative one too, to say it is below a bound), else ``None``.

    >>> integer("-3"), integer("8x"), integer("9" * 5000)
    (-3, None, None)
    """
    try:
        return int(text)
    except ValueError:  # int() refuses over 4,300 digits with a ValueError too
        return None


def parse_count(text: str, low: int, high: int) -> int:
    """`text` as an integer from `low` to `high`.

    Raises
    ------
    argparse.ArgumentTypeError
        Not an integer, or one outside the bounds (argparse puts ``argument --OPTION:`` in front).

    Examples
    --------
    >>> parse_count("20", 1, 1000)
    20
    >>> parse_count("0", 1, 1000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to 1000, got '0'
    >>> parse_count("1e3", 1, 1000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to 1000, got '1e3'
    """
    value = integer(text)
    if value is None or not low <= value <= high:
        raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {text!r}")
    return value


def count_type(low: int, high: int) -> Callable[[str], int]:
    """The argparse ``type`` of an option that takes one integer from `low` to `high`.

    >>> count_type(0, 256)("4")
    4
    """

    def parse(text: str) -> int:
        return parse_count(text, low, high)

    return parse


def parse_seed(text: str) -> int:
    """`text` as a seed: an integer >= 0 (numpy's generators take any such; the API refuses a
    negative one too, `hetsim.models.inputs.check_seed`).

    >>> parse_seed("7")
    7
    >>> parse_seed("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a non-negative integer, got '-1'
    """
    value = integer(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value
