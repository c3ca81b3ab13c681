"""``hetsim calibrate [--out FILE] [--quick]``: measure this machine and write the ``local`` tag.

Owns the command, the progress bar, and where the user's tag folder is: ``$HETSIM_TAG_DIR``, else
``$XDG_CONFIG_HOME/hetsim/targets`` (``~/.config/hetsim/targets``). `register_user_tags` adds
that folder when it exists, so ``--target local`` finds a calibration without options. Where the
tag and the samples go is checked before measuring: the tag file must be one its folder can
register (`tag_file_problem`), the samples must lie outside every tag folder. The measuring and
fitting are `hetsim.calibrate`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hetsim.calibrate import LOCAL_TAG, calibrate, is_thread_count, steps, thread_range, write_tag
from hetsim.cli.counts import integer
from hetsim.cli.files import output_file, suffixed_file, writing
from hetsim.errors import HetsimError, TargetError
from hetsim.target import TAGS, add_tag_dir
from hetsim.target.kinds import category_of
from hetsim.target.sources import SUFFIXES, is_file_name
from hetsim.target.tags import TAG_PATTERN, shipped_tag_dir, valid_tag_name

__all__ = [
    "progress",
    "register",
    "register_user_tags",
    "tag_dir_problem",
    "tag_file_problem",
    "thread_count",
    "user_tag_dir",
]

TAG_DIR_VARIABLE = "HETSIM_TAG_DIR"
TAG_FILE_SUFFIXES = (".yaml", ".yml")
"""The suffixes ``--out`` takes: `write_tag` writes YAML, which a tag folder parses as JSON or TOML
under its other `SUFFIXES`, and skips under any other."""


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
    got = f"the file {str(found)!r}"
    if found != folder:
        got = f"{str(folder)!r} (under {got})"
    return f"{_tag_dir_source(env)}: expected a folder of tag files, got {got}"


def _tag_dir_source(environ: Mapping[str, str]) -> str:
    """What chose the user's tag folder, as errors name it."""
    return TAG_DIR_VARIABLE if environ.get(TAG_DIR_VARIABLE) else "$XDG_CONFIG_HOME/hetsim/targets"


def tag_file_problem(path: Path, where: str) -> str | None:
    """Why `path` can never be a tag of its folder, led by `where` (the option or variable that
    chose it); None when it can. Its name is the tag's (``DIR/vm.yaml`` is the tag ``vm`` of
    ``DIR``), checked as `hetsim.target.add_tag_dir` checks it, before any measuring.

    >>> print(tag_file_problem(Path("/tmp/vm.yaml"), "--out /tmp/vm.yaml"))
    --out /tmp/vm.yaml: expected a file named for a tag, not a kind, got the executor kind 'vm'
    >>> print(tag_file_problem(Path("/tmp/local.txt"), "--out /tmp/local.txt"))
    --out /tmp/local.txt: expected a .yaml or .yml file (a tag in YAML), got 'local.txt'
    """
    name, folder = tag_of_file(path)
    if path.suffix.lower() not in TAG_FILE_SUFFIXES:
        return f"{where}: expected a .yaml or .yml file (a tag in YAML), got {path.name!r}"
    if not valid_tag_name(name):
        return f"{where}: expected a file named for a tag (matching {TAG_PATTERN!r}), got {name!r}"
    if is_file_name(name):  # the folder refuses it: `Target("mine.json")` reads a file
        expected = (
            f"expected a file named for a tag without a target file suffix {sorted(SUFFIXES)}"
        )
        return f"{where}: {expected}, got {name!r}"
    # tag names match ignoring case, kind names are lowercase: 'VM.yaml' is the kind 'vm' too
    if (category := category_of(name.lower())) is not None:
        got = f"the {category} kind {name.lower()!r}"
        return f"{where}: expected a file named for a tag, not a kind, got {got}"
    taken = TAGS.find(name)
    shipped = [found] if (found := shipped_tag_dir()) is not None else []
    # a shipped tag's own file is not rewritten either
    if taken is not None and (
        TAGS.name_for_file(path) != taken or _enclosing_tag_dir(path, shipped) is not None
    ):
        got = f"the tag {taken!r} of {TAGS.get(taken).source}"
        return f"{where}: expected a file named for a new tag, got {got}"
    user = user_tag_dir()
    if folder.resolve() != user.resolve() and (mine := _tag_file(user, name)) is not None:
        # every command reads the user's folder: a folder with this file beside it is refused
        return f"{where}: expected a file named for a new tag, got the tag {name!r} of {mine}"
    twin = _tag_file(path.parent, path.stem, other_than=path.name)
    if twin is not None:
        expected = f"expected no other file of the tag {name!r} in {path.parent}"
        return f"{where}: {expected}, got {twin}"
    return None


def tag_of_file(path: Path) -> tuple[str, Path]:
    """The tag `path` defines and the folder that registers it: the user's tag folder when the
    file lies below it (``DIR/nvidia/h100.yaml`` is the tag ``nvidia/h100``), else its own.

    >>> tag_of_file(Path("/elsewhere/local.yaml"))
    ('local', PosixPath('/elsewhere'))
    """
    folder = _enclosing_tag_dir(path, (user_tag_dir(),)) or path.parent
    return path.resolve().relative_to(folder.resolve()).with_suffix("").as_posix(), folder


def _tag_file(folder: Path, name: str, *, other_than: str = "") -> Path | None:
    """The file of `folder` that defines tag `name` (matched ignoring case, as the folder reads
    it), but the file named `other_than` beside it, if any: ``local.json`` beside
    ``local.yaml`` (a twin: the folder is then refused for defining the tag twice)."""
    parent = (folder / name).parent
    if not parent.is_dir():
        return None
    stem = name.rsplit("/", 1)[-1].lower()
    found = (p for p in sorted(parent.iterdir()) if p.stem.lower() == stem and p.name != other_than)
    return next((p for p in found if p.suffix.lower() in SUFFIXES and p.is_file()), None)


def _enclosing_tag_dir(path: Path, folders: Iterable[Path]) -> Path | None:
    """The first of `folders` that holds `path`, at any depth (a tag folder is read whole)."""
    resolved = path.resolve()
    return next((f for f in folders if resolved.is_relative_to(f.resolve())), None)


def _write_problem(path: Path, where: str) -> str | None:
    """Why the file `path` cannot be written, led by `where`; None when it can. A file there
    must be one this process may write; else its folder (the nearest that exists: `write_tag`
    makes the rest) must take a new file, which only making one tells (as root, `os.access`
    says yes to ``/proc``): a temporary one, removed at once, so nothing is left behind.

    >>> print(_write_problem(Path("/proc/t.yaml"), "--out /proc/t.yaml"))  # doctest: +ELLIPSIS
    --out /proc/t.yaml: expected a file it can write, got no file can be made in /proc (...)
    """
    expected = f"{where}: expected a file it can write"
    try:
        if path.is_dir():
            return f"{expected}, got the folder {str(path)!r}"
        if path.exists():
            return None if os.access(path, os.W_OK) else f"{expected}, got a file it may not write"
        folder = next((p for p in path.parents if p.exists()), Path("."))
    except OSError as err:  # a name too long to look up
        return f"{expected}, got {err.strerror or err}"
    try:
        with tempfile.TemporaryFile(dir=folder):  # unnamed where the system can: never seen
            pass
    except OSError as err:
        return f"{expected}, got no file can be made in {folder} ({err.strerror or err})"
    return None


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
        "--json",
        type=suffixed_file(".json"),
        metavar="FILE.json",
        help="also write the machine and raw samples",
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
    # a name the tag folder refuses (a kind's, a twin's) breaks it: found before measuring
    problem = tag_file_problem(out, f"--out {out}" if args.out else _tag_dir_source(os.environ))
    if problem:
        raise HetsimError(problem)
    # every file in a tag folder, at any depth, is read as a tag; the samples are not one
    folder = _enclosing_tag_dir(args.json, (out.parent, user_tag_dir())) if args.json else None
    if folder is not None:
        raise HetsimError(
            f"--json: expected a file outside the tag folder {folder}, got {args.json}"
        )
    # else found when writing, after the whole calibration, and its samples lost
    places = {"--out" if args.out else _tag_dir_source(os.environ): out}
    if args.json:
        places["--json"] = args.json
    for option, path in places.items():
        problem = _write_problem(path, f"{option} {path}")
        if problem:
            raise HetsimError(problem)
    with progress(steps(plan, threads), "calibrating") as advance:
        calibration = calibrate(plan, threads=threads, advance=advance)
    if args.json:  # first: a JSON that cannot be written leaves the tag as it was
        with writing("--json", args.json) as json_path:
            json_path.write_text(json.dumps(calibration.to_dict(), indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    with writing("--out", out, whole=False):  # write_tag writes its own file
        path = write_tag(calibration, out)
    width = max(len(name) for name in calibration.fitted)
    for name, fitted in calibration.fitted.items():
        print(f"{name.ljust(width)}  {fitted.value}")
    # a tag is named by its file: --out DIR/mine.yaml is the tag 'mine' of folder DIR
    name, folder = tag_of_file(path)
    print(f"wrote {path} (tag '{name}' in {folder})", file=sys.stderr)
    return 0
