"""Shared fixtures: small, deterministic, no network, no GPU."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: every test that needs random data takes it from here."""
    return np.random.default_rng(0)
