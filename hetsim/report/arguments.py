"""What a user hands to `hetsim.report`'s functions, checked: a run's record, a file to write.

Owns two rules: a function that reads a run takes its `RunRecord`, or a `Result` (whose record it
reads); a function that writes a file takes a path (a str or an `os.PathLike`) to a file, not a
directory, in a directory that exists, with no suffix or the one of its format. Both are checked
before any work, so that a mistake is a `HetsimError` naming the function rather than an
`AttributeError` from deep inside, or an error after a large trace is built. A write that fails
anyway (a read-only folder, a full disk) raises its `OSError`, which names the file and why; the
CLI names its option from it (`hetsim.cli.files.writing`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from hetsim.errors import HetsimError, Problem
from hetsim.located.paths import suffix_problem, write_problem
from hetsim.sim.records import RunRecord

__all__ = ["check_record", "output_path"]


def check_record(run: object, what: str) -> RunRecord:
    """`run`'s record: `run` itself if it is a `RunRecord`, else the record of a `Result`.

    Raises
    ------
    HetsimError
        Anything else (`what` names the function called).

    Examples
    --------
    >>> check_record(None, "chrome_trace")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: chrome_trace: expected a RunRecord or a Result, got NoneType
    """
    record = getattr(run, "record", run)  # a Result's
    if not isinstance(record, RunRecord):
        expected = "expected a RunRecord or a Result"
        raise HetsimError(Problem(what, expected, type(run).__name__).message)
    return record


def output_path(path: object, what: str, suffix: str) -> Path:
    """`path` checked as the file `what` writes in the format of `suffix` (``.json``, ``.png``).

    Raises
    ------
    HetsimError
        Not a str or an `os.PathLike` (or an empty one), a suffix other than `suffix` (any
        case), a directory, or a file in a directory that does not exist.

    Examples
    --------
    >>> output_path("run.json", "to_chrome_trace", ".json")
    PosixPath('run.json')
    >>> output_path(1, "to_chrome_trace", ".json")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: to_chrome_trace: expected a path (a str or an os.PathLike), got 1
    >>> output_path("run.png", "to_chrome_trace", ".json")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: to_chrome_trace: expected a .json path (or none), got 'run.png'
    >>> output_path("no-such-dir/run.json", "to_chrome_trace", ".json")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: to_chrome_trace: expected a file in an existing directory, got \
'no-such-dir/run.json' (no directory 'no-such-dir')
    """
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str) or not text:  # Path("") is the current directory
        expected = "expected a path (a str or an os.PathLike)"
        raise HetsimError(Problem(what, expected, repr(path)).message)
    for problem in (suffix_problem(text, suffix), write_problem(text)):  # in this order
        if problem is not None:
            raise HetsimError(replace(problem, path=what).message)
    return Path(text)
