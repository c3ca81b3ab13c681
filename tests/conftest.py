"""Shared fixtures: small, deterministic, no network, no GPU, none of the user's own tags."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_user_tags(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The CLI registers the user's tag folder ($HETSIM_TAG_DIR, else
    $XDG_CONFIG_HOME/hetsim/targets): point both at an empty folder, so that a developer's
    `hetsim calibrate` (its `local` tag) cannot change what the tests see."""
    empty = tmp_path_factory.mktemp("config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(empty))
        patch.delenv("HETSIM_TAG_DIR", raising=False)
        yield


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: every test that needs random data takes it from here."""
    return np.random.default_rng(0)
