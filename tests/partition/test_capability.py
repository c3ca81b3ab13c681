"""The capability policy, checked by hand on tiny graphs and on the seed scenario."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim import execute, simulate
from hetsim.errors import PartitionError
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import propagate
from hetsim.models import load_model
from hetsim.partition import Segment, Transfer, idle_notes, partition
from hetsim.platform import Platform
from tests.partition.tiny import LINK, level, nested, platform_of, proc, tag_platform


def _cut(plan_segments: tuple[Segment, ...]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(s.id, s.device, s.ops) for s in plan_segments]


def test_ops_go_to_first_capable_device_else_host(host_npu: Platform, chain: Graph) -> None:
    plan = partition(chain, host_npu, "capability")
    assert dict(plan.placement) == {"relu0": "npu", "neg0": "host", "add0": "npu"}


def test_diamond_through_host_is_not_merged_into_a_cycle(host_npu: Platform, chain: Graph) -> None:
    plan = partition(chain, host_npu)
    assert _cut(plan.segments) == [
        ("s0", "npu", ("relu0",)),
        ("s1", "host", ("neg0",)),
        ("s2", "npu", ("add0",)),
    ]
    assert [(s.inputs, s.outputs) for s in plan.segments] == [
        (("x",), ("relu0",)),
        (("relu0",), ("neg0",)),
        (("neg0", "relu0"), ("add0",)),
    ]


def test_boundary_transfers_move_each_crossing_tensor_once(
    host_npu: Platform, chain: Graph
) -> None:
    plan = partition(chain, host_npu)
    # float32[1000] = 4000 B each; relu0 is already in npu.mem when s2 reads it.
    assert plan.levels[""].transfers == (
        Transfer("x", "host.mem", "npu.mem", 4000, "s0"),
        Transfer("relu0", "npu.mem", "host.mem", 4000, "s1"),
        Transfer("neg0", "host.mem", "npu.mem", 4000, "s2"),
        Transfer("add0", "npu.mem", "host.mem", 4000, None),
    )
    assert plan.levels[""].transfer_bytes == 16000


def test_device_priority_is_declared_order() -> None:
    first = proc("npu", name="first", ops=["Relu"], link=LINK)
    second = proc("npu", name="second", ops=["*"], link=LINK)
    b = GraphBuilder("g")
    graph = b.build(b.op("Neg", b.op("Relu", b.input("x", (4,)))))
    plan = partition(graph, platform_of(level(proc("arm-cpu"), [first, second])))
    assert dict(plan.placement) == {"relu0": "first", "neg0": "second"}


def test_device_sharing_host_memory_moves_nothing() -> None:
    npu = proc("npu", name="npu", ops=["Relu"], memory_gib=0)
    b = GraphBuilder("g")
    graph = b.build(b.op("Neg", b.op("Relu", b.input("x", (4,)))))
    plan = partition(graph, platform_of(level(proc("arm-cpu"), [npu])))
    assert _cut(plan.segments) == [("s0", "npu", ("relu0",)), ("s1", "host", ("neg0",))]
    assert plan.transfers == ()


def test_segment_on_nested_level_is_partitioned_again() -> None:
    sub = nested("sub", [proc("npu", name="acc", ops=["Relu", "Add"], link=LINK)])
    platform = platform_of(level(proc("arm-cpu"), [sub]))
    b = GraphBuilder("g")
    x = b.input("x", (10,))
    graph = b.build(b.op("Neg", b.op("Add", b.op("Relu", x), x)))
    plan = partition(graph, platform)
    assert _cut(plan.levels[""].segments) == [
        ("s0", "sub", ("relu0", "add0")),
        ("s1", "host", ("neg0",)),
    ]
    assert _cut(plan.levels["sub"].segments) == [("sub:s0", "sub/acc", ("relu0", "add0"))]
    assert plan.levels["sub"].segments[0].parent == "s0"
    assert dict(plan.placement) == {"relu0": "sub/acc", "add0": "sub/acc", "neg0": "host"}
    # float32[10] = 40 B: in to the co-processor, on to the accelerator, and back up twice.
    assert plan.levels[""].transfers == (
        Transfer("x", "host.mem", "sub/host.mem", 40, "s0"),
        Transfer("add0", "sub/host.mem", "host.mem", 40, "s1"),
    )
    assert plan.levels["sub"].transfers == (
        Transfer("x", "sub/host.mem", "sub/acc.mem", 40, "sub:s0"),
        Transfer("add0", "sub/acc.mem", "sub/host.mem", 40, None),
    )


def test_three_level_tree_places_ops_on_the_deepest_device() -> None:
    inner = nested("inner", [proc("npu", name="acc", ops=["Relu"], link=LINK)])
    outer = nested("outer", [inner])
    platform = platform_of(level(proc("arm-cpu"), [outer]))
    b = GraphBuilder("g")
    graph = b.build(b.op("Neg", b.op("Relu", b.input("x", (8,)))))
    plan = partition(graph, platform)
    assert list(plan.levels) == ["", "outer", "outer/inner"]
    assert [s.device for s in plan.segments] == ["outer", "host", "outer/inner", "outer/inner/acc"]
    assert [s.parent for s in plan.segments] == [None, None, "s0", "outer:s0"]
    assert plan.children("s0") == (plan.segment("outer:s0"),)
    assert plan.children("s1") == ()
    assert plan.placement["relu0"] == "outer/inner/acc"
    assert [t.bytes for t in plan.levels["outer/inner"].transfers] == [32, 32]


def test_seed_scenario_cnn_runs_on_npu_and_softmax_on_host() -> None:
    graph = load_model("cnn")
    plan = partition(graph, tag_platform("arm-riscv-soc"))
    assert [(s.id, s.device, len(s.ops)) for s in plan.segments] == [
        ("s0", "vdevice0", 11),
        ("s1", "host", 1),
        ("vdevice0:s0", "vdevice0/npu", 11),
    ]
    assert {p for op, p in plan.placement.items() if op != "softmax"} == {"vdevice0/npu"}
    assert plan.placement[graph.ops[-1].name] == "host"
    # x is float32[1, 3, 32, 32] = 12288 B; the logits float32[1, 10] = 40 B.
    assert [(t.tensor, t.bytes) for t in plan.levels[""].transfers] == [("x", 12288), ("fc", 40)]


def _relus(dtype: str) -> Graph:
    b = GraphBuilder(f"relus-{dtype}")
    x = b.input("x", (1, 64), dtype)
    return b.build(b.op("Relu", b.op("Relu", x)))


def test_an_op_goes_only_where_its_dtype_is_computed() -> None:
    # rk3588's NPU computes int8 and float16 (its datasheet): float32 ops went there all the same
    rk3588 = tag_platform("rk3588")
    assert set(partition(_relus("float32"), rk3588).placement.values()) == {"host"}
    assert set(partition(_relus("float16"), rk3588).placement.values()) == {"npu"}


def test_no_processor_computing_the_dtype_is_an_error_naming_each() -> None:
    int8_only = platform_of(
        level(proc("x86-cpu", dtypes=["int8"]), [proc("npu", name="npu", dtypes=["int8"])])
    )
    with pytest.raises(PartitionError) as caught:
        partition(_relus("float32"), int8_only)
    assert re.search(r"npu \(no float32 in its dtypes\).*host \(no float32 in its dtypes\)",
                     str(caught.value))  # fmt: skip


def test_an_op_giving_bools_computes_in_its_inputs_dtype() -> None:
    # a Less gives bools but compares its inputs: an NPU of float16 and bool took a float32 Less
    # by its bool output (an IsNaN likewise)
    npu = platform_of(
        level(
            proc("x86-cpu", dtypes=["float32", "bool"]),
            [proc("npu", name="npu", ops=["Less"], dtypes=["float16", "bool"])],
        )
    )
    for dtype, device in (("float32", "host"), ("float16", "npu")):
        b = GraphBuilder(f"less-{dtype}")
        x, y = b.input("x", (1, 64), dtype), b.input("y", (1, 64), dtype)
        assert dict(partition(b.build(b.op("Less", x, y)), npu).placement) == {"less0": device}


def _qlinear_conv(y_dtype: type) -> Graph:
    b = GraphBuilder("qconv")
    scale = b.initializer(np.array(0.05, np.float32), "scale")
    zero = b.initializer(np.array(0, y_dtype), "zero")
    w = b.initializer(np.ones((8, 4, 3, 3), np.int8), "w")
    w_zero = b.initializer(np.array(0, np.int8), "w_zero")
    x = b.input("x", (1, 4, 16, 16), np.dtype(y_dtype).name)
    return b.build(b.op("QLinearConv", x, scale, zero, w, scale, w_zero, scale, zero))


def test_an_int8_npu_takes_a_quantized_conv_in_its_dtype() -> None:
    # i.MX93's Ethos-U65 computes int8 and int16: QLinearConv with int8 activations goes there,
    # one with uint8 ones stays on the Cortex-A55s
    imx93 = tag_platform("nxp-imx93")
    assert dict(partition(_qlinear_conv(np.int8), imx93).placement) == {
        "qlinearconv0": "vdevice0/npu"
    }
    assert dict(partition(_qlinear_conv(np.uint8), imx93).placement) == {"qlinearconv0": "host"}


def test_the_int8_cnn_runs_its_convs_on_the_npu_where_the_float_one_cannot() -> None:
    # the zoo's cnn_int8 (QDQ groups fused): QLinearConv and int8 MaxPool go to the Ethos-U65;
    # its float quantize, dequantize and head stay on the Cortex-A55s, as all of `cnn` does
    imx93 = tag_platform("nxp-imx93")
    placement = partition(load_model("cnn_int8"), imx93).placement
    assert {name for name, path in placement.items() if path == "vdevice0/npu"} == {
        "conv1", "pool1", "conv2", "pool2"
    }  # fmt: skip
    assert set(partition(load_model("cnn"), imx93).placement.values()) == {"host"}


INT8_ACCELERATORS = ["npu", "arm/ethos-u65", "nvidia/nvdla", "rockchip/rk3588-npu", "ucb/gemmini"]


@pytest.mark.parametrize("target", ["arm-cpu", "riscv-cpu", "x86-cpu", "cuda", *INT8_ACCELERATORS])
def test_the_int8_cnn_runs_on_a_bare_kind_and_on_one_accelerator_alone(target: str) -> None:
    # A single-device target gets its kind's default host, which computes every dtype a CPU
    # does: the float quantize and dequantize ops run there. Before, a kind's dtypes defaulted
    # to float32 and these runs were a PartitionError ("host (no int8 in its dtypes)").
    result = simulate("cnn_int8", target)
    want = execute(load_model("cnn_int8"), result.inputs)
    for name, value in want.items():
        np.testing.assert_array_equal(result.outputs[name], value)
    placement = result.to_dict()["placement"]
    assert placement["quant_x"] == ("host" if target in INT8_ACCELERATORS else "dev0")
    if target in INT8_ACCELERATORS:  # the int8 convs go to the accelerator
        assert placement["conv1"] == placement["conv2"] == "dev0"


def test_an_idle_accelerator_s_note_counts_the_reasons_past_the_three_it_names() -> None:
    # ResNet-50 (float32) on NVDLA alone: 158 convs and relus are float, 16 Sums and a Reshape
    # are not in its ops, and one op is refused for a reason of its own
    graph, nvdla = load_model("resnet50"), tag_platform("nvidia/nvdla")
    on_host = {op.name: "host" for op in graph.ops}
    (note,) = idle_notes(nvdla, graph.ops, propagate(graph, {}), on_host)
    assert note == (
        "dev0 runs none of the 176 ops: no float32 in its dtypes (158), no Sum in its ops (16), "
        "no Reshape in its ops (1), other reasons (1)"
    )


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("target", ["x86-cpu", "x86-h100"])
def test_a_cpu_or_gpu_runs_every_unsigned_type(dtype: str, target: str) -> None:
    # a CPU or a GPU kind computes in every dtype (docs/partition.md), but the dtypes a target
    # could name stopped at uint8: "no device can run it; tried gpu0 (no uint16 in its dtypes),
    # host (no uint16 in its dtypes)"
    b = GraphBuilder("unsigned")
    x = b.input("x", (4,), dtype)
    graph = b.build(b.op("Less", b.op("Add", x, x, name="a"), x, name="l"))
    device = "dev0" if target == "x86-cpu" else "gpu0"
    assert dict(partition(graph, tag_platform(target)).placement) == {"a": device, "l": device}
    x_value = np.array([0, 1, np.iinfo(dtype).max, 7], dtype)
    result = simulate(graph, target, inputs={"x": x_value})
    expected = execute(graph, {"x": x_value})
    assert result.outputs["l"].tolist() == expected["l"].tolist() == [False, False, True, False]
