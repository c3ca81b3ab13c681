"""``hetsim calibrate [--out FILE] [--quick]``: measure this machine and write the ``local`` tag.

Owns the command, the progress bar, and where the user's tag folder is: ``$HETSIM_TAG_DIR``, else
``$XDG_CONFIG_HOME/hetsim/targets`` (``~/.config/hetsim/targets``). `register_user_tags` adds
that folder when it exists, so ``--target local`` finds a calibration without options. The
measuring and fitting are `hetsim.calibrate`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hetsim.calibrate import LOCAL_TAG, calibrate, is_thread_count, steps, thread_range, write_tag
from hetsim.cli.counts import integer
from hetsim.cli.files import output_file, writing
from hetsim.errors import HetsimError, TargetError
from hetsim.target import TAGS, add_tag_dir

__all__ = [
    "progress",
    "register",
    "register_user_tags",
    "tag_dir_problem",
    "thread_count",
    "user_tag_dir",
]

TAG_DIR_VARIABLE = "HETSIM_TAG_DIR"


def user_tag_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's tag folder: ``$HETSIM_TAG_DIR``, else ``<config home>/hetsim/targets``.

    >>> str(user_tag_dir({"HETSIM_TAG_DIR": "/tmp/tags"}))
    '/tmp/tags'
    >>> str(user_tag_dir({"XDG_CONFIG_HOME": "/cfg"}))
    '/cfg/hetsim/targets'
    """
    env = os.environ if environ is None else environ
    if env.get(TAG_DIR_VARIABLE):
        return Path(env[TAG_DIR_VARIABLE])
    config = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "hetsim" / "targets"


def register_user_tags(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Register the user's tag folder if it exists and is not registered yet; return new names.

    Raises
    ------
    HetsimError
        The folder is a file, or lies under one (`tag_dir_problem`: a calibrated tag there
        would be unknown to every command, which read nothing from it), or holds a bad tag.
    """
    problem = tag_dir_problem(environ)
    if problem is not None:
        raise HetsimError(problem)
    folder = user_tag_dir(environ)
    if not folder.is_dir() or folder.resolve() in {f.resolve() for f in TAGS.folders()}:
        return ()
    try:
        return add_tag_dir(folder)
    except TargetError as err:  # it breaks every command: say which folder, and how to move it
        raise HetsimError(
            f"the user tag folder {folder} (HETSIM_TAG_DIR, else $XDG_CONFIG_HOME/hetsim/targets) "
            f"holds bad tags:\n{err}"
        ) from err


def tag_dir_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why the user's tag folder cannot take the tag file (it, or a folder above it, is a file),
    naming the variable that chose it; None when it can (a missing one is made).

    >>> print(tag_dir_problem({"HETSIM_TAG_DIR": "/dev/null"}))
    HETSIM_TAG_DIR: expected a folder of tag files, got the file '/dev/null'
    """
    env = os.environ if environ is None else environ
    folder = user_tag_dir(env)
    found = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    if found.is_dir() or not found.exists():
        return None
    where = TAG_DIR_VARIABLE if env.get(TAG_DIR_VARIABLE) else "$XDG_CONFIG_HOME/hetsim/targets"
    got = f"the file {str(found)!r}"
    if found != folder:
        got = f"{str(folder)!r} (under {got})"
    return f"{where}: expected a folder of tag files, got {got}"


def thread_count(text: str) -> int:
    """``--threads``: an integer from 1 to this machine's CPUs (`thread_range`), checked when
    the command line is read.

    >>> thread_count("0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to this machine's CPUs (...), got '0'
    """
    value = integer(text)
    if value is None or not is_thread_count(value):
        raise argparse.ArgumentTypeError(f"{thread_range()}, got {text!r}")
    return value


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[str], None]]:
    """A rich progress bar on stderr with `total` steps; yields the function that advances it."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), TextColumn("{task.description}"))
    console = Console(stderr=True)
    with Progress(*columns, TimeElapsedColumn(), transient=True, console=console) as bar:
        task = bar.add_task("", total=total)
        yield lambda step: bar.update(task, advance=1, description=step)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``calibrate`` command."""
    parser = subparsers.add_parser(
        "calibrate",
        help="measure this machine and write the 'local' target",
        description=(
            "Time hetsim's own numpy kernels on this machine, fit a CPU target to them and "
            f"write it as the tag '{LOCAL_TAG}' (default: {user_tag_dir() / 'local.yaml'})."
        ),
    )
    parser.add_argument("--out", type=output_file, metavar="FILE", help="the tag file to write")
    parser.add_argument("--quick", action="store_true", help="fewer probes: under a minute")
    parser.add_argument(
        "--threads", type=thread_count, metavar="N", help="BLAS threads to model (default: all)"
    )
    parser.add_argument(
        "--json", type=output_file, metavar="FILE", help="also write the machine and raw samples"
    )
    # the command rewrites the local tag: a corrupt one must not stop it (`hetsim.cli.main`)
    parser.set_defaults(func=run, reads_user_tags=False)


def run(args: argparse.Namespace) -> int:
    """Calibrate, write the tag file (and JSON), print the fitted values."""
    plan = "quick" if args.quick else "full"
    threads = args.threads if args.threads is not None else os.cpu_count() or 1
    problem = None if args.out else tag_dir_problem()
    if problem:  # else found only when writing, after the whole calibration
        raise HetsimError(problem)
    out = args.out or user_tag_dir() / f"{LOCAL_TAG}.yaml"
    if args.json and args.json.resolve().parent == out.resolve().parent:
        # every file in a tag folder is read as a tag; the samples are not one
        raise HetsimError(
            f"--json: expected a file outside the tag folder {out.parent}, got {args.json}"
        )
    with progress(steps(plan, threads), "calibrating") as advance:
        calibration = calibrate(plan, threads=threads, advance=advance)
    with writing("--out", out):
        path = write_tag(calibration, out)
    if args.json:
        with writing("--json", args.json) as json_path:
            json_path.write_text(json.dumps(calibration.to_dict(), indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    width = max(len(name) for name in calibration.fitted)
    for name, fitted in calibration.fitted.items():
        print(f"{name.ljust(width)}  {fitted.value}")
    # a tag is named by its file: --out DIR/mine.yaml is the tag 'mine' of folder DIR
    print(f"wrote {path} (tag '{path.stem}' in {path.parent})", file=sys.stderr)
    return 0
