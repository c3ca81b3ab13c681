"""The dynamic-shape rule: ops reached by an unbound symbolic dim stay off static levels."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError, PartitionError
from hetsim.ir import Graph, GraphBuilder
from hetsim.models import load_model
from hetsim.partition import partition
from tests.partition.tiny import LINK, level, nested, platform_of, proc, tag_platform


def test_unbound_dim_keeps_ops_off_the_graph_executor_level() -> None:
    graph = load_model("transformer")
    plan = partition(graph, tag_platform("arm-riscv-soc"))
    assert plan.dynamic == tuple(op.name for op in graph.ops)
    assert set(plan.placement.values()) == {"host"}
    assert plan.levels["vdevice0"].segments == ()


def test_dims_bound_at_compile_time_make_the_graph_static() -> None:
    graph = load_model("transformer")
    plan = partition(graph, tag_platform("arm-riscv-soc"), dims={"seq": 8})
    assert plan.dynamic == ()
    assert dict(plan.dims) == {"seq": 8}
    assert plan.placement["q.matmul"] == "vdevice0/npu"


def test_dynamic_ops_may_go_to_a_nested_vm_level() -> None:
    plan = partition(load_model("transformer"), tag_platform("two-node-h100"))
    assert len(plan.dynamic) == 33
    assert set(plan.placement.values()) == {"node0/gpu0"}


def test_only_ops_that_depend_on_the_unbound_dim_are_dynamic() -> None:
    sub = nested("sub", [proc("npu", name="acc", ops=["*"], link=LINK)])
    platform = platform_of(level(proc("arm-cpu"), [sub]))
    b = GraphBuilder("g")
    fixed = b.op("Relu", b.input("a", (4,)))
    moving = b.op("Relu", b.input("b", ("n", 4)))
    graph = b.build(fixed, b.op("Neg", moving))
    plan = partition(graph, platform)
    assert plan.dynamic == ("relu1", "neg0")
    assert dict(plan.placement) == {"relu0": "sub/acc", "relu1": "host", "neg0": "host"}


def pairs_graph() -> Graph:
    """x: float32[n] reshaped to [-1, 2]: it holds for an even n, not at the estimate's n = 1."""
    b = GraphBuilder("pairs")
    pairs = b.op("Reshape", b.input("x", ("n",)), np.array([-1, 2], np.int64), name="pairs")
    return b.build(b.op("Relu", pairs))


def test_a_shape_that_fails_only_at_the_estimate_says_to_bind_the_dims() -> None:
    # the shape rule's message alone named a shape [1] the user never gave
    with pytest.raises(
        PartitionError,
        match=r"^partition: expected shapes that hold with the dims not bound at compile time "
        r"set to 1 for the plan's estimate \(n=1\), got op pairs \(Reshape\): expected a shape "
        r"that fits \[1\], got \[-1, 2\] \(bind them with dims=, as this run's sizes\)$",
    ):
        simulate(pairs_graph(), "x86-h100", inputs={"x": np.ones(200, np.float32)})
    bound = simulate(pairs_graph(), "x86-h100", inputs={"x": np.ones(200, np.float32)},
                     dims={"n": 200})  # fmt: skip
    assert bound.outputs["relu0"].shape == (100, 2)


def test_an_op_no_unbound_dim_reaches_is_refused_as_its_own_error() -> None:
    # its failure had been put on the estimate's n=1 with "bind them with dims=", which no
    # size of n mends: the op reads only the static y
    b = GraphBuilder("two")
    b.op("Relu", b.input("x", ("n",)), name="relu")
    b.op("Add", b.input("y", (4,)), np.ones(3, np.float32), name="add")
    graph = b.build()
    message = "op add (Add): expected broadcastable shapes, got [4] and [3]"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$") as caught:
        partition(graph, tag_platform("x86-h100"))
    assert not isinstance(caught.value, PartitionError)


def test_an_op_that_fails_at_other_sizes_too_says_so_beside_the_hint() -> None:
    # x: float32[n, 4] plus a [3]: no n broadcasts, yet the failure was put on the estimate's
    # n=1 with "bind them with dims=" alone, and every --dims n=N then failed the same
    b = GraphBuilder("rows")
    b.op("Add", b.input("x", ("n", 4)), np.ones(3, np.float32), name="add")
    graph = b.build()
    message = (
        "partition: expected shapes that hold with the dims not bound at compile time set to 1 "
        "for the plan's estimate (n=1), got op add (Add): expected broadcastable shapes, got "
        "[1, 4] and [3] (bind them with dims=, as this run's sizes; it fails at n=2 and n=2520 "
        "too: few sizes, or none, may hold)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, tag_platform("x86-h100"))
    with pytest.raises(ModelError, match=r"^op add \(Add\): .* got \[8, 4\] and \[3\]$"):
        partition(graph, tag_platform("x86-h100"), dims={"n": 8})


def test_an_op_that_holds_at_few_sizes_keeps_the_hint_to_bind_them() -> None:
    # a Reshape of [n] to [-1, 16] fails at 1, 2 and 2520 yet runs at n=32: the refusal had
    # become the op's own error, without the hint that mends it
    b = GraphBuilder("rows")
    b.op("Reshape", b.input("x", ("n",)), np.array([-1, 16], np.int64), name="r")
    graph = b.build()
    with pytest.raises(PartitionError, match=r"\(bind them with dims=, as this run's sizes; "):
        partition(graph, tag_platform("x86-h100"))
    assert partition(graph, tag_platform("x86-h100"), dims={"n": 32}).placement == {"r": "gpu0"}


def test_input_arrays_of_names_the_graph_lacks_are_refused_by_name() -> None:
    with pytest.raises(
        ModelError, match=r"^inputs: expected names from \['x'\], got unknown \['y'\]$"
    ):
        partition(pairs_graph(), tag_platform("x86-h100"), inputs={"y": np.ones(2, np.int64)})
