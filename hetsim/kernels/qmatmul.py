"""Quantized matrix products: QLinearMatMul and MatMulInteger (int8 models).

Each takes int8 or uint8 operands, subtracts their zero points and accumulates exactly, as
`qlinear.py`'s convolutions do: the centered operands are float32 when K is at most
`EXACT_FLOAT32_TERMS` and float64 beyond, so ``np.matmul`` gives the exact integer accumulator
with no integer GEMM (`hetsim.kernels.integer`). Shapes follow MatMul (batches broadcast, a 1-D
operand's dim dropped); the rule is `nn.py`'s.

MatMulInteger gives the accumulator as int32, wrapping past its range as ONNX lets an int32
accumulation overflow. QLinearMatMul requantizes it (`requantize`) as QLinearConv does, the
multiplier ``a_scale · b_scale / y_scale`` formed in the scales' own dtype (float32, or float16
from opset 21). The output dtype is y_zero_point's (a's without one).

Granularity: a scale and its zero point have one shape, or the zero point one element with a
finer scale. One element (shape ``()`` or ``(1,)``)
is per tensor; ``a`` may be per row (``[M]``, or a's shape with its last dim 1) and ``b`` per
column (``[N]``, or b's shape with its next-to-last dim 1); y is per tensor. onnx's reference
reads a 1-D ``[M]`` zero point of ``a`` along K, not per row, as ONNX describes it.

Cost (op class ``matmul``; bytes read are every input's, bytes written the output's):
MatMulInteger is MatMul's ``2·prod(batch)·M·N·K`` flops, and QLinearMatMul adds 3 flops per
output element for the requantization (multiply, round, add the zero point; the saturation is
free). `Cost.gemm_dim` is MatMul's. The numpy lowering's further passes (`Cost.numpy_calls`,
`Cost.numpy_bytes`): each operand's cast and centering, then the requantization's
(`REQUANTIZE_PASSES`, one more for a zero point) or MatMulInteger's two casts to int32
(`wrapping`), each over the bytes it reads and writes; the requantization multiplier's
`MULTIPLIER_CALLS`.

The input checks, the int32 wrap and the multiplier are `qlinear.py`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.integer import (
    MULTIPLIER_CALLS,
    accumulator_dtype,
    centered,
    centering,
    requantize,
    requantizing,
    with_passes,
)
from hetsim.kernels.meta import Meta
from hetsim.kernels.nn import cost_matmul, infer_matmul
from hetsim.kernels.qlinear import (
    INTEGER_TYPES,
    QLINEAR_TYPES,
    Shapes,
    along,
    check_granularity,
    check_integer,
    check_scale,
    operands,
    product,
    wrapped,
    wrapping,
)
from hetsim.kernels.registry import Kernel, register

__all__: list[str] = []

_FLOAT32 = np.dtype("float32")
_INT32 = np.dtype("int32")
_SCALE_DTYPES = {10: (_FLOAT32,), 21: (_FLOAT32, np.dtype("float16"))}
"""The scale dtypes of QLinearMatMul, by the opset they hold from (QLinearConv's: float32)."""


def _per_row(a: tuple[int, ...]) -> Shapes:
    """The per-row shapes of a scale or zero point of a matrix `a` (none of a vector)."""
    return ((a[-2],), (*a[:-1], 1)) if len(a) > 1 else ()


def _per_column(b: tuple[int, ...]) -> Shapes:
    """The per-column shapes of a scale or zero point of a matrix `b` (none of a vector)."""
    return ((b[-1],), (*b[:-2], 1, b[-1])) if len(b) > 1 else ()


def _matmul_out(op: Op, opset: int, a: Meta, b: Meta) -> tuple[int, ...]:
    """MatMul's output shape (`nn.py`'s shape rule)."""
    return infer_matmul(op, opset, [a, b])[0].shape


# QLinearMatMul


_QLINEAR_MATMUL_INPUTS = (
    "a",
    "a_scale",
    "a_zero_point",
    "b",
    "b_scale",
    "b_zero_point",
    "y_scale",
    "y_zero_point",
)


def _matrices(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`a` and `b` with a vector made a matrix (a row, b a column), as MatMul reads them."""
    return (a if a.ndim > 1 else a.reshape(1, -1)), (b if b.ndim > 1 else b.reshape(-1, 1))


def _matmul_shape(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[int, ...]:
    """The shape of the product of `a` and `b`, whose matrix form gave `acc`."""
    rows = acc.shape[-2:-1] if a.ndim > 1 else ()
    cols = acc.shape[-1:] if b.ndim > 1 else ()
    return (*acc.shape[:-2], *rows, *cols)


def _compile_qlinear_matmul(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (*inputs, None)[:8]
        assert a is not None, f"{op!r}: input a is required"
        assert b is not None, f"{op!r}: input b is required"
        a2, b2 = _matrices(a, b)
        rows, cols = a2.ndim - 2, b2.ndim - 1
        exact = accumulator_dtype(a2.shape[-1])
        centered_a = centered(a2, along(a_zero, a2.shape, rows), exact)
        acc = np.matmul(centered_a, centered(b2, along(b_zero, b2.shape, cols), exact))
        multiplier = product(
            along(a_scale, a2.shape, rows), along(b_scale, b2.shape, cols), along(y_scale, (), 0)
        )
        dtype = (a if y_zero is None else y_zero).dtype
        y = requantize(acc, multiplier, along(y_zero, (), 0), dtype)
        return [y.reshape(_matmul_shape(acc, a, b))]

    return kernel


def _infer_qlinear_matmul(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = operands(op, inputs, _QLINEAR_MATMUL_INPUTS)
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = metas
    assert a is not None, f"{op!r}: a checked present"
    assert b is not None, f"{op!r}: b checked present"
    allowed = _SCALE_DTYPES[21 if opset >= 21 else 10]
    for meta, name in zip(metas, _QLINEAR_MATMUL_INPUTS, strict=True):
        if name.endswith("_scale"):
            assert meta is not None, f"{op!r}: {name} checked present"
            check_scale(op, meta, name, allowed)
        else:
            check_integer(op, meta, name)
    shape = _matmul_out(op, opset, a, b)
    check_granularity(op, "a", a_scale, a_zero, _per_row(a.shape), "per row of a")
    check_granularity(op, "b", b_scale, b_zero, _per_column(b.shape), "per column of b")
    check_granularity(op, "y", y_scale, y_zero, (), "")
    return [Meta(shape, (a if y_zero is None else y_zero).dtype)]


def _cost_qlinear_matmul(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """MatMul's cost of a and b, plus 3 flops per output element to requantize."""
    a, _, a_zero, b, _, b_zero, _, y_zero = operands(op, inputs, _QLINEAR_MATMUL_INPUTS)
    acc = _matmul_accumulator(a)
    passes = [
        *centering(a, a_zero, acc),
        *centering(b, b_zero, acc),
        *requantizing(outputs[0], y_zero, None, acc),
    ]
    cost = _integer_matmul_cost(op, inputs, outputs, [a, b], 3)
    return with_passes(cost, passes, MULTIPLIER_CALLS)


# MatMulInteger


_MATMUL_INTEGER_INPUTS = ("A", "B", "a_zero_point", "b_zero_point")


def _compile_matmul_integer(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, b, a_zero, b_zero = (*inputs, None, None)[:4]
        assert a is not None, f"{op!r}: input A is required"
        assert b is not None, f"{op!r}: input B is required"
        a2, b2 = _matrices(a, b)
        exact = accumulator_dtype(a2.shape[-1])
        centered_a = centered(a2, along(a_zero, a2.shape, a2.ndim - 2), exact)
        acc = np.matmul(centered_a, centered(b2, along(b_zero, b2.shape, b2.ndim - 1), exact))
        return [wrapped(acc).reshape(_matmul_shape(acc, a, b))]

    return kernel


def _infer_matmul_integer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b, a_zero, b_zero = operands(op, inputs, _MATMUL_INTEGER_INPUTS)
    assert a is not None, f"{op!r}: A checked present"
    assert b is not None, f"{op!r}: B checked present"
    for meta, name in zip((a, b, a_zero, b_zero), _MATMUL_INTEGER_INPUTS, strict=True):
        check_integer(op, meta, name)
    shape = _matmul_out(op, opset, a, b)
    check_granularity(op, "a", None, a_zero, _per_row(a.shape), "per row of A")
    check_granularity(op, "b", None, b_zero, _per_column(b.shape), "per column of B")
    return [Meta(shape, _INT32)]


def _cost_matmul_integer(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """MatMul's cost of A and B."""
    a, b, a_zero, b_zero = operands(op, inputs, _MATMUL_INTEGER_INPUTS)
    acc = _matmul_accumulator(a)
    passes = [*centering(a, a_zero, acc), *centering(b, b_zero, acc), *wrapping(outputs[0], acc)]
    return with_passes(_integer_matmul_cost(op, inputs, outputs, [a, b], 0), passes)


def _integer_matmul_cost(
    op: Op,
    inputs: Sequence[Meta | None],
    outputs: Sequence[Meta],
    matmul_inputs: list[Meta | None],
    flops_per_output: int,
) -> Cost:
    """`cost_matmul` of the two matrices, plus `flops_per_output`; bytes read: every input's."""
    cost = cost_matmul(op, matmul_inputs, outputs)
    flops = cost.flops + flops_per_output * outputs[0].size
    return dataclasses.replace(cost, flops=flops, bytes_read=nbytes(inputs))


def _matmul_accumulator(a: Meta | None) -> np.dtype[Any]:
    """The `accumulator_dtype` of a (batched) product of `a`: K is its last dim."""
    assert a is not None, "a checked present by the shape rule"
    return accumulator_dtype(a.shape[-1])


register(
    "QLinearMatMul",
    "matmul",
    compile=_compile_qlinear_matmul,
    infer=_infer_qlinear_matmul,
    cost=_cost_qlinear_matmul,
    one_type=QLINEAR_TYPES,
    required=8,  # every input: onnx's schema and onnxruntime refuse an omitted zero point
)
register(
    "MatMulInteger",
    "matmul",
    compile=_compile_matmul_integer,
    infer=_infer_matmul_integer,
    cost=_cost_matmul_integer,
    one_type=INTEGER_TYPES,
    required=2,
)
