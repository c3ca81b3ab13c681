"""The dynamic-shape rule: ops reached by an unbound symbolic dim stay off static levels."""

from __future__ import annotations

from hetsim.ir import GraphBuilder
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
