"""Ops that rearrange or make tensors: Trilu, DepthToSpace, SpaceToDepth, EyeLike,
ReverseSequence, CenterCropPad, and the running CumSum and CumProd.

Each kernel is a reshape and transpose, a mask, or a gather over whole arrays; the shape rules
check the block sizes, ranks and axes the kernels trust.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_integer_input,
    check_values_below,
    dtype_of,
    flag_attr,
    int_attr,
    integer_input,
    ints_attr,
    normalize_axes,
    normalize_axis,
    op_error,
    present,
    same_as_input,
)
from hetsim.kernels.costs import movement_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.shape import write_cost
from hetsim.kernels.tensor import first_input

__all__: list[str] = []


def _compile_trilu(op: Op, opset: int) -> Kernel:
    keep = np.triu if flag_attr(op, "upper", 1) else np.tril

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, k = inputs[0], inputs[1] if len(inputs) > 1 else None
        assert x is not None, f"{op!r}: input missing"
        check_integer_input(op, 1, "k", k, rank=0)  # a 1-D [1] raised numpy's TypeError
        return [keep(x, 0 if k is None else int(k))]

    return kernel


def _infer_trilu(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    if len(x.shape) < 2:
        raise op_error(op, "expected an input of rank 2 or more", len(x.shape))
    if len(inputs) > 1:
        check_integer_input(op, 1, "k", inputs[1], rank=0)
    return [Meta(x.shape, x.dtype)]


register("Trilu", "data_movement", compile=_compile_trilu, infer=_infer_trilu, cost=movement_cost)


def _compile_cumulative(ufunc: np.ufunc) -> Callable[[Op, int], Kernel]:
    """CumSum (`ufunc` np.add) or CumProd (np.multiply) along the axis input's value."""
    identity = ufunc.identity

    def compile(op: Op, opset: int) -> Kernel:
        exclusive = flag_attr(op, "exclusive", 0)
        reverse = flag_attr(op, "reverse", 0)

        def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
            x, axis_value = present(op, inputs, 2)
            check_integer_input(op, 1, "axis", axis_value, rank=0)
            axis = normalize_axis(op, int(axis_value), x.ndim)
            y = np.flip(x, axis) if reverse else x
            total = ufunc.accumulate(y, axis=axis, dtype=x.dtype)
            if exclusive:  # each leaves its own element out: shifted by one, the identity first
                total = np.delete(np.insert(total, 0, identity, axis=axis), -1, axis=axis)
            return [np.flip(total, axis) if reverse else total]

        return kernel

    return compile


def _infer_cumulative(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    check_integer_input(op, 1, "axis", inputs[1], rank=0)  # ONNX: a 0-D tensor
    return same_as_input(op, opset, inputs)


for _type, _ufunc in (("CumSum", np.add), ("CumProd", np.multiply)):
    register(
        _type, "elementwise", compile=_compile_cumulative(_ufunc), infer=_infer_cumulative,
        required=2,
    )  # fmt: skip


def _block(op: Op) -> int:
    size = int_attr(op, "blocksize")
    if size < 1:
        raise op_error(op, "expected a positive blocksize", size)
    return size


def _depth_to_space_mode(op: Op) -> str:
    mode = attr(op, "mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise op_error(op, "expected mode 'DCR' or 'CRD'", repr(mode))
    return str(mode)


def _compile_depth_to_space(op: Op, opset: int) -> Kernel:
    size, mode = _block(op), _depth_to_space_mode(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        n, c, h, w = x.shape
        depth = c // (size * size)
        if mode == "DCR":  # depth, column, row: the blocks outermost in the channels
            y = x.reshape(n, size, size, depth, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:  # column, row, depth
            y = x.reshape(n, depth, size, size, h, w).transpose(0, 1, 4, 2, 5, 3)
        return [y.reshape(n, depth, h * size, w * size)]

    return kernel


def _infer_depth_to_space(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    size = _block(op)
    _depth_to_space_mode(op)
    if len(x.shape) != 4 or x.shape[1] % (size * size):
        expected = f"expected an input of rank 4 whose channels divide by {size * size}"
        raise op_error(op, expected, f"shape {list(x.shape)}")
    n, c, h, w = x.shape
    return [Meta((n, c // (size * size), h * size, w * size), x.dtype)]


def _compile_space_to_depth(op: Op, opset: int) -> Kernel:
    size, mode = _block(op), _depth_to_space_mode(op)  # CRD: from opset 28
    order = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        n, c, h, w = x.shape
        y = x.reshape(n, c, h // size, size, w // size, size).transpose(order)
        return [y.reshape(n, c * size * size, h // size, w // size)]

    return kernel


def _infer_space_to_depth(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    size = _block(op)
    _depth_to_space_mode(op)
    if len(x.shape) != 4 or x.shape[2] % size or x.shape[3] % size:
        expected = f"expected an input of rank 4 whose height and width divide by {size}"
        raise op_error(op, expected, f"shape {list(x.shape)}")
    n, c, h, w = x.shape
    return [Meta((n, c * size * size, h // size, w // size), x.dtype)]


register(
    "DepthToSpace",
    "data_movement",
    compile=_compile_depth_to_space,
    infer=_infer_depth_to_space,
    cost=movement_cost,
)
register(
    "SpaceToDepth",
    "data_movement",
    compile=_compile_space_to_depth,
    infer=_infer_space_to_depth,
    cost=movement_cost,
)


def _eye_dtype(op: Op, x: Meta | np.ndarray) -> np.dtype[Any]:
    code = attr(op, "dtype", None)
    return x.dtype if code is None else dtype_of(op, code)


def _compile_eye_like(op: Op, opset: int) -> Kernel:
    k = int_attr(op, "k", 0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        return [np.eye(x.shape[0], x.shape[1], k, dtype=_eye_dtype(op, x))]

    return kernel


def _infer_eye_like(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    if len(x.shape) != 2:
        raise op_error(op, "expected an input of rank 2", len(x.shape))
    return [Meta(x.shape, _eye_dtype(op, x))]


register(
    "EyeLike", "data_movement", compile=_compile_eye_like, infer=_infer_eye_like, cost=write_cost
)


def _sequence_axes(op: Op, rank: int) -> tuple[int, int]:
    time, batch = int_attr(op, "time_axis", 0), int_attr(op, "batch_axis", 1)
    if sorted((time, batch)) != [0, 1]:
        raise op_error(op, "expected time_axis and batch_axis 0 and 1", [time, batch])
    if rank < 2:
        raise op_error(op, "expected an input of rank 2 or more", rank)
    return time, batch


def _compile_reverse_sequence(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, lengths = present(op, inputs, 2)
        time, _ = _sequence_axes(op, x.ndim)
        steps = x.shape[time]
        _check_lengths(op, lengths, steps, time)
        t = np.arange(steps).reshape(-1, 1)
        n = lengths.astype(np.int64).reshape(1, -1)
        order = np.where(t < n, n - 1 - t, t)  # [time, batch]: the first n[b] steps reversed
        if time == 1:
            order = order.T
        order = order.reshape(*order.shape, *(1,) * (x.ndim - 2))
        return [np.take_along_axis(x, np.broadcast_to(order, x.shape), axis=time)]

    return kernel


def _check_lengths(op: Op, lengths: np.ndarray, steps: int, time: int) -> None:
    """Each sequence length in ``[0, steps]``, as onnxruntime asks: a negative one had reversed
    nothing, a longer one had failed inside the kernel with numpy's IndexError."""
    expected = f"expected sequence_lens in [0, {steps}] (time axis {time})"
    check_values_below(op, lengths, steps + 1, expected)


def _infer_reverse_sequence(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, lengths = present(op, inputs, 2)
    time, batch = _sequence_axes(op, len(x.shape))
    if lengths.shape != (x.shape[batch],):
        expected = f"expected sequence_lens of shape [{x.shape[batch]}] (batch axis {batch})"
        raise op_error(op, expected, list(lengths.shape))
    if lengths.value is not None:  # else the kernel checks them, when they are known
        _check_lengths(op, lengths.value, x.shape[time], time)
    return [Meta(x.shape, x.dtype)]


register(
    "ReverseSequence", "data_movement", compile=_compile_reverse_sequence,
    infer=_infer_reverse_sequence, cost=movement_cost, required=2,
)  # fmt: skip


def _crop_pad_plan(
    op: Op, shape: tuple[int, ...], target: Sequence[int]
) -> tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]:
    """The output shape, the input's centered crop and where it lands in the output: each
    named axis cropped or zero-padded to its target, the odd element at the end."""
    axes = ints_attr(op, "axes", None)
    at = list(range(len(shape))) if axes is None else normalize_axes(op, axes, len(shape))
    if len(target) != len(at):
        raise op_error(op, f"expected a shape of {len(at)} values (one per axis)", list(target))
    out, crop, place = list(shape), [slice(None)] * len(shape), [slice(None)] * len(shape)
    for axis, size in zip(at, target, strict=True):
        dim = shape[axis]
        if size < 0:
            raise op_error(op, "expected non-negative sizes", list(target))
        margin = abs(dim - size) // 2
        window = slice(margin, margin + min(dim, size))
        if size < dim:
            crop[axis] = window
        elif size > dim:
            place[axis] = window
        out[axis] = size
    return tuple(out), tuple(crop), tuple(place)


def _compile_center_crop_pad(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, target = present(op, inputs, 2)
        check_integer_input(op, 1, "shape", target, rank=1)
        shape, crop, place = _crop_pad_plan(op, x.shape, [int(v) for v in target])
        y = np.zeros(shape, x.dtype)
        y[place] = x[crop]
        return [y]

    return kernel


def _infer_center_crop_pad(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    target = [int(v) for v in integer_input(op, inputs, 1, "shape", rank=1)]
    return [Meta(_crop_pad_plan(op, x.shape, target)[0], x.dtype)]


register(
    "CenterCropPad", "data_movement", compile=_compile_center_crop_pad,
    infer=_infer_center_crop_pad, cost=movement_cost, required=2,
)  # fmt: skip
