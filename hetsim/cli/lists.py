"""Options that take a comma-separated list (``compare --cuda-graph`` and ``--buckets``, ``bench
dispatch --ops``, ``--dims``), split when the command line is read.

`split_list` is the one reader of their commas. An empty item (``none,``, ``16,,32``) is a usage
error that names the option, where it had been dropped without a word: a list cut short by a
typo or by an unset shell variable (``--buckets 16,$B``) ran as if it were whole. A value with
no item at all (``''``, ``,``) is left to each option to refuse in its own words.
"""

from __future__ import annotations

import argparse

__all__ = ["split_list"]


def split_list(text: str) -> list[str]:
    """The comma-separated items of `text`, stripped of spaces; none where it holds none
    (``''``, ``' , '``).

    Raises
    ------
    argparse.ArgumentTypeError
        An empty item among others (argparse puts ``argument --OPTION:`` in front).

    Examples
    --------
    >>> split_list("none, whole")
    ['none', 'whole']
    >>> split_list(" , ")
    []
    >>> split_list("none,")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated values, none empty, got 'none,' (value 2 \
of 2 is empty)
    """
    items = [part.strip() for part in text.split(",")]
    if not any(items):
        return []
    if "" in items:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated values, none empty, got {text!r} "
            f"(value {items.index('') + 1} of {len(items)} is empty)"
        )
    return items
