"""onnxruntime's QGemm (domain ``com.microsoft``): Gemm on int8 or uint8 matrices.

onnxruntime runs an int8 model's Gemm (a fully connected layer, as PyTorch exports
``nn.Linear``) as QGemm: its quantizer writes it in the QOperator format, and its graph
transformer makes it of a DQ -> Gemm (-> Q) group of the QDQ format, as
`hetsim.frontend.fuse_qdq` does.

Inputs ``A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point`` (the
last three optional); attributes ``alpha`` (1.0), ``transA`` and ``transB`` (0). A and B are
2-D, read transposed where the flag says, as Gemm reads them; ``A'`` is ``[M, K]`` and ``B'``
``[K, N]``. Like onnxruntime's kernel:

- the accumulator is exact: ``acc = (A' - a_zero_point) @ (B' - b_zero_point) + C``, the
  product a float32 GEMM up to K = `EXACT_FLOAT32_TERMS` and float64 past it
  (`hetsim.kernels.integer.accumulator_dtype`), C added in float64; C
  (int32, broadcast to ``[M, N]``) is a bias of scale ``alpha · a_scale · b_scale`` and zero
  point 0, as onnxruntime's quantizer makes it (so Gemm's ``beta`` is not an attribute: a
  fused Gemm has ``beta`` 1);
- the multiplier ``alpha · a_scale · b_scale``, divided by ``y_scale`` where given, is formed
  in float32 in that order;
- with ``y_scale`` and ``y_zero_point``, ``y = saturate(round_half_even(acc · multiplier) +
  y_zero_point)`` in y_zero_point's dtype, A's (`hetsim.kernels.integer.requantize`, the
  product in float64, where onnxruntime takes it in float32: a value within float rounding of
  a tie may come out one step apart); without either, ``y = float32(acc) · multiplier`` in
  float32. One of the two without the other is an error: onnxruntime would give floats
  divided by ``y_scale``.

A and its zero point are int8 or uint8; B and its zero point too, and int8 where A is (the
dtypes onnxruntime has kernels for). Every scale is float32. ``a_scale`` and ``a_zero_point``
are per tensor; ``b_scale`` and ``b_zero_point`` per tensor or per column of ``B'`` (``[N]``),
of one shape.

Cost (op class ``matmul``): Gemm's ``2·M·N·K`` flops, plus ``M·N`` for C and 3 per output
element to requantize (1 to scale a float output); bytes read every input's; `Cost.gemm_dim`
the smallest of M, N and K. The numpy lowering's passes (`Cost.numpy_calls`, `numpy_bytes`): A
and B each cast and centered (2 passes over each), then over the output the requantization's
(`REQUANTIZE_PASSES`, one more for the zero point and one for C) or, for a float output, a cast
and the scaling (one more for C), each over the bytes it reads and writes; and the multiplier's
calls (`FLOAT_MULTIPLIER_CALLS`, 2 more for an 8-bit output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import broadcast_shape, flag_attr, float_attr, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.integer import (
    Pass,
    accumulator_dtype,
    centered,
    centering,
    requantize,
    requantizing,
    with_passes,
)
from hetsim.kernels.meta import Meta
from hetsim.kernels.qoperator import MICROSOFT
from hetsim.kernels.quant import article, either_of, is_per_tensor
from hetsim.kernels.registry import Kernel, register

__all__: list[str] = []

_INTEGER_DTYPES = (np.dtype("int8"), np.dtype("uint8"))
_INT8 = np.dtype("int8")
_INT32 = np.dtype("int32")
_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")
_INPUTS = (
    "A",
    "a_scale",
    "a_zero_point",
    "B",
    "b_scale",
    "b_zero_point",
    "C",
    "y_scale",
    "y_zero_point",
)


def _flags(op: Op) -> tuple[float, bool, bool]:
    return (
        float_attr(op, "alpha", 1.0),
        flag_attr(op, "transA", 0),
        flag_attr(op, "transB", 0),
    )


_T = TypeVar("_T")


def _required(op: Op, values: Sequence[_T | None]) -> tuple[_T, _T, _T, _T, _T, _T]:
    """The first six inputs, each present (the scales and zero points of A and B)."""
    given = (*values[:6], *(None,) * (6 - len(values)))
    for value, name in zip(given, _INPUTS, strict=False):
        if value is None:
            raise op_error(op, f"expected an input {name}", "none")
    a, a_scale, a_zero, b, b_scale, b_zero = given
    assert a is not None and a_scale is not None and a_zero is not None  # noqa: PT018
    assert b is not None and b_scale is not None and b_zero is not None  # noqa: PT018
    return a, a_scale, a_zero, b, b_scale, b_zero


def _optional(values: Sequence[_T | None]) -> tuple[_T | None, _T | None, _T | None]:
    """C, y_scale and y_zero_point, ``None`` where omitted."""
    c, y_scale, y_zero = (*values[6:], None, None, None)[:3]
    return c, y_scale, y_zero


def _compile(op: Op, opset: int) -> Kernel:
    alpha, trans_a, trans_b = _flags(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, a_scale, a_zero, b, b_scale, b_zero = _required(op, inputs)
        c, y_scale, y_zero = _optional(inputs)
        a2, b2 = (a.T if trans_a else a), (b.T if trans_b else b)
        exact = accumulator_dtype(a2.shape[1])
        # exact: products of at most 255 · 255, summed in `exact` (b's zero point per column)
        acc = centered(a2, a_zero.reshape(()), exact) @ centered(b2, b_zero.reshape(-1), exact)
        multiplier = np.float32(alpha) * a_scale.reshape(-1) * b_scale.reshape(-1)
        if y_scale is None or y_zero is None:  # the shape rule allows both or neither
            if c is not None:
                acc = np.add(acc, c, dtype=_FLOAT64)  # exact below 2^53
            return [acc.astype(_FLOAT32) * multiplier]
        y_multiplier = multiplier / y_scale.reshape(())
        return [requantize(acc, y_multiplier, y_zero, y_zero.dtype, bias=c)]

    return kernel


def _infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, a_scale, a_zero, b, b_scale, b_zero = _required(op, inputs)
    c, y_scale, y_zero = _optional(inputs)
    for meta, name in ((a, "A"), (b, "B")):
        if meta.dtype not in _INTEGER_DTYPES:
            raise op_error(
                op, f"expected {article(name)} of {either_of(_INTEGER_DTYPES)}", meta.dtype
            )
    for zero, name, of in ((a_zero, "a_zero_point", a), (b_zero, "b_zero_point", b)):
        if zero.dtype != of.dtype:
            raise op_error(
                op, f"expected {article(name)} of {name[0].upper()}'s {of.dtype}", zero.dtype
            )
    if a.dtype == _INT8 and b.dtype != _INT8:
        raise op_error(op, "expected a B of int8, as A is (onnxruntime's kernels)", b.dtype)
    for scale, name in ((a_scale, "a_scale"), (b_scale, "b_scale"), (y_scale, "y_scale")):
        if scale is not None and scale.dtype != _FLOAT32:
            raise op_error(op, f"expected {article(name)} of float32", scale.dtype)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise op_error(op, "expected 2-D A and B", f"shapes {list(a.shape)} and {list(b.shape)}")
    _, trans_a, trans_b = _flags(op)
    m, k = a.shape[::-1] if trans_a else a.shape
    k_b, n = b.shape[::-1] if trans_b else b.shape
    if k != k_b:
        raise op_error(
            op, "expected inner dims of A' and B' to match", f"A' {[m, k]} and B' {[k_b, n]}"
        )
    per_tensor = (
        (a_scale, "a_scale"),
        (a_zero, "a_zero_point"),
        (y_scale, "y_scale"),
        (y_zero, "y_zero_point"),
    )
    for given, name in per_tensor:
        if given is not None and not is_per_tensor(given.shape):
            raise op_error(op, f"expected a one-element {name}", f"shape {list(given.shape)}")
    if not is_per_tensor(b_scale.shape) and b_scale.shape != (n,):
        raise op_error(
            op,
            f"expected a one-element b_scale or one of [{n}] (per column of B')",
            f"shape {list(b_scale.shape)}",
        )
    if is_per_tensor(b_zero.shape) != is_per_tensor(b_scale.shape) or (
        not is_per_tensor(b_zero.shape) and b_zero.shape != b_scale.shape
    ):
        raise op_error(
            op,
            f"expected a b_zero_point of b_scale's shape {list(b_scale.shape)}",
            f"shape {list(b_zero.shape)}",
        )
    if c is not None:
        if c.dtype != _INT32:
            raise op_error(op, "expected a C of int32", c.dtype)
        if broadcast_shape(op, c.shape, (m, n)) != (m, n):
            raise op_error(op, f"expected C to broadcast to {[m, n]}", f"shape {list(c.shape)}")
    if y_zero is None:
        if y_scale is not None:
            raise op_error(
                op,
                "expected a y_zero_point with y_scale (an 8-bit output; neither: float32)",
                "none",
            )
        return [Meta((m, n), _FLOAT32)]
    if y_scale is None:
        raise op_error(
            op, "expected a y_scale with y_zero_point (an 8-bit output; neither: float32)", "none"
        )
    if y_zero.dtype != a.dtype:
        raise op_error(op, f"expected a y_zero_point of A's {a.dtype}", y_zero.dtype)
    return [Meta((m, n), y_zero.dtype)]


FLOAT_MULTIPLIER_CALLS = 2
"""The numpy calls that form a float output's multiplier ``alpha · a_scale · b_scale``; an
8-bit output's divides it by ``y_scale`` and casts it to float64 too (2 more)."""


def _cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Gemm's ``2·M·N·K``, plus ``M·N`` for C and 3 per output to requantize (1 to scale); the
    numpy lowering's passes: A and B centered, then the requantization's (a float output: C
    added, a cast and the scaling), and the multiplier's calls."""
    a, _, a_zero, b, _, b_zero = _required(op, inputs)
    c, _, y_zero = _optional(inputs)
    _, trans_a, _ = _flags(op)
    k = a.shape[0] if trans_a else a.shape[1]
    (out,) = outputs
    m, n = out.shape
    is_float = out.dtype == _FLOAT32
    per_output = 2 * k + (c is not None) + (1 if is_float else 3)
    cost = Cost(
        float(per_output * out.size),
        nbytes(inputs),
        nbytes(outputs),
        "matmul",
        gemm_dim=min(m, n, k),
    )
    acc = accumulator_dtype(k)
    passes = [*centering(a, a_zero, acc), *centering(b, b_zero, acc)]
    if not is_float:  # the multiplier divided by y_scale and cast to float64: 2 more calls
        passes += requantizing(out, y_zero, c, acc)
        return with_passes(cost, passes, FLOAT_MULTIPLIER_CALLS + 2)
    if c is not None:  # C added in float64, then cast
        passes += [Pass(out.size, acc.itemsize, 8), Pass(out.size, 8, 4)]
    else:
        passes.append(Pass(out.size, acc.itemsize, 4))
    return with_passes(cost, [*passes, Pass(out.size, 4, 4)], FLOAT_MULTIPLIER_CALLS)


register(
    "QGemm",
    "matmul",
    compile=_compile,
    infer=_infer,
    cost=_cost,
    one_type=((0, 2), (3, 5)),  # A and a_zero_point one type, B and b_zero_point another
    domain=MICROSOFT,
)
