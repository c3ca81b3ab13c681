"""Every number a run reports is a time, a size or a count: finite and never negative, on every
shipped platform tag, and no span ends after the makespan.

Checked over `Result.to_dict()` (the JSON a user reads: makespan, breakdown, per-processor,
per-link and per-memory figures, the CUDA-graph counters) and over the spans, in timing mode,
for the ``capability`` and ``cost`` policies, without CUDA graphs and with ``regions`` (which
captures where a tag has a CUDA GPU).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from hetsim.api import simulate
from hetsim.target import list_tags

MODELS = (("mlp", {}), ("cnn", {}), ("transformer", {"seq": 16}), ("cnn_int8", {}))
NOT_PLATFORMS = {"tvm/relax-vm", "vendor/npu-subsystem"}  # an executor; a host without memory


def bad_numbers(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """``(path, value)`` of every number under `value` that is not finite and >= 0."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [] if math.isfinite(value) and value >= 0 else [(path, value)]
    if isinstance(value, dict):
        return [bad for k, v in value.items() for bad in bad_numbers(v, f"{path}.{k}")]
    if isinstance(value, list | tuple):
        return [bad for i, v in enumerate(value) for bad in bad_numbers(v, f"{path}[{i}]")]
    return []


def test_bad_numbers_finds_nan_negative_and_infinite_values() -> None:
    found = bad_numbers({"a": [1.0, -0.5], "b": {"c": math.nan, "d": math.inf, "e": True}})
    assert [path for path, _ in found] == [".a[1]", ".b.c", ".b.d"]


@pytest.mark.parametrize("tag", [name for name, _ in list_tags() if name not in NOT_PLATFORMS])
@pytest.mark.parametrize("policy", ["capability", "cost"])
def test_every_reported_number_is_finite_and_not_negative(tag: str, policy: str) -> None:
    for model, dims in MODELS:
        for cuda_graph in ("none", "regions"):
            result = simulate(
                model, tag, mode="timing", partition=policy, dims=dims, cuda_graph=cuda_graph
            )
            where = (model, cuda_graph)
            assert bad_numbers(result.to_dict()) == [], where
            assert all(0 <= s.start_us <= s.end_us for s in result.spans), where
            assert max(s.end_us for s in result.spans) <= result.makespan_us, where
