"""Quantized linear ops: QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger (int8 models).

Each takes int8 or uint8 operands, subtracts their zero points and accumulates exactly: the
centered operands are float32 when every sum has at most `EXACT_FLOAT32_TERMS` products (at
most 255·255 in size each, so every partial sum is an integer below 2^24) and float64 beyond
(exact below 2^53), so ``conv.py``'s Conv kernel (its per-shape plans, im2col and one BLAS GEMM)
and ``np.matmul`` give the exact integer accumulator with no second convolution and no integer
GEMM (`hetsim.kernels.integer`). Shapes follow Conv (pads, strides, dilations, group, auto_pad) and
MatMul (batches broadcast, a 1-D operand's dim dropped); their rules are `conv.py`'s and
`nn.py`'s.

ConvInteger and MatMulInteger give the accumulator as int32, wrapping past its range as ONNX
lets an int32 accumulation overflow. QLinearConv adds its optional int32 bias ``B`` to the
accumulator (in float64), and both QLinear ops requantize it (`requantize`):
``y = saturate(round_half_even(acc · multiplier) + y_zero_point)``, the multiplier
``x_scale · w_scale / y_scale`` (``a_scale · b_scale / y_scale``) formed in the scales' own
dtype, as onnx's reference forms it, and the product taken in float64. ONNX's formula rounds
before adding the zero point (so do QuantizeLinear and onnxruntime); onnx's reference adds it
first, which differs only on an exact tie with an odd zero point. The accumulator is not
wrapped: a sum past int32 saturates. The output dtype is y_zero_point's (x's without one).

Granularity: a scale and its zero point have one shape. One element (shape ``()`` or ``(1,)``)
is per tensor; QLinearConv's and ConvInteger's weight may be per output channel (1-D, M
elements); QLinearMatMul's and MatMulInteger's ``a`` may be per row (``[M]``, or a's shape with
its last dim 1) and ``b`` per column (``[N]``, or b's shape with its next-to-last dim 1); the
others are per tensor. onnx's reference reads a 1-D ``[M]`` zero point of ``a`` along K, not
per row, as ONNX describes it.

Cost (op class ``conv`` or ``matmul``; bytes read are every input's, bytes written the
output's): ConvInteger is Conv's ``2·N·M·prod(out)·(C/group)·prod(kernel)`` flops and
MatMulInteger MatMul's ``2·prod(batch)·M·N·K``; QLinearConv adds ``N·M·prod(out)`` for the
bias when it has one, and both QLinear ops 3 flops per output element for the requantization
(multiply, round, add the zero point; the saturation is free). Conv's im2col scratch and
`Cost.gemm_dim` are Conv's and MatMul's, the columns in the accumulator's dtype as these kernels
build them. The numpy lowering's further passes (`Cost.numpy_calls`, `Cost.numpy_bytes`): each
operand's cast and centering, then the requantization's (`REQUANTIZE_PASSES`, one more each for a
bias and a zero point) or the integer ops' two casts to int32 (`_wrapping`), each over the
bytes it reads and writes; the requantization multiplier's `MULTIPLIER_CALLS`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import op_error
from hetsim.kernels.conv import compile_conv, cost_conv, infer_conv
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.integer import (
    MULTIPLIER_CALLS,
    Pass,
    accumulator_dtype,
    centered,
    centering,
    requantize,
    requantizing,
    with_passes,
)
from hetsim.kernels.meta import Meta
from hetsim.kernels.nn import cost_matmul, infer_matmul
from hetsim.kernels.quant import article, either_of, is_per_tensor, spread
from hetsim.kernels.registry import Kernel, register

__all__: list[str] = []

_INTEGER_DTYPES = (np.dtype("int8"), np.dtype("uint8"))
_FLOAT32 = np.dtype("float32")
_INT32 = np.dtype("int32")
_SCALE_DTYPES = {10: (_FLOAT32,), 21: (_FLOAT32, np.dtype("float16"))}
"""The scale dtypes of QLinearMatMul, by the opset they hold from (QLinearConv's: float32)."""

Shapes = tuple[tuple[int, ...], ...]


def _conv_terms(w: tuple[int, ...]) -> int:
    """Products in one output of a conv with weights of shape `w`: C/group · prod(kernel)."""
    return math.prod(w[1:])


def _wrapping(output: Meta, acc: np.dtype[Any]) -> list[Pass]:
    """`_wrapped`'s passes over `output`: the accumulator (of dtype `acc`) to int64, then to
    int32."""
    return [Pass(output.size, acc.itemsize, 8), Pass(output.size, 8, 4)]


def _along(value: np.ndarray | None, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """A scale or zero point, 0-d when per tensor, 1-D laid along `axis` of `shape`, and an
    N-D one as it is (it has the operand's rank)."""
    if value is None or value.ndim > 1:
        return value
    return spread(value, shape, axis, 0)


def _product(first: Any, second: Any, output: Any) -> Any:
    """The requantization multiplier ``first · second / output``, in the scales' dtype and in
    that order, as onnx's reference forms it (float32 or float16 rounding at each step)."""
    return first * second / output


def _wrapped(acc: np.ndarray) -> np.ndarray:
    """The exact accumulator as int32, wrapping past its range as an int32 accumulator does."""
    return acc.astype(np.int64).astype(_INT32)


def _operands(
    op: Op, inputs: Sequence[Meta | None], names: Sequence[str], optional: int = 0
) -> list[Meta | None]:
    """`inputs` padded with None to `names`; all but the zero points and the last `optional`
    must be present."""
    metas = [*inputs, *(None,) * (len(names) - len(inputs))][: len(names)]
    required = [n for n in names[: len(names) - optional] if not n.endswith("_zero_point")]
    missing = [n for n, meta in zip(names, metas, strict=True) if meta is None and n in required]
    if missing:
        needed = f"{', '.join(required[:-1])} and {required[-1]}"
        raise op_error(op, f"expected inputs {needed}", f"no {missing[0]}")
    return metas


def _check_integer(op: Op, meta: Meta | None, name: str) -> None:
    if meta is not None and meta.dtype not in _INTEGER_DTYPES:
        raise op_error(op, f"expected {article(name)} of {either_of(_INTEGER_DTYPES)}", meta.dtype)


def _check_scale(op: Op, meta: Meta, name: str, allowed: Sequence[np.dtype[Any]]) -> None:
    if meta.dtype not in allowed:
        expected = (
            f"expected {article(name)} of {either_of(allowed) if len(allowed) > 1 else allowed[0]}"
        )
        raise op_error(op, expected, meta.dtype)


def _check_granularity(
    op: Op, prefix: str, scale: Meta | None, zero_point: Meta | None, per: Shapes, what: str
) -> None:
    """Raise unless `scale` (without one, `zero_point`) is one element or of a shape in `per`
    (the finer granularity, `what`), and `zero_point` is of the scale's shape."""
    scale_name, zero_name = f"{prefix}_scale", f"{prefix}_zero_point"
    first, name = (scale, scale_name) if scale is not None else (zero_point, zero_name)
    if first is None:
        return
    if not is_per_tensor(first.shape) and first.shape not in per:
        finer = " or ".join(str(list(s)) for s in per)
        expected = f"expected a one-element {name}" + (
            f" or one of {finer} ({what})" if per else ""
        )
        raise op_error(op, expected, f"shape {list(first.shape)}")
    if scale is None or zero_point is None:
        return
    if is_per_tensor(scale.shape):
        if not is_per_tensor(zero_point.shape):
            expected = f"expected a one-element {zero_name}, as {scale_name} is"
            raise op_error(op, expected, f"shape {list(zero_point.shape)}")
    elif zero_point.shape != scale.shape:
        expected = f"expected {article(zero_name)} of {scale_name}'s shape {list(scale.shape)}"
        raise op_error(op, expected, list(zero_point.shape))


def _check_bias(op: Op, bias: Meta | None, channels: int) -> None:
    if bias is None:
        return
    if bias.dtype != _INT32:
        raise op_error(op, "expected a B of int32", bias.dtype)
    if bias.shape != (channels,):
        raise op_error(
            op, f"expected a B of shape [{channels}] (w's output channels)", list(bias.shape)
        )


def _per_row(a: tuple[int, ...]) -> Shapes:
    """The per-row shapes of a scale or zero point of a matrix `a` (none of a vector)."""
    return ((a[-2],), (*a[:-1], 1)) if len(a) > 1 else ()


def _per_column(b: tuple[int, ...]) -> Shapes:
    """The per-column shapes of a scale or zero point of a matrix `b` (none of a vector)."""
    return ((b[-1],), (*b[:-2], 1, b[-1])) if len(b) > 1 else ()


def _conv_out(op: Op, opset: int, x: Meta, w: Meta) -> tuple[int, ...]:
    """Conv's output shape (`conv.py`'s shape rule: geometry, group and channels checked)."""
    return infer_conv(op, opset, [x, w])[0].shape


def _matmul_out(op: Op, opset: int, a: Meta, b: Meta) -> tuple[int, ...]:
    """MatMul's output shape (`nn.py`'s shape rule)."""
    return infer_matmul(op, opset, [a, b])[0].shape


# QLinearConv


_QLINEAR_CONV_INPUTS = (
    "x",
    "x_scale",
    "x_zero_point",
    "w",
    "w_scale",
    "w_zero_point",
    "y_scale",
    "y_zero_point",
    "B",
)


def _compile_qlinear_conv(op: Op, opset: int) -> Kernel:
    run_conv = compile_conv(op, opset)  # reads and checks the window attributes once

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = (*inputs, None)[:9]
        assert x is not None, f"{op!r}: input x is required"
        assert w is not None, f"{op!r}: input w is required"
        exact = accumulator_dtype(_conv_terms(w.shape))
        centered_w = centered(w, _along(w_zero, w.shape, 0), exact)
        acc = run_conv([centered(x, _along(x_zero, x.shape, 1), exact), centered_w])[0]
        scales = (_along(s, acc.shape, 1) for s in (x_scale, w_scale, y_scale))
        multiplier = _product(*scales)
        dtype = (x if y_zero is None else y_zero).dtype
        y_zero, bias = _along(y_zero, acc.shape, 1), _along(bias, acc.shape, 1)
        return [requantize(acc, multiplier, y_zero, dtype, bias)]

    return kernel


def _infer_qlinear_conv(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = _operands(op, inputs, _QLINEAR_CONV_INPUTS, optional=1)
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = metas
    assert x is not None, f"{op!r}: x checked present"
    assert w is not None, f"{op!r}: w checked present"
    for meta, name in zip(metas[:8], _QLINEAR_CONV_INPUTS, strict=False):
        if name.endswith("_scale"):
            assert meta is not None, f"{op!r}: {name} checked present"
            _check_scale(op, meta, name, (_FLOAT32,))
        else:
            _check_integer(op, meta, name)
    shape = _conv_out(op, opset, x, w)
    _check_granularity(op, "x", x_scale, x_zero, (), "")
    _check_granularity(op, "w", w_scale, w_zero, ((w.shape[0],),), "per output channel")
    _check_granularity(op, "y", y_scale, y_zero, (), "")
    _check_bias(op, bias, w.shape[0])
    return [Meta(shape, (x if y_zero is None else y_zero).dtype)]


def _cost_qlinear_conv(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Conv's cost of x, w and B, plus 3 flops per output element to requantize."""
    x, _, x_zero, w, _, w_zero, _, y_zero, bias = _operands(
        op, inputs, _QLINEAR_CONV_INPUTS, optional=1
    )
    assert w is not None, f"{op!r}: w checked present"
    acc = accumulator_dtype(_conv_terms(w.shape))
    passes = [
        *centering(x, x_zero, acc),
        *centering(w, w_zero, acc),
        *requantizing(outputs[0], y_zero, bias, acc),
    ]
    cost = _integer_conv_cost(op, inputs, outputs, [x, w, bias], 3)
    return with_passes(cost, passes, MULTIPLIER_CALLS)


# ConvInteger


_CONV_INTEGER_INPUTS = ("x", "w", "x_zero_point", "w_zero_point")


def _compile_conv_integer(op: Op, opset: int) -> Kernel:
    run_conv = compile_conv(op, opset)  # reads and checks the window attributes once

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, w, x_zero, w_zero = (*inputs, None, None)[:4]
        assert x is not None, f"{op!r}: input x is required"
        assert w is not None, f"{op!r}: input w is required"
        exact = accumulator_dtype(_conv_terms(w.shape))
        centered_x = centered(x, _along(x_zero, x.shape, 1), exact)
        acc = run_conv([centered_x, centered(w, _along(w_zero, w.shape, 0), exact)])[0]
        return [_wrapped(acc)]

    return kernel


def _infer_conv_integer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, w, x_zero, w_zero = _operands(op, inputs, _CONV_INTEGER_INPUTS)
    assert x is not None, f"{op!r}: x checked present"
    assert w is not None, f"{op!r}: w checked present"
    for meta, name in zip((x, w, x_zero, w_zero), _CONV_INTEGER_INPUTS, strict=True):
        _check_integer(op, meta, name)
    shape = _conv_out(op, opset, x, w)
    _check_granularity(op, "x", None, x_zero, (), "")
    _check_granularity(op, "w", None, w_zero, ((w.shape[0],),), "per output channel")
    return [Meta(shape, _INT32)]


def _cost_conv_integer(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Conv's cost of x and w."""
    x, w, x_zero, w_zero = _operands(op, inputs, _CONV_INTEGER_INPUTS)
    assert w is not None, f"{op!r}: w checked present"
    acc = accumulator_dtype(_conv_terms(w.shape))
    passes = [*centering(x, x_zero, acc), *centering(w, w_zero, acc), *_wrapping(outputs[0], acc)]
    return with_passes(_integer_conv_cost(op, inputs, outputs, [x, w], 0), passes)


def _integer_conv_cost(
    op: Op,
    inputs: Sequence[Meta | None],
    outputs: Sequence[Meta],
    conv_inputs: list[Meta | None],
    flops_per_output: int,
) -> Cost:
    """`cost_conv` of `conv_inputs` (x, w and maybe B), its im2col columns in the kernel's
    `accumulator_dtype`, plus `flops_per_output`; bytes read: every input's."""
    x, w = conv_inputs[0], conv_inputs[1]
    assert x is not None, f"{op!r}: input x is required"
    assert w is not None, f"{op!r}: input w is required"
    conv_inputs[0] = Meta(x.shape, accumulator_dtype(_conv_terms(w.shape)))
    cost = cost_conv(op, conv_inputs, outputs)
    flops = cost.flops + flops_per_output * outputs[0].size
    return dataclasses.replace(cost, flops=flops, bytes_read=nbytes(inputs))


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
        centered_a = centered(a2, _along(a_zero, a2.shape, rows), exact)
        acc = np.matmul(centered_a, centered(b2, _along(b_zero, b2.shape, cols), exact))
        multiplier = _product(
            _along(a_scale, a2.shape, rows), _along(b_scale, b2.shape, cols), _along(y_scale, (), 0)
        )
        dtype = (a if y_zero is None else y_zero).dtype
        y = requantize(acc, multiplier, _along(y_zero, (), 0), dtype)
        return [y.reshape(_matmul_shape(acc, a, b))]

    return kernel


def _infer_qlinear_matmul(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = _operands(op, inputs, _QLINEAR_MATMUL_INPUTS)
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = metas
    assert a is not None, f"{op!r}: a checked present"
    assert b is not None, f"{op!r}: b checked present"
    allowed = _SCALE_DTYPES[21 if opset >= 21 else 10]
    for meta, name in zip(metas, _QLINEAR_MATMUL_INPUTS, strict=True):
        if name.endswith("_scale"):
            assert meta is not None, f"{op!r}: {name} checked present"
            _check_scale(op, meta, name, allowed)
        else:
            _check_integer(op, meta, name)
    shape = _matmul_out(op, opset, a, b)
    _check_granularity(op, "a", a_scale, a_zero, _per_row(a.shape), "per row of a")
    _check_granularity(op, "b", b_scale, b_zero, _per_column(b.shape), "per column of b")
    _check_granularity(op, "y", y_scale, y_zero, (), "")
    return [Meta(shape, (a if y_zero is None else y_zero).dtype)]


def _cost_qlinear_matmul(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """MatMul's cost of a and b, plus 3 flops per output element to requantize."""
    a, _, a_zero, b, _, b_zero, _, y_zero = _operands(op, inputs, _QLINEAR_MATMUL_INPUTS)
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
        centered_a = centered(a2, _along(a_zero, a2.shape, a2.ndim - 2), exact)
        acc = np.matmul(centered_a, centered(b2, _along(b_zero, b2.shape, b2.ndim - 1), exact))
        return [_wrapped(acc).reshape(_matmul_shape(acc, a, b))]

    return kernel


def _infer_matmul_integer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b, a_zero, b_zero = _operands(op, inputs, _MATMUL_INTEGER_INPUTS)
    assert a is not None, f"{op!r}: A checked present"
    assert b is not None, f"{op!r}: B checked present"
    for meta, name in zip((a, b, a_zero, b_zero), _MATMUL_INTEGER_INPUTS, strict=True):
        _check_integer(op, meta, name)
    shape = _matmul_out(op, opset, a, b)
    _check_granularity(op, "a", None, a_zero, _per_row(a.shape), "per row of A")
    _check_granularity(op, "b", None, b_zero, _per_column(b.shape), "per column of B")
    return [Meta(shape, _INT32)]


def _cost_matmul_integer(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """MatMul's cost of A and B."""
    a, b, a_zero, b_zero = _operands(op, inputs, _MATMUL_INTEGER_INPUTS)
    acc = _matmul_accumulator(a)
    passes = [*centering(a, a_zero, acc), *centering(b, b_zero, acc), *_wrapping(outputs[0], acc)]
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


# x and its zero point are one T1, w (a, b) and its zero point one T2, the scales one float
_QLINEAR_TYPES = ((0, 2), (3, 5), (1, 4, 6))
_INTEGER_TYPES = ((0, 2), (1, 3))

register(
    "QLinearConv",
    "conv",
    compile=_compile_qlinear_conv,
    infer=_infer_qlinear_conv,
    cost=_cost_qlinear_conv,
    one_type=_QLINEAR_TYPES,
)
register(
    "ConvInteger",
    "conv",
    compile=_compile_conv_integer,
    infer=_infer_conv_integer,
    cost=_cost_conv_integer,
    one_type=_INTEGER_TYPES,
)
register(
    "QLinearMatMul",
    "matmul",
    compile=_compile_qlinear_matmul,
    infer=_infer_qlinear_matmul,
    cost=_cost_qlinear_matmul,
    one_type=_QLINEAR_TYPES,
)
register(
    "MatMulInteger",
    "matmul",
    compile=_compile_matmul_integer,
    infer=_infer_matmul_integer,
    cost=_cost_matmul_integer,
    one_type=_INTEGER_TYPES,
)
