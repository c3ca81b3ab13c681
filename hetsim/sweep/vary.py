"""A sweep's ``vary`` key: the override paths it varies, each with a list or a range of values.

`read_axes` checks the mapping and makes one `hetsim.sweep.points.Axis` per path: a list of
distinct values as written, or a range, ``{start, stop, step}`` (stop included when a step lands
on it) or ``{start, stop, num}`` (evenly spaced), its values rounded to `DIGITS` decimals so that
``0.1 + 0.2`` reads ``0.3``. Values that set the same target are not distinct: ``1`` and ``1.0``,
and two lists of `SET_ATTRS` with the same items. Paths must be apart (one inside another would
set it twice), and zipped (``expand: list``) lists must be of one length. The rest of the file
is `hetsim.sweep.spec`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hetsim.errors import Problem
from hetsim.sweep.points import Axis, digest, parse_path
from hetsim.target.schema import join_path
from hetsim.target.values import finite_float, show_value, yaml_number_hint

__all__ = ["DIGITS", "MAX_POINTS", "SET_ATTRS", "read_axes", "read_values"]

DIGITS = 12
"""Decimals a range's values are rounded to, so that 0.1 + 0.2 reads 0.3."""
MAX_POINTS = 1_000_000
"""The most values an axis, and the most points a sweep, may have: a range's ``num`` or a tiny
``step`` is refused before its values are made (a typo of 1e9 filled the memory, silently)."""
SET_ATTRS = frozenset({"ops", "dtypes"})
"""The list attributes a simulation reads as sets: it asks only whether an op type or a dtype is
in one (`hetsim.runtime.placement.can_run`, `hetsim.partition.context.refusals`), so that lists
of the same items, in another order or repeated, set the same target (they made two points that
tied)."""


def read_axes(vary: Any, expand: str) -> tuple[tuple[Axis, ...], list[Problem], bool]:
    """The axes of the ``vary`` value `vary`, every problem of it, and whether they can be
    crossed (``expand: grid``) or zipped (``list``) as they are.

    >>> axes, problems, _ = read_axes({"executor.dispatch_us": [1, 2], "seed": [1, 1]}, "grid")
    >>> axes
    (Axis(path='executor.dispatch_us', values=(1, 2)),)
    >>> print(problems[0].message)
    vary.seed: expected distinct values, got [1, 1]
    """
    problems: list[Problem] = []
    if not isinstance(vary, Mapping):
        problems.append(_problem("vary", "expected a mapping of override path -> values", vary))
        return (), problems, False
    axes = []
    for path, spec in vary.items():
        where = join_path("vary", path)  # an empty path is written vary.'' (its line found)
        try:
            parse_path(path)  # not str(path): that made ``null`` the attribute 'None'
        except ValueError as err:
            problems.append(Problem(where, str(err)))
            continue
        values = read_values(problems, where, spec, parse_path(path)[-1])
        if values:
            axes.append(Axis(path, values))
    expandable = _apart(problems, [a.path for a in axes])
    lengths = {len(a.values) for a in axes}
    if expand == "list" and len(lengths) > 1:
        counts = ", ".join(f"{a.path}: {len(a.values)}" for a in axes)
        expected = "expected lists of one length (expand: list zips them)"
        problems.append(Problem("vary", expected, f"lengths {counts}"))
        expandable = False
    return tuple(axes), problems, expandable


def _problem(where: str, expected: str, got: Any, hint: str | None = None) -> Problem:
    return Problem(where, expected, show_value(got), hint)


def read_values(
    problems: list[Problem], where: str, spec: Any, key: str | None = None
) -> tuple[Any, ...]:
    """The values of one axis at `where`, as ``vary`` reads them: a non-empty list of distinct
    values (`_same`; `key` is the attribute they set), or a range (`_range`); none, with a
    problem added, otherwise (the sweep's ``dims`` reads its lists of sizes so).

    >>> problems: list[Problem] = []
    >>> read_values(problems, "vary.ops", [["Conv", "Relu"], ["Relu", "Conv"]], "ops")
    ()
    >>> print(problems[0].message)  # doctest: +NORMALIZE_WHITESPACE
    vary.ops: expected distinct values (ops and dtypes lists are sets: their order and repeats
    mean nothing), got ['Conv', 'Relu'] and ['Relu', 'Conv']
    """
    if isinstance(spec, Mapping):
        return _range(problems, where, spec)
    if not isinstance(spec, list) or not spec:
        expected = "expected a non-empty list of values or {start, stop, step|num}"
        problems.append(_problem(where, expected, spec))
        return ()
    seen: dict[Any, int] = {}
    for index, value in enumerate(spec):
        first = seen.setdefault(_same(value, key), index)
        if first != index:
            problems.append(_duplicate(where, spec, spec[first], value))
            return ()
    return tuple(spec)


def _duplicate(where: str, spec: list[Any], first: Any, second: Any) -> Problem:
    """The problem of list `spec` at `where`, whose `first` and `second` set the same target: the
    list where they are written alike (or are numbers), else the two, and why they are alike."""
    if _written(first) == _written(second):
        return _problem(where, "expected distinct values", spec)
    expected = (
        "expected distinct values (ops and dtypes lists are sets: their order and repeats mean "
        "nothing)"
    )
    return Problem(where, expected, f"{show_value(first)} and {show_value(second)}")


def _same(value: Any, key: str | None) -> Any:
    """What two values that set the same target (at attribute `key`) share: what they mean
    (`_meaning`), as `_written`."""
    return _written(_meaning(value, key))


def _written(value: Any) -> Any:
    """What two values written alike share: a number itself (``1`` and ``1.0`` made two points
    of one target, with two ids), else its digest."""
    if _is_finite(value):
        return value
    try:
        return digest(value)
    except TypeError:  # a mapping of str and int keys, not sortable: the target schema says so
        return repr(value)


def _meaning(value: Any, key: str | None) -> Any:
    """`value`, set at attribute `key`, with each list of `SET_ATTRS` in it (itself, or in a
    mapping under its key) as its distinct items, sorted.

    >>> _meaning({"ops": ["Relu", "Conv", "Relu"], "cores": 2}, None)
    {'ops': ['Conv', 'Relu'], 'cores': 2}
    """
    if isinstance(value, Mapping):
        return {name: _meaning(item, name) for name, item in value.items()}
    if not isinstance(value, list):
        return value
    if key in SET_ATTRS and all(isinstance(item, str) for item in value):
        return sorted(set(value))
    return [_meaning(item, None) for item in value]


def _range(problems: list[Problem], where: str, spec: Mapping[str, Any]) -> tuple[Any, ...]:
    """``{start, stop, step}`` (stop included when a step lands on it) or ``{start, stop, num}``.

    >>> _range([], "x", {"start": 0.1, "stop": 0.5, "step": 0.2})
    (0.1, 0.3, 0.5)
    >>> _range([], "x", {"start": 1, "stop": 4, "num": 3})
    (1.0, 2.5, 4.0)
    """
    keys = set(spec)
    if keys not in ({"start", "stop", "step"}, {"start", "stop", "num"}):
        expected = "expected a range {start, stop, step} or {start, stop, num}"
        problems.append(_problem(where, expected, dict(spec)))
        return ()
    start, stop = spec["start"], spec["stop"]
    for key, value in (("start", start), ("stop", stop)):
        if not _is_finite(value):
            hint = yaml_number_hint(value)
            problems.append(_problem(f"{where}.{key}", "expected a number", value, hint))
    if not all(_is_finite(v) for v in (start, stop)):
        return ()
    if not _is_finite(stop - start):  # -1e308 to 1e308: every value in between was inf or nan
        expected = "expected a range whose width (stop - start) is a finite number"
        problems.append(Problem(where, expected, f"{start!r} to {stop!r}"))
        return ()
    if "num" in spec:
        num = spec["num"]
        if isinstance(num, bool) or not isinstance(num, int) or num < 1:
            problems.append(_problem(f"{where}.num", "expected an integer >= 1", num))
            return ()
        if num > MAX_POINTS:
            problems.append(_problem(f"{where}.num", f"expected at most {MAX_POINTS}", num))
            return ()
        if num > 1 and start == stop:
            problems.append(_problem(where, "expected distinct values (start equals stop)", spec))
            return ()
        if all(isinstance(v, int) for v in (start, stop)):
            step, left = divmod(stop - start, max(num - 1, 1))
            if not left:  # integers evenly apart: as written, not as floats
                return tuple(start + i * step for i in range(num))
        width = (stop - start) / (num - 1) if num > 1 else 0.0
        return _distinct(problems, where, [round(start + i * width, DIGITS) for i in range(num)])
    step = spec["step"]
    if not _is_finite(step) or step == 0 or (stop - start) * step < 0:
        expected = "expected a number that walks from start to stop"
        problems.append(_problem(f"{where}.step", expected, step, yaml_number_hint(step)))
        return ()
    steps = (stop - start) / step
    if steps + 1e-9 >= MAX_POINTS:  # before floor(), which raised on a step of 5e-324: inf
        expected = f"expected a step that makes at most {MAX_POINTS} values"
        problems.append(_problem(f"{where}.step", expected, step))
        return ()
    count = math.floor(steps + 1e-9) + 1
    is_int = all(isinstance(v, int) for v in (start, stop, step))
    values = (start + i * step for i in range(count))
    return _distinct(problems, where, [v if is_int else round(v, DIGITS) for v in values])


def _distinct(problems: list[Problem], where: str, values: list[Any]) -> tuple[Any, ...]:
    """`values` as a tuple when they are distinct; else a problem (a step below `DIGITS`)."""
    if len(set(values)) == len(values):
        return tuple(values)
    expected = f"expected distinct values (a range's values are rounded to {DIGITS} decimals)"
    problems.append(Problem(where, expected, f"{len(set(values))} distinct of {len(values)}"))
    return ()


def _apart(problems: list[Problem], paths: list[str]) -> bool:
    """Whether no path of `paths` lies inside another; a problem for each that does."""
    keys = {path: parse_path(path) for path in paths}
    apart = True
    for path, inner in keys.items():
        for other, outer in keys.items():
            if other != path and inner[: len(outer)] == outer:
                where = "the same path as" if inner == outer else "a path inside"
                problems.append(
                    Problem(f"vary.{path}", "expected separate paths", f"{where} {other!r}")
                )
                apart = False
    return apart


def _is_finite(value: Any) -> bool:
    return finite_float(value) is not None
