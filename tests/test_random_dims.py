"""`simulate` of random graphs with a symbolic batch dim, run at several sizes in a row.

`simulate` keeps a graph's compiled plan, its metas and its bound programs between calls
(`hetsim.api`, `hetsim.sim.bind.bound_for`), keyed by what they depend on: the dims among it.
A key that left a dim out would hand one size's program to another, and only a run after a
run at another size would show it. So each example runs one random graph (`graphs`, with input
``x`` of shape ``("batch", width)``) at a few sizes in a row, the first twice (the caches keep a
plan from its second call on), each call warm from the ones before, under either policy and,
where the tag has a GPU, each CUDA-graph strategy (``buckets`` pads the batch up to a bucket),
in functional mode with arrays of each size or in timing mode with ``dims=``. The properties:

- a functional run's outputs equal `hetsim.execute` on the same inputs, bit for bit;
- every run passes `assert_invariants`;
- each warm run equals a cold one of the same size (the caches cleared first): the same
  ``to_dict()`` and the same spans.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.api import clear_caches, simulate
from hetsim.ir import Graph
from hetsim.kernels import execute
from hetsim.report import assert_invariants
from tests.test_random_graphs import GPU_TAGS, PLATFORMS, TAGS, graphs

STRATEGIES = (None, "none", "whole", "regions", "buckets")


@settings(max_examples=60, deadline=None)
@given(
    graphs(batch="batch"),
    st.sampled_from(TAGS),
    st.sampled_from(("capability", "cost")),
    st.sampled_from(STRATEGIES),
    st.lists(st.integers(1, 40), min_size=2, max_size=4),
    st.booleans(),
)
def test_a_warm_run_at_another_size_equals_a_cold_one(
    graph: Graph,
    tag: str,
    policy: str,
    cuda_graph: str | None,
    batches: list[int],
    functional: bool,
) -> None:
    platform = PLATFORMS[tag]
    options: dict[str, Any] = {"partition": policy}
    if cuda_graph is not None and tag in GPU_TAGS:
        options["cuda_graph"] = cuda_graph
    width = graph.inputs["x"].shape[1]
    runs = []
    for batch in [batches[0], *batches]:  # the caches keep a plan from its second call on
        x = np.random.default_rng(batch).standard_normal((batch, width)).astype("float32")
        how: dict[str, Any] = (
            {"inputs": {"x": x}} if functional else {"mode": "timing", "dims": {"batch": batch}}
        )
        warm = simulate(graph, platform, **how, **options)
        if functional:
            expected = execute(graph, {"x": x})
            for name in graph.outputs:
                np.testing.assert_array_equal(warm.outputs[name], expected[name], err_msg=name)
        assert_invariants(warm)
        runs.append((batch, how, warm))
    for batch, how, warm in runs:
        clear_caches()
        cold = simulate(graph, platform, **how, **options)
        assert cold.to_dict() == warm.to_dict(), f"batch {batch}"
        assert cold.spans == warm.spans, f"batch {batch}"
