"""``hetsim platform show TARGET [--png FILE] [--json]``: a target's platform, as text or a PNG."""

from __future__ import annotations

import argparse
import json
import sys

from hetsim.cli.files import png_file, writing
from hetsim.platform import build_platform, draw, render_tree
from hetsim.target import target_argument


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``platform`` command group."""
    parser = subparsers.add_parser("platform", help="show the platform a target becomes")
    commands = parser.add_subparsers(dest="platform_command", metavar="COMMAND", required=True)
    show = commands.add_parser(
        "show", help="print the processors (with roles), memories and links of a target"
    )
    show.add_argument("target", metavar="TARGET", help="a tag, a kind, or a target file")
    show.add_argument(
        "--png", type=png_file, metavar="FILE", help="also draw the platform to a PNG file"
    )
    show.add_argument("--json", action="store_true", help="print the platform as JSON")
    show.set_defaults(func=show_platform)


def show_platform(args: argparse.Namespace) -> int:
    """Print the platform of ``args.target`` as a tree (or JSON); draw it for ``--png``."""
    platform = build_platform(target_argument(args.target, "TARGET"))
    print(json.dumps(platform.to_dict(), indent=2) if args.json else render_tree(platform))
    if args.png:
        with writing("--png", args.png) as path:
            draw(platform, path)
        print(f"wrote {args.png}", file=sys.stderr)
    return 0
