"""Elementwise ops: math, activations, broadcasting binaries, comparisons, Where, Clip, Cast.

Each op is one numpy expression applied to whole arrays (never a Python loop over elements);
attributes are read once, when the op compiles. Outputs keep their input's dtype (float32 stays
float32), as ONNX requires. Ops that only pass data through (Identity, Dropout at inference)
live here too. Reductions are in `reduce.py`, tensor manipulation in `tensor.py`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.registry import (
    ALL_INPUTS,
    Cost,
    CostRule,
    Kernel,
    Meta,
    attr,
    broadcast_shape,
    dtype_of,
    elementwise_cost,
    movement_cost,
    op_error,
    present,
    register,
    same_as_input,
    view_cost,
    zeros,
)

__all__ = ["erf", "relu", "sigmoid", "softplus", "softsign"]

Unary = Callable[[np.ndarray], np.ndarray]
Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]

_FLOAT32_MAX = float(np.finfo(np.float32).max)
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Numerical Recipes' erfc Chebyshev fit: fractional error below 1.2e-7 everywhere.
_ERFC_COEFFS = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in `x`'s dtype (numpy has none; scipy is not a dep).

    A Taylor series below 0.5 keeps small values accurate relative to themselves; above it,
    ``1 - erfc`` with an absolute error below 6e-8.

    Examples
    --------
    >>> [round(float(v), 6) for v in erf(np.array([-1.0, 0.0, 0.1, 2.0], np.float32))]
    [-0.842701, 0.0, 0.112463, 0.995322]
    """
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(t, _ERFC_COEFFS[-1])
    for c in _ERFC_COEFFS[-2::-1]:
        poly = poly * t + c
    far = 1.0 - t * np.exp(-z * z + poly)
    z2 = z * z
    term, near = z.copy(), z.copy()
    for n in range(1, 9):  # terms of x^(2n+1) / (n! (2n+1)); 9 reach 1e-11 at z = 0.5
        term = term * -z2 / n
        near += term / (2 * n + 1)
    near *= _TWO_OVER_SQRT_PI
    result: np.ndarray = (np.sign(x) * np.where(z < 0.5, near, far)).astype(x.dtype, copy=False)
    return result


def sigmoid(x: np.ndarray) -> np.ndarray:
    # the tanh form cannot overflow, unlike 1 / (1 + exp(-x))
    return 0.5 * np.tanh(0.5 * x) + 0.5


def relu(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.maximum(x, zeros(x.shape, x.dtype))  # an array runs vectorized
    return result


def softsign(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = x / (1 + np.abs(x))
    return result


def softplus(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logaddexp(0, x)
    return result


def _hard_swish(x: np.ndarray) -> np.ndarray:
    # ONNX: x · max(0, min(1, x/6 + 1/2)), HardSigmoid's with alpha 1/6
    result: np.ndarray = (x * np.clip(x * (1 / 6) + 0.5, 0, 1)).astype(x.dtype, copy=False)
    return result


def _mish(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = (x * np.tanh(softplus(x))).astype(x.dtype, copy=False)
    return result


def _swish(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 1.0))

    def swish(x: np.ndarray) -> np.ndarray:
        wide = x.astype(np.float32) if x.dtype == np.float16 else x  # one rounding, at the end
        return (wide * sigmoid(alpha * wide)).astype(x.dtype, copy=False)

    return swish


def _celu(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 1.0))
    if alpha == 0:
        raise op_error(op, "expected a non-zero alpha", alpha)

    def celu(x: np.ndarray) -> np.ndarray:
        negative = alpha * np.expm1(np.minimum(x, 0) / alpha)
        return (np.maximum(x, 0) + negative).astype(x.dtype, copy=False)

    return celu


def _thresholded_relu(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 1.0))
    return lambda x: np.where(x > alpha, x, 0).astype(x.dtype, copy=False)


def _leaky_relu(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 0.01))
    return lambda x: np.where(x < 0, alpha * x, x)


def _elu(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 1.0))
    return lambda x: np.where(x < 0, alpha * np.expm1(np.minimum(x, 0)), x)


def _selu(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 1.67326319217681884765625))
    gamma = float(attr(op, "gamma", 1.05070102214813232421875))
    return lambda x: np.where(x <= 0, gamma * alpha * np.expm1(np.minimum(x, 0)), gamma * x)


def _hard_sigmoid(op: Op) -> Unary:
    alpha = float(attr(op, "alpha", 0.2))
    beta = float(attr(op, "beta", 0.5))
    return lambda x: np.clip(alpha * x + beta, 0, 1)


def _shrink(op: Op) -> Unary:
    bias = float(attr(op, "bias", 0.0))
    lambd = float(attr(op, "lambd", 0.5))

    def shrink(x: np.ndarray) -> np.ndarray:
        shrunk = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0))
        return shrunk.astype(x.dtype, copy=False)

    return shrink


def _gelu(op: Op) -> Unary:
    approximate = attr(op, "approximate", "none")
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        return lambda x: 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise op_error(op, "expected approximate 'none' or 'tanh'", repr(approximate))
    return lambda x: 0.5 * x * (1 + erf(x * _SQRT_HALF))


def _fixed(fn: Unary) -> Callable[[Op], Unary]:
    return lambda op: fn


TRANSCENDENTAL_FLOPS = 10
"""Flops per element of numpy's vectorized exp, log and tanh (float32), in streaming passes.

An elementwise flop is one streaming pass per element, the unit the calibration fits the
elementwise rate in (a Relu: one pass). Ten passes stand for a range reduction and a polynomial
evaluated in registers. On the development machine (numpy 2.4, AVX-512 CPU) at 2^14-2^20
elements, exp took 0.32 ns per element and tanh 0.17 where a Relu pass took 0.10: 2-3 passes,
so ten overstates them there (docs/cost-model.md).
"""

ERF_TEMP_BYTES = 1470
"""Scratch bytes per element that hetsim's `erf` moves through its float64 temporaries.

numpy has no erf, so `erf` is 79 numpy passes (both branches for every element: casts in and
out 2; abs 1; t 3; the 10-coefficient Horner chain 18 with its fill 1; the far branch's
exponent, exp and difference 6; z² 1; two copies 2; 8 Taylor terms of 5 each, 40; the scale 1;
sign, compare, select and product 4), each reading its operands and writing a new array: casts
12 + 12, abs 16, t 48, the Horner chain's fill 8 and 9 steps of 40, the far branch 120, z² 24,
copies 32, 8 Taylor terms of 96, the scale 16, sign 8, compare 9, select 25, product 20: 1478,
less the 4 of reading x and the 4 of writing the result, which every elementwise rule counts.
On a ``lowering: numpy`` processor they make Erf memory-bound, as it runs there; a native erf
is one polynomial in registers (`TRANSCENDENTAL_FLOPS`) and moves none of them.
"""


def _scratch_cost(flops: float, scratch_per_element: int) -> CostRule:
    """An elementwise op of `flops` per element whose numpy kernel also moves
    `scratch_per_element` bytes of temporaries per element (`Cost.scratch_bytes`)."""
    plain = elementwise_cost("elementwise", flops)

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        found = plain(op, inputs, outputs)
        return replace(found, scratch_bytes=scratch_per_element * sum(m.size for m in outputs))

    return cost


# op type -> (factory reading the attributes, flops per output element)
_UNARY: dict[str, tuple[Callable[[Op], Unary], float]] = {
    "Relu": (_fixed(relu), 1),
    "Neg": (_fixed(np.negative), 1),
    "Abs": (_fixed(np.abs), 1),
    "Sqrt": (_fixed(np.sqrt), 1),
    "Exp": (_fixed(np.exp), TRANSCENDENTAL_FLOPS),
    "Log": (_fixed(np.log), TRANSCENDENTAL_FLOPS),
    "Reciprocal": (_fixed(np.reciprocal), 1),
    "Floor": (_fixed(np.floor), 1),
    "Ceil": (_fixed(np.ceil), 1),
    "Erf": (_fixed(erf), TRANSCENDENTAL_FLOPS),  # and ERF_TEMP_BYTES of scratch
    "Tanh": (_fixed(np.tanh), TRANSCENDENTAL_FLOPS),
    "Sigmoid": (_fixed(sigmoid), 3 + TRANSCENDENTAL_FLOPS),  # 0.5·tanh(0.5·x) + 0.5
    "Softsign": (_fixed(softsign), 3),
    "Softplus": (_fixed(softplus), 2 + 2 * TRANSCENDENTAL_FLOPS),  # logaddexp: exp, log1p
    "Not": (_fixed(np.logical_not), 1),
    "LeakyRelu": (_leaky_relu, 2),
    "Elu": (_elu, 4 + TRANSCENDENTAL_FLOPS),  # minimum, expm1, scale, compare, select
    "Selu": (_selu, 5 + TRANSCENDENTAL_FLOPS),
    "HardSigmoid": (_hard_sigmoid, 3),
    "Gelu": (_gelu, TRANSCENDENTAL_FLOPS + 4),  # approximate='none' (_gelu_cost reads it)
    "Sign": (_fixed(np.sign), 1),
    "Shrink": (_shrink, 6),  # two compares, the add and the subtract, two selects
    "Round": (_fixed(np.round), 1),  # half to even, as ONNX says
    "Swish": (_swish, 4 + TRANSCENDENTAL_FLOPS),  # αx, Sigmoid's, product
    "Celu": (_celu, 6 + TRANSCENDENTAL_FLOPS),  # min, ÷α, expm1, ·α, max, add
    "ThresholdedRelu": (_thresholded_relu, 2),  # compare, select
    "BitwiseNot": (_fixed(np.invert), 1),
    "HardSwish": (_fixed(_hard_swish), 5),  # scale, add, two clamps, product
    "Mish": (_fixed(_mish), 3 + 3 * TRANSCENDENTAL_FLOPS),  # Softplus's, tanh, product
    **{
        name: (_fixed(fn), TRANSCENDENTAL_FLOPS)
        for name, fn in (
            ("Sin", np.sin),
            ("Cos", np.cos),
            ("Tan", np.tan),
            ("Asin", np.arcsin),
            ("Acos", np.arccos),
            ("Atan", np.arctan),
            ("Sinh", np.sinh),
            ("Cosh", np.cosh),
            ("Asinh", np.arcsinh),
            ("Acosh", np.arccosh),
            ("Atanh", np.arctanh),
        )
    },
}


_SCRATCH_PER_ELEMENT: dict[str, int] = {
    "Erf": ERF_TEMP_BYTES,
    # exact Gelu: erf's, plus x·√½, erf's own read and write, 1 +, 0.5·x and the product:
    # 8 + 8 + 8 + 8 + 12 B, less the 8 of reading x and writing the result
    "Gelu": ERF_TEMP_BYTES + 36,
}
"""Unary ops whose numpy kernel moves temporaries (`Cost.scratch_bytes`), per element."""


def _unary_cost(op_type: str, flops: float) -> CostRule:
    """`_UNARY`'s flops per element, reading the input and writing the output once, plus the
    op's `_SCRATCH_PER_ELEMENT`."""
    scratch = _SCRATCH_PER_ELEMENT.get(op_type)
    if scratch is None:
        return elementwise_cost("elementwise", flops)
    return _scratch_cost(flops, scratch)


_GELU_EXACT_COST = _unary_cost("Gelu", _UNARY["Gelu"][1])
_GELU_TANH_COST = elementwise_cost("elementwise", 7 + TRANSCENDENTAL_FLOPS)


def _gelu_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Exact: `erf` of x·√½, then 1 +, ·x, ·0.5; ``approximate='tanh'``: x³ (2), ·0.044715,
    + x, ·√(2/π), tanh, 1 +, ·x, ·0.5."""
    rule = _GELU_TANH_COST if attr(op, "approximate", "none") == "tanh" else _GELU_EXACT_COST
    return rule(op, inputs, outputs)


def _compile_unary(factory: Callable[[Op], Unary]) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        fn = factory(op)
        return lambda inputs: [fn(inputs[0])]

    return compile


def _infer_unary(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """One input, of whose shape and dtype the output is: a second would be ignored silently."""
    if len(op.inputs) != 1:
        raise op_error(op, "expected 1 input", len(op.inputs))
    return same_as_input(op, opset, inputs)


for _type, (_factory, _flops) in _UNARY.items():
    register(
        _type,
        "elementwise",
        compile=_compile_unary(_factory),
        infer=_infer_unary,
        cost=_gelu_cost if _type == "Gelu" else _unary_cost(_type, _flops),
    )


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # ONNX integer division truncates toward zero (C semantics); numpy's floors
    q = np.floor_divide(a, b)
    result: np.ndarray = q + ((np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)
    return result


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _int_div(a, b) if a.dtype.kind in "iu" else np.divide(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.power(a, b).astype(a.dtype, copy=False)
    return result


def _prelu(x: np.ndarray, slope: np.ndarray) -> np.ndarray:
    return np.where(x < 0, x * slope, x)


# op type -> (numpy function, True when the output is bool)
_BINARY: dict[str, tuple[Binary, bool]] = {
    "Add": (np.add, False),
    "Sub": (np.subtract, False),
    "Mul": (np.multiply, False),
    "Div": (_div, False),
    "Pow": (_pow, False),
    "Equal": (np.equal, True),
    "Less": (np.less, True),
    "LessOrEqual": (np.less_equal, True),
    "Greater": (np.greater, True),
    "GreaterOrEqual": (np.greater_equal, True),
    "And": (np.logical_and, True),
    "Or": (np.logical_or, True),
    "Xor": (np.logical_xor, True),
    "BitwiseAnd": (np.bitwise_and, False),
    "BitwiseOr": (np.bitwise_or, False),
    "BitwiseXor": (np.bitwise_xor, False),
}


def _compile_binary(fn: Binary) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        return lambda inputs: [fn(inputs[0], inputs[1])]

    return compile


def _infer_binary(is_bool: bool) -> Callable[[Op, int, Sequence[Meta | None]], list[Meta]]:
    def infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        a, b = present(op, inputs, 2)
        dtype = np.dtype(bool) if is_bool else a.dtype
        return [Meta(broadcast_shape(op, a.shape, b.shape), dtype)]

    return infer


for _type, (_fn, _is_bool) in _BINARY.items():
    register(
        _type,
        "elementwise",
        compile=_compile_binary(_fn),
        infer=_infer_binary(_is_bool),
        one_type=() if _type == "Pow" else (0, 1),  # Pow's exponent may be another type (T1)
    )


def _compile_mod(op: Op, opset: int) -> Kernel:
    # fmod 0: the remainder takes the divisor's sign (numpy's mod); 1: the dividend's (C's fmod)
    fn = np.fmod if _fmod(op) else np.mod
    return lambda inputs: [fn(inputs[0], inputs[1])]


def _fmod(op: Op) -> bool:
    fmod = attr(op, "fmod", 0)
    if fmod not in (0, 1):
        raise op_error(op, "expected fmod 0 or 1", fmod)
    return bool(fmod)


MOD_FLOAT_FLOOR_OPSET = 28
"""Mod of floats with ``fmod`` 0 (the divisor's sign) is defined from this opset; before it,
float inputs needed ``fmod`` 1."""


def _infer_mod(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b = present(op, inputs, 2)
    if a.dtype.kind == "f" and not _fmod(op) and opset < MOD_FLOAT_FLOOR_OPSET:
        expected = f"expected fmod 1 for {a.dtype} inputs before opset {MOD_FLOAT_FLOOR_OPSET}"
        raise op_error(op, expected, 0)
    return [Meta(broadcast_shape(op, a.shape, b.shape), a.dtype)]


register("Mod", "elementwise", compile=_compile_mod, infer=_infer_mod, one_type=(0, 1))


SIGNED_BIT_SHIFT_OPSET = 28
"""BitShift takes signed integers from this opset on (an arithmetic right shift)."""


def _shift_direction(op: Op) -> str:
    direction = attr(op, "direction", None)
    if direction not in ("LEFT", "RIGHT"):
        raise op_error(op, "expected direction 'LEFT' or 'RIGHT'", repr(direction))
    return str(direction)


def _compile_bit_shift(op: Op, opset: int) -> Kernel:
    is_left = _shift_direction(op) == "LEFT"
    return lambda inputs: [_bit_shift(inputs[0], inputs[1], is_left)]


def _bit_shift(x: np.ndarray, by: np.ndarray, is_left: bool) -> np.ndarray:
    """`x` shifted by `by` bits, as ONNX says: a left shift of a signed value moves bits through
    the sign bit; a right shift of one extends the sign; a shift by a negative amount or by the
    width or more gives what the fill alone gives (-1 for a negative value shifted right, else 0).
    """
    x, by = np.broadcast_arrays(x, by)
    fits = (by >= 0) & (by < x.dtype.itemsize * 8)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    amount = np.where(fits, by, 0).astype(unsigned)
    if is_left:
        shifted = np.left_shift(x.view(unsigned), amount).view(x.dtype)
        fill: Any = 0
    else:
        shifted = np.right_shift(x, amount.astype(x.dtype))
        fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    result: np.ndarray = np.where(fits, shifted, fill).astype(x.dtype, copy=False)
    return result


def _infer_bit_shift(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b = present(op, inputs, 2)
    _shift_direction(op)
    if a.dtype.kind == "i" and opset < SIGNED_BIT_SHIFT_OPSET:
        expected = f"expected unsigned integer inputs before opset {SIGNED_BIT_SHIFT_OPSET}"
        raise op_error(op, expected, str(a.dtype))
    if a.dtype.kind not in "iu":
        raise op_error(op, "expected integer inputs", str(a.dtype))
    return [Meta(broadcast_shape(op, a.shape, b.shape), a.dtype)]


register(
    "BitShift",
    "elementwise",
    compile=_compile_bit_shift,
    infer=_infer_bit_shift,
    one_type=(0, 1),
)


def _compile_is_nan(op: Op, opset: int) -> Kernel:
    return lambda inputs: [np.isnan(inputs[0])]


def _compile_is_inf(op: Op, opset: int) -> Kernel:
    negative = bool(attr(op, "detect_negative", 1))
    positive = bool(attr(op, "detect_positive", 1))
    if negative and positive:
        return lambda inputs: [np.isinf(inputs[0])]
    if positive:
        return lambda inputs: [np.isposinf(inputs[0])]
    if negative:
        return lambda inputs: [np.isneginf(inputs[0])]
    return lambda inputs: [np.zeros(inputs[0].shape, bool)]


def _infer_bool_of_one(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = present(op, inputs, 1)[0]
    return [Meta(x.shape, np.dtype(bool))]


register("IsNaN", "elementwise", compile=_compile_is_nan, infer=_infer_bool_of_one)
register("IsInf", "elementwise", compile=_compile_is_inf, infer=_infer_bool_of_one)


PRELU_BROADCAST_OPSET = 7
"""PRelu slopes broadcast as numpy does from this opset on; before it, a 1-D slope with one value
per channel applies along axis 1 (PRelu-6: "if Slope is of size 1, the value is shared across
different channels"), as PyTorch exports its per-channel PReLU."""


def _is_per_channel(opset: int, x_shape: tuple[int, ...], slope_shape: tuple[int, ...]) -> bool:
    return (
        opset < PRELU_BROADCAST_OPSET
        and len(slope_shape) == 1
        and len(x_shape) > 2
        and slope_shape[0] == x_shape[1] != 1
    )


def _compile_prelu(op: Op, opset: int) -> Kernel:
    def run(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        x, slope = inputs[0], inputs[1]
        if _is_per_channel(opset, x.shape, slope.shape):
            slope = slope.reshape(-1, *(1,) * (x.ndim - 2))
        return [_prelu(x, slope)]

    return run


def _infer_prelu(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, slope = present(op, inputs, 2)
    if _is_per_channel(opset, x.shape, slope.shape):
        return [Meta(x.shape, x.dtype)]
    if broadcast_shape(op, x.shape, slope.shape) != x.shape:
        shape = list(slope.shape)
        raise op_error(op, f"expected a slope that broadcasts to {list(x.shape)}", shape)
    return [Meta(x.shape, x.dtype)]


register("PRelu", "elementwise", compile=_compile_prelu, infer=_infer_prelu, one_type=(0, 1))

# op type -> (the pairwise combination, whether the total is divided by the count: Mean)
_VARIADIC: dict[str, tuple[Binary, bool]] = {
    "Sum": (np.add, False),
    "Max": (np.maximum, False),
    "Min": (np.minimum, False),
    "Mean": (np.add, True),
}


def _compile_variadic(fn: Binary, is_mean: bool) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        if is_mean:
            count = len(op.inputs)
            return lambda inputs: [_mean_of(functools.reduce(fn, inputs), count)]
        if len(op.inputs) == 1:
            return lambda inputs: [inputs[0]]
        return lambda inputs: [functools.reduce(fn, inputs)]

    return compile


def _mean_of(total: np.ndarray, count: int) -> np.ndarray:
    result: np.ndarray = (total / count).astype(total.dtype, copy=False)
    return result


def _infer_variadic(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = present(op, inputs, len(inputs))
    return [Meta(broadcast_shape(op, *(m.shape for m in metas)), metas[0].dtype)]


def _variadic_cost(is_mean: bool) -> CostRule:
    """One flop per output element for each input after the first, and a Mean's divide."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        flops = max(len(inputs) - 1, 0) + is_mean
        return elementwise_cost("elementwise", flops)(op, inputs, outputs)

    return cost


for _type, (_fn, _is_mean) in _VARIADIC.items():
    register(
        _type,
        "elementwise",
        compile=_compile_variadic(_fn, _is_mean),
        infer=_infer_variadic,
        cost=_variadic_cost(_is_mean),
        one_type=ALL_INPUTS,
    )


def _compile_where(op: Op, opset: int) -> Kernel:
    return lambda inputs: [np.asarray(np.where(inputs[0], inputs[1], inputs[2]))]


def _infer_where(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    cond, x, y = present(op, inputs, 3)
    return [Meta(broadcast_shape(op, cond.shape, x.shape, y.shape), x.dtype)]


register("Where", "elementwise", compile=_compile_where, infer=_infer_where, one_type=(1, 2))


def _compile_clip(op: Op, opset: int) -> Kernel:
    if opset < 11:
        # Clip-6 defaults are the float32 extremes, so an infinite input clips to a finite one
        low = float(attr(op, "min", -_FLOAT32_MAX))
        high = float(attr(op, "max", _FLOAT32_MAX))
        return lambda inputs: [np.minimum(np.maximum(inputs[0], low), high)]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Clip: input missing"
        low = inputs[1] if len(inputs) > 1 else None
        high = inputs[2] if len(inputs) > 2 else None
        if low is not None:
            x = np.maximum(x, low)
        if high is not None:
            x = np.minimum(x, high)
        return [x]

    return kernel


register("Clip", "elementwise", compile=_compile_clip, infer=same_as_input, one_type=(0, 1, 2))


def _compile_cast(op: Op, opset: int) -> Kernel:
    dtype = dtype_of(op, attr(op, "to"))
    return lambda inputs: [inputs[0].astype(dtype)]


def _infer_cast(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = present(op, inputs, 1)[0]
    return [Meta(x.shape, dtype_of(op, attr(op, "to")))]


register("Cast", "data_movement", compile=_compile_cast, infer=_infer_cast, cost=movement_cost)


def _compile_cast_like(op: Op, opset: int) -> Kernel:
    return lambda inputs: [inputs[0].astype(inputs[1].dtype)]


def _infer_cast_like(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, like = present(op, inputs, 2)
    return [Meta(x.shape, like.dtype)]


def _cast_like_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Cast's: the data read and written; `target_type` is only read for its dtype."""
    return movement_cost(op, inputs[:1], outputs)


register(
    "CastLike",
    "data_movement",
    compile=_compile_cast_like,
    infer=_infer_cast_like,
    cost=_cast_like_cost,
)


def _compile_identity(op: Op, opset: int) -> Kernel:
    return lambda inputs: [inputs[0]]


register(
    "Identity", "data_movement", compile=_compile_identity, infer=same_as_input, cost=view_cost
)


def _mask_dtype(x: Meta | np.ndarray, opset: int) -> np.dtype[Any]:
    return np.dtype(bool) if opset >= 10 else x.dtype


def _compile_dropout(op: Op, opset: int) -> Kernel:
    # hetsim runs inference only: the opset-1..6 `is_test` flag is ignored, as onnxruntime does
    has_training_input = len(op.inputs) > 2 and op.inputs[2] != ""
    has_mask = len(op.outputs) > 1 and op.outputs[1] != ""

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Dropout: input missing"
        if has_training_input and bool(inputs[2]):
            raise op_error(op, "expected training_mode false (inference)", True)
        if has_mask:
            return [x, np.ones(x.shape, _mask_dtype(x, opset))]
        return [x]

    return kernel


def _infer_dropout(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = present(op, inputs, 1)[0]
    out = [Meta(x.shape, x.dtype)]
    if len(op.outputs) > 1 and op.outputs[1] != "":
        out.append(Meta(x.shape, _mask_dtype(x, opset)))
    return out


register("Dropout", "data_movement", compile=_compile_dropout, infer=_infer_dropout, cost=view_cost)
