"""`simulate` on random valid target trees: a result that checks out, or a `HetsimError`.

The trees come from `tests/target/test_properties.py` (every kind, nested levels, any valid value
of every attribute, extremes included). A tree may be one the model cannot run on (an op no
device supports, weights that do not fit): that is a `HetsimError` with its message. Anything
else (a traceback from inside, an infinite time) fails. The properties of a run: outputs equal
`execute`'s op by op, timing mode gives the same makespan, every figure is finite, invariants.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.api import platform_of, simulate
from hetsim.errors import HetsimError
from hetsim.kernels import execute
from hetsim.models import load_model
from hetsim.report import assert_invariants
from tests.target.test_properties import TREES

MODELS = {name: load_model(name) for name in ("mlp", "cnn")}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    TREES, st.sampled_from(sorted(MODELS)), st.sampled_from(["capability", "cost"]), st.booleans()
)
def test_a_random_valid_target_runs_or_says_why_not(
    spec: Any, model: str, policy: str, fuse: bool
) -> None:
    graph = MODELS[model]
    try:
        platform = platform_of(spec)
        run = simulate(graph, platform, partition=policy, fuse=fuse)
    except HetsimError:
        return
    # fused values wherever the plan put the ops of a group (hetsim.sim.fusion)
    expected = execute(graph, run.inputs, fuse=fuse)
    for name in graph.outputs:
        np.testing.assert_array_equal(run.outputs[name], expected[name], err_msg=name)
    assert simulate(graph, platform, partition=policy, mode="timing").makespan_us == (
        run.makespan_us
    )
    figures = run.to_dict()
    assert math.isfinite(figures["makespan_us"])
    assert all(math.isfinite(us) for us in figures["breakdown_us"].values())
    assert_invariants(run)
