"""``hetsim targets ...``: list tags, show a canonical tree, validate config files, show kinds.

``--tags DIR`` (repeatable, on every sub-command) registers a folder of the user's tag files first.
What is printed is built by `hetsim.target.display`; this module only parses options and prints.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from hetsim.cli.files import input_path
from hetsim.errors import PartitionError, Problem, TargetError
from hetsim.target import (
    Target,
    add_tag_dir,
    find_kind,
    kinds_markdown,
    list_tags,
    render_tree,
    schema_table,
    target_argument,
)
from hetsim.target.canonical import canonicalize_config, locate_in_file
from hetsim.target.catalog import config_category
from hetsim.target.kinds import REGISTRIES
from hetsim.target.schema import closest
from hetsim.target.sources import is_file_name
from hetsim.target.tree import read_spec

__all__ = ["register"]


def _common() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--tags",
        action="append",
        default=[],
        metavar="DIR",
        type=input_path,
        help="a folder of tag files to register first (repeatable)",
    )
    return parent


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``targets`` command group."""
    group = subparsers.add_parser("targets", help="list, show and validate targets")
    sub = group.add_subparsers(dest="targets_command", metavar="COMMAND", required=True)
    common = _common()

    listing = sub.add_parser("list", parents=[common], help="tags with a one-line description")
    listing.set_defaults(func=_list)

    show = sub.add_parser("show", parents=[common], help="the canonical tree of a tag or file")
    show.add_argument("target", metavar="NAME|FILE", help="a kind, a tag, a config file or JSON")
    form = show.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the tree as JSON")
    form.add_argument("--tree", action="store_true", help="draw the tree with key parameters")
    show.set_defaults(func=_show)

    validate = sub.add_parser("validate", parents=[common], help="check config files")
    validate.add_argument("files", nargs="+", metavar="FILE", help="config files (or names)")
    validate.set_defaults(func=_validate)

    kinds = sub.add_parser("kinds", parents=[common], help="kinds and their schemas")
    kinds.add_argument("kind", nargs="?", metavar="KIND", help="show this kind's schema")
    kinds.add_argument(
        "--markdown",
        action="store_true",
        help="every kind's schema as Markdown (the block in docs/targets.md)",
    )
    kinds.set_defaults(func=_kinds)


def _add_tags(args: argparse.Namespace) -> None:
    for folder in args.tags:
        add_tag_dir(folder)


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _list(args: argparse.Namespace) -> int:
    _add_tags(args)
    rows = [("TAG", "DESCRIPTION"), *list_tags()]
    print(_table(rows))
    return 0


def _show(args: argparse.Namespace) -> int:
    _add_tags(args)
    config = _config(args.target)
    if config is not None:  # an executor or runtime: one mapping, no tree to draw
        exported = config
    else:
        target = target_argument(args.target, "TARGET")
        if args.tree:
            print(render_tree(target))
            return 0
        exported = target.export()
    if args.json:
        print(json.dumps(exported, indent=2))
    else:
        print(yaml.safe_dump(exported, sort_keys=False, width=100), end="")
    return 0


def _config(spec: str) -> dict[str, Any] | None:
    """The canonical config that `spec` (a name, a file or JSON, read as `Target` reads it) names
    or holds when it is an executor or runtime (a tag may be one: ``tvm/relax-vm``), else None:
    a target, or nothing known (`Target` says which)."""
    data = read_spec(spec)
    category = config_category(data)
    if category is None:
        return None
    try:
        return canonicalize_config(data, category)
    except TargetError as err:
        if not is_file_name(spec.strip()):
            raise
        # file:line: path: ..., as a target file's problems are
        raise TargetError(locate_in_file(err.problems, Path(spec.strip()), data)) from None


def _validate(args: argparse.Namespace) -> int:
    _add_tags(args)
    failed = 0
    for name in args.files:
        try:
            _check(name)
        except PartitionError as err:  # a target whose op lists name ops hetsim does not run
            failed += 1
            print(f"{name}: {err}")
            continue
        except TargetError as err:
            failed += 1
            file = str(Path(name.strip()))  # as a file's problems name it (`hetsim.located`)
            for problem in err.problems:
                message = problem.message
                print(message if message.startswith(file) else f"{name}: {message}")
            continue
        print(f"{name}: ok")
    return 1 if failed else 0


def _check(name: str) -> None:
    """Validate one name or file: a target, or an executor or runtime config (as tags may be)."""
    if _config(name) is None:  # a config is checked as it is made
        Target(name)


def _kinds(args: argparse.Namespace) -> int:
    _add_tags(args)
    if args.markdown and not args.kind:  # one kind's table is markdown already
        print(kinds_markdown(), end="")
        return 0
    if args.kind:
        kind = next((k for c in REGISTRIES if (k := find_kind(c, args.kind))), None)
        if kind is None:
            names = [n for registry in REGISTRIES.values() for n in registry]
            hint = closest(args.kind, names)
            raise TargetError([Problem("kinds", f"unknown kind {args.kind!r}", hint=hint)])
        print(schema_table(kind))
        return 0
    rows = [("KIND", "CATEGORY", "KEYS", "FLAGS", "DOC")]
    for registry in REGISTRIES.values():
        for kind in registry.values():
            flags = [f for f in ("can_host", "is_composite", "can_capture") if getattr(kind, f)]
            rows.append((kind.name, kind.category, ",".join(kind.keys), ",".join(flags), kind.doc))
    print(_table(rows))
    return 0
