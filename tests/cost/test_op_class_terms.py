"""The per-op-class terms of `kernel_us` (`op_latency_us`, `mem_efficiency`) and the cost rules
they pair with (Conv's column buffer, elementwise flops in streaming passes), by hand."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.cost import kernel_timer, kernel_us, mem_efficiency, op_latency_us
from hetsim.errors import TargetError
from hetsim.ir import Op
from hetsim.kernels import Cost, Meta, lookup
from hetsim.kernels.unary import ERF_TEMP_BYTES, TRANSCENDENTAL_FLOPS
from hetsim.platform import Processor, build_platform
from hetsim.target import Target

F32 = np.dtype("float32")

# one core × 1 GHz × 1000 flop/cycle = 1e6 flop/µs; 10 GB/s = 1e4 B/µs
HOST = {
    "kind": "x86-cpu",
    "cores": 1,
    "freq_ghz": 1.0,
    "flops_per_cycle": 1000,
    "mem_bandwidth_gbps": 10.0,
    "kernel_latency_us": 1.0,
    "efficiency": {"matmul": 0.5, "conv": 0.25, "other": 0.1},
    "op_latency_us": {"conv": 20.0, "reduction": 6.0},
    "mem_efficiency": {"matmul": 0.4},
}


@pytest.fixture
def host() -> Processor:
    return build_platform(Target({"kind": "hetero", "host": HOST, "devices": [HOST]})).processors[
        "host"
    ]


def test_shipped_kinds_add_no_fixed_cost_and_stream_at_full_bandwidth() -> None:
    for tag in ("x86-cpu", "nvidia/h100", "arm/cortex-a72"):
        device = Target(tag).devices[0]
        assert set(device.attrs["op_latency_us"].values()) == {0.0}, tag
        assert set(device.attrs["mem_efficiency"].values()) == {1.0}, tag


def test_op_latency_adds_per_class_and_unlisted_classes_add_nothing(host: Processor) -> None:
    assert op_latency_us(host, "conv") == 20.0
    assert op_latency_us(host, "reduction") == 6.0
    assert op_latency_us(host, "elementwise") == 0.0  # schema default
    assert op_latency_us(host, "mystery") == 0.0  # 'other', whose default is 0


def test_kernel_with_op_latency_is_latency_plus_class_cost_plus_roofline(host: Processor) -> None:
    # 1 + 20 + max(1e6 / (1e6 · 0.25), 1e4 / 1e4) = 21 + 4
    assert kernel_us(host, Cost(1e6, 6000, 4000, "conv")) == 25.0
    # 1 + 6 + max(0, 5e4 / 1e4) = 7 + 5
    assert kernel_us(host, Cost(0, 40000, 10000, "reduction")) == 12.0


def test_mem_efficiency_slows_the_memory_term_of_its_class_only(host: Processor) -> None:
    assert mem_efficiency(host, "matmul") == 0.4
    assert mem_efficiency(host, "elementwise") == 1.0
    # matmul: 1 + max(1e3 / 5e5, 8e4 / (1e4 · 0.4)) = 1 + 20; elementwise: 1 + 8e4 / 1e4
    assert kernel_us(host, Cost(1e3, 60000, 20000, "matmul")) == 21.0
    assert kernel_us(host, Cost(1e3, 60000, 20000, "elementwise")) == 9.0


def test_kernel_timer_follows_the_documented_formula_with_the_class_terms(
    host: Processor, rng: np.random.Generator
) -> None:
    # docs/cost-model.md: latency + op_latency + max(flops / (peak · eff), bytes / (bw · mem_eff)),
    # peak 1e6 flop/µs and 1e4 B/µs (HOST), the tables as validated (schema defaults filled in);
    # a class no table lists ("mystery") takes "other"'s entries
    tables = {t: host.attrs[t] for t in ("efficiency", "op_latency_us", "mem_efficiency")}
    timer = kernel_timer(host)
    for op_class in ("matmul", "conv", "elementwise", "reduction", "mystery"):
        eff, fixed, stream = (table.get(op_class, table["other"]) for table in tables.values())
        for flops, size in zip(rng.uniform(0, 1e7, 5), rng.integers(0, 1 << 24, 5), strict=True):
            expected = 1.0 + fixed + max(flops / (1e6 * eff), size / (1e4 * stream))
            assert timer(Cost(float(flops), int(size), 0, op_class)) == pytest.approx(expected)


def test_op_latency_out_of_range_is_refused() -> None:
    bad = {**HOST, "op_latency_us": {"conv": -1.0}}
    with pytest.raises(
        TargetError, match=r"host\.op_latency_us\.conv: expected a non-negative number, got -1\.0"
    ):
        Target({"kind": "hetero", "host": bad, "devices": [HOST]})


def test_mem_efficiency_above_one_is_refused() -> None:
    bad = {**HOST, "mem_efficiency": {"matmul": 1.5}}
    with pytest.raises(
        TargetError, match=r"host\.mem_efficiency\.matmul: expected a number in \(0, 1\], got 1\.5"
    ):
        Target({"kind": "hetero", "host": bad, "devices": [HOST]})


def _cost(op: Op, *inputs: Meta) -> Cost:
    outputs = lookup(op).infer(op, 13, list(inputs))
    return lookup(op).cost(op, list(inputs), outputs)


def test_conv_counts_its_column_buffer_written_and_read_as_scratch() -> None:
    # x 1×4×5×5, w 6×4×3×3, pads 1: out 5×5; columns 1·4·9·25 = 900 floats = 3600 B, each way
    x, w = Meta((1, 4, 5, 5), F32), Meta((6, 4, 3, 3), F32)
    cost = _cost(Op("Conv", "c", ("x", "w"), ("y",), {"pads": [1, 1, 1, 1]}), x, w)
    assert (cost.bytes_read, cost.bytes_written) == (4 * (100 + 216), 4 * 150)
    assert cost.scratch_bytes == 2 * 3600
    assert cost.flops == 2 * 150 * 36


def test_strided_pointwise_conv_has_columns_and_plain_pointwise_has_none() -> None:
    x, w = Meta((1, 8, 6, 6), F32), Meta((4, 8, 1, 1), F32)
    plain = _cost(Op("Conv", "p", ("x", "w"), ("y",), {}), x, w)
    assert (plain.bytes_read, plain.bytes_written, plain.scratch_bytes) == (4 * 320, 4 * 144, 0)
    # stride 2: out 3×3, columns 1·8·1·9 = 72 floats = 288 B
    strided = _cost(Op("Conv", "s", ("x", "w"), ("y",), {"strides": [2, 2]}), x, w)
    assert (strided.bytes_read, strided.bytes_written) == (4 * 320, 4 * 36)
    assert strided.scratch_bytes == 2 * 288


def test_depthwise_conv_columns_follow_the_channels() -> None:
    # group 16 on 1×16×8×8, 3×3, pads 1: columns 16·9·64 floats
    x, w = Meta((1, 16, 8, 8), F32), Meta((16, 1, 3, 3), F32)
    op = Op("Conv", "dw", ("x", "w"), ("y",), {"group": 16, "pads": [1, 1, 1, 1]})
    cost = _cost(op, x, w)
    assert (cost.bytes_written, cost.scratch_bytes) == (4 * 1024, 2 * 4 * 16 * 9 * 64)
    assert cost.flops == 2 * 1024 * 9


@pytest.mark.parametrize(
    ("op_type", "attrs", "per_element"),
    [
        ("Relu", {}, 1),
        ("Exp", {}, 10),
        ("Tanh", {}, 10),
        ("Sigmoid", {}, 13),
        ("Erf", {}, 10),  # a native erf: a polynomial; numpy's passes are scratch bytes
        ("Gelu", {}, 14),
        ("Gelu", {"approximate": "tanh"}, 17),
        ("Sin", {}, 10),
        ("Atanh", {}, 10),
        ("Mish", {}, 33),
        ("HardSwish", {}, 5),
        ("Round", {}, 1),
        ("Swish", {}, 14),
        ("Celu", {}, 16),
        ("ThresholdedRelu", {}, 2),
    ],
)
def test_elementwise_flops_count_streaming_passes(
    op_type: str, attrs: dict[str, str], per_element: int
) -> None:
    x = Meta((2, 10), F32)
    assert _cost(Op(op_type, "u", ("x",), ("y",), attrs), x).flops == 20 * per_element


def test_erf_moves_its_temporaries_as_scratch() -> None:
    # 20 elements: x read (80 B) and y written (80 B); numpy's temporaries 1470 B per element
    erf = _cost(Op("Erf", "e", ("x",), ("y",), {}), Meta((2, 10), F32))
    assert (erf.bytes_read, erf.bytes_written, erf.scratch_bytes) == (80, 80, 20 * 1470)
    gelu = _cost(Op("Gelu", "g", ("x",), ("y",), {}), Meta((2, 10), F32))
    assert (gelu.bytes_read, gelu.bytes_written, gelu.scratch_bytes) == (80, 80, 20 * 1506)
    tanh = _cost(Op("Gelu", "g", ("x",), ("y",), {"approximate": "tanh"}), Meta((2, 10), F32))
    assert (tanh.bytes_read, tanh.bytes_written, tanh.scratch_bytes) == (80, 80, 0)


def test_pass_counts_are_the_documented_ones() -> None:
    assert (ERF_TEMP_BYTES, TRANSCENDENTAL_FLOPS) == (1470, 10)


@pytest.mark.parametrize(
    ("w_shape", "attrs", "dim"),
    [
        ((32, 64, 3, 3), {"pads": [1, 1, 1, 1]}, 32),  # M = 32 out channels
        ((256, 64, 1, 1), {}, 64),  # K = 64 in channels × 1 tap
        ((64, 1, 3, 3), {"group": 64, "pads": [1, 1, 1, 1]}, 1),  # depthwise: M/group = 1
        ((64, 64, 3, 3), {"strides": [8, 8]}, 49),  # N = 7×7 output pixels
    ],
)
def test_conv_gemm_dim_is_the_smallest_of_m_n_k_per_group(
    w_shape: tuple[int, ...], attrs: dict[str, object], dim: int
) -> None:
    x, w = Meta((1, 64, 56, 56), F32), Meta(w_shape, F32)
    assert _cost(Op("Conv", "c", ("x", "w"), ("y",), attrs), x, w).gemm_dim == dim


@pytest.mark.parametrize(
    ("op", "shapes", "gemm_dim"),
    [
        (Op("MatMul", "m", ("a", "b"), ("y",)), ((32, 4096), (4096, 4096)), 32),
        (Op("MatMul", "m", ("a", "b"), ("y",)), ((8, 64, 16), (16, 128)), 16),  # per GEMM
        (Op("MatMul", "m", ("a", "b"), ("y",)), ((256,), (256, 512)), 1),  # a vector: M = 1
        (Op("Gemm", "g", ("a", "b"), ("y",), {"transA": 1}), ((40, 24), (40, 100)), 24),
    ],
)
def test_matmul_and_gemm_name_their_smallest_gemm_dimension(
    op: Op, shapes: tuple[tuple[int, ...], ...], gemm_dim: int
) -> None:
    # gemm_half_dim.matmul was documented per kind but read by Conv's cost rule alone
    inputs = [Meta(shape, F32) for shape in shapes]
    definition = lookup(op)
    outputs = definition.infer(op, 17, inputs)
    assert definition.cost(op, inputs, outputs).gemm_dim == gemm_dim


def test_a_thin_matmul_on_a_gpu_pays_hockneys_half_dim() -> None:
    # by hand from docs/cost-model.md: x86-h100's gpu0, a 32 x 4096 by 4096 x 4096 MatMul
    from hetsim.api import simulate
    from hetsim.ir import GraphBuilder

    b = GraphBuilder("thin")
    x = b.input("x", (32, 4096), "float32")
    graph = b.build(b.op("MatMul", x, b.initializer(np.ones((4096, 4096), np.float32), "w")))
    gpu = Target("x86-h100").devices[0].attrs  # gpu0
    peak = gpu["cores"] * gpu["freq_ghz"] * gpu["flops_per_cycle"] * 1e3  # flop/µs
    compute = 2 * 32 * 4096 * 4096 / (peak * gpu["efficiency"]["matmul"])
    for half in (0.0, 32.0):
        target = {"tag": "x86-h100", "devices": {"gpu0": {"gemm_half_dim": {"matmul": half}}}}
        (span,) = [s for s in simulate(graph, target, mode="timing").spans if s.name == "matmul0"]
        expected = gpu["kernel_latency_us"] + compute * (1 + half / 32)
        assert span.end_us - span.start_us == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("op_type", "per_element"),
    [("ReduceSum", 1), ("ReduceL2", 2), ("ReduceSumSquare", 2), ("ReduceLogSumExp", 13)],
)
def test_reductions_count_flops_per_input_element(op_type: str, per_element: int) -> None:
    x = Meta((4, 8), F32)
    if op_type == "ReduceSum":  # its axes are an input from opset 13 (`_cost`'s), no attribute
        axes = Meta((1,), np.dtype("int64"), np.array([1], np.int64))
        cost = _cost(Op(op_type, "r", ("x", "axes"), ("y",)), x, axes)
    else:
        cost = _cost(Op(op_type, "r", ("x",), ("y",), {"axes": [1]}), x)
    assert cost.flops == 32 * per_element


def test_top_k_counts_a_sort_of_each_row() -> None:
    # rows of 8: 8 · log2(8) = 24 compares each, 3 rows
    k = Meta((1,), np.dtype("int64"), np.array([2], np.int64))
    assert _cost(Op("TopK", "t", ("x", "k"), ("v", "i")), Meta((3, 8), F32), k).flops == 3 * 24


def test_einsum_counts_its_iteration_space() -> None:
    # b·i·j·k = 2·3·4·5 points, a multiply and an add each; '...' dims multiply in
    op = Op("Einsum", "e", ("a", "b"), ("y",), {"equation": "bij,bjk->bik"})
    assert _cost(op, Meta((2, 3, 4), F32), Meta((2, 4, 5), F32)).flops == 2 * 120
    op = Op("Einsum", "e", ("a", "b"), ("y",), {"equation": "...ij,...jk"})
    assert _cost(op, Meta((7, 3, 4), F32), Meta((4, 5), F32)).flops == 2 * 7 * 60
