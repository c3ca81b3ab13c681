"""Attribute values: the scalar types an `Attr` may have, how each is checked, and their texts.

`ATTR_TYPES` is the registry of scalar types (``int``, ``float``, ``str``, ``bool``, ``enum``):
each has a check (is the value of the type and in the attribute's range; its normalized form) and
a text of what a valid value looks like. The unit suffixes and the largest numbers a config may
hold live here too, and so does how a message shows a value (`show_value`, `yaml_number_hint`).
`Attr`, which holds an attribute's type and range, and `check_attrs`, which checks a node's
values, live in `hetsim.target.schema`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsim.errors import as_bool
from hetsim.located import LEADING_ZERO
from hetsim.units import BYTES_PER_GIB, BYTES_PER_KIB, BYTES_PER_MIB

if TYPE_CHECKING:
    from hetsim.target.schema import Attr

__all__ = [
    "ANY_OP",
    "ATTR_TYPES",
    "BYTES_PER_UNIT",
    "LARGEST_FLOAT",
    "MAX_BYTES",
    "NUMBER_TYPES",
    "PLURALS",
    "STRUCTURAL_TYPES",
    "UNITS",
    "finite_float",
    "is_number",
    "number_text",
    "op_types",
    "set_op_types",
    "show_value",
    "yaml_number_hint",
]

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


def is_number(value: object) -> bool:
    """An int or float, numpy's included (a target built from numpy values); not a bool."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def finite_float(value: object) -> float | None:
    """`value` as a float, if it is a Python int or float (not a bool) that a float holds
    finitely, else None (``math.isfinite(10**400)`` raises `OverflowError`).

    >>> finite_float(3), finite_float(10**400), finite_float(float("nan")), finite_float(True)
    (3.0, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > LARGEST_FLOAT:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


_YAML_1_1_NOT_A_NUMBER = re.compile(r"([-+]?[0-9]+)(\.[0-9]*)?[eE]([-+]?)([0-9]+)")
"""``1e3``, ``1.0e3``, ``1e+3``: numbers to a reader, strings to PyYAML (YAML 1.1 wants a point
and a signed exponent: ``1.0e+3``). Only a string is matched: what YAML read as a float is one."""


def yaml_number_hint(value: object, *, integer: bool = False) -> str | None:
    """The YAML spelling of a number YAML read as a string (``'1e3'`` -> ``'1.0e+3'``, or
    ``'1000'`` for an `integer`; a leading zero, which YAML 1.1 reads as octal: ``'010'`` ->
    ``'10'``), when that number is one the attribute can take: finite, and whole for an integer.

    >>> [yaml_number_hint(text) for text in ("1e3", "1.5e3", "1e-6", "010", "ten", "1e400")]
    ['1.0e+3', '1.5e+3', '1.0e-6', '10', None, None]
    >>> [yaml_number_hint(text, integer=True) for text in ("1e3", "1.5e3", "1e-6", "1e300")]
    ['1000', '1500', None, None]
    """
    if isinstance(value, str) and LEADING_ZERO.fullmatch(value):
        return str(int(value.replace("_", "")))
    found = _YAML_1_1_NOT_A_NUMBER.fullmatch(value) if isinstance(value, str) else None
    if found is None or not math.isfinite(number := float(found[0])):
        return None
    if integer:  # an integer spelt exactly: a float is whole past 2^53 without being that one
        return str(int(number)) if number.is_integer() and abs(number) <= 2**53 else None
    mantissa, fraction, sign, exponent = found.groups()
    return f"{mantissa}{fraction or '.0'}e{sign or '+'}{exponent}"


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
    if not is_number(value) or not _in_range(attr, value):  # type: ignore[arg-type]
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


def number_text(number: float) -> str:
    """A bound as a message shows it: exact, and short where that is exact too."""
    if number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    short = f"{number:g}"
    return short if float(short) == number else repr(number)


def _check_str(attr: Attr, value: object) -> tuple[bool, Any]:
    ok = isinstance(value, str) and (attr.pattern is None or re.fullmatch(attr.pattern, value))
    return bool(ok), value


def _check_bool(attr: Attr, value: object) -> tuple[bool, Any]:
    value = as_bool(value)  # numpy's as Python's, as np.int64 is taken for an int
    ok = isinstance(value, bool) and (not attr.choices or value in attr.choices)
    return ok, value


def _check_enum(attr: Attr, value: object) -> tuple[bool, Any]:
    ok = isinstance(value, str) and value in attr.choices
    return ok, value


ANY_OP = "*"
"""The ``ops`` entry that means every op type."""


OP_NAME = r"[A-Za-z][A-Za-z0-9_]*"
"""The form of an op type, all an ``ops`` entry is checked for until `set_op_types` names them."""

_op_types: Collection[str] | None = None


def set_op_types(names: Collection[str]) -> None:
    """Name the op types an ``ops`` entry may be: those hetsim runs (`hetsim.kernels.OPS`),
    which `hetsim.partition` (the first layer to see both targets and kernels) sets on import.
    The target system sits below the kernels and imports nothing of them."""
    global _op_types
    _op_types = names


def op_types() -> Collection[str] | None:
    """The op types set by `set_op_types`, or None (an entry is then checked for its form)."""
    return _op_types


def _check_op(attr: Attr, value: object) -> tuple[bool, Any]:
    # matched exactly ('MatMul'): a misspelt entry ('Matmul', 'relu') would leave its ops to
    # another processor, silently, and a model holds only ops hetsim runs
    if not isinstance(value, str):
        return False, value
    known = value == ANY_OP or (
        re.fullmatch(OP_NAME, value) if _op_types is None else value in _op_types
    )
    return bool(known), value


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


def _expect_op(attr: Attr) -> str:
    return f"an op type hetsim runs, or {ANY_OP!r}"


# type name -> (check(attr, value) -> (ok, normalized), expected(attr) -> text); a registry, so
# a new scalar type is one entry here.
ATTR_TYPES: dict[str, tuple[Callable[[Attr, object], tuple[bool, Any]], Callable[[Attr], str]]] = {
    "int": (_check_int, _expect_int),
    "float": (_check_float, _expect_float),
    "str": (_check_str, _expect_str),
    "bool": (_check_bool, _expect_bool),
    "enum": (_check_enum, _expect_enum),
    "op": (_check_op, _expect_op),
}
NUMBER_TYPES = ("int", "float")
PLURALS = {
    "str": "strings",
    "int": "integers",
    "float": "numbers",
    "bool": "booleans",
    "op": f"op types hetsim runs ({ANY_OP!r}: all)",
}
# Structural types: documented in a kind's schema, checked by the tree builder, not by Attr.check.
STRUCTURAL_TYPES = ("target", "list[target]", "executor", "runtime")
