"""``hetsim model ...`` (under construction)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``model`` command."""
    subparsers.add_parser("model", help="(under construction)")
