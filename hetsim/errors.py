"""HetsimError and its subclasses, nothing else.

Every error a user can cause is a `HetsimError`; each subclass also derives from the built-in
exception it refines, so callers can catch either one. Messages share one shape,
``<where>: <expected>, got <found>[ (did you mean 'x'?)]``, built by `Problem.message`; the
name suggested is `close_name`'s.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral
from typing import Any, TypeGuard

import numpy as np

__all__ = [
    "HetsimError",
    "ModelError",
    "OpError",
    "OutOfMemoryError",
    "PartitionError",
    "Problem",
    "SimulationError",
    "SweepError",
    "TargetError",
    "TimeOverflowError",
    "UnknownValueError",
    "as_bool",
    "close_name",
    "input_values_untaken",
    "is_count",
    "is_items",
    "printable",
    "printable_lines",
]


def close_name(word: str, names: Collection[str]) -> str | None:
    """The name of `names` that `word` likely misspells: one that differs only in case
    (``transb``: ``transB``), else the closest, if one is close enough.

    >>> close_name("transb", ["transA", "transB"]), close_name("xyz", ["transB"])
    ('transB', None)
    """
    same = [n for n in names if n.lower() == word.lower()]
    close = same or difflib.get_close_matches(word, names, n=1)
    return close[0] if close else None


def printable(text: object) -> str:
    """`text` (as `str` gives it) as a message shows a name or a path it does not quote with
    ``!r``: each character that is not printable (a newline, a tab, an escape) written as in a
    Python literal (``\\n``, ``\\x1b``), so that a name read from a file can neither break a
    message's lines nor send a terminal its escape codes.

    >>> print(printable("conv\\n1"), printable("\\x1b[31mred"), printable("café 1"))
    conv\\n1 \\x1b[31mred café 1
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def printable_lines(text: str) -> str:
    """`text` with each of its lines `printable`: a message of several lines (one problem each)
    keeps its line breaks, and a name inside one can neither add a line nor send an escape.

    >>> print(printable_lines("a: expected x\\nop \\x1b[2Jy: expected z"))
    a: expected x
    op \\x1b[2Jy: expected z
    """
    return "\n".join(map(printable, text.split("\n")))


def as_bool(value: object) -> object:
    """`value`, as Python's bool where it is numpy's (``np.True_``), as a numpy integer passes
    for an int (`is_count`); any other value as it is, for the caller to refuse.

    >>> import numpy as np
    >>> as_bool(np.False_) is False, as_bool(True), as_bool("no")
    (True, True, 'no')
    """
    return bool(value) if isinstance(value, np.bool_) else value


def is_count(value: object, minimum: int = 0) -> bool:
    """Whether `value` is an integer (a numpy one too, never a bool) of at least `minimum`: what
    a size, a seed or a byte count a user gives must be.

    >>> is_count(3), is_count(0), is_count(True), is_count(2.0), is_count("8"), is_count(0, 1)
    (True, True, False, False, False, False)
    """
    return not isinstance(value, bool) and isinstance(value, Integral) and int(value) >= minimum


def is_items(value: object) -> TypeGuard[Iterable[Any]]:
    """Whether `value` is a collection of items an option takes: iterable, but not a str, bytes
    or a mapping, nor a 0-d numpy array (iterable by its type, not by its value).

    >>> import numpy as np
    >>> is_items([1, 2]), is_items(np.array([1, 2])), is_items(np.array(4)), is_items("ab")
    (True, True, False, False)
    """
    return (
        isinstance(value, Iterable)
        and not isinstance(value, str | bytes | Mapping)
        and getattr(value, "ndim", 1) != 0
    )


class HetsimError(Exception):
    """Base class for all hetsim errors."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem found in a user's input: where it is, what was expected, what came.

    Examples
    --------
    >>> Problem("host.freq_ghz", "expected a positive number", "'fast'").message
    "host.freq_ghz: expected a positive number, got 'fast'"
    >>> Problem("link.bandwith_gbps", "unknown attribute", hint="bandwidth_gbps").message
    "link.bandwith_gbps: unknown attribute (did you mean 'bandwidth_gbps'?)"
    """

    path: str
    expected: str
    got: str | None = None
    hint: str | None = None

    @property
    def message(self) -> str:
        text = f"{printable(self.path)}: {self.expected}" if self.path else self.expected
        if self.got is not None:
            text += f", got {self.got}"
        if self.hint is not None:
            text += f" (did you mean {self.hint!r}?)"
        return text

    def __str__(self) -> str:
        return self.message


class _ProblemsError(HetsimError):
    """An error carrying every `Problem` found, one per line in its message."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...] | str) -> None:
        if isinstance(problems, str):
            problems = (Problem("", problems),)
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(p.message for p in self.problems))


class TargetError(_ProblemsError, ValueError):
    """A target config is invalid; `problems` holds every Problem(path, expected, got, hint)."""


class ModelError(HetsimError, ValueError):
    """A model is invalid or uses something hetsim does not support (an op, a dtype, a file)."""


class OpError(ModelError):
    """An op of a model is invalid (an attribute, an input count, a shape its rule refuses) or
    its kernel failed; `op` names it, as the message's ``op <name> (<type>):`` does.

    >>> err = OpError("op r0 (Reshape): expected 2 inputs, got 1", "r0")
    >>> err.op, isinstance(err, ModelError)
    ('r0', True)
    """

    def __init__(self, message: str, op: str) -> None:
        # both in args: SimPy copies an exception that fails a process as type(err)(*err.args),
        # and pickling (a sweep's worker sends errors to the client) rebuilds it from them
        super().__init__(message, op)
        self.op = op

    def __str__(self) -> str:
        return str(self.args[0])


class UnknownValueError(ModelError):
    """A shape depends on the value of a tensor that is not known before the run: one computed
    from data, or a graph input (an Expand's shape) whose array was not given. `tensor` names it;
    `expected` is what the shape rule needed (``op e (Expand): expected a known value for input
    1 (shape)``), and the message adds what it got.

    >>> err = UnknownValueError("op e (Expand): expected a known value", "s")
    >>> print(err)
    op e (Expand): expected a known value, got a computed tensor 's'
    >>> print(err.of_graph_input())  # doctest: +NORMALIZE_WHITESPACE
    op e (Expand): expected a known value, got graph input 's' without its array
    (pass it in inputs)
    """

    def __init__(
        self, expected: str, tensor: str, got: str | None = None, *, is_graph_input: bool = False
    ) -> None:
        super().__init__(f"{expected}, got {got or f'a computed tensor {tensor!r}'}")
        self.expected = expected
        self.tensor = tensor
        self.got = got
        self.is_graph_input = is_graph_input
        """Whether `tensor` is a graph input (whose array a caller could give)."""

    def of_graph_input(self, got: str | None = None) -> UnknownValueError:
        """The same error said of a graph input: its value is never computed, only given
        (`got`: what the message says of it, by default to pass it in ``inputs``)."""
        got = got or f"graph input {self.tensor!r} without its array (pass it in inputs)"
        return UnknownValueError(self.expected, self.tensor, got, is_graph_input=True)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled whole (a sweep's worker sends errors to the client)
        return _unknown_value, (self.expected, self.tensor, self.got, self.is_graph_input)


def _unknown_value(
    expected: str, tensor: str, got: str | None, is_graph_input: bool
) -> UnknownValueError:
    """An `UnknownValueError` unpickled (its flag is a keyword)."""
    return UnknownValueError(expected, tensor, got, is_graph_input=is_graph_input)


@contextmanager
def input_values_untaken(taker: str, how: str, why: str = "") -> Iterator[None]:
    """Where `taker` (``hetsim plan``, ``compare``) propagates shapes without input arrays: a
    shape read from a graph input's value says so in its terms, `why` it cannot take one and
    `how` one is given, not the API's "pass it in inputs", an argument `taker` lacks.

    >>> with input_values_untaken("hetsim plan", "hetsim run --inputs FILE reads it"):
    ...     raise UnknownValueError("op r (Reshape): expected a known value", "s").of_graph_input()
    Traceback (most recent call last):
    ...
    hetsim.errors.UnknownValueError: op r (Reshape): expected a known value, got graph input 's', \
whose value hetsim plan cannot take (hetsim run --inputs FILE reads it)
    """
    try:
        yield
    except UnknownValueError as err:
        if not err.is_graph_input:
            raise
        got = f"graph input {err.tensor!r}, whose value {taker} cannot take{why} ({how})"
        raise err.of_graph_input(got) from err


class PartitionError(_ProblemsError, ValueError):
    """A model cannot be placed on a platform: an op no device can run, a rule that cannot apply.

    A rule's error says where in the rules it is (`problems`: ``rules[2].device``), so that a
    sweep file can name the same place in its own ``rules`` key."""


class SimulationError(HetsimError, RuntimeError):
    """A simulated run failed: out of memory, a deadlock, a program that cannot run."""


class OutOfMemoryError(SimulationError):
    """A simulated run needs more of a memory than it holds (the message names the memory, the
    tensor and the op; `at_us`, when known, the simulated time). `hetsim.api.fastest_plan` takes
    such a candidate plan as one that cannot run rather than failing the call.

    >>> err = OutOfMemoryError("sim at 2.0 us, host: out of memory in host.mem", 2.0)
    >>> str(err), err.at_us
    ('sim at 2.0 us, host: out of memory in host.mem', 2.0)
    """

    def __init__(self, message: str, at_us: float | None = None) -> None:
        # both in args: SimPy copies an exception that fails a process as type(err)(*err.args)
        super().__init__(message, at_us)
        self.at_us = at_us

    def __str__(self) -> str:
        return str(self.args[0])


class TimeOverflowError(SimulationError):
    """A run whose simulated time is not finite: its parameters are, but sums of ones near the
    largest float are not. `hetsim.api.fastest_plan` takes such a candidate plan as never
    finishing rather than failing the call."""


class SweepError(_ProblemsError, ValueError):
    """A sweep file is invalid, or a results file does not belong to the sweep."""
