"""Paths of the files a command writes, checked when the command line is read.

`output_file` is the argparse ``type`` of every option that names a file to write (``--trace``,
``--png``, ``--out``, ...): a path that cannot be written is a usage error that names the option,
before the command spends any time, rather than a traceback, or a file written elsewhere, after
a simulation.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["output_file"]


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
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"expected a file to write, got the directory {text!r}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"expected a file in an existing directory, got {text!r} "
            f"(no directory {str(path.parent)!r})"
        )
    return path
