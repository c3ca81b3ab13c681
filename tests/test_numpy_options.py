"""A numpy array where an option takes a name or a list gets the error a list or a name of the
same mistake gets: it raised numpy's "truth value of an array ... is ambiguous", or "iteration
over a 0-d array", from inside."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.compare import compare
from hetsim.errors import HetsimError
from hetsim.sweep import load_sweep
from hetsim.target import Target

PAIR, ZERO_D = np.array([1, 2]), np.array(4)
CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("mode", lambda: simulate("mlp", "x86-h100", mode=PAIR),
     "simulate: expected mode 'functional' or 'timing', got array([1, 2])"),
    ("buckets", lambda: simulate("mlp", "x86-h100", cuda_graph="buckets", buckets=ZERO_D),
     "buckets: expected increasing positive integers, got array(4)"),
    ("strategies", lambda: compare("mlp", "x86-h100", ZERO_D),
     "strategies: expected one or more of none, whole, regions, buckets, got array(4)"),
    ("trace", lambda: compare("transformer", "x86-h100", trace=ZERO_D),
     "trace: expected a sequence of dims, one mapping per iteration, got array(4)"),
    ("kind", lambda: Target({"tag": "x86-h100", "host": {"kind": PAIR}}),
     "host.kind: expected a target kind name, got array([1, 2])"),
    ("expand", lambda: load_sweep({"target": "x86-h100", "models": ["mlp"], "expand": PAIR}),
     "expand: expected one of 'grid', 'list', got array([1, 2])"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "message"), CASES, ids=[c[0] for c in CASES])
def test_an_array_for_an_option_is_refused_as_the_option(
    name: str, call: Callable[[], Any], message: str
) -> None:
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}"):
        call()
