"""Ops that make constants or change only a tensor's shape, not its data.

Constant, ConstantOfShape, Shape and Range create tensors; Reshape, Flatten, Squeeze, Unsqueeze
and Expand relabel one (numpy views where numpy allows). Several took their parameters as
attributes in early opsets and as inputs later (Reshape at 5, Squeeze/Unsqueeze at 13): each
shape rule reads the parameter from where the opset puts it, through `versioned`. Copying ops
(Transpose, Slice, Concat, ...) live in `tensor.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import (
    attr,
    broadcast_shape,
    check_input_rank,
    check_integer_input,
    constant_input,
    flag_attr,
    int_attr,
    integer_input,
    ints_attr,
    normalize_axes,
    op_error,
)
from hetsim.kernels.costs import Cost, metadata_cost, nbytes, view_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import ALL_INPUTS, Kernel, register

__all__ = ["reshape_target", "versioned", "write_cost"]


def versioned(
    op: Op, opset: int, since: int, name: str, index: int, inputs: Sequence[Meta | None]
) -> Any:
    """An integer parameter (axes, a shape, pads) that is attribute `name` before opset `since`
    and input `index` from it on: a 1-D input, as ONNX has every such parameter.

    Returns the attribute's ints (None when absent), or the input's known value (None when the
    optional input is omitted); an attribute that is not a list of ints, an input of another
    dtype than an integer one or of another rank than 1, or a present input of unknown value is
    a ModelError.

    Examples
    --------
    >>> op = Op("Squeeze", "sq", ("x", "axes"), ("y",), {"axes": [0]})
    >>> x, axes = Meta((1, 3), np.dtype("float32")), Meta.of(np.array([-2]))
    >>> versioned(op, 11, 13, "axes", 1, [x, axes]), versioned(op, 13, 13, "axes", 1, [x, axes])
    ((0,), array([-2]))
    """
    if opset < since:
        return ints_attr(op, name, None)
    if index >= len(inputs) or inputs[index] is None:
        return None
    return integer_input(op, inputs, index, name, rank=1)


_CONSTANT_VALUES = ("value", "value_float", "value_floats", "value_int", "value_ints")
"""The attributes a Constant holds its value in, exactly one of them (ONNX's rule): with two,
which one to read would be a guess."""


def _constant_value(op: Op) -> np.ndarray:
    attrs = op.attrs
    given = [key for key in _CONSTANT_VALUES if key in attrs]
    if len(given) > 1:
        raise op_error(op, f"expected exactly one of {', '.join(_CONSTANT_VALUES)}", f"{given}")
    if "value" in attrs:
        return np.asarray(attrs["value"])
    scalars = {"value_float": np.float32, "value_int": np.int64}
    lists = {"value_floats": np.float32, "value_ints": np.int64}
    for key, dtype in scalars.items():
        if key in attrs:
            return np.array(attrs[key], dtype)
    for key, dtype in lists.items():
        if key in attrs:
            return np.array(attrs[key], dtype).reshape(-1)
    raise op_error(op, "expected one of value, value_float(s), value_int(s)", sorted(attrs))


def _compile_constant(op: Op, opset: int) -> Kernel:
    value = _constant_value(op)
    return lambda inputs: [value]


def _infer_constant(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    return [Meta.of(_constant_value(op))]


register(
    "Constant",
    "other",
    compile=_compile_constant,
    infer=_infer_constant,
    cost=metadata_cost,
    required=0,
)


def _fill_value(op: Op) -> np.ndarray:
    value = np.asarray(attr(op, "value", np.zeros(1, np.float32)))
    if value.size != 1:
        raise op_error(op, "expected a one-element value", list(value.shape))
    return value.reshape(())


def _output_dims(op: Op, shape: np.ndarray) -> tuple[int, ...]:
    """ConstantOfShape's output shape: its input's values, each >= 0 as the spec asks (numpy
    refused a negative one inside the kernel)."""
    dims = tuple(int(d) for d in shape)
    if min(dims, default=0) < 0:
        raise op_error(op, "expected a shape of non-negative dims", list(dims))
    return dims


def _compile_constant_of_shape(op: Op, opset: int) -> Kernel:
    value = _fill_value(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        shape = inputs[0]
        assert shape is not None, f"{op!r}: input missing"
        check_integer_input(op, 0, "shape", shape, rank=1)
        return [np.full(_output_dims(op, shape), value, value.dtype)]

    return kernel


def _infer_constant_of_shape(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    shape = integer_input(op, inputs, 0, "shape", rank=1)
    return [Meta(_output_dims(op, shape), _fill_value(op).dtype)]


def write_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The output written; nothing read (ConstantOfShape, EyeLike: their input is a shape)."""
    return Cost(0.0, 0, sum(m.nbytes for m in outputs), "data_movement")


register(
    "ConstantOfShape",
    "data_movement",
    compile=_compile_constant_of_shape,
    infer=_infer_constant_of_shape,
    cost=write_cost,
)


def _shape_slice(op: Op) -> slice:
    # python slicing clamps out-of-range bounds exactly as ONNX Shape's start/end do
    return slice(int_attr(op, "start", 0), int_attr(op, "end", None))


def _compile_shape(op: Op, opset: int) -> Kernel:
    part = _shape_slice(op)
    return lambda inputs: [np.array(inputs[0].shape[part], np.int64)]


def _infer_shape(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return [Meta.of(np.array(x.shape[_shape_slice(op)], np.int64))]


register("Shape", "other", compile=_compile_shape, infer=_infer_shape, cost=metadata_cost)


def _compile_size(op: Op, opset: int) -> Kernel:
    return lambda inputs: [np.array(inputs[0].size, np.int64)]


def _infer_size(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return [Meta.of(np.array(math.prod(x.shape), np.int64))]


register("Size", "other", compile=_compile_size, infer=_infer_size, cost=metadata_cost)


def _compile_range(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        start, limit, delta = inputs
        assert start is not None, "Range: start missing"
        assert limit is not None, "Range: limit missing"
        assert delta is not None, "Range: delta missing"
        for index, (name, bound) in enumerate(zip(_RANGE_NAMES, inputs, strict=True)):
            check_input_rank(op, index, name, bound, 0)
        values = np.arange(start.item(), limit.item(), delta.item())
        return [values.astype(start.dtype, copy=False)]

    return kernel


def _infer_range(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    start, limit, delta = (
        constant_input(op, inputs, i, n, rank=0) for i, n in enumerate(_RANGE_NAMES)
    )
    for name, bound in zip(_RANGE_NAMES, (start, limit, delta), strict=True):
        if not np.isfinite(bound):  # a bound of inf or NaN makes no count of elements
            raise op_error(op, f"expected a finite {name}", bound)
    if delta == 0:
        raise op_error(op, "expected a non-zero delta", 0)
    steps = (float(limit) - float(start)) / float(delta)
    if not math.isfinite(steps):  # finite bounds whose span overflows: (1e308 - -1e308) / 1
        raise op_error(op, "expected a count of elements that fits a float", steps)
    return [Meta((max(math.ceil(steps), 0),), start.dtype)]


_RANGE_NAMES = ("start", "limit", "delta")
register(
    "Range",
    "elementwise",
    compile=_compile_range,
    infer=_infer_range,
    one_type=ALL_INPUTS,
    required=3,
)


def reshape_target(
    op: Op, in_shape: tuple[int, ...], shape: Sequence[int], allowzero: bool
) -> tuple[int, ...]:
    """The output shape of Reshape: 0 copies the input dim (unless `allowzero`), -1 is inferred.

    Examples
    --------
    >>> reshape_target(Op("Reshape", "r", ("x", "s"), ("y",)), (2, 3, 4), [0, -1], False)
    (2, 12)
    """
    rank = len(in_shape)
    if not allowzero and any(d == 0 for d in shape[rank:]):  # no input dim there to copy
        expected = f"expected a 0 (copy the input's dim) only within the input's rank {rank}"
        raise op_error(op, expected, list(shape))
    dims = [in_shape[i] if d == 0 and not allowzero else int(d) for i, d in enumerate(shape)]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise op_error(op, "expected at most one -1 and no other negative dims", list(shape))
    total = math.prod(in_shape)
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or total % known:
            raise op_error(op, f"expected a shape that fits {list(in_shape)}", list(shape))
        dims[dims.index(-1)] = total // known
    elif known != total:
        raise op_error(op, f"expected a shape of {total} elements", list(shape))
    return tuple(dims)


def _compile_reshape(op: Op, opset: int) -> Kernel:
    allowzero = flag_attr(op, "allowzero", 0)
    if opset < 5:
        fixed = ints_attr(op, "shape")
        fixed_target = memoize(lambda x_shape: reshape_target(op, x_shape, fixed, allowzero))
        return lambda inputs: [inputs[0].reshape(fixed_target(inputs[0].shape, inputs[0].shape))]

    def target_of(x_shape: tuple[int, ...], shape: np.ndarray) -> tuple[int, ...]:
        check_integer_input(op, 1, "shape", shape, rank=1)
        return reshape_target(op, x_shape, shape.tolist(), allowzero)

    # for speed; an op's shape input has one dtype and one rank in every run
    target = memoize(target_of)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, shape = inputs[0], inputs[1]
        assert x is not None, "Reshape: input missing"
        assert shape is not None, "Reshape: shape missing"
        return [x.reshape(target((x.shape, shape.tobytes()), x.shape, shape))]

    return kernel


def _infer_reshape(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    shape = versioned(op, opset, 5, "shape", 1, inputs)
    if shape is None:
        raise op_error(op, "expected a shape", "none")
    allowzero = flag_attr(op, "allowzero", 0)
    return [Meta(reshape_target(op, x.shape, [int(d) for d in shape], allowzero), x.dtype)]


register(
    "Reshape",
    "data_movement",
    compile=_compile_reshape,
    infer=_infer_reshape,
    cost=view_cost,
    required={1: 1, 5: 2},
)


def _flat_shape(op: Op, shape: tuple[int, ...]) -> tuple[int, int]:
    axis = int_attr(op, "axis", 1)
    if not -len(shape) <= axis <= len(shape):
        raise op_error(op, f"expected an axis in [{-len(shape)}, {len(shape)}]", axis)
    return math.prod(shape[:axis]), math.prod(shape[axis:])


def _compile_flatten(op: Op, opset: int) -> Kernel:
    target = memoize(lambda shape: _flat_shape(op, shape))  # for speed
    return lambda inputs: [inputs[0].reshape(target(inputs[0].shape, inputs[0].shape))]


def _infer_flatten(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return [Meta(_flat_shape(op, x.shape), x.dtype)]


register("Flatten", "data_movement", compile=_compile_flatten, infer=_infer_flatten, cost=view_cost)


def _squeezed(op: Op, shape: tuple[int, ...], axes: Any) -> tuple[int, ...]:
    if axes is None or len(axes) == 0:
        return tuple(d for d in shape if d != 1)
    drop = normalize_axes(op, axes, len(shape))
    for a in drop:
        if shape[a] != 1:
            raise op_error(op, f"expected size 1 on squeezed axis {a}", shape[a])
    return tuple(d for i, d in enumerate(shape) if i not in drop)


def _unsqueezed(op: Op, shape: tuple[int, ...], axes: Any) -> tuple[int, ...]:
    if axes is None:
        raise op_error(op, "expected axes", "none")
    rank = len(shape) + len(axes)
    inserted = normalize_axes(op, axes, rank)
    rest = iter(shape)
    return tuple(1 if i in inserted else next(rest) for i in range(rank))


_SQUEEZE = {"Squeeze": _squeezed, "Unsqueeze": _unsqueezed}
_SQUEEZE_REQUIRED: dict[str, int | dict[int, int]] = {
    "Squeeze": 1,
    "Unsqueeze": {1: 1, 13: 2},
}  # Squeeze's axes stay optional


def _compile_squeeze(op: Op, opset: int) -> Kernel:
    rule = _SQUEEZE[op.type]

    def target_of(shape: tuple[int, ...], axes: Any) -> tuple[int, ...]:
        check_integer_input(op, 1, "axes", axes, rank=1)
        return rule(op, shape, axes)

    # for speed; an op's axes input has one dtype and one rank in every run
    target = memoize(target_of)
    if opset < 13:
        fixed = ints_attr(op, "axes", None)
        return lambda inputs: [inputs[0].reshape(target(inputs[0].shape, inputs[0].shape, fixed))]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        axes = inputs[1] if len(inputs) > 1 else None
        key = (x.shape, None if axes is None else axes.tobytes())
        return [x.reshape(target(key, x.shape, axes))]

    return kernel


def _infer_squeeze(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    axes = versioned(op, opset, 13, "axes", 1, inputs)
    return [Meta(_SQUEEZE[op.type](op, x.shape, axes), x.dtype)]


for _type in _SQUEEZE:
    register(
        _type,
        "data_movement",
        compile=_compile_squeeze,
        infer=_infer_squeeze,
        cost=view_cost,
        required=_SQUEEZE_REQUIRED[_type],
    )


def _compile_expand(op: Op, opset: int) -> Kernel:
    def target_of(x_shape: tuple[int, ...], shape: np.ndarray) -> tuple[int, ...]:
        check_integer_input(op, 1, "shape", shape, rank=1)
        return broadcast_shape(op, x_shape, tuple(shape.tolist()))

    # for speed; an op's shape input has one dtype and one rank in every run
    broadcast = memoize(target_of)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, shape = inputs[0], inputs[1]
        assert x is not None, "Expand: input missing"
        assert shape is not None, "Expand: shape missing"
        target = broadcast((x.shape, shape.tobytes()), x.shape, shape)
        # a copy, not numpy's read-only broadcast view: outputs are ordinary arrays
        return [np.array(np.broadcast_to(x, target))]

    return kernel


def _infer_expand(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    shape = tuple(int(d) for d in integer_input(op, inputs, 1, "shape", rank=1))
    return [Meta(broadcast_shape(op, x.shape, shape), x.dtype)]


def _expand_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Its inputs read (``shape`` too, as Tile's ``repeats``) and its output written once."""
    return Cost(0.0, nbytes(inputs), nbytes(outputs), "data_movement")


register(
    "Expand",
    "data_movement",
    compile=_compile_expand,
    infer=_infer_expand,
    cost=_expand_cost,
    required=2,
)
