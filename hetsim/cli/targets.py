"""``hetsim targets ...``: list, show, validate tags and kinds."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``targets`` command group."""
    subparsers.add_parser("targets", help="list, show and validate targets")
