"""The figures a module draws, kept for a test to read: its `new_figure` wrapped."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest


def keep_figures(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[Any]:
    """The list that every figure `module.new_figure` makes from now on (for the test) goes to."""
    kept: list[Any] = []
    new_figure = module.new_figure

    def keeping(*args: Any) -> Any:
        kept.append(new_figure(*args))
        return kept[-1]

    monkeypatch.setattr(module, "new_figure", keeping)
    return kept
