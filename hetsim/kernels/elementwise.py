"""Elementwise ops of several operands: broadcasting binaries, comparisons, Mod, BitShift,
PRelu, the variadic Sum/Max/Min/Mean, Where, Clip, and IsNaN/IsInf.

Each op is one numpy expression applied to whole arrays (never a Python loop over elements);
attributes are read once, when the op compiles. Outputs keep their input's dtype (float32 stays
float32), as ONNX requires. Unary math and activations are in `unary.py`, ops that copy data as
it is or in another dtype (Cast, Identity, Dropout at inference) in `casts.py`, reductions in
`reduce.py`, tensor manipulation in `tensor.py`.
"""

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.attributes import ATTRIBUTES
from hetsim.kernels.checks import (
    attr,
    broadcast_shape,
    flag_attr,
    float_attr,
    int_attr,
    op_error,
    present,
    same_as_input,
)
from hetsim.kernels.costs import Cost, CostRule, elementwise_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import ALL_INPUTS, Kernel, register

__all__: list[str] = []

Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _check_int_divisor(b: np.ndarray) -> None:
    """Refuse an integer divisor of 0: numpy gives 0 (with a warning), a number ONNX leaves
    undefined and onnxruntime does not give."""
    if not np.all(b):
        raise ZeroDivisionError("integer division by zero")


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # ONNX integer division truncates toward zero (C semantics); numpy's floors
    _check_int_divisor(b)
    q = np.floor_divide(a, b)
    result: np.ndarray = q + ((np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)
    return result


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _int_div(a, b) if a.dtype.kind in "iu" else np.divide(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and (np.asarray(b) < 0).any():
        return _int_pow_negative(a, b)
    result: np.ndarray = np.power(a, b).astype(a.dtype, copy=False)
    return result


def _int_pow_negative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer `a` to integer powers `b`, some negative: the real power truncated toward zero,
    as onnxruntime gives it (numpy refuses "Integers to negative integer powers"). Below 0 the
    power of 1 is 1, of -1 is ±1 by the exponent's parity, and of any other base lies strictly
    between -1 and 1: 0. Zero has no such power.

    >>> _int_pow_negative(np.array([2, 3, 1, -1, -1, 2]), np.array([-1, -2, -3, -3, -2, 3]))
    array([ 0,  0,  1, -1,  1,  8])
    """
    a, b = np.broadcast_arrays(a, b)
    negative = b < 0
    if (negative & (a == 0)).any():
        raise ValueError("expected a nonzero base where the exponent is negative, got 0")
    below = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    powers = np.power(a, np.where(negative, 0, b))
    result: np.ndarray = np.where(negative, below, powers).astype(a.dtype)
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


NUMPY_BROADCAST_OPSET = 7
"""From this opset the binary ops broadcast as numpy does (every input, to one another); before
it (Add-6, Greater-1, ...) only B broadcasts, to A's shape, and only with ``broadcast`` 1:
`_legacy_b_shape`."""


def _is_legacy(op: Op, opset: int) -> bool:
    """Whether `op` broadcasts by the rule before `NUMPY_BROADCAST_OPSET`: its type had the
    ``broadcast`` attribute then (not BitwiseAnd, LessOrEqual, ..., which came later)."""
    return opset < NUMPY_BROADCAST_OPSET and op.type in _LEGACY_BROADCAST


def _legacy_b_shape(op: Op, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The shape B is read in to broadcast to A's shape `a` by the rule before
    `NUMPY_BROADCAST_OPSET` (Add-6: "the second tensor can either be of element size 1 ..., or
    having its shape as a contiguous subset of the first tensor's shape. The starting of the
    mutually equal shape is specified by the argument axis, and if it is not set, suffix matching
    is assumed"), where a dim of 1 in B broadcasts too, as exporters relied on; with
    ``broadcast`` 0 (the default), `b` must be `a`.

    >>> add = Op("Add", "add", ("a", "b"), ("y",), {"broadcast": 1, "axis": 1})
    >>> _legacy_b_shape(add, (2, 3, 4, 5), (3, 4))
    (1, 3, 4, 1)
    >>> _legacy_b_shape(Op("Add", "add", ("a", "b"), ("y",), {"broadcast": 1}), (2, 3), (3,))
    (1, 3)
    """
    if not flag_attr(op, "broadcast", False):
        if a != b:
            expected = "expected inputs of one shape (broadcast 0; broadcast 1 broadcasts B)"
            raise op_error(op, expected, f"{list(a)} and {list(b)}")
        return b
    if len(b) > len(a):
        expected = "expected B of A's rank or lower (broadcast 1 broadcasts B to A)"
        raise op_error(op, expected, f"A {list(a)} and B {list(b)}")
    if all(size == 1 for size in b):  # of one element: any rank up to A's
        return (1,) * len(a)
    axis = int_attr(op, "axis", len(a) - len(b))
    axis = axis + len(a) if axis < 0 else axis
    # "1-dim expansion doesn't work yet", says the spec, but exporters relied on it (PyTorch's
    # Add of [2, 3] and [2, 1] at axis 0, in onnx's backend tests): a dim of 1 in B broadcasts
    aligned = a[axis : axis + len(b)] if 0 <= axis <= len(a) - len(b) else None
    if aligned is None or any(size not in (1, want) for size, want in zip(b, aligned, strict=True)):
        expected = f"expected B of one element or of A's dims from axis {axis} (broadcast 1)"
        raise op_error(op, expected, f"A {list(a)} and B {list(b)}")
    return (1,) * axis + b + (1,) * (len(a) - axis - len(b))


def _compile_binary(fn: Binary) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        if _is_legacy(op, opset):
            return lambda inputs: [
                fn(
                    inputs[0],
                    inputs[1].reshape(_legacy_b_shape(op, inputs[0].shape, inputs[1].shape)),
                )
            ]
        return lambda inputs: [fn(inputs[0], inputs[1])]

    return compile


def _infer_binary(is_bool: bool) -> Callable[[Op, int, Sequence[Meta | None]], list[Meta]]:
    def infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        a, b = present(op, inputs, 2)
        dtype = np.dtype(bool) if is_bool else a.dtype
        if _is_legacy(op, opset):
            _legacy_b_shape(op, a.shape, b.shape)
            return [Meta(a.shape, dtype)]
        return [Meta(broadcast_shape(op, a.shape, b.shape), dtype)]

    return infer


_LEGACY_BROADCAST = frozenset(
    op_type
    for op_type in _BINARY
    for since, names in ATTRIBUTES[op_type].items()
    if since < NUMPY_BROADCAST_OPSET and "broadcast" in names
)
"""The binary op types that broadcast by `_legacy_b_shape` before `NUMPY_BROADCAST_OPSET`."""

for _type, (_fn, _is_bool) in _BINARY.items():
    register(
        _type,
        "elementwise",
        compile=_compile_binary(_fn),
        infer=_infer_binary(_is_bool),
        one_type=() if _type == "Pow" else (0, 1),  # Pow's exponent may be another type (T1)
        required=2,
    )


def _compile_mod(op: Op, opset: int) -> Kernel:
    # fmod 0: the remainder takes the divisor's sign (numpy's mod); 1: the dividend's (C's fmod)
    fn = np.fmod if _fmod(op) else np.mod

    def mod(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if inputs[1].dtype.kind in "iu":
            _check_int_divisor(inputs[1])
        return [fn(inputs[0], inputs[1])]

    return mod


def _fmod(op: Op) -> bool:
    return flag_attr(op, "fmod", 0)


MOD_FLOAT_FLOOR_OPSET = 28
"""Mod of floats with ``fmod`` 0 (the divisor's sign) is defined from this opset; before it,
float inputs needed ``fmod`` 1."""


def _infer_mod(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b = present(op, inputs, 2)
    if a.dtype.kind == "f" and not _fmod(op) and opset < MOD_FLOAT_FLOOR_OPSET:
        expected = f"expected fmod 1 for {a.dtype} inputs before opset {MOD_FLOAT_FLOOR_OPSET}"
        raise op_error(op, expected, 0)
    return [Meta(broadcast_shape(op, a.shape, b.shape), a.dtype)]


register("Mod", "elementwise", compile=_compile_mod, infer=_infer_mod, one_type=(0, 1), required=2)


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
    required=2,
)


def _compile_is_nan(op: Op, opset: int) -> Kernel:
    return lambda inputs: [np.isnan(inputs[0])]


def _compile_is_inf(op: Op, opset: int) -> Kernel:
    negative = flag_attr(op, "detect_negative", 1)
    positive = flag_attr(op, "detect_positive", 1)
    if negative and positive:
        return lambda inputs: [np.isinf(inputs[0])]
    if positive:
        return lambda inputs: [cast(np.ndarray, np.isposinf(inputs[0]))]
    if negative:
        return lambda inputs: [cast(np.ndarray, np.isneginf(inputs[0]))]
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


register(
    "PRelu", "elementwise", compile=_compile_prelu, infer=_infer_prelu, one_type=(0, 1), required=2
)

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


register(
    "Where", "elementwise", compile=_compile_where, infer=_infer_where, one_type=(1, 2), required=3
)


def _compile_clip(op: Op, opset: int) -> Kernel:
    if opset < 11:
        # Clip-6 defaults are the float32 extremes, so an infinite input clips to a finite one
        low = float_attr(op, "min", -_FLOAT32_MAX)
        high = float_attr(op, "max", _FLOAT32_MAX)
        return lambda inputs: [np.minimum(np.maximum(inputs[0], low), high)]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Clip: input missing"
        low = inputs[1] if len(inputs) > 1 else None
        high = inputs[2] if len(inputs) > 2 else None
        if low is not None:  # a scalar, or its one element (`_infer_clip`)
            x = np.maximum(x, low.reshape(()))
        if high is not None:
            x = np.minimum(x, high.reshape(()))
        return [x]

    return kernel


def _infer_clip(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """Clip's output has its input's shape: `min` and `max` are scalars (ONNX), or a 1-D tensor
    of one element, which onnxruntime takes as one (its ``TensorShape::IsScalar``); another
    shape broadcast the output past the shape stated here."""
    for index, what in ((1, "min"), (2, "max")):
        bound = inputs[index] if index < len(inputs) else None
        if bound is not None and bound.shape not in ((), (1,)):
            expected = f"expected input {index} ({what}) a scalar (or one element, 1-D)"
            raise op_error(op, expected, f"shape {tuple(bound.shape)}")
    return same_as_input(op, opset, inputs)


register("Clip", "elementwise", compile=_compile_clip, infer=_infer_clip, one_type=(0, 1, 2))
