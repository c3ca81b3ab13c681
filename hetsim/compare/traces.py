"""Traces of shapes: the dims of each iteration of a comparison (`hetsim.compare.compare`).

A trace is a list of dims, one mapping per iteration, read from a file (`load_shapes`: a JSON
list or whitespace-separated sizes) or drawn from a spec (`dims_trace`: ``fixed:N``,
``uniform:LO:HI``, ``decode:START[:STEP]``, the ``--seq-dist`` of ``hetsim compare``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hetsim.errors import HetsimError, Problem, is_count
from hetsim.located import DuplicateKeyError, load_json, text_of
from hetsim.models.inputs import check_seed

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_SEQ_DIST",
    "DISTRIBUTIONS",
    "MAX_ITERATIONS",
    "MAX_SIZE",
    "check_iterations",
    "dims_trace",
    "load_shapes",
]

DEFAULT_ITERATIONS = 20
"""Iterations of a comparison when neither a count nor a shapes file says."""
DEFAULT_SEQ_DIST = "decode:32"
"""The trace of a model with symbolic dims when none is given: a decode, 32, 33, 34, ..."""
MAX_ITERATIONS = 1_000_000
"""The most iterations of a comparison, as ``hetsim compare --iterations`` allows
(`hetsim.cli.compare.MAX_ITERATIONS` says why): far larger counts are typos, and ran out of memory
or raised an `OverflowError` while the trace was made."""
MAX_SIZE = 2**63 - 1
"""The largest number in a spec or a shapes file: an int64, as numpy draws them (``uniform``) and
ONNX holds dims."""


def _fixed(args: list[int], iterations: int, rng: np.random.Generator) -> list[int]:
    return [args[0]] * iterations


def _uniform(args: list[int], iterations: int, rng: np.random.Generator) -> list[int]:
    return [int(v) for v in rng.integers(args[0], args[1] + 1, iterations)]


def _decode(args: list[int], iterations: int, rng: np.random.Generator) -> list[int]:
    step = args[1] if len(args) > 1 else 1
    return [args[0] + i * step for i in range(iterations)]


DISTRIBUTIONS: Mapping[str, tuple[Callable[..., list[int]], tuple[int, int], str]] = {
    "fixed": (_fixed, (1, 1), "fixed:N, every iteration N"),
    "uniform": (_uniform, (2, 2), "uniform:LO:HI, drawn from the seed, LO..HI inclusive"),
    "decode": (_decode, (1, 2), "decode:START[:STEP], START, START+STEP, ... (a growing context)"),
}
"""``--seq-dist`` kinds: name -> (draw, (least, most) arguments, syntax)."""


def dims_trace(
    spec: str, iterations: int, *, seed: int = 0, dims: Sequence[str] = ("seq",)
) -> tuple[dict[str, int], ...]:
    """One dims mapping per iteration from a spec; every dim in `dims` takes the drawn value.

    Raises
    ------
    HetsimError
        A spec that is not a str, an unknown kind, wrong arguments (each an integer >= 0 up
        to `MAX_SIZE`), iterations outside 1 to `MAX_ITERATIONS`, or `dims` that is not a
        sequence of names.

    Examples
    --------
    >>> dims_trace("decode:30:2", 3)
    ({'seq': 30}, {'seq': 32}, {'seq': 34})
    >>> [d["seq"] for d in dims_trace("uniform:1:100", 4, seed=0)]
    [86, 64, 52, 27]
    >>> dims_trace("normal:3", 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: --seq-dist: expected fixed:N, uniform:LO:HI or ..., got 'normal:3'
    """
    check_iterations(iterations)
    check_seed(seed)
    _check_dim_names(dims)
    if not isinstance(spec, str):
        raise HetsimError(_spec_problem(spec).message)
    kind, _, rest = spec.partition(":")
    found = DISTRIBUTIONS.get(kind)
    parts = rest.split(":") if rest else []
    # isdecimal, not isdigit: int() refuses the digits that are not decimal ('²')
    if found is None or not all(p.isdecimal() for p in parts):  # 0 too, as dims take it
        raise HetsimError(_spec_problem(spec).message)
    draw, (least, most), _ = found
    if not least <= len(parts) <= most:
        raise HetsimError(_spec_problem(spec).message)
    numbers = [_number(p) for p in parts]
    if any(n > MAX_SIZE for n in numbers):
        raise HetsimError(f"--seq-dist: expected numbers up to 2**63 - 1, got {spec!r}")
    if kind == "uniform" and numbers[0] > numbers[1]:
        raise HetsimError(f"--seq-dist: expected uniform:LO:HI with LO <= HI, got {spec!r}")
    values = draw(numbers, iterations, np.random.default_rng(seed))
    return tuple(dict.fromkeys(dims, value) for value in values)


def _spec_problem(spec: object) -> Problem:
    syntax = [text.split(",")[0] for _, _, text in DISTRIBUTIONS.values()]
    return Problem("--seq-dist", f"expected {', '.join(syntax[:-1])} or {syntax[-1]}", repr(spec))


def load_shapes(path: str | Path, *, dims: Sequence[str] = ("seq",)) -> tuple[dict[str, int], ...]:
    """The dims of each iteration from a file: a JSON list (of ints or of ``{dim: size}``) or
    whitespace-separated ints; an int sets every dim in `dims` (none, for a static model: it
    counts an iteration).

    Raises
    ------
    HetsimError
        A file that is neither (one that starts as JSON does, ``[`` or ``{``, and is not, says
        where), a size that is not an integer from 0 to `MAX_SIZE`, `path` that is not a str or
        an `os.PathLike`, or `dims` that is not a sequence of names.
    """
    if not isinstance(path, str | os.PathLike):
        expected = "expected a path to a shapes file (a str or an os.PathLike)"
        raise HetsimError(Problem("--shapes", expected, repr(path)).message)
    _check_dim_names(dims)
    text = text_of(path, "a shapes file")  # as given: "" is no folder
    if isinstance(text, Problem):
        raise HetsimError(replace(text, path=f"--shapes {path}").message)
    expected = "expected a JSON list or whitespace-separated integers"
    try:
        items = load_json(text)  # a key twice ({"seq": 4, "seq": 8}) is refused, not the last kept
    except json.JSONDecodeError as err:
        if text.lstrip()[:1] in ("[", "{"):  # meant as JSON: its ints would read as '[4'
            got = f"invalid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
            raise HetsimError(Problem(f"--shapes {path}", expected, got).message) from err
        items = text.split()
    except (ValueError, RecursionError) as err:  # a key twice, an int of 4,300+ digits, depth
        if isinstance(err, DuplicateKeyError) and err.problem_mark is not None:
            why = f"{err.problem} at line {err.problem_mark.line + 1}"
        else:
            deep = isinstance(err, RecursionError)
            why = "nested deeper than it can be read" if deep else str(err)
        got = f"invalid JSON ({why})"
        raise HetsimError(Problem(f"--shapes {path}", expected, got).message) from err
    trace = []
    for item in items if isinstance(items, list) else [items]:
        entry = _entry(item, dims)
        if isinstance(entry, str):
            raise HetsimError(Problem(f"--shapes {path}", entry, repr(item)).message)
        trace.append(entry)
    if not trace:
        got = "an empty list" if text.strip() else "no sizes"  # text with no item is "[]"
        raise HetsimError(
            Problem(f"--shapes {path}", "expected at least one iteration", got).message
        )
    return tuple(trace)


def _entry(item: Any, dims: Sequence[str]) -> dict[str, int] | str:
    """One iteration's dims from an item of a shapes file (a size or a mapping of sizes: ``{}``
    for a model without symbolic dims, as ``hetsim compare --json`` writes its trace), else what
    is expected of the item."""
    if isinstance(item, dict) and not item:  # whether the model needs dims: `check_trace`
        return {}
    sizes = {str(k): _size(v) for k, v in (item if isinstance(item, dict) else {"": item}).items()}
    found = {k: v for k, v in sizes.items() if v is not None}
    if not found or len(found) < len(sizes):
        return "expected integer sizes >= 0"
    if max(found.values()) > MAX_SIZE:  # a bare size too, which a static model does not use
        return "expected integer sizes up to 2**63 - 1"
    return found if isinstance(item, dict) else dict.fromkeys(dims, found[""])


def _size(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdecimal():
        return _number(value)
    if isinstance(value, int):
        return value if value >= 0 else None  # 0 too, as dims take it
    return None


def _number(digits: str) -> int:
    """Decimal `digits` as an int; past `MAX_SIZE` where int() cannot read them (4,300+ digits)."""
    try:
        return int(digits)
    except ValueError:  # as `hetsim.cli.counts.integer`: int() refuses that many digits
        return MAX_SIZE + 1


def _check_dim_names(dims: object) -> None:
    """Raise a `HetsimError` unless `dims` is a sequence of names (a str would be its letters)."""
    if isinstance(dims, str) or not (
        isinstance(dims, Sequence) and all(isinstance(name, str) for name in dims)
    ):
        raise HetsimError(Problem("dims", "expected a sequence of dim names", repr(dims)).message)


def check_iterations(iterations: Any) -> None:
    """Raise a `HetsimError` unless `iterations` is an integer from 1 to `MAX_ITERATIONS`."""
    if not is_count(iterations, 1) or iterations > MAX_ITERATIONS:
        expected = f"expected an integer from 1 to {MAX_ITERATIONS}"
        raise HetsimError(Problem("iterations", expected, repr(iterations)).message)
