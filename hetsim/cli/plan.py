"""``hetsim plan MODEL --target T``: print how a model is partitioned on a target.

Owns the command's options; the plan itself is `hetsim.partition.partition`, its text form
`hetsim.partition.format_plan`, its JSON form `Plan.to_dict`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hetsim.cli.dims import add_dims_option, merged_dims
from hetsim.models import load_model
from hetsim.partition import POLICIES, format_plan, partition
from hetsim.platform import build_platform
from hetsim.target import Target

__all__ = ["register", "show_plan"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``plan`` command."""
    parser = subparsers.add_parser(
        "plan",
        help="show how a model is partitioned on a target",
        description="Partition MODEL on TARGET; print per level the segments, their devices, "
        "op counts and flops, and the bytes each boundary transfer moves.",
    )
    parser.add_argument("model", metavar="MODEL", help="a zoo model name or an .onnx file")
    parser.add_argument(
        "--target", required=True, metavar="TARGET", help="a tag, a kind, or a target file"
    )
    parser.add_argument(
        "--partition",
        choices=sorted(POLICIES),
        default="capability",
        help="the placement policy (default: capability)",
    )
    parser.add_argument(
        "--rules", type=Path, metavar="RULES.yaml", help="rules for --partition rules"
    )
    add_dims_option(parser, "symbolic dims bound at compile time, e.g. seq=128 (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=show_plan)


def show_plan(args: argparse.Namespace) -> int:
    """Print the plan of ``args.model`` on ``args.target`` as text (or JSON)."""
    dims = merged_dims(args.dims)
    plan = partition(
        load_model(args.model),
        build_platform(Target(args.target)),
        policy=args.partition,
        rules=args.rules,
        dims=dims,
    )
    print(json.dumps(plan.to_dict(), indent=2) if args.json else format_plan(plan))
    return 0
