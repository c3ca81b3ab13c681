"""The ``hetsim`` command line: one sub-module per command group, each with ``register(sub)``.

Only this package reads the environment and prints; errors a user caused (`HetsimError`) print as
one message per problem, without a traceback (control characters escaped: `_error`), and exit
with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from hetsim.cli.calibrate import TAG_DIR_VARIABLE, register_user_tags
from hetsim.errors import HetsimError, TargetError, printable, printable_lines

__all__ = ["main"]

# An optional dependency's top-level module -> the extra that installs it.
EXTRA_OF_MODULE = {
    "onnx": "onnx",
    "matplotlib": "plot",
    "rich": "rich",
    "dask": "dist",
    "distributed": "dist",
    "tvm": "tvm",
    "threadpoolctl": "calibrate",
}

# Each module defines register(subparsers); a parser it adds sets `func(args) -> int`, and
# `reads_user_tags=False` if the command must run whatever the user's tag folder holds.
COMMAND_MODULES = (
    "targets",
    "model",
    "platform",
    "plan",
    "run",
    "compare",
    "sweep",
    "calibrate",
    "bench",
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog="hetsim", description="Simulate models on heterogeneous, multi-level platforms."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        import_module(f"hetsim.cli.{name}").register(subparsers)
    return parser


def _naming_the_model_file(err: HetsimError, args: argparse.Namespace) -> str:
    """`err`'s message, led by the model file when an op of a model read from one failed as the
    command ran (a shape its rule refuses, a value it needs), as the loader's own errors are led.

    >>> from hetsim.errors import OpError
    >>> err = OpError("op y (MatMul): expected ...", "y")
    >>> _naming_the_model_file(err, argparse.Namespace(model="m.onnx"))
    'm.onnx: op y (MatMul): expected ...'
    >>> _naming_the_model_file(err, argparse.Namespace(model="mlp"))  # a zoo model: no file
    'op y (MatMul): expected ...'
    """
    # imported on this error path only: the CLI starts without the zoo
    from hetsim.models import named_by_file

    return str(named_by_file(err, getattr(args, "model", None)))


def _user_tags_hint(err: HetsimError) -> str:
    """Where a tag of the user's own comes from, for an unknown tag with no close name: a tag
    folder that `targets list --tags` showed is not registered for `run` or `plan`."""
    unknown = ("unknown tag ", "unknown kind or tag ")
    if isinstance(err, TargetError) and any(
        p.expected.startswith(unknown) and p.hint is None for p in err.problems
    ):
        return (
            f" (a tag folder of your own: {TAG_DIR_VARIABLE}=DIR before any command, or the "
            "command's --tags DIR where it has one)"
        )
    return ""


def _error(message: str) -> None:
    """Print `message` as the command's error, its lines `printable_lines`, as a note's are: a
    name a message holds unquoted sends the terminal no escape codes, whatever built it.

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     _error("a: expected x\\nop \\x1b[2Jy: expected z")
    >>> print(err.getvalue(), end="")
    error: a: expected x
    op \\x1b[2Jy: expected z
    """
    print(f"error: {printable_lines(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        # A calibrated `local` tag (and any other user tag) works with every command's --target;
        # not before `calibrate`, which rewrites that tag: a corrupt one must not block its fix.
        if getattr(args, "reads_user_tags", True):
            register_user_tags()
        return int(args.func(args) or 0)
    except HetsimError as err:
        _error(f"{_naming_the_model_file(err, args)}{_user_tags_hint(err)}")
        return 1
    except ModuleNotFoundError as err:
        extra = EXTRA_OF_MODULE.get((err.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"error: {err.name} is not installed; it comes with hetsim's '{extra}' extra: "
              f'pip install "hetsim[{extra}]" (from a clone: pip install -e ".[{extra}]")',
              file=sys.stderr)  # fmt: skip
        return 1
    except FileNotFoundError as err:
        _error(f"{printable(err.filename)}: no such file")
        return 1
    except BrokenPipeError:
        # The reader (`hetsim ... | head`) left: stop quietly, as Unix tools do; pointing stdout
        # at devnull keeps the interpreter's final flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:  # a file the command reads or writes: permissions, a full disk
        where = f"{printable(err.filename)}: " if err.filename else ""
        _error(f"{where}{err.strerror or err}")
        return 1
