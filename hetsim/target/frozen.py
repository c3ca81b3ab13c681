"""Frozen plain data: the hashable, read-only values a canonical target tree is made of.

`freeze` makes a hashable copy of plain data (mappings become `FrozenMap`, lists tuples) and
`thaw` gives the plain (JSON) form back. `hetsim.target.tree` builds its `Target` and `Config`
nodes of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["FrozenMap", "freeze", "thaw"]


class FrozenMap(Mapping[str, Any]):
    """A read-only, hashable mapping (attribute values of a frozen tree).

    >>> m = FrozenMap({"a": 1})
    >>> m["a"], m == {"a": 1}, hash(m) == hash(FrozenMap({"a": 1}))
    (1, True, True)
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # without the cached hash: a string's hash differs from one process to the next
        return (FrozenMap, (self._data,))


def freeze(value: Any) -> Any:
    """A hashable copy: mappings become `FrozenMap`, lists become tuples.

    >>> freeze({"ops": ["Conv"], "link": {"latency_us": 1.0}})
    FrozenMap({'ops': ('Conv',), 'link': FrozenMap({'latency_us': 1.0})})
    """
    if value.__class__ in _ATOMS:  # most values: checked first, without an ABC check
        return value
    if isinstance(value, Mapping):
        return FrozenMap({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


_ATOMS = frozenset({str, int, float, bool, type(None)})
"""The plain value types `freeze` keeps as they are (a target has hundreds: every op name).
Building trees was mostly `freeze`'s ``isinstance(value, Mapping)`` on them: an ABC check."""


def thaw(value: Any) -> Any:
    """The plain (JSON) form of a frozen value.

    >>> thaw(freeze({"ops": ["Conv"]}))
    {'ops': ['Conv']}
    """
    kind = value.__class__
    if kind in _ATOMS:  # most values, as in `freeze`
        return value
    if kind is FrozenMap:  # its dict, not `Mapping.items`'s lookup per key
        return {k: thaw(v) for k, v in value._data.items()}
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
