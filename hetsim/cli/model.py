"""``hetsim model ...``: look at models (``show``: ops by type, parameters, flops, bytes;
``list``: the zoo's names).

Parsing the arguments and printing live here; loading is `hetsim.models.load_model` and the
tally is `hetsim.models.summarize`.
"""

from __future__ import annotations

import argparse
import json

from hetsim.cli.dims import add_dims_option, no_input_values
from hetsim.errors import printable_lines
from hetsim.models import ZOO, load_model, summarize


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``model`` command group."""
    parser = subparsers.add_parser("model", help="show models: ops, parameters, flops, bytes")
    commands = parser.add_subparsers(dest="model_command", metavar="COMMAND", required=True)
    show = commands.add_parser(
        "show",
        help="summarize a model",
        description="Summarize a model: ops by type, parameter count, flops and bytes for "
        "the given input shapes. Symbolic dims not given with --dims are 1.",
    )
    show.add_argument(
        "model", metavar="MODEL", help=f"an .onnx file or a zoo name: {', '.join(ZOO)}"
    )
    add_dims_option(
        show, "value of a symbolic dimension, e.g. seq=128 (repeat, or separate with commas)"
    )
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show.set_defaults(func=show_model)
    listing = commands.add_parser("list", help="list the zoo's model names")
    listing.set_defaults(func=list_models)


def show_model(args: argparse.Namespace) -> int:
    """``hetsim model show MODEL [--dims seq=128] [--json]``."""
    with no_input_values("hetsim model show"):
        summary = summarize(load_model(args.model), args.dims)
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(printable_lines(summary.format()))  # a model's names are any text
    return 0


def list_models(args: argparse.Namespace) -> int:
    """``hetsim model list``: one zoo name per line."""
    print("\n".join(ZOO))
    return 0
