"""The file a command or a function writes, checked before any work: a path to a file (not a
directory) in a directory that exists, and, for a file of one format, with no suffix or that
format's. Each check gives the `Problem` without a place (``expected ..., got ...``), for its
caller to raise as its own error: a usage error naming an option (`hetsim.cli.files`), a
`HetsimError` naming a function (`output_path`: `hetsim.report`, `hetsim.compare`,
`hetsim.platform.png_path`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from hetsim.errors import HetsimError, Problem

__all__ = ["name_problem", "output_path", "suffix_problem", "write_problem"]


def name_problem(path: str | Path) -> str | None:
    """What makes `path` no file name this system has, or None: a NUL in it, or a character it
    cannot encode (a lone surrogate). `open` raises ValueError for either, and
    ``Path.is_dir`` says False, so a check that asks only that passed them; and an empty str,
    which ``Path`` reads as the current folder (a file said to be "a directory" no one named).

    >>> name_problem("a" + chr(0)), name_problem(chr(0xD800) + ".json"), name_problem("a.json")
    ('a name with a NUL', 'a name this system cannot encode', None)
    >>> name_problem("")  # Path("") is the current folder, which no one named
    'an empty path'
    """
    text = str(path)
    if not text:
        return "an empty path"
    if "\0" in text:
        return "a name with a NUL"
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return "a name this system cannot encode"
    return None


def write_problem(path: str | Path) -> Problem | None:
    """Why `path` cannot be a file to write (a directory, or in a missing directory), or None;
    the message shows `path` as given (``./t.json``, not ``t.json``).

    >>> print(write_problem(Path(".")).message)
    expected a file to write, got the directory '.'
    >>> write_problem(Path("trace.json")) is None
    True
    >>> print(write_problem("").message)  # Path("") is the current directory
    expected a path of a file to write, got ''
    """
    text, out = str(path), Path(path)
    if not text.strip():
        return Problem("", "expected a path of a file to write", repr(text))
    bad_name = name_problem(text)
    if bad_name is not None:
        return Problem("", "expected a file it can write", f"{text!r} ({bad_name})")
    try:
        if out.is_dir():
            return Problem("", "expected a file to write", f"the directory {text!r}")
        if not out.parent.is_dir():
            got = f"{text!r} (no directory {str(out.parent)!r})"
            return Problem("", "expected a file in an existing directory", got)
    except (OSError, ValueError) as err:  # a name too long to look up, a NUL in it
        return Problem("", "expected a file it can write", f"{text!r} ({_reason(err)})")
    return None


def _reason(err: Exception) -> str:
    """An OSError's own words (``File name too long``), else the error's."""
    return getattr(err, "strerror", None) or str(err)


def suffix_problem(path: str | Path, suffix: str) -> Problem | None:
    """Why `path` cannot be a file of the format of `suffix` (``.png``, ``.json``): another
    suffix (any case passes; no suffix too), or None.

    >>> print(suffix_problem(Path("chart.jpg"), ".png").message)
    expected a .png path (or none), got 'chart.jpg'
    >>> suffix_problem(Path("chart.PNG"), ".png") is None, suffix_problem(Path("chart"), ".png")
    (True, None)
    """
    if Path(path).suffix.lower() in ("", suffix):
        return None
    return Problem("", f"expected a {suffix} path (or none)", repr(str(path)))


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
