"""The arguments of `hetsim.calibrate.bench_dispatch` (and ``hetsim bench dispatch``), checked
before any benchmark runs: op counts that fit a line, tags that resolve."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hetsim.errors import HetsimError, Problem, TargetError, is_count
from hetsim.ir.nodes import shown
from hetsim.target import Target

__all__ = ["MAX_OPS", "check_ops", "check_tags"]

MAX_OPS = 100_000
"""The largest op count of a benchmark graph (``hetsim bench dispatch --ops`` and
`hetsim.calibrate.bench_dispatch`). The benchmark builds and simulates a graph of that many ops
for each platform, runtime level and shape: ``hetsim bench dispatch --target x86-h100 --ops
1,100000`` took 14.8 s and 318 MB at its peak, against 2.0 s and 98 MB with ``--ops 1,10000``
(about 0.14 ms and 2.4 KB per op; ten times the default's largest count), and a count far past it
filled the memory before the first row (``bench_dispatch(ops=[1, 10**8])`` raised a
`MemoryError`, or was killed with the machine out of memory)."""


def check_ops(ops: object) -> tuple[int, ...]:
    """`ops` as op counts: positive integers up to `MAX_OPS`, at least two distinct (the fit
    needs a slope).

    A count of 0 or less built a graph of no ops (or of a Sum without inputs) and bent the fit.

    Examples
    --------
    >>> check_ops([1, 10])
    (1, 10)
    >>> check_ops([0, 10])
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: ops[0]: expected a positive integer (an op count), got 0
    """
    if isinstance(ops, str) or not isinstance(ops, Sequence):
        raise HetsimError(Problem("ops", "expected a sequence of op counts", shown(ops)).message)
    for index, count in enumerate(ops):
        if not is_count(count, 1):
            expected = "expected a positive integer (an op count)"
            raise HetsimError(Problem(f"ops[{index}]", expected, repr(count)).message)
        if count > MAX_OPS:
            expected = f"expected an op count of at most {MAX_OPS}"
            raise HetsimError(Problem(f"ops[{index}]", expected, repr(count)).message)
    if len(set(ops)) < 2:
        expected = "expected two or more distinct op counts (a line is fitted through them)"
        raise HetsimError(Problem("ops", expected, repr(list(ops))).message)
    return tuple(int(count) for count in ops)


def check_tags(tags: object, where: str = "tags") -> list[str]:
    """`tags` as a list of names that each resolve to a target, checked before any benchmark
    runs (`where` names them in the message: ``tags``, ``--target``).

    Raises
    ------
    TargetError
        A str (iterated, its letters were tags), no sequence or an empty one (it ran every
        shipped platform tag, as None does); every item that is not a str (a `Target` failed
        later, in the table and the JSON) and every name that does not resolve.

    Examples
    --------
    >>> check_tags(["x86-h10"], "--target")
    Traceback (most recent call last):
    ...
    hetsim.errors.TargetError: --target: unknown kind or tag 'x86-h10' (did you mean 'x86-h100'?)
    >>> check_tags([], "tags")
    Traceback (most recent call last):
    ...
    hetsim.errors.TargetError: tags: expected a list of one or more tag names, got list []
    """
    if isinstance(tags, str) or not isinstance(tags, Sequence):
        raise TargetError([Problem(where, "expected a list of tag names", shown(tags))])
    if not tags:
        raise TargetError([Problem(where, "expected a list of one or more tag names", shown(tags))])
    problems: list[Problem] = []
    for index, tag in enumerate(tags):
        if not isinstance(tag, str):
            problems.append(Problem(f"{where}[{index}]", "expected a tag name (a str)", shown(tag)))
            continue
        try:
            Target(tag)
        except TargetError as err:
            problems += [
                replace(p, path=f"{where}: {p.path}" if p.path else where) for p in err.problems
            ]
    if problems:
        raise TargetError(problems)
    return list(tags)
