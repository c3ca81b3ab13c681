"""``hetsim run MODEL --target TARGET``: simulate one model on one target and report the run.

``--partition P [--rules FILE]`` chooses how the ops are placed over the target's levels
(`hetsim.partition`).

Owns the command's options and what it writes: a summary table (or the run's JSON with
``--json``) on stdout, and on request a Chrome trace, a Gantt PNG and the outputs as ``.npz``.
Notes about written files go to stderr, so ``--json`` output stays machine-readable. The run
itself is `hetsim.api.simulate`.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hetsim.cli.choices import POLICY_NAMES, STRATEGY_NAMES, check_rules_given, choice_type
from hetsim.cli.counts import parse_seed
from hetsim.cli.dims import add_dims_option
from hetsim.cli.files import input_path, png_file, suffixed_file, writing
from hetsim.errors import HetsimError, printable_lines
from hetsim.report import Result, print_summary

__all__ = ["register", "run"]

MODES = ("functional", "timing")

ENTRY_ERRORS = (
    ValueError,  # an object array (pickles refused), a header claiming more bytes than stored
    zipfile.BadZipFile,  # a bad CRC
    zlib.error,  # a compressed entry cut short or damaged
    MemoryError,  # a damaged header claiming a huge shape
    RuntimeError,  # an encrypted entry, an unknown compression method (NotImplementedError)
    EOFError,
    OSError,
)
"""What reading one entry of an ``.npz`` raises on a damaged or foreign archive."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``run`` command."""
    parser = subparsers.add_parser(
        "run",
        help="simulate a model on a target and report the run",
        description="Simulate MODEL on TARGET; print a summary, or the run as JSON.",
    )
    parser.add_argument("model", metavar="MODEL", help="a zoo model name or an .onnx file")
    parser.add_argument(
        "--target", required=True, metavar="TARGET", help="a tag, a kind, or a target file"
    )
    parser.add_argument("--mode", choices=MODES, default="functional", help="default: functional")
    parser.add_argument(
        "--inputs",
        type=input_path,
        metavar="IN.npz",
        help="model inputs by name, of the dtypes the model declares",
    )
    parser.add_argument(
        "--seed", type=parse_seed, default=0, help="seed of generated inputs (default 0)"
    )
    parser.add_argument(
        "--no-fuse",
        dest="fuse",
        action="store_false",
        help="compute every op's value as the graph states it, as execute(fuse=False) does "
        "(default: with execute's fused kernels; simulated times are the same)",
    )
    add_dims_option(parser, "values of symbolic dims, e.g. seq=128 (repeatable)")
    parser.add_argument(
        "--cuda-graph",
        type=choice_type(STRATEGY_NAMES),
        metavar="STRATEGY",
        help="CUDA-graph offload: none, whole, regions or buckets (default: regions over the "
        "devices whose cuda_graph attribute is set, if any, else none; docs/cuda-graphs.md)",
    )
    parser.add_argument(
        "--partition",
        type=choice_type(POLICY_NAMES),
        default="capability",
        metavar="POLICY",
        help="how ops are placed, level by level: capability (default), cost or rules",
    )
    parser.add_argument(
        "--rules",
        type=input_path,
        metavar="RULES.yaml",
        help="placement rules for --partition rules",
    )
    parser.add_argument(
        "--save-outputs",
        type=suffixed_file(".npz"),
        metavar="OUT.npz",
        help="write the outputs (.npz)",
    )
    parser.add_argument(
        "--trace",
        type=suffixed_file(".json"),
        metavar="TRACE.json",
        help="write a Chrome trace (.json)",
    )
    parser.add_argument("--gantt", type=png_file, metavar="GANTT.png", help="write a Gantt chart")
    parser.add_argument("--json", action="store_true", help="print the run as JSON")
    parser.set_defaults(func=run)


def _simulate(model: str, target: str, **options: Any) -> Result:
    # Imported when the command runs: the engine's imports are not needed to build the parser.
    from hetsim.api import simulate
    from hetsim.target import target_argument

    return simulate(model, target_argument(target, "--target"), **options)


def _load_inputs(path: Path) -> dict[str, np.ndarray]:
    """The arrays of the ``--inputs`` file: whatever numpy or zipfile raise on a file that is not
    a readable ``.npz`` is a `HetsimError` that names the option and the path."""
    expected = f"--inputs {path}: expected an .npz file of named arrays"
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:  # named with the option, as every other problem of the file is
        raise HetsimError(f"{expected}, got no such file") from None
    except IsADirectoryError:
        raise HetsimError(f"{expected}, got a directory") from None
    except OSError as err:  # no permission
        raise HetsimError(
            f"--inputs {path}: expected a file it can read, got {err.strerror or err}"
        ) from err
    except EOFError:  # numpy's word for a file of zero bytes
        raise HetsimError(f"{expected}, got an empty file") from None
    except zipfile.BadZipFile as err:  # a zip's first bytes, then no directory: a partial copy
        raise HetsimError(f"{expected}, got a truncated or damaged zip archive") from err
    except ValueError as err:  # neither a zip nor an array: numpy refused it as a pickle
        raise HetsimError(f"{expected}, got an unreadable file") from err
    except MemoryError as err:  # an .npy whose damaged header claims a huge shape
        raise HetsimError(f"{expected}, got one array it cannot read: {err}") from err
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise HetsimError(f"{expected}, got one array")
    with loaded:
        if not loaded.files:  # a timing run took it for no --inputs at all
            raise HetsimError(f"{expected}, got an archive with no arrays")
        # by member, not by numpy's key: loaded["a.npy"] is member a.npy, input a's array, where
        # an input named "a.npy" is member a.npy.npy (it read a's values silently)
        archive = loaded.zip
        assert archive is not None, "an NpzFile read from a file has its zip"
        return {
            member.removesuffix(".npy"): _entry(archive, member, expected)
            for member in archive.namelist()
        }


def _entry(archive: zipfile.ZipFile, member: str, expected: str) -> np.ndarray:
    """The array of member `member` of an ``--inputs`` file, or a `HetsimError` saying why it
    cannot be read."""
    name = member.removesuffix(".npy")
    try:
        with archive.open(member) as entry:
            if entry.read(6) != b"\x93NUMPY":  # not an .npy (numpy hands its raw bytes out)
                raise HetsimError(f"{expected}, got an entry {name!r} that is not an array")
        with archive.open(member) as entry:
            return np.lib.format.read_array(entry, allow_pickle=False)
    except ENTRY_ERRORS as err:
        raise HetsimError(f"{expected}, got an entry {name!r} it cannot read: {err}") from err


def _check_output_names(outputs: Mapping[str, np.ndarray], path: Path) -> None:
    """Refuse outputs that ``np.load`` of the ``--save-outputs`` file reads under one key: output
    ``y`` is member ``y.npy``, ``y.npy`` member ``y.npy.npy``, and numpy's key ``"y.npy"`` takes
    member ``y.npy`` first (``dict(np.load(path))`` held y's values twice)."""
    for name in outputs:
        member = f"{name}.npy"
        if member in outputs:
            raise HetsimError(
                f"--save-outputs {path}: expected output names np.load tells apart, got "
                f"{name!r} and {member!r} (its key {member!r} reads output {name!r}, stored as "
                f"{member})"
            )


def _save_outputs(outputs: Mapping[str, np.ndarray], path: Path) -> None:
    # Written entry by entry: np.savez(path, **outputs) breaks on an output named "file".
    # A path that is no regular file (/dev/null, a pipe) takes the archive made in memory:
    # zipfile seeks in what it writes, and /dev/null's seek "succeeds" at 0 (struct.error).
    regular = path.is_file() or not path.exists()
    target: Path | io.BytesIO = path if regular else io.BytesIO()
    with zipfile.ZipFile(target, "w") as archive:
        for name, array in outputs.items():
            with archive.open(f"{name}.npy", "w") as entry:
                np.lib.format.write_array(entry, np.asanyarray(array), allow_pickle=False)
    if isinstance(target, io.BytesIO):
        path.write_bytes(target.getvalue())


OUTPUT_OPTIONS = (("--save-outputs", "save_outputs"), ("--trace", "trace"), ("--gantt", "gantt"))
"""The options that name a file to write, in the order `run` writes them."""


def _check_distinct_outputs(args: argparse.Namespace) -> None:
    """Refuse two output options naming one file: the later write replaced the earlier one,
    while both were reported written (``--trace out --gantt out`` left a PNG, no trace)."""
    seen: dict[Path, str] = {}
    for option, attribute in OUTPUT_OPTIONS:
        path = getattr(args, attribute)
        if path is None:
            continue
        key = path.resolve()
        if key in seen:
            raise HetsimError(
                f"{option} {path}: expected a file of its own, got the file of {seen[key]}"
            )
        seen[key] = option


def _options(args: argparse.Namespace) -> dict[str, Any]:
    _check_distinct_outputs(args)
    if args.save_outputs is not None and args.mode != "functional":
        raise HetsimError(
            f"--save-outputs: expected --mode functional (timing mode computes no values), "
            f"got {args.mode!r}"
        )
    check_rules_given(args.partition, args.rules)
    options: dict[str, Any] = {"seed": args.seed, "mode": args.mode}
    if not args.fuse:
        options["fuse"] = False
    if args.partition != "capability":
        options["partition"] = args.partition
    if args.rules is not None:
        options["rules"] = args.rules
    if args.cuda_graph is not None:  # given, even as none: it overrides the target's flags
        options["cuda_graph"] = args.cuda_graph
    if args.inputs is not None:
        options["inputs"] = _load_inputs(args.inputs)
    dims = dict(args.dims)
    if dims:
        options["dims"] = dims
    return options


def run(args: argparse.Namespace) -> int:
    """Simulate, print the summary or the JSON, write the requested files; return 0."""
    result = _simulate(args.model, args.target, **_options(args))
    if args.save_outputs is not None:  # before anything is printed or written
        _check_output_names(result.outputs, args.save_outputs)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:  # named as plan and compare name theirs: saved summaries are told apart
        print(f"{args.model} on {args.target}, {args.mode} mode")
        print_summary(result)
    # a strategy that fell back, asked for by --cuda-graph or by the target's cuda_graph flags
    origin = "" if args.cuda_graph is None else f"--cuda-graph {args.cuda_graph}: "
    for note in result.record.extra.get("cuda_graph_notes", ()):
        print(f"note: {printable_lines(origin + note)}", file=sys.stderr)
    for note in result.record.extra.get("placement_notes", ()):  # an accelerator left idle
        print(f"note: {printable_lines(note)}", file=sys.stderr)
    for note in result.record.extra.get("shape_notes", ()):  # a model's stale declared shape
        print(f"note: {printable_lines(note)}", file=sys.stderr)
    if args.save_outputs is not None:
        with writing("--save-outputs", args.save_outputs) as path:
            _save_outputs(result.outputs, path)
        print(f"wrote outputs to {args.save_outputs}", file=sys.stderr)
    if args.trace is not None:
        with writing("--trace", args.trace) as path:
            result.to_chrome_trace(path)
        print(f"wrote trace to {args.trace}", file=sys.stderr)
    if args.gantt is not None:
        with writing("--gantt", args.gantt) as path:
            result.plot_gantt(path)
        print(f"wrote Gantt chart to {args.gantt}", file=sys.stderr)
    return 0
