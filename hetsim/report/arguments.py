"""What a user hands to `hetsim.report`'s functions, checked: a run's record, a file to write.

Owns two rules: a function that reads a run takes its `RunRecord`, or a `Result` (whose record it
reads); a function that writes a file takes a path (a str or an `os.PathLike`) to a file, not a
directory, in a directory that exists, with no suffix or the one of its format
(`hetsim.located.paths.output_path`, here for its users in `hetsim.report`). Both are checked
before any work, so that a mistake is a `HetsimError` naming the function rather than an
`AttributeError` from deep inside, or an error after a large trace is built. A write that fails
anyway (a read-only folder, a full disk) raises its `OSError`, which names the file and why; the
CLI names its option from it (`hetsim.cli.files.writing`).
"""

from __future__ import annotations

from hetsim.errors import HetsimError, Problem
from hetsim.located.paths import output_path
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
