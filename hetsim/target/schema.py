"""Schemas: `Attr` (type, unit, range, default, doc), `Kind`, `check_attrs` and config paths.

This is the one place where a config value is checked. A `Kind` lists its attributes, its keys,
its capability flags and its cross-field rules (`hetsim.target.rules`); `check_attrs` checks a
node's attributes against it and fills defaults. The value types an `Attr` may have, their checks
and their texts are `hetsim.target.values`. Building trees, resolving tags and the built-in kinds
live in the sibling modules (`resolve`, `canonical`, `kinds`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hetsim.errors import Problem, close_name
from hetsim.memo import Recent, plain_key
from hetsim.target.frozen import FrozenMap, freeze, thaw
from hetsim.target.values import (
    ATTR_TYPES,
    BYTES_PER_UNIT,
    LARGEST_FLOAT,
    MAX_BYTES,
    NUMBER_TYPES,
    PLURALS,
    STRUCTURAL_TYPES,
    UNITS,
    is_number,
    number_text,
    op_types,
    show_value,
    yaml_number_hint,
)

if TYPE_CHECKING:
    from hetsim.target.rules import Rule

__all__ = [
    "CATEGORIES",
    "RESERVED_NAMES",
    "Attr",
    "Kind",
    "check_attrs",
    "closest",
    "item_path",
    "join_path",
]

CATEGORIES = ("target", "executor", "runtime")

RESERVED_NAMES = ("kind", "name", "tag", "description", "host", "executor", "runtime", "devices")
"""Keys of a target or config that are not attributes: a node's identity, a file's description,
a level's parts. Only ``hetero``'s structural attributes take the last four."""


def join_path(path: str, key: object) -> str:
    """The config path of `key` inside `path`: ``host`` + ``freq_ghz`` is ``host.freq_ghz``; a key
    that is not a string, or is empty, by its ``repr``.

    >>> join_path("", "host"), join_path("devices[a].host", "freq_ghz"), join_path("link", 3)
    ('host', 'devices[a].host.freq_ghz', 'link.3')
    >>> join_path("", ""), join_path("link", "")
    ("''", "link.''")
    """
    text = key if isinstance(key, str) and key else repr(key)
    return f"{path}.{text}" if path else text


def item_path(path: str, index: object) -> str:
    """The config path of a list item or a named device: ``devices`` + ``vdevice0``.

    >>> item_path("devices", "vdevice0"), item_path("ops", 2)
    ('devices[vdevice0]', 'ops[2]')
    """
    return f"{path}[{index}]"


def closest(word: object, names: Iterable[str]) -> str | None:
    """The registered name `word` likely misspells (`hetsim.errors.close_name`: one that differs
    only in case, else the closest), if `word` is a name at all.

    >>> closest("bandwith_gbps", ["bandwidth_gbps", "latency_us"]), closest("CUDA", ["cuda"])
    ('bandwidth_gbps', 'cuda')
    >>> closest(3, ["a"]) is None
    True
    """
    return close_name(word, list(names)) if isinstance(word, str) else None


def _attribute_hint(key: object, names: Iterable[str]) -> str | None:
    """The attribute of `names` that the unknown `key` likely means: the `closest` name, else
    the one whose name without its unit suffix `key` is close to, where no other name has that
    stem (``frq`` is close to ``freq`` but not to ``freq_ghz``, whose unit made it too long to
    match).

    >>> names = ["cores", "freq_ghz", "launch_us", "memory_gib"]
    >>> [_attribute_hint(key, names) for key in ("frq", "memry", "cors")]
    ['freq_ghz', 'memory_gib', 'cores']
    >>> _attribute_hint("colour", names) is None, _attribute_hint("bw", names) is None
    (True, True)
    """
    names = list(names)
    found = closest(key, names)
    if found is not None or not isinstance(key, str):
        return found
    by_stem: dict[str, list[str]] = {}
    for name in names:
        suffix = next((s for s in UNITS if name.endswith(s) and name != s), None)
        if suffix is not None:
            by_stem.setdefault(name.removesuffix(suffix), []).append(name)
    stem = close_name(key, list(by_stem))
    return by_stem[stem][0] if stem is not None and len(by_stem[stem]) == 1 else None


@dataclass(frozen=True, slots=True)
class Attr:
    """One attribute of a kind: its type, default, allowed range or pattern, and a one-line doc.

    `type` is a scalar type (``int``, ``float``, ``str``, ``bool``, ``enum``), ``list`` (of
    `items`), ``mapping`` (of `fields`), or a structural type (``target``, ``list[target]``,
    ``executor``, ``runtime``). The unit is part of the name (``freq_ghz`` is in GHz).

    Besides its type and range, every number must be one the formulas past validation can compute
    with (its `largest` magnitude): a ``float`` is finite (not ``inf`` or ``nan``), an ``int`` is
    no larger than the largest float (1.8e308), so that it converts to one, and a capacity (a name
    ending in ``_bytes``, ``_kib``, ``_mib`` or ``_gib``) is at most `MAX_BYTES` (2^53 bytes:
    ``memory_gib`` <= 8388608) so that its byte count is exact as a float and as an int64. Past
    that, a time or a rate may be any such number: a run whose times overflow is a
    `SimulationError` (docs/cost-model.md).

    Examples
    --------
    >>> freq = Attr("freq_ghz", "float", "clock", default=1.0, minimum=0, exclusive_minimum=True)
    >>> freq.unit, freq.expected
    ('GHz', 'a positive number')
    >>> [p.message for p in freq.check("fast", "host.freq_ghz")[1]]
    ["host.freq_ghz: expected a positive number, got 'fast'"]
    >>> freq.check(2, "freq_ghz")
    (2.0, [])
    >>> memory = Attr("memory_gib", "float", "capacity", default=4.0, minimum=0)
    >>> [p.message for p in memory.check(1e300, "host.memory_gib")[1]]
    ['host.memory_gib: expected a finite number <= 8388608 (2^53 bytes), got 1e+300']
    """

    name: str
    type: str
    doc: str
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    pattern: str | None = None
    choices: tuple[Any, ...] = ()
    items: Attr | None = None
    fields: tuple[Attr, ...] = ()

    @property
    def unit(self) -> str:
        """The unit named by the attribute's suffix, or ``""``."""
        return next((unit for suffix, unit in UNITS.items() if self.name.endswith(suffix)), "")

    @property
    def largest(self) -> float:
        """The largest magnitude a number of this attribute may have (see the class docstring).

        >>> Attr("memory_gib", "float", "").largest, Attr("cores", "int", "").largest
        (8388608.0, 1.7976931348623157e+308)
        """
        per_unit = next((n for s, n in BYTES_PER_UNIT.items() if self.name.endswith(s)), None)
        return LARGEST_FLOAT if per_unit is None else MAX_BYTES / per_unit

    def _expected_bound(self, value: Any) -> str:
        """What `value`, of the right type and in range but too large, should have been."""
        noun = "an integer" if self.type == "int" else "a finite number"
        largest = self.largest
        if largest == LARGEST_FLOAT and self.type == "float":
            return noun  # a float past the largest float is inf
        bound = f">= {number_text(-largest)}" if value < 0 else f"<= {number_text(largest)}"
        why = "the largest float" if largest == LARGEST_FLOAT else "2^53 bytes"
        return f"{noun} {bound} ({why})"

    @property
    def expected(self) -> str:
        """What a valid value looks like, in words."""
        if self.type == "list":
            assert self.items is not None, f"list attribute {self.name} has no item type"
            items = self.items
            text = f"a list of {PLURALS.get(items.type, 'values')}"
            if items.pattern:
                text += f" matching {items.pattern!r}"
            if items.choices:
                text += " (" + ATTR_TYPES[items.type][1](items) + ")"
            return text
        if self.type == "mapping":
            return "a mapping with keys " + ", ".join(f.name for f in self.fields)
        if self.type in STRUCTURAL_TYPES:
            return f"a {self.type}"
        return ATTR_TYPES[self.type][1](self)

    def default_value(self) -> Any:
        """The default, with a mapping's default assembled from its fields' defaults."""
        if self.type == "mapping":
            return {f.name: f.default_value() for f in self.fields}
        if isinstance(self.default, list | tuple):
            return list(self.default)
        if self.type == "float" and is_number(self.default):
            return float(self.default)
        return self.default

    def check(self, value: object, path: str) -> tuple[Any, list[Problem]]:
        """Check `value` found at `path`; return the normalized value and the problems found."""
        if self.type == "list":
            return self._check_list(value, path)
        if self.type == "mapping":
            return self._check_mapping(value, path)
        ok, normalized = ATTR_TYPES[self.type][0](self, value)
        if not ok:
            hint = self._hint(value)
            return None, [Problem(path, f"expected {self.expected}", show_value(value), hint)]
        if self.type in NUMBER_TYPES and not abs(normalized) <= self.largest:  # nan too
            expected = f"expected {self._expected_bound(normalized)}"
            return None, [Problem(path, expected, show_value(value))]
        return normalized, []

    def _hint(self, value: object) -> str | None:
        """What a refused scalar `value` likely meant: a number's YAML spelling, or the op type
        a misspelt one names (``relu``: ``Relu``)."""
        if self.type in NUMBER_TYPES:
            return yaml_number_hint(value, integer=self.type == "int")
        if self.type == "op" and isinstance(value, str):
            return close_name(value, op_types() or ())
        return None

    def _check_list(self, value: object, path: str) -> tuple[Any, list[Problem]]:
        assert self.items is not None, f"list attribute {self.name} has no item type"
        if not isinstance(value, list | tuple):
            return None, [Problem(path, f"expected {self.expected}", repr(value))]
        checked = [self.items.check(item, item_path(path, i)) for i, item in enumerate(value)]
        problems = [p for _, found in checked for p in found]
        return [v for v, _ in checked], problems

    def _check_mapping(self, value: object, path: str) -> tuple[Any, list[Problem]]:
        if not isinstance(value, Mapping):
            return None, [Problem(path, f"expected {self.expected}", repr(value))]
        schema = {f.name: f for f in self.fields}
        merged = self.default_value()
        problems: list[Problem] = []
        for key, item in value.items():
            where = join_path(path, key)
            if key not in schema:
                hint = _attribute_hint(key, schema)
                problems.append(Problem(where, "unknown attribute", hint=hint))
                continue
            merged[key], found = schema[key].check(item, where)
            problems += found
        return merged, problems


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind's schema: attributes, keys, capability flags and cross-field rules.

    `category` is ``target`` (a processor or a composite), ``executor`` or ``runtime``.
    `default_host` is the kind or tag that hosts a lone device of this kind; `executors` lists the
    executors a runtime runs (empty: all); `can_capture` marks an executor that can capture CUDA
    graphs.

    Examples
    --------
    >>> k = Kind("dsp", "target", "a DSP", (Attr("cores", "int", "cores", 1, minimum=1),))
    >>> k.attr("cores").default, k.attr("nope") is None
    (1, True)
    """

    name: str
    category: str
    doc: str
    attrs: tuple[Attr, ...]
    keys: tuple[str, ...] = ()
    can_host: bool = False
    is_composite: bool = False
    can_capture: bool = False
    executors: tuple[str, ...] = ()
    default_host: str | None = None
    rules: tuple[Rule, ...] = field(default=())

    def attr(self, name: object) -> Attr | None:
        """The attribute called `name`, or None."""
        return next((a for a in self.attrs if a.name == name), None)

    def __repr__(self) -> str:
        return f"<Kind {self.name} category={self.category} keys={list(self.keys)}>"


CHECKED_NODES = 1024
"""Nodes whose checked attributes `check_attrs` keeps (the least recently asked for goes)."""

_checked: Recent[Hashable, tuple[Kind, FrozenMap, tuple[Problem, ...]]] = Recent(CHECKED_NODES)


def check_attrs(
    kind: Kind, values: Mapping[Any, Any], path: str
) -> tuple[dict[str, Any], list[Problem]]:
    """Check a node's attribute `values` against `kind`; return them with defaults filled.

    Structural attributes (``target``, ``executor``, ...) are skipped: the tree builder owns them.
    The result is kept for the same kind, path and values (`hetsim.memo.plain_key`: ``1`` and
    ``True`` are different values) and each call gets its own copy: a sweep's points rebuild
    every node, and share all those their overrides leave alone (checking them was about 40% of
    making a point's target).

    Examples
    --------
    >>> k = Kind("dsp", "target", "a DSP", (Attr("cores", "int", "cores", 1, minimum=1),))
    >>> check_attrs(k, {}, "host")
    ({'cores': 1}, [])
    >>> [p.message for p in check_attrs(k, {"core": 2}, "host")[1]]
    ["host.core: unknown attribute (did you mean 'cores'?)"]
    """
    try:
        key = (id(kind), path, plain_key(values))
    except TypeError:  # not plain data (a numpy scalar from a sweep's range): checked each time
        return _check_attrs(kind, values, path)
    # the kept kind holds its id: no other kind can take it while the entry lives
    _, result, problems = _checked.get(key, lambda: _kept(kind, values, path))
    return thaw(result), list(problems)


def _kept(
    kind: Kind, values: Mapping[Any, Any], path: str
) -> tuple[Kind, FrozenMap, tuple[Problem, ...]]:
    """What `check_attrs` keeps: the result frozen, so no caller's copy can change it."""
    result, problems = _check_attrs(kind, values, path)
    return kind, freeze(result), tuple(problems)


def _check_attrs(
    kind: Kind, values: Mapping[Any, Any], path: str
) -> tuple[dict[str, Any], list[Problem]]:
    plain = {a.name: a for a in kind.attrs if a.type not in STRUCTURAL_TYPES}
    result = {name: attr.default_value() for name, attr in plain.items()}
    problems: list[Problem] = []
    for key, value in values.items():
        where = join_path(path, key)
        if key not in plain:  # a misspelt level key (``runtme``, ``descripton``) is hinted too
            names = [*(a.name for a in kind.attrs), *RESERVED_NAMES]
            hint = _attribute_hint(key, [n for n in names if n != key])  # not itself: `devices`
            problems.append(Problem(where, "unknown attribute", hint=hint))
            continue
        result[key], found = plain[key].check(value, where)
        problems += found
    return result, problems
