"""What a valid kind definition is: `check_kind`, run on every kind before it is registered.

A kind's name, category and fields have their types; each attribute's definition is sound (a
word for a name, a known type, finite bounds, a pattern that compiles, choices for an enum) and
its default passes its own check; and a kind has the attributes every kind of its category has
(`hetsim.target.kinds.SHARED_ATTRS`), of their types, since the platform, the cost model and the
simulator read them without asking. Registering kinds, and building them from data, is
`hetsim.target.catalog`; the built-in kinds are `hetsim.target.kinds`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hetsim.errors import Problem
from hetsim.target.kinds import NAME_PATTERN, SHARED_ATTRS, category_of
from hetsim.target.resolve import article
from hetsim.target.schema import CATEGORIES, RESERVED_NAMES, Attr, Kind, item_path, join_path
from hetsim.target.values import ATTR_TYPES, LARGEST_FLOAT, STRUCTURAL_TYPES, is_number, show_value

__all__ = ["ATTR_NAME_PATTERN", "check_kind"]

ATTR_NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
"""An attribute's name: a word, as a config path joins it (``link.bandwidth_gbps``)."""


def check_kind(kind: Kind, *, replace: bool = False) -> list[Problem]:
    """Problems with a kind definition: its name, category, fields, attribute definitions and
    defaults, and the attributes every kind of its category has (`SHARED_ATTRS`)."""
    if not isinstance(kind, Kind):
        return [Problem("kinds", "expected a Kind", show_value(kind))]
    path = item_path("kinds", kind.name)
    if kind.category not in CATEGORIES:
        return [
            Problem(
                join_path(path, "category"),
                "expected one of " + ", ".join(CATEGORIES),
                repr(kind.category),
            )
        ]
    problems = []
    if not isinstance(kind.name, str) or not re.fullmatch(NAME_PATTERN, kind.name):
        problems.append(
            Problem(path, f"expected a name matching {NAME_PATTERN!r}", repr(kind.name))
        )
    taken = category_of(kind.name)
    if taken is not None and not (replace and taken == kind.category):
        problems.append(Problem(path, "expected a new kind name", f"a registered {taken} kind"))
    if kind.is_composite and kind.name != "hetero":
        problems.append(
            Problem(
                join_path(path, "is_composite"),
                "expected false (hetero is the one composite kind)",
                "True",
            )
        )
    fields = _field_problems(kind, path)
    if fields:
        return problems + fields
    for attr in kind.attrs:
        where = join_path(path, attr.name if isinstance(attr, Attr) else "attrs")
        problems += _attr_problems(attr, where)
    if not kind.is_composite and kind.category in SHARED_ATTRS:
        problems += _shared_problems(kind, SHARED_ATTRS[kind.category], path)
    return problems


def _is_strings(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


# field -> (what it must be, its check): the fields of a `Kind` besides its name and attributes
_KIND_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "doc": ("a string", lambda v: isinstance(v, str)),
    "keys": ("a list of strings", _is_strings),
    "executors": ("a list of strings", _is_strings),
    "can_host": ("true or false", lambda v: isinstance(v, bool)),
    "can_capture": ("true or false", lambda v: isinstance(v, bool)),
    "is_composite": ("true or false", lambda v: isinstance(v, bool)),
    "default_host": ("a kind or tag name", lambda v: v is None or isinstance(v, str)),
    "attrs": ("a list of Attr", lambda v: isinstance(v, list | tuple)),
}


def _field_problems(kind: Kind, path: str) -> list[Problem]:
    problems = []
    for field, (expected, is_valid) in _KIND_FIELDS.items():
        value = getattr(kind, field)
        if not is_valid(value):
            got = repr(list(value) if isinstance(value, tuple) else value)  # as a file writes it
            problems.append(Problem(join_path(path, field), f"expected {expected}", got))
    return problems


_ATTR_KINDS = (*ATTR_TYPES, "list", "mapping", *STRUCTURAL_TYPES)
"""The types an `Attr` may have."""


def _attr_problems(attr: object, where: str, *, own_default: bool = True) -> list[Problem]:
    """What is wrong with the definition of the attribute at `where`, then with its default (a
    list's or a mapping's default holds those of its items and fields: not checked twice)."""
    if not isinstance(attr, Attr):
        return [Problem(where, "expected an Attr", repr(attr))]
    if not isinstance(attr.name, str) or not re.fullmatch(ATTR_NAME_PATTERN, attr.name):
        expected = f"expected an attribute name matching {ATTR_NAME_PATTERN!r}"
        return [Problem(where, expected, repr(attr.name))]
    if attr.name in RESERVED_NAMES and attr.type not in STRUCTURAL_TYPES:
        expected = "expected an attribute name that is not a key of every node or level"
        return [Problem(where, expected, repr(attr.name))]
    if attr.type not in _ATTR_KINDS:
        expected = "expected one of " + ", ".join(_ATTR_KINDS)
        return [Problem(join_path(where, "type"), expected, repr(attr.type))]
    problems = _bound_problems(attr, where)
    if attr.pattern is not None:
        problems += _pattern_problems(attr.pattern, join_path(where, "pattern"))
    if not isinstance(attr.choices, tuple) or (attr.type == "enum" and not attr.choices):
        expected = "expected a list of values" + (" (at least one)" if attr.type == "enum" else "")
        problems.append(Problem(join_path(where, "choices"), expected, repr(attr.choices)))
    if attr.type == "list":
        problems += _attr_problems(attr.items, join_path(where, "items"), own_default=False)
    for item in attr.fields if attr.type == "mapping" else ():
        name = item.name if isinstance(item, Attr) else "fields"
        problems += _attr_problems(item, join_path(where, name), own_default=False)
    if problems or not own_default or attr.type in STRUCTURAL_TYPES:
        return problems
    if attr.default is None and attr.type != "mapping":
        return []
    return attr.check(attr.default_value(), where)[1]


def _bound_problems(attr: Attr, path: str) -> list[Problem]:
    problems = []
    for field in ("minimum", "maximum"):
        value = getattr(attr, field)
        if value is not None and not (is_number(value) and abs(value) <= LARGEST_FLOAT):
            expected = "expected a finite number (or none)"
            problems.append(Problem(join_path(path, field), expected, show_value(value)))
    if not isinstance(attr.exclusive_minimum, bool):
        expected = "expected true or false"
        problems.append(
            Problem(join_path(path, "exclusive_minimum"), expected, repr(attr.exclusive_minimum))
        )
    return problems


def _pattern_problems(pattern: object, path: str) -> list[Problem]:
    if not isinstance(pattern, str):
        return [Problem(path, "expected a regular expression", repr(pattern))]
    try:
        re.compile(pattern)
    except re.error as err:
        return [Problem(path, "expected a regular expression", f"{pattern!r} ({err})")]
    return []


def _shape(attr: Attr | None) -> str:
    """An attribute's type as code past validation reads it: ``float``, ``list of str``,
    ``mapping of matmul, conv, ...``."""
    if attr is None:
        return "none"
    if attr.type == "list":
        return f"list of {_shape(attr.items)}"
    if attr.type == "mapping":
        return "mapping of " + ", ".join(f"{f.name}: {_shape(f)}" for f in attr.fields)
    return attr.type


def _shared_problems(kind: Kind, shared: Kind, path: str) -> list[Problem]:
    """Problems with the attributes every kind of `kind`'s category has (`SHARED_ATTRS`)."""
    missing = [a.name for a in shared.attrs if kind.attr(a.name) is None]
    problems = []
    if missing:
        expected = (
            f"expected the attributes every {kind.category} kind has (base: {shared.name} gives "
            "them)"
        )
        problems.append(Problem(path, expected, "no " + ", ".join(missing)))
    for attr in shared.attrs:
        own = kind.attr(attr.name)
        if own is not None and _shape(own) != _shape(attr):
            expected = (
                f"expected {article(_shape(attr))} (every {kind.category} kind's {attr.name} is)"
            )
            problems.append(Problem(join_path(path, attr.name), expected, _shape(own)))
    return problems
