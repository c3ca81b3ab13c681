"""Single-op cases of the NN ops (Conv and friends), run by test_every_op.py.

Each case is checked against onnx's ReferenceEvaluator, so the table holds only what that
evaluator computes correctly; corners where it is wrong or missing are tested in test_nn.py
against onnxruntime or a slow loop written there. Inputs are seeded, float32.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_RNG = np.random.default_rng(20261202)


def _r(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _pos(*shape: int) -> np.ndarray:
    return _RNG.uniform(0.5, 2.0, shape).astype(np.float32)


def _conv(
    id: str, x: tuple[int, ...], w: tuple[int, ...], bias: bool = False, **attrs: Any
) -> Case:
    inputs = {"x": _r(*x), "w": _r(*w)}
    if bias:
        inputs["b"] = _r(w[0])
    return Case("Conv", inputs, attrs, opset=11, id=id, rtol=1e-4, atol=1e-5)


def _conv_t(
    id: str, x: tuple[int, ...], w: tuple[int, ...], bias: bool = False, **attrs: Any
) -> Case:
    inputs = {"x": _r(*x), "w": _r(*w)}
    if bias:
        inputs["b"] = _r(w[1] * attrs.get("group", 1))
    return Case("ConvTranspose", inputs, attrs, opset=11, id=id, rtol=1e-4, atol=1e-5)


def _pool(op: str, id: str, x: tuple[int, ...], opset: int = 11, **attrs: Any) -> Case:
    return Case(op, {"x": _r(*x)}, attrs, opset=opset, id=id, rtol=1e-5, atol=1e-6)


def _loop_max_pool(
    kernel: tuple[int, ...], strides: tuple[int, ...], begin: tuple[int, ...], out: tuple[int, ...]
) -> Any:
    """A reference MaxPool: one Python max per output element over the in-bounds window."""

    def reference(x: np.ndarray) -> list[np.ndarray]:
        y = np.empty((*x.shape[:2], *out), x.dtype)
        for index in itertools.product(*(range(o) for o in out)):
            starts = [i * s - b for i, s, b in zip(index, strides, begin, strict=True)]
            region = tuple(
                slice(max(0, lo), min(n, lo + k))
                for lo, k, n in zip(starts, kernel, x.shape[2:], strict=True)
            )
            y[(slice(None), slice(None), *index)] = x[(slice(None), slice(None), *region)].max(
                axis=tuple(range(2, x.ndim))
            )
        return [y]

    return reference


def _flat_softmax(log: bool, axis: int = 1) -> Any:
    """Softmax before opset 13: flatten to 2-D at `axis`, normalize each row."""

    def reference(x: np.ndarray) -> list[np.ndarray]:
        rows = x.reshape(int(np.prod(x.shape[:axis])), -1).astype(np.float64)
        shifted = rows - rows.max(axis=1, keepdims=True)
        total = np.exp(shifted).sum(axis=1, keepdims=True)
        y = shifted - np.log(total) if log else np.exp(shifted) / total
        return [y.reshape(x.shape).astype(x.dtype)]

    return reference


def _bn_reference(x: np.ndarray, *vectors: np.ndarray, epsilon: float = 1e-5) -> list[np.ndarray]:
    scale, bias, mean, var = (v.reshape(-1, *(1,) * (x.ndim - 2)) for v in vectors)
    y = (x.astype(np.float64) - mean) / np.sqrt(var + epsilon) * scale + bias
    return [y.astype(x.dtype)]


def _lrn_reference(size: int, alpha: float, beta: float, bias: float) -> Any:
    def reference(x: np.ndarray) -> list[np.ndarray]:
        squares = x.astype(np.float64) ** 2
        total = np.zeros_like(squares)
        for c in range(x.shape[1]):
            low, high = max(0, c - (size - 1) // 2), min(x.shape[1], c + size // 2 + 1)
            total[:, c] = squares[:, low:high].sum(axis=1)
        return [(x / (bias + alpha / size * total) ** beta).astype(x.dtype)]

    return reference


CONV = [
    _conv("conv2d_plain", (1, 2, 5, 5), (3, 2, 3, 3)),
    _conv("conv2d_pads_bias", (1, 2, 5, 5), (3, 2, 3, 3), True, pads=[1, 1, 1, 1]),
    _conv("conv2d_asymmetric_pads", (1, 2, 5, 6), (2, 2, 3, 3), pads=[0, 1, 2, 0]),
    _conv("conv2d_strides", (1, 3, 7, 7), (4, 3, 3, 3), True, strides=[2, 2], pads=[1, 1, 1, 1]),
    _conv("conv2d_uneven_strides", (1, 2, 7, 6), (2, 2, 3, 2), strides=[2, 1]),
    _conv("conv2d_dilations", (1, 2, 8, 8), (3, 2, 3, 3), dilations=[2, 2], pads=[2, 2, 2, 2]),
    _conv("conv2d_groups", (1, 4, 6, 6), (6, 2, 3, 3), True, group=2, pads=[1, 1, 1, 1]),
    _conv("conv2d_groups_batch", (2, 4, 5, 5), (4, 2, 1, 1), True, group=2),
    _conv(
        "conv2d_depthwise",
        (1, 3, 7, 7),
        (3, 1, 3, 3),
        True,
        group=3,
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    ),
    _conv("conv2d_depthwise_multiplier", (1, 2, 5, 5), (4, 1, 3, 3), group=2),
    _conv("conv2d_1x1_strided", (1, 4, 6, 6), (5, 4, 1, 1), True, strides=[2, 2]),
    _conv("conv2d_kernel_shape_attr", (1, 1, 4, 4), (2, 1, 2, 2), kernel_shape=[2, 2]),
    _conv("conv2d_same_upper", (1, 2, 7, 7), (2, 2, 4, 4), auto_pad="SAME_UPPER", strides=[2, 2]),
    _conv("conv2d_same_lower", (1, 2, 7, 7), (2, 2, 4, 4), auto_pad="SAME_LOWER", strides=[2, 2]),
    _conv("conv2d_valid", (1, 2, 7, 6), (2, 2, 3, 3), auto_pad="VALID", strides=[2, 2]),
    _conv("conv1d_strides_pads", (2, 3, 9), (4, 3, 3), True, strides=[2], pads=[1, 2]),
    _conv("conv1d_depthwise_dilated", (1, 4, 10), (4, 1, 3), group=4, dilations=[3]),
    _conv(
        "conv3d_pads_dilations",
        (1, 2, 5, 6, 4),
        (3, 2, 3, 2, 2),
        True,
        pads=[1, 0, 1, 1, 1, 0],
        dilations=[1, 2, 1],
    ),
    _conv("conv3d_groups_strides", (1, 4, 5, 5, 5), (2, 2, 2, 2, 2), group=2, strides=[2, 2, 1]),
]

CONV_TRANSPOSE = [
    _conv_t("conv_transpose2d_plain", (1, 2, 3, 3), (2, 3, 3, 3)),
    _conv_t(
        "conv_transpose2d_strides_pads_output_padding",
        (1, 2, 3, 4),
        (2, 3, 3, 3),
        True,
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        output_padding=[1, 1],
    ),
    _conv_t("conv_transpose2d_asymmetric_pads", (1, 1, 4, 4), (1, 2, 3, 3), pads=[0, 1, 2, 0]),
    _conv_t("conv_transpose2d_dilations", (1, 2, 4, 4), (2, 2, 2, 2), dilations=[2, 2]),
    _conv_t(
        "conv_transpose2d_same_upper",
        (1, 2, 3, 3),
        (2, 2, 3, 3),
        auto_pad="SAME_UPPER",
        strides=[2, 2],
    ),
    _conv_t(
        "conv_transpose2d_same_lower",
        (1, 2, 3, 3),
        (2, 2, 3, 3),
        auto_pad="SAME_LOWER",
        strides=[2, 2],
    ),
    # onnx's reference writes one output channel per group: keep M/group = 1 and no bias here;
    # test_nn.py checks wider groups against onnxruntime.
    _conv_t("conv_transpose2d_depthwise", (1, 3, 3, 3), (3, 1, 3, 3), group=3, strides=[2, 2]),
    _conv_t("conv_transpose1d_strides", (2, 2, 5), (2, 3, 3), True, strides=[3]),
    _conv_t("conv_transpose3d_strides", (1, 2, 2, 3, 2), (2, 2, 2, 2, 3), strides=[2, 1, 2]),
]

POOL = [
    _pool(
        "MaxPool",
        "maxpool2d_resnet_stem",
        (1, 2, 9, 9),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    ),
    _pool(
        "MaxPool",
        "maxpool2d_ceil_mode",
        (1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        ceil_mode=1,
    ),
    _pool(
        "MaxPool",
        "maxpool2d_asymmetric_pads",
        (1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[0, 0, 1, 1],
    ),
    _pool("MaxPool", "maxpool2d_dilations", (1, 1, 7, 7), kernel_shape=[2, 2], dilations=[2, 2]),
    _pool(
        "MaxPool",
        "maxpool2d_same_upper",
        (1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        auto_pad="SAME_UPPER",
    ),
    replace(
        _pool(
            "MaxPool",
            "maxpool2d_same_lower",
            (1, 2, 6, 6),
            kernel_shape=[3, 3],
            strides=[2, 2],
            auto_pad="SAME_LOWER",
        ),
        reference=_loop_max_pool((3, 3), (2, 2), (1, 1), (3, 3)),
        why="onnx's ReferenceEvaluator shifts SAME_LOWER windows (onnxruntime agrees with us)",
    ),
    _pool(
        "MaxPool",
        "maxpool2d_valid",
        (1, 2, 7, 7),
        kernel_shape=[3, 3],
        strides=[2, 2],
        auto_pad="VALID",
    ),
    _pool("MaxPool", "maxpool1d_strides", (2, 3, 9), kernel_shape=[3], strides=[2]),
    replace(
        _pool(
            "MaxPool",
            "maxpool3d_pads",
            (1, 2, 4, 5, 4),
            kernel_shape=[2, 3, 2],
            pads=[1, 1, 0, 0, 1, 1],
        ),
        reference=_loop_max_pool((2, 3, 2), (1, 1, 1), (1, 1, 0), (4, 5, 4)),
        why="onnx's ReferenceEvaluator indexes past the input with asymmetric 3-D pads",
    ),
    _pool(
        "AveragePool",
        "avgpool2d_exclude_pad",
        (1, 2, 7, 7),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    ),
    _pool(
        "AveragePool",
        "avgpool2d_include_pad",
        (1, 2, 7, 7),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        count_include_pad=1,
    ),
    _pool(
        "AveragePool",
        "avgpool2d_ceil_mode_include_pad",
        (1, 1, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        ceil_mode=1,
        count_include_pad=1,
    ),
    _pool(
        "AveragePool",
        "avgpool2d_ceil_mode_exclude_pad",
        (1, 1, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        ceil_mode=1,
    ),
    _pool(
        "AveragePool",
        "avgpool2d_asymmetric_pads",
        (1, 2, 7, 7),
        kernel_shape=[7, 7],
        pads=[0, 0, 1, 1],
    ),
    _pool(
        "AveragePool",
        "avgpool2d_same_upper",
        (1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        auto_pad="SAME_UPPER",
    ),
    _pool(
        "AveragePool",
        "avgpool2d_same_lower_include_pad",
        (1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        auto_pad="SAME_LOWER",
        count_include_pad=1,
    ),
    _pool(
        "AveragePool",
        "avgpool2d_dilations_opset19",
        (1, 1, 7, 7),
        opset=19,
        kernel_shape=[2, 2],
        dilations=[2, 2],
    ),
    _pool("AveragePool", "avgpool1d_pads", (1, 3, 8), kernel_shape=[3], pads=[1, 1]),
    _pool(
        "AveragePool",
        "avgpool3d_strides",
        (1, 2, 5, 4, 6),
        kernel_shape=[2, 2, 3],
        strides=[2, 1, 3],
    ),
    _pool("GlobalAveragePool", "global_avgpool2d", (2, 3, 5, 4)),
    _pool("GlobalAveragePool", "global_avgpool1d", (1, 4, 7)),
    _pool("GlobalAveragePool", "global_avgpool3d", (1, 2, 3, 4, 5)),
]


def _bn(
    id: str, x: tuple[int, ...], opset: int, *, x_dtype: Any = np.float32, **attrs: Any
) -> Case:
    c = x[1]
    inputs = {
        "x": _r(*x).astype(x_dtype),
        "scale": _r(c),
        "b": _r(c),
        "mean": _r(c),
        "var": _pos(c),
    }
    return Case("BatchNormalization", inputs, attrs, opset=opset, id=id, rtol=1e-5, atol=1e-5)


def _lrn(id: str, x: tuple[int, ...], size: int, alpha: float, beta: float, bias: float) -> Case:
    return Case(
        "LRN",
        {"x": _r(*x)},
        {"size": size, "alpha": alpha, "beta": beta, "bias": bias},
        opset=11,
        id=id,
        reference=_lrn_reference(size, alpha, beta, bias),
        why="onnx's ReferenceEvaluator loops over the batch instead of the channels (4-D only)",
        rtol=1e-5,
        atol=1e-6,
    )


def _layer_norm(id: str, x: tuple[int, ...], axis: int, bias: bool, outputs: int = 1) -> Case:
    normalized = x[axis:]
    inputs = {"x": _r(*x), "scale": _r(*normalized), "b": _r(*normalized) if bias else None}
    return Case(
        "LayerNormalization",
        inputs,
        {"axis": axis, "epsilon": 1e-3},
        opset=17,
        id=id,
        outputs=outputs,
        rtol=1e-4,
        atol=1e-5,
    )


NORM = [
    _bn("batchnorm2d_opset15", (2, 3, 4, 4), 15, epsilon=1e-3),
    replace(
        _bn("batchnorm2d_opset9", (1, 4, 3, 3), 9),
        reference=_bn_reference,
        why="onnx's ReferenceEvaluator uses batch statistics at opset 9 (momentum's default)",
    ),
    _bn("batchnorm_rank2", (5, 3), 15),
    _bn("batchnorm3d", (1, 2, 3, 2, 2), 15),
    # opset 15 types X (T) apart from scale and B (T1) and mean and var (T2); Y is of X's type
    replace(_bn("batchnorm_x_float16", (1, 3, 2, 2), 15, x_dtype=np.float16), rtol=1e-3, atol=1e-3),
    # opset 14 types X, scale and B as T, mean and var as U
    _bn("batchnorm2d_opset14", (1, 3, 2, 2), 14),
    Case(
        "InstanceNormalization",
        {"x": _r(2, 3, 4, 5), "scale": _r(3), "b": _r(3)},
        {"epsilon": 1e-2},
        opset=11,
        id="instancenorm2d",
        rtol=1e-4,
        atol=1e-5,
    ),
    Case(
        "InstanceNormalization",
        {"x": _r(1, 2, 6), "scale": _r(2), "b": _r(2)},
        opset=11,
        id="instancenorm1d_default_epsilon",
        rtol=1e-4,
        atol=1e-5,
    ),
    _layer_norm("layernorm_last_axis", (2, 3, 8), -1, True),
    _layer_norm("layernorm_axis1_no_bias", (2, 3, 4), 1, False),
    _layer_norm("layernorm_mean_invstd_outputs", (3, 5), -1, True, outputs=3),
    _lrn("lrn_size5", (1, 7, 3, 3), 5, 1e-2, 0.75, 1.0),
    _lrn("lrn_even_size_rank3", (2, 6, 4), 4, 5e-2, 0.5, 2.0),
]


def _gemm(
    id: str, a: tuple[int, ...], b: tuple[int, ...], c: Any, opset: int = 13, **attrs: Any
) -> Case:
    inputs = {"a": _r(*a), "b": _r(*b), "c": None if c is None else _r(*c)}
    if c is None:
        del inputs["c"]
    return Case("Gemm", inputs, attrs, opset=opset, id=id, rtol=1e-5, atol=1e-5)


def _matmul(id: str, a: tuple[int, ...], b: tuple[int, ...]) -> Case:
    return Case("MatMul", {"a": _r(*a), "b": _r(*b)}, opset=13, id=id, rtol=1e-5, atol=1e-5)


LINEAR = [
    _gemm("gemm_plain", (3, 4), (4, 5), None),
    _gemm("gemm_bias_vector", (3, 4), (4, 5), (5,), opset=9),
    _gemm("gemm_trans_a", (4, 3), (4, 5), (3, 5), transA=1),
    _gemm("gemm_trans_b_alexnet", (2, 6), (5, 6), (5,), opset=9, transB=1),
    _gemm(
        "gemm_trans_both_alpha_beta",
        (4, 3),
        (5, 4),
        (3, 1),
        transA=1,
        transB=1,
        alpha=0.5,
        beta=2.0,
    ),
    _gemm("gemm_scalar_c", (2, 3), (3, 2), (), alpha=-1.5),
    _gemm("gemm_beta_zero", (2, 3), (3, 2), (2, 2), beta=0.0),
    _matmul("matmul_2d", (3, 4), (4, 5)),
    _matmul("matmul_vector_matrix", (4,), (4, 5)),
    _matmul("matmul_matrix_vector", (3, 4), (4,)),
    _matmul("matmul_vector_vector", (4,), (4,)),
    _matmul("matmul_batch_broadcast", (2, 1, 3, 4), (5, 4, 2)),
    _matmul("matmul_batched_vector", (2, 3, 4), (4,)),
]


def _softmax(op: str, id: str, x: tuple[int, ...], opset: int, **attrs: Any) -> Case:
    return Case(op, {"x": _r(*x) * 3}, attrs, opset=opset, id=id, rtol=1e-5, atol=1e-6)


_LEGACY = "onnx's ReferenceEvaluator applies the opset-13 rule (no flattening) to older opsets"


def _legacy(op: str, id: str, x: tuple[int, ...], opset: int, axis: int) -> Case:
    """A Softmax/LogSoftmax before opset 13, checked against the flattening reference."""
    case = _softmax(op, id, x, opset, axis=axis)
    return replace(case, reference=_flat_softmax(op == "LogSoftmax", axis), why=_LEGACY)


SOFTMAX = [
    replace(
        _softmax("Softmax", "softmax_opset9_default_axis_flattens", (2, 3, 4), 9),
        reference=_flat_softmax(log=False),
        why=_LEGACY,
    ),
    _softmax("Softmax", "softmax_opset11_axis2", (2, 3, 4), 11, axis=2),
    _legacy("Softmax", "softmax_opset11_negative_axis_flattens", (2, 3, 4), 11, axis=-2),
    _softmax("Softmax", "softmax_opset13_default_last_axis", (2, 3, 4), 13),
    _softmax("Softmax", "softmax_opset13_axis1", (2, 3, 4), 13, axis=1),
    _softmax("Softmax", "softmax_opset13_axis0", (3, 4), 13, axis=0),
    replace(
        _softmax("LogSoftmax", "log_softmax_opset9_default_axis_flattens", (2, 3, 4), 9),
        reference=_flat_softmax(log=True),
        why=_LEGACY,
    ),
    _legacy("LogSoftmax", "log_softmax_opset11_axis0_flattens", (2, 3), 11, axis=0),
    _softmax("LogSoftmax", "log_softmax_opset13_default_last_axis", (2, 3, 4), 13),
    _softmax("LogSoftmax", "log_softmax_opset13_negative_axis", (2, 3, 4), 13, axis=-3),
]

CASES: list[Case] = [*CONV, *CONV_TRANSPOSE, *POOL, *NORM, *LINEAR, *SOFTMAX]
