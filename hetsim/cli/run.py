"""``hetsim run ...`` (under construction)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``run`` command."""
    subparsers.add_parser("run", help="(under construction)")
