"""`Recent`: the last few values made for equal keys, kept for the next call that asks again.

For the values that are pure functions of a hashable key and never change once made: the
`Target` of a tag name (`hetsim.target.tree`), the `Platform` of a target tree
(`hetsim.api.platform_of`), the `Graph` a sweep's process loaded (`hetsim.sweep.loaded`), a
target node's checked attributes (`hetsim.target.schema.check_attrs`, keyed by `plain_key`).
Graphs and what is compiled from them are keyed by identity instead (`hetsim.ir.cache`).
Threads of one process (a Dask worker's tasks) share these: the table changes under a lock,
never held while a value is made.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Recent", "plain_key"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The values of the last `size` keys asked for (the least recently asked goes first).

    Examples
    --------
    >>> made = []
    >>> recent = Recent[str, int](size=2)
    >>> [recent.get(k, lambda k=k: made.append(k) or len(made)) for k in "abab"]
    [1, 2, 1, 2]
    >>> _ = recent.get("c", lambda: 3); "a" in recent, "b" in recent, made
    (False, True, ['a', 'b'])
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for `key`, else `make()`'s, kept (a value another thread made for
        `key` meanwhile wins, so every caller gets the same object)."""
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
                return found
        value = make()
        with self._lock:
            value = self._values.setdefault(key, value)
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()


_PLAIN_ATOMS = frozenset({str, int, float, bool, type(None)})


def plain_key(value: object) -> Hashable:
    """A hashable key of plain data (str, int, float, bool, None, and dicts and lists of them),
    equal only for data of the same types: unlike ``==``, it tells ``1``, ``1.0`` and ``True``
    apart, a list from a tuple, and dicts whose keys come in another order (a check's problems
    follow that order).

    Raises
    ------
    TypeError
        A value of another type (a numpy scalar, a set, an object): the caller does without.

    Examples
    --------
    >>> plain_key({"cores": 1}) == plain_key({"cores": True}), plain_key([1]) == plain_key([1])
    (False, True)
    >>> plain_key({1: "x"}) == plain_key({True: "x"})  # keys too: each names its own path
    False
    """
    kind = value.__class__
    if kind in _PLAIN_ATOMS:
        return kind, value
    if kind is dict and isinstance(value, dict):  # a subclass may compare otherwise
        return dict, tuple((plain_key(k), plain_key(v)) for k, v in value.items())
    if (kind is list or kind is tuple) and isinstance(value, list | tuple):
        return kind, tuple(plain_key(v) for v in value)
    raise TypeError(f"plain_key: expected plain data, got {kind.__name__}")
