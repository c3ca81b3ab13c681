"""Paths of the files a command writes, checked when the command line is read.

`output_file` is the argparse ``type`` of every option that names a file to write (``--trace``,
``--png``, ``--out``, ...): a path that cannot be written is a usage error that names the option,
before the command spends any time, rather than a traceback, or a file written elsewhere, after
a simulation. An option that writes one format checks the suffix too (`png_file`,
`suffixed_file`): JSON under ``t.png`` would mislead whatever opens the file. What only writing
finds out (a read-only folder, a full disk) is an error that names the option too: each write
runs under `writing`, which writes a file whole or not at all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hetsim.errors import HetsimError
from hetsim.located.paths import suffix_problem, write_problem

__all__ = ["input_path", "output_file", "png_file", "suffixed_file", "writing"]


def input_path(text: str) -> Path:
    """`text` as the path of a file or folder to read: not empty (``Path("")`` is ``.``, the
    current folder, which the error then named: ``--inputs ''`` read as ``inputs .``).

    >>> input_path("in.npz")
    PosixPath('in.npz')
    >>> input_path(" ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a path, got ' '
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return Path(text)


def output_file(text: str) -> Path:
    """`text` as the path of a file to write: not a directory, and in a directory that exists.

    Examples
    --------
    >>> str(output_file("trace.json"))
    'trace.json'
    >>> output_file(".")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a file to write, got the directory '.'
    >>> output_file("no-such-dir/trace.json")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a file in an existing directory, got \
'no-such-dir/trace.json' (no directory 'no-such-dir')
    """
    problem = write_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem.message)
    return Path(text)


def png_file(text: str) -> Path:
    """`output_file`, with no suffix or ``.png`` (the rule `hetsim.platform.png_path` shares),
    checked when the command line is read, so a run does not end in an error about its chart's
    file.

    >>> png_file("chart.jpg")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a .png path (or none), got 'chart.jpg'
    """
    return suffixed_file(".png")(text)


def suffixed_file(suffix: str) -> Callable[[str], Path]:
    """The argparse ``type`` of an option that writes one format: `output_file`, with no suffix
    or `suffix` (any case), as `png_file` has for charts.

    Examples
    --------
    >>> json_file = suffixed_file(".json")
    >>> str(json_file("trace.json")), str(json_file("trace"))
    ('trace.json', 'trace')
    >>> json_file("trace.png")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a .json path (or none), got 'trace.png'
    """

    def check(text: str) -> Path:
        path = output_file(text)
        problem = suffix_problem(text, suffix)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem.message)
        return path

    return check


@contextmanager
def writing(option: str, path: Path, *, whole: bool = True) -> Iterator[Path]:
    """Write the file of `option` at `path` in the block: an `OSError` becomes a `HetsimError`
    that names the option and the path (``--trace /ro/t.json: expected a file it can write,
    got Permission denied``).

    With `whole` (the default), the block writes a temporary file beside `path`, of its suffix
    (`partial_path`), which replaces `path` once the block ends: a write that fails (a full
    disk) leaves no half-written file, nor clobbers the one there before. That is for a new
    file or a regular one (`is_replaceable`): a device, a pipe or a symbolic link is written
    through, as it is (a replace had put a regular file in place of ``/dev/null``). Without
    `whole` the block writes `path` itself (a caller that writes through its own path).

    Examples
    --------
    >>> with writing("--trace", Path("/no/such/dir/t.json")) as path:
    ...     path.write_text("{}")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: --trace /no/such/dir/t.json: expected a file it can write, got \
No such file or directory
    """
    whole = whole and is_replaceable(path)
    target = partial_path(path) if whole else path
    try:
        try:
            yield target
            if whole:
                os.replace(target, path)
        except BaseException:
            if whole:
                with contextlib.suppress(OSError):
                    target.unlink()
            raise
    except OSError as err:
        raise HetsimError(
            f"{option} {path}: expected a file it can write, got {err.strerror or err}"
        ) from err


def is_replaceable(path: Path) -> bool:
    """Whether `writing` may write `path` whole and put it in place: it is a regular file, not
    a link to one, in a folder that takes a new file, or nothing yet (a device, a pipe, a link
    or a file in a read-only folder is written through).

    >>> is_replaceable(Path("/dev/null")), is_replaceable(Path("/no/such/file.json"))
    (False, True)
    """
    try:
        mode = path.lstat().st_mode
    except OSError:  # nothing there (or nothing to see): writing says what fails
        return True
    # a writable file in a folder that takes no new file: written in place, as it can be
    return stat.S_ISREG(mode) and os.access(path.parent, os.W_OK)


def partial_path(path: Path) -> Path:
    """Where `writing` writes `path` before it is whole: a hidden file beside it, of its suffix
    and no other (a writer may read its format from the suffix, as matplotlib and the charts'
    own checks do: a name without one must get none).

    >>> [partial_path(Path(p)).suffix for p in ("out/run.png", "soc", "a.b.json", ".trace")]
    ['.png', '', '.json', '']
    >>> partial_path(Path("out/run.png")).parent
    PosixPath('out')
    """
    stem = path.name[: len(path.name) - len(path.suffix)].replace(".", "_")
    return path.with_name(f".partial-{os.getpid()}-{stem}{path.suffix}")
