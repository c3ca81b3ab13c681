"""Reductions over axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp; and ArgMax and ArgMin along one axis
(int64 indices; the first of equal extremes unless `select_last_index`).

One rule serves the reductions: axes come from the `axes` attribute before the opset where they
became an input (13 for ReduceSum, 18 for the others); `keepdims` (default 1) keeps reduced axes
as size 1; no axes means every axis, unless `noop_with_empty_axes` is set, which reduces over no
axis: sums, means, extremes and products give their input back, the composite ones their
non-reduction steps, as ONNX says (ReduceL1 and ReduceL2 the absolute value, ReduceSumSquare the
square, ReduceLogSum the log). Outputs keep the input dtype. Over an empty set, each gives its
identity as ONNX says: 0 (Sum, L1, L2, SumSquare), 1 (Prod), NaN (Mean), -inf (LogSum,
LogSumExp), the dtype's lowest value (Max: -inf for floats) and highest (Min). A float16 input
reduces in float32 (`hetsim.kernels.arrays.accumulating`). Each costs a fixed number of flops per
input element (`_REDUCE`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import accumulating, memoize
from hetsim.kernels.checks import (
    check_integer_input,
    flag_attr,
    int_attr,
    integer_input,
    ints_attr,
    normalize_axes,
    op_error,
)
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.unary import TRANSCENDENTAL_FLOPS

__all__: list[str] = []

Reducer = Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]


def _ufunc_reducer(ufunc: np.ufunc) -> Reducer:
    # ufunc.reduce skips the Python layers of np.sum/np.max: a few µs per call on small tensors
    return lambda x, axes, keepdims: ufunc.reduce(x, axis=axes, keepdims=keepdims)


def _extreme_reducer(ufunc: np.ufunc, *, is_max: bool) -> Reducer:
    """ReduceMax (`is_max`) or ReduceMin: over an empty set, ONNX gives the identity, the
    lowest value of the dtype for a max (-inf for floats, False for bool), the highest for a min,
    where numpy's reduction has no identity and raises."""

    def reduce(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        if x.size:
            result: np.ndarray = ufunc.reduce(x, axis=axes, keepdims=keepdims)
        else:
            initial = _extreme(x.dtype, lowest=is_max)
            result = ufunc.reduce(x, axis=axes, keepdims=keepdims, initial=initial)
        return result

    return reduce


def _extreme(dtype: np.dtype[Any], *, lowest: bool) -> bool | int | float:
    """The lowest (or highest) value of `dtype`: infinite for floats."""
    if dtype.kind == "b":
        return not lowest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if lowest else info.max)
    return -math.inf if lowest else math.inf


def _mean(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    count = math.prod(x.shape[a] for a in axes)
    total: np.ndarray = np.add.reduce(x, axis=axes, keepdims=keepdims)  # type: ignore[call-overload]
    return total / count if count else np.full_like(total, np.nan)


def _sum_of(transform: Callable[[np.ndarray], np.ndarray]) -> Reducer:
    """The sum of `transform` of the elements (ReduceL1: of their absolute values)."""

    def total(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        result: np.ndarray = np.add.reduce(transform(x), axis=axes, keepdims=keepdims)  # type: ignore[call-overload]
        return result

    return total


def _l2(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    result: np.ndarray = np.sqrt(np.add.reduce(np.square(x), axis=axes, keepdims=keepdims))  # type: ignore[call-overload]
    return result


def _log_sum(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    result: np.ndarray = np.log(np.add.reduce(x, axis=axes, keepdims=keepdims))  # type: ignore[call-overload]
    return result


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """log Σ exp(x), with the largest element taken out first so that exp cannot overflow
    (the log of an empty sum is -inf)."""
    if not x.size:
        empty: np.ndarray = np.log(np.add.reduce(np.exp(x), axis=axes, keepdims=keepdims))  # type: ignore[call-overload]
        return empty
    top = np.maximum.reduce(x, axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    total = np.add.reduce(np.exp(x - top), axis=axes, keepdims=True)
    result: np.ndarray = np.log(total) + top
    return result if keepdims else np.squeeze(result, axis=axes)


# op type -> (reduction, opset since which axes is an input, flops per input element)
_REDUCE: dict[str, tuple[Reducer, int, float]] = {
    "ReduceSum": (_ufunc_reducer(np.add), 13, 1),
    "ReduceMean": (_mean, 18, 1),
    "ReduceMax": (_extreme_reducer(np.maximum, is_max=True), 18, 1),
    "ReduceMin": (_extreme_reducer(np.minimum, is_max=False), 18, 1),
    "ReduceProd": (_ufunc_reducer(np.multiply), 18, 1),
    "ReduceL1": (_sum_of(np.abs), 18, 2),  # abs, add
    "ReduceL2": (_l2, 18, 2),  # square, add (the root per output is left out)
    "ReduceSumSquare": (_sum_of(np.square), 18, 2),
    "ReduceLogSum": (_log_sum, 18, 1),
    "ReduceLogSumExp": (_log_sum_exp, 18, 3 + TRANSCENDENTAL_FLOPS),  # max, subtract, exp, add
}


def _axes(
    op: Op, rank: int, axes: Sequence[int] | np.ndarray | None, is_noop: bool
) -> tuple[int, ...]:
    """Normalized axes; none (empty axes with noop set: the reduction over no axis, which was
    taken for the identity, so that a ReduceSumSquare gave its input back unsquared)."""
    check_integer_input(op, 1, "axes", axes, rank=1)
    if axes is None or len(axes) == 0:
        return () if is_noop else tuple(range(rank))
    return normalize_axes(op, axes, rank)


def _compile(reducer: Reducer, since: int) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        keepdims = flag_attr(op, "keepdims", 1)
        is_noop = flag_attr(op, "noop_with_empty_axes", 0)
        normalized = memoize(lambda rank, axes: _axes(op, rank, axes, is_noop))  # for speed

        def reduce(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
            summed = reducer(accumulating(x), axes, keepdims)
            return np.asarray(summed).astype(x.dtype, copy=False)

        if opset < since:
            fixed = ints_attr(op, "axes", None)
            return lambda inputs: [
                reduce(inputs[0], normalized(inputs[0].ndim, inputs[0].ndim, fixed))
            ]

        def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
            x = inputs[0]
            assert x is not None, f"{op!r}: input missing"
            axes = inputs[1] if len(inputs) > 1 else None
            key = (x.ndim, None if axes is None else axes.tobytes())
            return [reduce(x, normalized(key, x.ndim, axes))]

        return kernel

    return compile


def _infer(since: int) -> Callable[[Op, int, Sequence[Meta | None]], list[Meta]]:
    def infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        if opset < since:
            axes: Sequence[int] | np.ndarray | None = ints_attr(op, "axes", None)
        elif len(inputs) > 1 and inputs[1] is not None:
            axes = integer_input(op, inputs, 1, "axes", rank=1)
        else:
            axes = None
        normalized = _axes(op, len(x.shape), axes, flag_attr(op, "noop_with_empty_axes", 0))
        keepdims = flag_attr(op, "keepdims", 1)
        shape = tuple(
            1 if i in normalized else d
            for i, d in enumerate(x.shape)
            if keepdims or i not in normalized
        )
        return [Meta(shape, x.dtype)]

    return infer


def _cost_of(
    flops_per_element: float,
) -> Callable[[Op, Sequence[Meta | None], Sequence[Meta]], Cost]:
    """`flops_per_element` per input element; the input read and the output written once."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        flops = flops_per_element * x.size
        return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")

    return cost


_cost = _cost_of(1)

for _type, (_reducer, _since, _flops) in _REDUCE.items():
    register(
        _type,
        "reduction",
        compile=_compile(_reducer, _since),
        infer=_infer(_since),
        cost=_cost_of(_flops),
    )


def _compile_arg(is_max: bool) -> Callable[[Op, int], Kernel]:
    """ArgMax or ArgMin along `axis`: the first index of the extreme, or with
    `select_last_index` the last, as int64."""
    find = np.argmax if is_max else np.argmin

    def compile(op: Op, opset: int) -> Kernel:
        axis = int_attr(op, "axis", 0)
        keepdims = flag_attr(op, "keepdims", 1)
        is_last = flag_attr(op, "select_last_index", 0)

        def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
            x = inputs[0]
            assert x is not None, f"{op!r}: input missing"
            if x.size == 0:  # an empty output over an empty axis, which numpy refuses
                shape = _arg_shape(x.shape, axis % x.ndim, keepdims)
                if 0 in shape:
                    return [np.zeros(shape, np.int64)]
            if is_last:
                flipped = find(np.flip(x, axis), axis=axis, keepdims=keepdims)
                found = x.shape[axis] - 1 - flipped
            else:
                found = find(x, axis=axis, keepdims=keepdims)
            return [np.asarray(found, np.int64)]

        return kernel

    return compile


def _infer_arg(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    (axis,) = normalize_axes(op, [int_attr(op, "axis", 0)], len(x.shape))
    shape = _arg_shape(x.shape, axis, flag_attr(op, "keepdims", 1))
    # an index into nothing is refused; where no index is asked for, the output is empty, as
    # onnxruntime gives it (numpy's argmax refuses both)
    if x.shape[axis] == 0 and 0 not in shape:
        raise op_error(op, f"expected a non-empty axis {axis}", list(x.shape))
    return [Meta(shape, np.dtype(np.int64))]


def _arg_shape(shape: tuple[int, ...], axis: int, keepdims: bool) -> tuple[int, ...]:
    """The shape ArgMax or ArgMin gives over `axis` (non-negative) of `shape`."""
    return tuple(1 if i == axis else d for i, d in enumerate(shape) if keepdims or i != axis)


for _type, _is_max in (("ArgMax", True), ("ArgMin", False)):
    register(_type, "reduction", compile=_compile_arg(_is_max), infer=_infer_arg, cost=_cost)
