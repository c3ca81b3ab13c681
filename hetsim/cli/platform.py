"""``hetsim platform ...`` (under construction)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``platform`` command."""
    subparsers.add_parser("platform", help="(under construction)")
