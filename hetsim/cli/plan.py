"""``hetsim plan MODEL --target T``: print how a model is partitioned on a target.

Owns the command's options; the plan itself is `hetsim.partition.partition`, its text form
`hetsim.partition.format_plan`, its JSON form `Plan.to_dict`.

A symbolic dim not given with ``--dims`` is dynamic, as `partition` takes it (docs/partition.md,
"Dynamic shapes"): its ops stay off static levels, and their flops and bytes are estimated with it
at `ESTIMATE_DIM`. The output says so (``unbound dims: ...``, JSON ``estimate_dims``), where
``run`` asks for a size.
"""

from __future__ import annotations

import argparse
import json
import sys

from hetsim.cli.choices import POLICY_NAMES, check_rules_given, choice_type
from hetsim.cli.dims import add_dims_option, no_input_values
from hetsim.cli.files import input_path
from hetsim.errors import printable_lines
from hetsim.ir import check_graph_dims, format_dims
from hetsim.kernels import propagate
from hetsim.models import load_model
from hetsim.partition import (
    ESTIMATE_DIM,
    format_plan,
    idle_notes,
    partition,
)
from hetsim.platform import build_platform
from hetsim.target import target_argument

__all__ = ["register", "show_plan"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``plan`` command."""
    parser = subparsers.add_parser(
        "plan",
        help="show how a model is partitioned on a target",
        description="Partition MODEL on TARGET; print per level the segments, their devices, "
        "op counts and flops, and each boundary transfer's bytes and route (the memories it "
        "passes through, where it crosses more than one link); a level's bytes on links count "
        "a transfer once per link it crosses (the levels' sum is the run's bytes over links; a "
        "run's Levels table puts each link's bytes at the level below it).",
    )
    parser.add_argument("model", metavar="MODEL", help="a zoo model name or an .onnx file")
    parser.add_argument(
        "--target", required=True, metavar="TARGET", help="a tag, a kind, or a target file"
    )
    parser.add_argument(
        "--partition",
        type=choice_type(POLICY_NAMES),
        metavar="POLICY",
        default="capability",
        help="the placement policy: capability (default), cost or rules",
    )
    parser.add_argument(
        "--rules", type=input_path, metavar="RULES.yaml", help="rules for --partition rules"
    )
    add_dims_option(parser, "symbolic dims bound at compile time, e.g. seq=128 (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=show_plan)


def show_plan(args: argparse.Namespace) -> int:
    """Print the plan of ``args.model`` on ``args.target`` as text (or JSON)."""
    check_rules_given(args.partition, args.rules)
    graph = load_model(args.model)
    dims = dict(check_graph_dims(graph, args.dims))
    platform = build_platform(target_argument(args.target, "--target"))
    with no_input_values("hetsim plan"):
        plan = partition(graph, platform, policy=args.partition, rules=args.rules, dims=dims)
    estimated = dict.fromkeys((s for s in graph.symbols if s not in dims), ESTIMATE_DIM)
    if args.json:
        print(json.dumps({**plan.to_dict(), "estimate_dims": estimated}, indent=2))
    else:
        lines = format_plan(plan).splitlines()
        if estimated:  # after the title and the dims given
            lines.insert(1 + bool(plan.dims), _unbound_line(estimated))
        print(printable_lines("\n".join(lines)))  # a model's names are any text
    metas = propagate(graph, {**dims, **estimated})
    notes = idle_notes(
        platform, graph.ops, metas, plan.placement,
        dynamic=plan.dynamic, folded=plan.folded, policy=plan.policy, ruled=plan.ruled,
    ) + plan.notes  # fmt: skip
    for note in notes:  # as hetsim run
        print(f"note: {printable_lines(note)}", file=sys.stderr)
    return 0


def _unbound_line(estimated: dict[str, int]) -> str:
    """The line that says which dims are dynamic and the sizes the plan's estimate used.

    >>> _unbound_line({"seq": 1})
    'unbound dims: seq (dynamic; flops and bytes estimated at seq=1; bind with --dims seq=N)'
    """
    names = ", ".join(estimated)
    sizes = format_dims(estimated)
    bind = ",".join(f"{name}=N" for name in estimated)
    how = f"flops and bytes estimated at {sizes}; bind with --dims {bind}"
    return f"unbound dims: {names} (dynamic; {how})"
