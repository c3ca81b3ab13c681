"""Quantized convolutions: QLinearConv and ConvInteger (int8 models), and the checks and helpers
they share with `qmatmul.py`'s QLinearMatMul and MatMulInteger.

Each takes int8 or uint8 operands, subtracts their zero points and accumulates exactly: the
centered operands are float32 when every sum has at most `EXACT_FLOAT32_TERMS` products (at
most 255·255 in size each, so every partial sum is an integer below 2^24) and float64 beyond
(exact below 2^53), so ``conv.py``'s Conv kernel (its per-shape plans, im2col and one BLAS GEMM)
gives the exact integer accumulator with no second convolution and no integer GEMM
(`hetsim.kernels.integer`). Shapes follow Conv (pads, strides, dilations, group, auto_pad); the
rule is `conv.py`'s.

ConvInteger gives the accumulator as int32, wrapping past its range as ONNX lets an int32
accumulation overflow. QLinearConv adds its optional int32 bias ``B`` to the accumulator (in
float64) and requantizes it (`requantize`):
``y = saturate(round_half_even(acc · multiplier) + y_zero_point)``, the multiplier
``x_scale · w_scale / y_scale`` formed in the scales' own dtype, as onnx's reference forms it,
and the product taken in float64. ONNX's formula rounds before adding the zero point (so do
QuantizeLinear and onnxruntime); onnx's reference adds it first, which differs only on an exact
tie with an odd zero point. The accumulator is not wrapped: a sum past int32 saturates. The
output dtype is y_zero_point's (x's without one).

Granularity: a scale and its zero point have one shape, or one of them one element with the
other finer (the spec gives each its granularity; onnxruntime runs it). One element (shape ``()``
or ``(1,)``) is per tensor; the weight may be per output channel (1-D, M elements); the others
are per tensor.

Cost (op class ``conv``; bytes read are every input's, bytes written the output's): ConvInteger
is Conv's ``2·N·M·prod(out)·(C/group)·prod(kernel)`` flops; QLinearConv adds ``N·M·prod(out)``
for the bias when it has one, and 3 flops per output element for the requantization (multiply,
round, add the zero point; the saturation is free). Conv's im2col scratch and `Cost.gemm_dim`
are Conv's, the columns in the accumulator's dtype as these kernels build them. The numpy
lowering's further passes (`Cost.numpy_calls`, `Cost.numpy_bytes`): each operand's cast and
centering, then the requantization's (`REQUANTIZE_PASSES`, one more each for a bias and a zero
point) or ConvInteger's two casts to int32 (`wrapping`), each over the bytes it reads and
writes; the requantization multiplier's `MULTIPLIER_CALLS`.

Shared with `qmatmul.py`: the input checks (`operands`, `check_integer`, `check_scale`,
`check_granularity`), a scale or zero point laid along an axis (`along`), the multiplier
(`product`), the int32 wrap (`wrapped`, `wrapping`) and the one-type groups (`QLINEAR_TYPES`,
`INTEGER_TYPES`).
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
from hetsim.kernels.quant import article, either_of, is_per_tensor, spread
from hetsim.kernels.registry import Kernel, register

__all__ = [
    "INTEGER_TYPES",
    "QLINEAR_TYPES",
    "Shapes",
    "along",
    "check_granularity",
    "check_integer",
    "check_scale",
    "operands",
    "product",
    "wrapped",
    "wrapping",
]

_INTEGER_DTYPES = (np.dtype("int8"), np.dtype("uint8"))
_FLOAT32 = np.dtype("float32")
_INT32 = np.dtype("int32")

Shapes = tuple[tuple[int, ...], ...]

# x and its zero point are one T1, w (a, b) and its zero point one T2, the scales one float
QLINEAR_TYPES = ((0, 2), (3, 5), (1, 4, 6))
INTEGER_TYPES = ((0, 2), (1, 3))


def _conv_terms(w: tuple[int, ...]) -> int:
    """Products in one output of a conv with weights of shape `w`: C/group · prod(kernel)."""
    return math.prod(w[1:])


def wrapping(output: Meta, acc: np.dtype[Any]) -> list[Pass]:
    """`wrapped`'s passes over `output`: the accumulator (of dtype `acc`) to int64, then to
    int32."""
    return [Pass(output.size, acc.itemsize, 8), Pass(output.size, 8, 4)]


def along(value: np.ndarray | None, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """A scale or zero point, 0-d when per tensor, 1-D laid along `axis` of `shape`, and an
    N-D one as it is (it has the operand's rank)."""
    if value is None or value.ndim > 1:
        return value
    return spread(value, shape, axis, 0)


def product(first: Any, second: Any, output: Any) -> Any:
    """The requantization multiplier ``first · second / output``, in the scales' dtype and in
    that order, as onnx's reference forms it (float32 or float16 rounding at each step)."""
    return first * second / output


def wrapped(acc: np.ndarray) -> np.ndarray:
    """The exact accumulator as int32, wrapping past its range as an int32 accumulator does."""
    return acc.astype(np.int64).astype(_INT32)


def operands(
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


def check_integer(op: Op, meta: Meta | None, name: str) -> None:
    """Raise unless `meta`, input `name`, is absent or int8 or uint8."""
    if meta is not None and meta.dtype not in _INTEGER_DTYPES:
        raise op_error(op, f"expected {article(name)} of {either_of(_INTEGER_DTYPES)}", meta.dtype)


def check_scale(op: Op, meta: Meta, name: str, allowed: Sequence[np.dtype[Any]]) -> None:
    """Raise unless `meta`, scale `name`, is of a dtype in `allowed`."""
    if meta.dtype not in allowed:
        expected = (
            f"expected {article(name)} of {either_of(allowed) if len(allowed) > 1 else allowed[0]}"
        )
        raise op_error(op, expected, meta.dtype)


def check_granularity(
    op: Op, prefix: str, scale: Meta | None, zero_point: Meta | None, per: Shapes, what: str
) -> None:
    """Raise unless `scale` (without one, `zero_point`) is one element or of a shape in `per`
    (the finer granularity, `what`), and `zero_point` is of the scale's shape or one element
    (a per-tensor zero point with per-channel scales), or of a shape in `per` with a per-tensor
    scale (the spec gives each its granularity; onnxruntime and onnx's reference run both)."""
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
        if not is_per_tensor(zero_point.shape) and zero_point.shape not in per:
            finer = " or ".join(str(list(s)) for s in per)
            expected = f"expected a one-element {zero_name}" + (
                f" or one of {finer} ({what})" if per else f", as {scale_name} is"
            )
            raise op_error(op, expected, f"shape {list(zero_point.shape)}")
    elif zero_point.shape != scale.shape and not is_per_tensor(zero_point.shape):
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


def _conv_out(op: Op, opset: int, x: Meta, w: Meta) -> tuple[int, ...]:
    """Conv's output shape (`conv.py`'s shape rule: geometry, group and channels checked)."""
    return infer_conv(op, opset, [x, w])[0].shape


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
        # an omitted trailing B reads as none
        x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = (*inputs, None, None)[:9]
        assert x is not None, f"{op!r}: input x is required"
        assert w is not None, f"{op!r}: input w is required"
        exact = accumulator_dtype(_conv_terms(w.shape))
        centered_w = centered(w, along(w_zero, w.shape, 0), exact)
        acc = run_conv([centered(x, along(x_zero, x.shape, 1), exact), centered_w])[0]
        scales = (along(s, acc.shape, 1) for s in (x_scale, w_scale, y_scale))
        multiplier = product(*scales)
        dtype = (x if y_zero is None else y_zero).dtype
        y_zero, bias = along(y_zero, acc.shape, 1), along(bias, acc.shape, 1)
        return [requantize(acc, multiplier, y_zero, dtype, bias)]

    return kernel


def _infer_qlinear_conv(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = operands(op, inputs, _QLINEAR_CONV_INPUTS, optional=1)
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = metas
    assert x is not None, f"{op!r}: x checked present"
    assert w is not None, f"{op!r}: w checked present"
    for meta, name in zip(metas[:8], _QLINEAR_CONV_INPUTS, strict=False):
        if name.endswith("_scale"):
            assert meta is not None, f"{op!r}: {name} checked present"
            check_scale(op, meta, name, (_FLOAT32,))
        else:
            check_integer(op, meta, name)
    shape = _conv_out(op, opset, x, w)
    check_granularity(op, "x", x_scale, x_zero, (), "")
    check_granularity(op, "w", w_scale, w_zero, ((w.shape[0],),), "per output channel")
    check_granularity(op, "y", y_scale, y_zero, (), "")
    _check_bias(op, bias, w.shape[0])
    return [Meta(shape, (x if y_zero is None else y_zero).dtype)]


def _cost_qlinear_conv(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Conv's cost of x, w and B, plus 3 flops per output element to requantize."""
    x, _, x_zero, w, _, w_zero, _, y_zero, bias = operands(
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
        centered_x = centered(x, along(x_zero, x.shape, 1), exact)
        acc = run_conv([centered_x, centered(w, along(w_zero, w.shape, 0), exact)])[0]
        return [wrapped(acc)]

    return kernel


def _infer_conv_integer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, w, x_zero, w_zero = operands(op, inputs, _CONV_INTEGER_INPUTS)
    assert x is not None, f"{op!r}: x checked present"
    assert w is not None, f"{op!r}: w checked present"
    for meta, name in zip((x, w, x_zero, w_zero), _CONV_INTEGER_INPUTS, strict=True):
        check_integer(op, meta, name)
    shape = _conv_out(op, opset, x, w)
    check_granularity(op, "x", None, x_zero, (), "")
    check_granularity(op, "w", None, w_zero, ((w.shape[0],),), "per output channel")
    return [Meta(shape, _INT32)]


def _cost_conv_integer(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Conv's cost of x and w."""
    x, w, x_zero, w_zero = operands(op, inputs, _CONV_INTEGER_INPUTS)
    assert w is not None, f"{op!r}: w checked present"
    acc = accumulator_dtype(_conv_terms(w.shape))
    passes = [*centering(x, x_zero, acc), *centering(w, w_zero, acc), *wrapping(outputs[0], acc)]
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


register(
    "QLinearConv",
    "conv",
    compile=_compile_qlinear_conv,
    infer=_infer_qlinear_conv,
    cost=_cost_qlinear_conv,
    one_type=QLINEAR_TYPES,
    required=8,  # all but B: onnx's schema and onnxruntime refuse an omitted zero point
)
register(
    "ConvInteger",
    "conv",
    compile=_compile_conv_integer,
    infer=_infer_conv_integer,
    cost=_cost_conv_integer,
    one_type=INTEGER_TYPES,
    required=2,
)
