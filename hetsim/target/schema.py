"""Schemas: `Attr` (type, unit, range, default, doc), `Kind`, value checks and config paths.

This is the one place where a config value is checked. A `Kind` lists its attributes, its keys,
its capability flags and its cross-field rules (`hetsim.target.rules`); `check_attrs` checks a
node's attributes against it and fills defaults. Building trees, resolving tags and the built-in
kinds live in the sibling modules (`resolve`, `canonical`, `kinds`).
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsim.errors import Problem
from hetsim.memo import Recent, copy_plain, plain_key
from hetsim.units import BYTES_PER_GIB, BYTES_PER_KIB, BYTES_PER_MIB

if TYPE_CHECKING:
    from hetsim.target.rules import Rule

__all__ = [
    "ATTR_TYPES",
    "CATEGORIES",
    "MAX_BYTES",
    "STRUCTURAL_TYPES",
    "Attr",
    "Kind",
    "check_attrs",
    "closest",
    "item_path",
    "join_path",
    "show_value",
    "yaml_number_hint",
]

CATEGORIES = ("target", "executor", "runtime")
UNITS = {
    "_ghz": "GHz",
    "_gbps": "GB/s",
    "_us": "µs",
    "_gib": "GiB",
    "_mib": "MiB",
    "_kib": "KiB",
    "_bytes": "bytes",
}
# A capacity's unit suffix -> bytes in one of its units: the suffixes whose values are sizes.
BYTES_PER_UNIT = {"_gib": BYTES_PER_GIB, "_mib": BYTES_PER_MIB, "_kib": BYTES_PER_KIB, "_bytes": 1}
MAX_BYTES = 2**53
"""The largest capacity, in bytes (8 PiB): a byte count up to it is exact as a float64, which
the cost formulas divide, and as an int64 (``Memory.capacity_bytes``), with room to add many."""
LARGEST_FLOAT = sys.float_info.max


def join_path(path: str, key: object) -> str:
    """The config path of `key` inside `path`: ``host`` + ``freq_ghz`` is ``host.freq_ghz``.

    >>> join_path("", "host"), join_path("devices[a].host", "freq_ghz"), join_path("link", 3)
    ('host', 'devices[a].host.freq_ghz', 'link.3')
    """
    text = key if isinstance(key, str) else repr(key)
    return f"{path}.{text}" if path else text


def item_path(path: str, index: object) -> str:
    """The config path of a list item or a named device: ``devices`` + ``vdevice0``.

    >>> item_path("devices", "vdevice0"), item_path("ops", 2)
    ('devices[vdevice0]', 'ops[2]')
    """
    return f"{path}[{index}]"


def closest(word: object, names: Iterable[str]) -> str | None:
    """The registered name closest to `word`, if one is close enough to suggest.

    >>> closest("bandwith_gbps", ["bandwidth_gbps", "latency_us"])
    'bandwidth_gbps'
    >>> closest(3, ["a"]) is None
    True
    """
    if not isinstance(word, str):
        return None
    matches = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _number(value: object) -> bool:
    """An int or float, numpy's included (a target built from numpy values); not a bool."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


_YAML_1_1_NOT_A_NUMBER = re.compile(r"([-+]?[0-9]+)[eE]([-+]?)([0-9]+)")
"""``1e3``: a number to a reader, a string to PyYAML (YAML 1.1 wants ``1.0e+3``)."""


def yaml_number_hint(value: object) -> str | None:
    """The YAML spelling of a number YAML read as a string (``'1e3'`` -> ``'1.0e+3'``)."""
    found = _YAML_1_1_NOT_A_NUMBER.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return None
    mantissa, sign, exponent = found.groups()
    return f"{mantissa}.0e{sign or '+'}{exponent}"


def _range_text(attr: Attr, noun: str) -> str:
    low, high = attr.minimum, attr.maximum
    article = "an" if noun[0] in "aeiou" else "a"
    if low == 0 and high is None:
        return f"a positive {noun}" if attr.exclusive_minimum else f"a non-negative {noun}"
    if low is not None and high is not None:
        left = "(" if attr.exclusive_minimum else "["
        return f"{article} {noun} in {left}{low:g}, {high:g}]"
    if low is not None:
        return f"{article} {noun} {'>' if attr.exclusive_minimum else '>='} {low:g}"
    if high is not None:
        return f"{article} {noun} <= {high:g}"
    return f"{article} {noun}"


def _in_range(attr: Attr, value: float) -> bool:
    if attr.minimum is not None and (
        value < attr.minimum or (attr.exclusive_minimum and value == attr.minimum)
    ):
        return False
    return attr.maximum is None or value <= attr.maximum


def _check_int(attr: Attr, value: object) -> tuple[bool, Any]:
    is_int = isinstance(value, int | np.integer) and not isinstance(value, bool)
    ok = is_int and _in_range(attr, value)  # type: ignore[arg-type]
    return ok, int(value) if ok else value  # type: ignore[call-overload]


def _check_float(attr: Attr, value: object) -> tuple[bool, Any]:
    if not _number(value) or not _in_range(attr, value):  # type: ignore[arg-type]
        return False, value
    if isinstance(value, int) and abs(value) > LARGEST_FLOAT:
        return True, value  # float() raises OverflowError; Attr.check says what is wrong
    return True, float(value)  # type: ignore[arg-type]


def _digits(size: int) -> int:
    """The decimal digits of a non-negative int, counted without ``str()`` (which refuses past
    4,300 digits).

    >>> _digits(0), _digits(9), _digits(10), _digits(10**400)
    (1, 1, 2, 401)
    """
    digits = max(1, int(size.bit_length() * 0.30102999566398))  # log10(2): a lower bound
    while size >= 10**digits:
        digits += 1
    return digits


def show_value(value: object) -> str:
    """`value` as a message shows it: its ``repr``, or an integer too long to read by its digits.

    >>> show_value(1e300), show_value(-(10**400)), show_value("8")
    ('1e+300', 'a 401-digit negative integer', "'8'")
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        sign = "negative " if value < 0 else ""
        return f"a {_digits(abs(value))}-digit {sign}integer"
    return repr(value)


def _number_text(number: float) -> str:
    """A bound as a message shows it: exact, and short where that is exact too."""
    if number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    short = f"{number:g}"
    return short if float(short) == number else repr(number)


def _check_str(attr: Attr, value: object) -> tuple[bool, Any]:
    ok = isinstance(value, str) and (attr.pattern is None or re.fullmatch(attr.pattern, value))
    return bool(ok), value


def _check_bool(attr: Attr, value: object) -> tuple[bool, Any]:
    ok = isinstance(value, bool) and (not attr.choices or value in attr.choices)
    return ok, value


def _check_enum(attr: Attr, value: object) -> tuple[bool, Any]:
    ok = isinstance(value, str) and value in attr.choices
    return ok, value


def _expect_int(attr: Attr) -> str:
    return _range_text(attr, "integer")


def _expect_float(attr: Attr) -> str:
    return _range_text(attr, "number")


def _expect_str(attr: Attr) -> str:
    return f"a string matching {attr.pattern!r}" if attr.pattern else "a string"


def _expect_bool(attr: Attr) -> str:
    if attr.choices:
        return " or ".join(str(c).lower() for c in attr.choices)
    return "true or false"


def _expect_enum(attr: Attr) -> str:
    return "one of " + ", ".join(repr(c) for c in attr.choices)


# type name -> (check(attr, value) -> (ok, normalized), expected(attr) -> text); a registry, so
# a new scalar type is one entry here.
ATTR_TYPES: dict[str, tuple[Callable[[Attr, object], tuple[bool, Any]], Callable[[Attr], str]]] = {
    "int": (_check_int, _expect_int),
    "float": (_check_float, _expect_float),
    "str": (_check_str, _expect_str),
    "bool": (_check_bool, _expect_bool),
    "enum": (_check_enum, _expect_enum),
}
NUMBER_TYPES = ("int", "float")
PLURALS = {"str": "strings", "int": "integers", "float": "numbers", "bool": "booleans"}
# Structural types: documented in a kind's schema, checked by the tree builder, not by Attr.check.
STRUCTURAL_TYPES = ("target", "list[target]", "executor", "runtime")


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
        bound = f">= {_number_text(-largest)}" if value < 0 else f"<= {_number_text(largest)}"
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
        if self.type == "float" and _number(self.default):
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
            hint = yaml_number_hint(value) if self.type in NUMBER_TYPES else None
            return None, [Problem(path, f"expected {self.expected}", show_value(value), hint)]
        if self.type in NUMBER_TYPES and not abs(normalized) <= self.largest:  # nan too
            expected = f"expected {self._expected_bound(normalized)}"
            return None, [Problem(path, expected, show_value(value))]
        return normalized, []

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
                problems.append(Problem(where, "unknown attribute", hint=closest(key, schema)))
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

_checked: Recent[Hashable, tuple[Kind, dict[str, Any], tuple[Problem, ...]]] = Recent(CHECKED_NODES)


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
    return copy_plain(result), list(problems)


def _kept(
    kind: Kind, values: Mapping[Any, Any], path: str
) -> tuple[Kind, dict[str, Any], tuple[Problem, ...]]:
    result, problems = _check_attrs(kind, values, path)
    return kind, result, tuple(problems)


def _check_attrs(
    kind: Kind, values: Mapping[Any, Any], path: str
) -> tuple[dict[str, Any], list[Problem]]:
    plain = {a.name: a for a in kind.attrs if a.type not in STRUCTURAL_TYPES}
    result = {name: attr.default_value() for name, attr in plain.items()}
    problems: list[Problem] = []
    for key, value in values.items():
        where = join_path(path, key)
        if key not in plain:
            problems.append(Problem(where, "unknown attribute", hint=closest(key, plain)))
            continue
        result[key], found = plain[key].check(value, where)
        problems += found
    return result, problems
