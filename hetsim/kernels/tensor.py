"""Ops that move data between tensors: Transpose, Concat, Split, Slice, Gather, GatherElements,
Trilu, Tile, Pad, and the rest of ONNX's (the scatters, CumSum, DepthToSpace, TopK, ...).

Each kernel is one numpy call over whole arrays (Slice and Split return views). Parameters that
moved from attributes to inputs across opsets (Slice at 10, Split at 13, Pad at 11) are read with
`versioned`, and each op's index arithmetic lives in one function shared by its kernel and its
shape rule, so the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.registry import (
    ALL_INPUTS,
    Cost,
    Kernel,
    Meta,
    attr,
    constant_input,
    dtype_of,
    elementwise_cost,
    memoize,
    movement_cost,
    nbytes,
    normalize_axes,
    normalize_axis,
    op_error,
    register,
    same_as_input,
)
from hetsim.kernels.shape import versioned

__all__ = ["pad_widths", "slices", "split_sizes"]

T = TypeVar("T")


def _first(op: Op, inputs: Sequence[Meta | None]) -> Meta:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return x


def _given(op: Op, inputs: Sequence[T | None], count: int) -> list[T]:
    """The first `count` inputs, each present (the frontend checks required inputs)."""
    given = [value for value in inputs[:count] if value is not None]
    assert len(given) == count, f"{op!r}: expected {count} inputs, got {len(given)}"
    return given


def _perm(op: Op, rank: int) -> tuple[int, ...]:
    perm = attr(op, "perm", None)
    if perm is None:
        return tuple(range(rank - 1, -1, -1))
    if sorted(perm) != list(range(rank)):
        raise op_error(op, f"expected a permutation of range({rank})", list(perm))
    return tuple(int(p) for p in perm)


def _compile_transpose(op: Op, opset: int) -> Kernel:
    perm = attr(op, "perm", None)
    return lambda inputs: [np.transpose(inputs[0], perm)]


def _infer_transpose(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    return [Meta(tuple(x.shape[p] for p in _perm(op, len(x.shape))), x.dtype)]


register(
    "Transpose",
    "data_movement",
    compile=_compile_transpose,
    infer=_infer_transpose,
    cost=movement_cost,
)


def _compile_concat(op: Op, opset: int) -> Kernel:
    axis = int(attr(op, "axis"))
    return lambda inputs: [np.concatenate(inputs, axis=axis)]


def _infer_concat(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = [m for m in inputs if m is not None]
    rank = len(metas[0].shape)
    axis = normalize_axis(op, int(attr(op, "axis")), rank)
    for m in metas[1:]:
        same = len(m.shape) == rank and all(
            a == b
            for i, (a, b) in enumerate(zip(m.shape, metas[0].shape, strict=True))
            if i != axis
        )
        if not same:
            shapes = " and ".join(str(list(x.shape)) for x in metas)
            raise op_error(op, f"expected shapes equal except on axis {axis}", shapes)
    shape = list(metas[0].shape)
    shape[axis] = sum(m.shape[axis] for m in metas)
    return [Meta(tuple(shape), metas[0].dtype)]


register(
    "Concat", "data_movement", compile=_compile_concat, infer=_infer_concat, cost=movement_cost,
    one_type=ALL_INPUTS,
)  # fmt: skip


def split_sizes(op: Op, dim: int, split: Any, outputs: int) -> list[int]:
    """The size of each Split output along the axis of size `dim`.

    Examples
    --------
    >>> split_sizes(Op("Split", "s", ("x",), ("a", "b", "c"), {"num_outputs": 3}), 7, None, 3)
    [3, 3, 1]
    """
    if split is not None and len(split) > 0:
        sizes = [int(s) for s in split]
        if sum(sizes) != dim or len(sizes) != outputs:
            raise op_error(op, f"expected {outputs} sizes summing to {dim}", sizes)
        return sizes
    count = int(attr(op, "num_outputs", outputs))
    # num_outputs (opset 18): ceil-sized chunks, the last one smaller; older: equal parts
    chunk = math.ceil(dim / count)
    if "num_outputs" not in op.attrs and chunk * count != dim:
        raise op_error(op, f"expected a dim divisible by {count} outputs", dim)
    return [min(chunk, max(dim - i * chunk, 0)) for i in range(count)]


def _compile_split(op: Op, opset: int) -> Kernel:
    axis = int(attr(op, "axis", 0))
    fixed = attr(op, "split", None) if opset < 13 else None
    outputs = len(op.outputs)

    def cuts(dim: int, split: Any) -> list[int]:
        sizes = split_sizes(op, dim, split, outputs)
        return [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]

    cached_cuts = memoize(cuts)  # for speed

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Split: input missing"
        split = inputs[1] if opset >= 13 and len(inputs) > 1 else fixed
        dim = x.shape[axis]
        key = (dim, split.tobytes() if isinstance(split, np.ndarray) else None)
        return np.split(x, cached_cuts(key, dim, split), axis=axis)

    return kernel


def _infer_split(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    axis = normalize_axis(op, int(attr(op, "axis", 0)), len(x.shape))
    split = versioned(op, opset, 13, "split", 1, inputs)
    sizes = split_sizes(op, x.shape[axis], split, len(op.outputs))
    return [Meta((*x.shape[:axis], s, *x.shape[axis + 1 :]), x.dtype) for s in sizes]


register("Split", "data_movement", compile=_compile_split, infer=_infer_split, cost=movement_cost)


def slices(
    op: Op, shape: tuple[int, ...], starts: Any, ends: Any, axes: Any, steps: Any
) -> tuple[slice, ...]:
    """The numpy index of an ONNX Slice: negative bounds count from the end, all are clamped.

    Examples
    --------
    >>> slices(Op("Slice", "s", ("x",), ("y",)), (5, 4), [-1], [-9], [0], [-2])
    (slice(4, None, -2), slice(None, None, None))
    """
    rank = len(shape)
    axes = range(len(starts)) if axes is None else normalize_axes(op, axes, rank)
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * rank
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        dim, start, end, step = shape[axis], int(start), int(end), int(step)
        if step == 0:
            raise op_error(op, f"expected a non-zero step on axis {axis}", 0)
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        index[axis] = slice(start, None if end < 0 else end, step)
    return tuple(index)


_SLICE_PARAMS = ("starts", "ends", "axes", "steps")


def _compile_slice(op: Op, opset: int) -> Kernel:
    index = memoize(lambda shape, *params: slices(op, shape, *params))  # for speed
    if opset < 10:
        fixed = [attr(op, name, None) for name in _SLICE_PARAMS[:3]]
        return lambda inputs: [inputs[0][index(inputs[0].shape, inputs[0].shape, *fixed, None)]]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Slice: input missing"
        params = [*inputs[1:], None, None][:4]
        key = (x.shape, *(None if p is None else p.tobytes() for p in params))
        return [x[index(key, x.shape, *params)]]

    return kernel


def _infer_slice(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    params = [versioned(op, opset, 10, n, i + 1, inputs) for i, n in enumerate(_SLICE_PARAMS)]
    if opset < 10:
        params[3] = None
    index = slices(op, x.shape, *params)
    shape = tuple(len(range(*s.indices(d))) for s, d in zip(index, x.shape, strict=True))
    return [Meta(shape, x.dtype)]


register(
    "Slice",
    "data_movement",
    compile=_compile_slice,
    infer=_infer_slice,
    cost=movement_cost,
    one_type=(1, 2, 3, 4),  # starts, ends, axes, steps: ONNX's one index type Tind
)


def _compile_gather(op: Op, opset: int) -> Kernel:
    axis = int(attr(op, "axis", 0))
    return lambda inputs: [np.take(inputs[0], inputs[1], axis=axis)]


def _infer_gather(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, indices = _first(op, inputs), inputs[1]
    assert indices is not None, f"{op!r}: indices missing"
    axis = normalize_axis(op, int(attr(op, "axis", 0)), len(x.shape))
    return [Meta((*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]), x.dtype)]


register(
    "Gather", "data_movement", compile=_compile_gather, infer=_infer_gather, cost=movement_cost
)


def _compile_gather_elements(op: Op, opset: int) -> Kernel:
    axis = int(attr(op, "axis", 0))
    return lambda inputs: [np.take_along_axis(inputs[0], inputs[1], axis=axis)]


def _infer_gather_elements(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, indices = _first(op, inputs), inputs[1]
    assert indices is not None, f"{op!r}: indices missing"
    if len(indices.shape) != len(x.shape):
        raise op_error(op, f"expected indices of rank {len(x.shape)}", len(indices.shape))
    normalize_axis(op, int(attr(op, "axis", 0)), len(x.shape))
    return [Meta(indices.shape, x.dtype)]


register(
    "GatherElements",
    "data_movement",
    compile=_compile_gather_elements,
    infer=_infer_gather_elements,
    cost=movement_cost,
)


def _compile_trilu(op: Op, opset: int) -> Kernel:
    keep = np.triu if attr(op, "upper", 1) else np.tril

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, k = inputs[0], inputs[1] if len(inputs) > 1 else None
        assert x is not None, f"{op!r}: input missing"
        return [keep(x, 0 if k is None else int(k))]

    return kernel


def _infer_trilu(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    if len(x.shape) < 2:
        raise op_error(op, "expected an input of rank 2 or more", len(x.shape))
    return [Meta(x.shape, x.dtype)]


register("Trilu", "data_movement", compile=_compile_trilu, infer=_infer_trilu, cost=movement_cost)


def _compile_tile(op: Op, opset: int) -> Kernel:
    return lambda inputs: [np.tile(inputs[0], inputs[1].tolist())]


def _infer_tile(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    repeats = [int(r) for r in constant_input(op, inputs, 1, "repeats")]
    if len(repeats) != len(x.shape) or min(repeats, default=0) < 0:
        raise op_error(op, f"expected {len(x.shape)} non-negative repeats", repeats)
    return [Meta(tuple(d * r for d, r in zip(x.shape, repeats, strict=True)), x.dtype)]


register("Tile", "data_movement", compile=_compile_tile, infer=_infer_tile, cost=movement_cost)

_PAD_MODES = ("constant", "edge", "reflect", "wrap")


def pad_widths(op: Op, rank: int, pads: Any, axes: Any) -> list[tuple[int, int]]:
    """(before, after) per axis from ONNX pads ``[b1, b2, ..., e1, e2, ...]``; negative crops.

    Examples
    --------
    >>> pad_widths(Op("Pad", "p", ("x",), ("y",)), 3, [1, -1, 2, 0], [-1, 0])
    [(-1, 0), (0, 0), (1, 2)]
    """
    axes = range(rank) if axes is None else normalize_axes(op, axes, rank)
    pads = [int(p) for p in pads]
    if len(pads) != 2 * len(axes):
        raise op_error(op, f"expected {2 * len(axes)} pads", len(pads))
    widths = [(0, 0)] * rank
    for i, axis in enumerate(axes):
        widths[axis] = (pads[i], pads[i + len(axes)])
    return widths


def _pad_params(op: Op, opset: int) -> tuple[str, float]:
    mode = attr(op, "mode", "constant")
    if mode not in _PAD_MODES:
        raise op_error(op, f"expected a mode in {list(_PAD_MODES)}", repr(mode))
    return mode, float(attr(op, "value", 0.0)) if opset < 11 else 0.0


def _pad(x: np.ndarray, widths: list[tuple[int, int]], mode: Any, value: Any) -> np.ndarray:
    # negative pads crop first; numpy's pad takes only the non-negative rest
    crop = tuple(
        slice(max(-b, 0), d - max(-e, 0)) for (b, e), d in zip(widths, x.shape, strict=True)
    )
    x = x[crop]
    grow = [(max(b, 0), max(e, 0)) for b, e in widths]
    if mode != "constant":
        padded: np.ndarray = np.pad(x, grow, mode=mode)
        return padded
    out = np.full([d + b + e for d, (b, e) in zip(x.shape, grow, strict=True)], value, x.dtype)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, grow, strict=True))] = x
    return out


def _compile_pad(op: Op, opset: int) -> Kernel:
    mode, attr_value = _pad_params(op, opset)
    if opset < 11:
        pads = attr(op, "pads", None) if opset >= 2 else attr(op, "paddings", None)
        if pads is None:
            raise op_error(op, "expected a pads attribute", "none")
        return lambda inputs: [
            _pad(inputs[0], pad_widths(op, inputs[0].ndim, pads, None), mode, attr_value)
        ]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, pads = inputs[0], inputs[1]
        assert x is not None, "Pad: input missing"
        assert pads is not None, "Pad: pads missing"
        value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else 0
        axes = inputs[3] if len(inputs) > 3 else None
        return [_pad(x, pad_widths(op, x.ndim, pads, axes), mode, value)]

    return kernel


def _infer_pad(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    _pad_params(op, opset)
    if opset < 11:
        pads = attr(op, "pads", None) if opset >= 2 else attr(op, "paddings", None)
        axes = None
    else:
        pads = constant_input(op, inputs, 1, "pads")
        axes = versioned(op, opset, 18, "axes", 3, inputs)
    widths = pad_widths(op, len(x.shape), pads, axes)
    shape = tuple(d + b + e for d, (b, e) in zip(x.shape, widths, strict=True))
    if min(shape, default=0) < 0:
        raise op_error(op, f"expected pads that fit {list(x.shape)}", [w for w in widths])
    return [Meta(shape, x.dtype)]


register(
    "Pad", "data_movement", compile=_compile_pad, infer=_infer_pad, cost=movement_cost,
    one_type=(0, 2),  # the data and the constant value; pads and axes are int64
)  # fmt: skip


def _compile_cumulative(ufunc: np.ufunc) -> Callable[[Op, int], Kernel]:
    """CumSum (`ufunc` np.add) or CumProd (np.multiply) along the axis input's value."""
    identity = ufunc.identity

    def compile(op: Op, opset: int) -> Kernel:
        exclusive = bool(attr(op, "exclusive", 0))
        reverse = bool(attr(op, "reverse", 0))

        def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
            x, axis_value = _given(op, inputs, 2)
            axis = normalize_axis(op, int(axis_value), x.ndim)
            y = np.flip(x, axis) if reverse else x
            total = ufunc.accumulate(y, axis=axis, dtype=x.dtype)
            if exclusive:  # each leaves its own element out: shifted by one, the identity first
                total = np.delete(np.insert(total, 0, identity, axis=axis), -1, axis=axis)
            return [np.flip(total, axis) if reverse else total]

        return kernel

    return compile


register("CumSum", "elementwise", compile=_compile_cumulative(np.add), infer=same_as_input)
register("CumProd", "elementwise", compile=_compile_cumulative(np.multiply), infer=same_as_input)


def _block(op: Op) -> int:
    size = int(attr(op, "blocksize"))
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
    x = _first(op, inputs)
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
    x = _first(op, inputs)
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


def _batch_dims(op: Op, data_rank: int, indices_rank: int) -> int:
    batch = int(attr(op, "batch_dims", 0))
    if not 0 <= batch < min(data_rank, indices_rank):
        expected = f"expected batch_dims in [0, {min(data_rank, indices_rank) - 1}]"
        raise op_error(op, expected, batch)
    return batch


def _compile_gather_nd(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, indices = _given(op, inputs, 2)
        batch = _batch_dims(op, data.ndim, indices.ndim)
        outer = indices.shape[:batch]
        count = math.prod(outer)
        flat_data = data.reshape(count, *data.shape[batch:])
        flat_indices = indices.reshape(count, -1, indices.shape[-1])
        rows = np.arange(count).reshape(count, 1)
        picked = flat_data[(rows, *np.moveaxis(flat_indices, -1, 0))]
        return [picked.reshape(*indices.shape[:-1], *data.shape[batch + indices.shape[-1] :])]

    return kernel


def _infer_gather_nd(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices = _first(op, inputs), inputs[1]
    assert indices is not None, f"{op!r}: indices missing"
    batch = _batch_dims(op, len(data.shape), len(indices.shape))
    depth = indices.shape[-1]
    if not 1 <= depth <= len(data.shape) - batch:
        expected = f"expected index tuples of 1 to {len(data.shape) - batch} elements"
        raise op_error(op, expected, depth)
    if indices.shape[:batch] != data.shape[:batch]:
        expected = (
            f"expected indices whose first {batch} dims are data's {list(data.shape[:batch])}"
        )
        raise op_error(op, expected, list(indices.shape[:batch]))
    return [Meta((*indices.shape[:-1], *data.shape[batch + depth :]), data.dtype)]


register(
    "GatherND", "data_movement", compile=_compile_gather_nd, infer=_infer_gather_nd,
    cost=movement_cost,
)  # fmt: skip

_SCATTER_REDUCTIONS: dict[str, np.ufunc | None] = {
    "none": None,
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


def _scatter_reduction(op: Op) -> np.ufunc | None:
    reduction = attr(op, "reduction", "none")
    if reduction not in _SCATTER_REDUCTIONS:
        raise op_error(op, f"expected reduction one of {list(_SCATTER_REDUCTIONS)}", reduction)
    return _SCATTER_REDUCTIONS[reduction]


def _scattered(data: np.ndarray, where: tuple[Any, ...], updates: np.ndarray, ufunc: Any) -> Any:
    """A copy of `data` with `updates` written at the index tuple `where`, or combined there by
    `ufunc` (each duplicate index combined in turn, as ``ufunc.at`` does)."""
    out = data.copy()
    if ufunc is None:
        out[where] = updates
    else:
        ufunc.at(out, where, updates)
    return out


def _compile_scatter_nd(op: Op, opset: int) -> Kernel:
    ufunc = _scatter_reduction(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, indices, updates = _given(op, inputs, 3)
        return [_scattered(data, tuple(np.moveaxis(indices, -1, 0)), updates, ufunc)]

    return kernel


def _infer_scatter_nd(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices, updates = _given(op, inputs, 3)
    _scatter_reduction(op)
    depth = indices.shape[-1] if indices.shape else 0
    expected_updates = (*indices.shape[:-1], *data.shape[depth:])
    if not 1 <= depth <= len(data.shape) or updates.shape != expected_updates:
        expected = f"expected updates of shape {list(expected_updates)} for index tuples of {depth}"
        raise op_error(op, expected, list(updates.shape))
    return [Meta(data.shape, data.dtype)]


def _compile_scatter_elements(op: Op, opset: int) -> Kernel:
    ufunc = _scatter_reduction(op)
    axis = int(attr(op, "axis", 0))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, indices, updates = _given(op, inputs, 3)
        at = normalize_axis(op, axis, data.ndim)
        where = list(np.indices(indices.shape, sparse=True))
        where[at] = indices
        return [_scattered(data, tuple(where), updates, ufunc)]

    return kernel


def _infer_scatter_elements(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices, updates = _given(op, inputs, 3)
    _scatter_reduction(op)
    normalize_axis(op, int(attr(op, "axis", 0)), len(data.shape))
    if updates.shape != indices.shape or len(indices.shape) != len(data.shape):
        expected = f"expected indices and updates of one shape, of rank {len(data.shape)}"
        raise op_error(op, expected, f"{list(indices.shape)} and {list(updates.shape)}")
    return [Meta(data.shape, data.dtype)]


def _scatter_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The data copied, and the indices and updates read: bytes both ways, no flops."""
    return movement_cost(op, inputs, outputs)


register(
    "ScatterND", "data_movement", compile=_compile_scatter_nd, infer=_infer_scatter_nd,
    cost=_scatter_cost, one_type=(0, 2),
)  # fmt: skip
register(
    "ScatterElements", "data_movement", compile=_compile_scatter_elements,
    infer=_infer_scatter_elements, cost=_scatter_cost, one_type=(0, 2),
)  # fmt: skip


def _eye_dtype(op: Op, x: Meta | np.ndarray) -> np.dtype[Any]:
    code = attr(op, "dtype", None)
    return x.dtype if code is None else dtype_of(op, code)


def _compile_eye_like(op: Op, opset: int) -> Kernel:
    k = int(attr(op, "k", 0))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        return [np.eye(x.shape[0], x.shape[1], k, dtype=_eye_dtype(op, x))]

    return kernel


def _infer_eye_like(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    if len(x.shape) != 2:
        raise op_error(op, "expected an input of rank 2", len(x.shape))
    return [Meta(x.shape, _eye_dtype(op, x))]


def _write_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The output written; nothing read (EyeLike reads only its input's shape)."""
    return Cost(0.0, 0, sum(m.nbytes for m in outputs), "data_movement")


register(
    "EyeLike", "data_movement", compile=_compile_eye_like, infer=_infer_eye_like, cost=_write_cost
)


def _one_hot_axis(op: Op, rank: int) -> int:
    return normalize_axis(op, int(attr(op, "axis", -1)), rank + 1)


def _compile_one_hot(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        indices, depth_value, values = _given(op, inputs, 3)
        depth = int(depth_value.reshape(-1)[0])
        axis = _one_hot_axis(op, indices.ndim)
        index = indices.astype(np.int64)
        index = np.where(index < 0, index + depth, index)  # -1 is the last class
        classes = np.arange(depth).reshape(-1, *(1,) * (indices.ndim - axis))
        is_on = np.expand_dims(index, axis) == classes
        return [np.where(is_on, values[1], values[0]).astype(values.dtype, copy=False)]

    return kernel


def _infer_one_hot(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    indices, values = _first(op, inputs), inputs[2]
    assert values is not None, f"{op!r}: values missing"
    depth_value = constant_input(op, inputs, 1, "depth").reshape(-1)
    if depth_value.size != 1 or depth_value[0] < 1:
        raise op_error(op, "expected one positive depth", depth_value.tolist())
    if values.shape != (2,):
        raise op_error(op, "expected values [off, on] of shape [2]", list(values.shape))
    axis = _one_hot_axis(op, len(indices.shape))
    shape = (*indices.shape[:axis], int(depth_value[0]), *indices.shape[axis:])
    return [Meta(shape, values.dtype)]


register(
    "OneHot", "data_movement", compile=_compile_one_hot, infer=_infer_one_hot,
    cost=elementwise_cost("data_movement", 2),  # a compare and a select per output element
)  # fmt: skip


def _top_k_params(op: Op, opset: int) -> tuple[int, bool]:
    largest = attr(op, "largest", 1)
    if largest not in (0, 1):
        raise op_error(op, "expected largest 0 or 1", largest)
    return int(attr(op, "axis", -1)), bool(largest)


def _top_k_count(op: Op, opset: int, k: np.ndarray | None) -> int:
    """K: an attribute to opset 9, then a one-element input."""
    if opset < 10:
        return int(attr(op, "k"))
    assert k is not None, f"{op!r}: K missing"
    return int(k.reshape(-1)[0])


def _compile_top_k(op: Op, opset: int) -> Kernel:
    axis, largest = _top_k_params(op, opset)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        count = _top_k_count(op, opset, inputs[1] if len(inputs) > 1 else None)
        at = normalize_axis(op, axis, x.ndim)
        # stable sorts keep equal values in index order, as ONNX asks: the largest first come
        # from sorting the reversed axis and reversing the order back
        if largest:
            last = x.shape[at] - 1
            ascending = np.argsort(np.flip(x, at), axis=at, kind="stable")
            order = last - np.flip(ascending, at)
        else:
            order = np.argsort(x, axis=at, kind="stable")
        indices = np.take(order, np.arange(count), axis=at)
        return [np.take_along_axis(x, indices, axis=at), indices.astype(np.int64, copy=False)]

    return kernel


def _infer_top_k(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    axis, _ = _top_k_params(op, opset)
    at = normalize_axis(op, axis, len(x.shape))
    k = None if opset < 10 else constant_input(op, inputs, 1, "K")
    count = _top_k_count(op, opset, k)
    if not 0 <= count <= x.shape[at]:
        raise op_error(op, f"expected K from 0 to {x.shape[at]} (axis {at})", count)
    shape = (*x.shape[:at], count, *x.shape[at + 1 :])
    return [Meta(shape, x.dtype), Meta(shape, np.dtype(np.int64))]


def _top_k_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """A sort along the axis: ``n·ceil(log2 n)`` compares per row of ``n``, as flops."""
    x = _first(op, inputs)
    n = x.shape[normalize_axis(op, int(attr(op, "axis", -1)), len(x.shape))] if x.shape else 1
    flops = x.size * max(math.ceil(math.log2(n)), 1) if n else 0
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


register("TopK", "reduction", compile=_compile_top_k, infer=_infer_top_k, cost=_top_k_cost)


def _sequence_axes(op: Op, rank: int) -> tuple[int, int]:
    time, batch = int(attr(op, "time_axis", 0)), int(attr(op, "batch_axis", 1))
    if sorted((time, batch)) != [0, 1]:
        raise op_error(op, "expected time_axis and batch_axis 0 and 1", [time, batch])
    if rank < 2:
        raise op_error(op, "expected an input of rank 2 or more", rank)
    return time, batch


def _compile_reverse_sequence(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, lengths = _given(op, inputs, 2)
        time, _ = _sequence_axes(op, x.ndim)
        steps = x.shape[time]
        t = np.arange(steps).reshape(-1, 1)
        n = lengths.astype(np.int64).reshape(1, -1)
        order = np.where(t < n, n - 1 - t, t)  # [time, batch]: the first n[b] steps reversed
        if time == 1:
            order = order.T
        order = order.reshape(*order.shape, *(1,) * (x.ndim - 2))
        return [np.take_along_axis(x, np.broadcast_to(order, x.shape), axis=time)]

    return kernel


def _infer_reverse_sequence(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, lengths = _given(op, inputs, 2)
    _, batch = _sequence_axes(op, len(x.shape))
    if lengths.shape != (x.shape[batch],):
        expected = f"expected sequence_lens of shape [{x.shape[batch]}] (batch axis {batch})"
        raise op_error(op, expected, list(lengths.shape))
    return [Meta(x.shape, x.dtype)]


register(
    "ReverseSequence", "data_movement", compile=_compile_reverse_sequence,
    infer=_infer_reverse_sequence, cost=movement_cost,
)  # fmt: skip


def _crop_pad_plan(
    op: Op, shape: tuple[int, ...], target: Sequence[int]
) -> tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]:
    """The output shape, the input's centered crop and where it lands in the output: each
    named axis cropped or zero-padded to its target, the odd element at the end."""
    axes = attr(op, "axes", None)
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
        x, target = _given(op, inputs, 2)
        shape, crop, place = _crop_pad_plan(op, x.shape, [int(v) for v in target])
        y = np.zeros(shape, x.dtype)
        y[place] = x[crop]
        return [y]

    return kernel


def _infer_center_crop_pad(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = _first(op, inputs)
    target = [int(v) for v in constant_input(op, inputs, 1, "shape")]
    return [Meta(_crop_pad_plan(op, x.shape, target)[0], x.dtype)]


register(
    "CenterCropPad", "data_movement", compile=_compile_center_crop_pad,
    infer=_infer_center_crop_pad, cost=movement_cost,
)  # fmt: skip
