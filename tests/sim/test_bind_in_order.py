"""What binding reads in order rather than by name (a speed trick at 1e6 ops): each slot's
bytes and each op's cost, equal to a lookup by name however the tables are ordered."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetsim.api import platform_of
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import Meta, propagate_costs
from hetsim.models import load_model
from hetsim.partition import partition
from hetsim.runtime import compile_plan
from hetsim.sim.slots import SlotSpace, programs_of


def _folding() -> Graph:
    """A folded op (w2 from w alone) before the ops that run: its cost comes first."""
    ops = (
        Op("Mul", "scale", ("w", "w"), ("w2",)),
        Op("Relu", "relu", ("x",), ("a",)),
        Op("Add", "add", ("a", "w2"), ("c",)),
        Op("Neg", "neg", ("x",), ("d",)),
    )
    inputs = {"x": TensorType((4,), "float32")}
    return Graph("g", ops, inputs, ("c", "d"), {"w": np.full(4, 3.0, np.float32)})


def _reversed(table: dict[str, object]) -> dict[str, object]:
    return dict(reversed(table.items()))


@pytest.mark.parametrize(
    ("model", "target"),
    [("cnn", "arm-riscv-soc"), ("mlp", "x86-h100"), (None, "x86-h100")],
)
@pytest.mark.parametrize("order", ["made", "reversed"])
def test_sizes_and_costs_equal_a_lookup_by_name(model: str | None, target: str, order: str) -> None:
    graph = load_model(model) if model else _folding()
    platform = platform_of(target)
    metas, costs = propagate_costs(graph, {})
    programs = programs_of(compile_plan(graph, platform, partition(graph, platform)))
    if order == "reversed":
        metas, costs = _reversed(dict(metas)), _reversed(dict(costs))
    space = SlotSpace(programs, platform, metas, costs)  # type: ignore[arg-type]
    meta: Meta
    expected = []
    for slot in space.slots:
        meta = metas[slot.tensor]  # type: ignore[assignment]
        expected.append(math.prod(meta.shape) * meta.dtype.itemsize)
    assert space.sizes == expected
    assert len({slot.tensor for slot in space.slots}) < len(space.slots)  # copies among them
    numbered = space.numbered_costs()
    assert len(numbered) == len(programs[0].ops)
    for cost, op in zip(numbered, programs[0].ops, strict=True):
        assert cost is costs[op.name]
