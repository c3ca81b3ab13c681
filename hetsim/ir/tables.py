"""`in_order`: a table keyed by op or tensor name, read for a list of names in order where its
keys are those names in that order, and looked up by name otherwise.

Propagation makes its tables (metas, costs) in the graph's order, and the policies place ops in
the order they read them, so a stage that reads a table for every op of a level usually reads it
in the order it was made. At 1e6 ops a lookup by name misses the CPU caches (on the machine
docs/runtime.md measures on, reading each op's output dtype from a 1e6-entry metas table by
name took 0.28 µs per op, one pass over its values in order 0.03): partition and binding read
such tables through this (docs/runtime.md, "Performance").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

__all__ = ["in_order"]

V = TypeVar("V")


def in_order(table: Mapping[str, V], names: tuple[str, ...]) -> Iterable[V]:
    """``table[name]`` for each of `names`, in order: the table's values themselves where its
    keys are `names` in that order (a dict made in it), else one lookup per name (a KeyError
    names the first `table` lacks).

    >>> list(in_order({"a": 1, "b": 2}, ("a", "b"))), list(in_order({"b": 2, "a": 1}, ("a", "b")))
    ([1, 2], [1, 2])
    """
    if isinstance(table, dict) and len(table) == len(names) and tuple(table) == names:
        return table.values()
    return [table[name] for name in names]
