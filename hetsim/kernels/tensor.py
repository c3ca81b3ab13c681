"""Ops that move data between tensors: Transpose, Concat, Split, Slice, Gather, Tile, Pad.
(Index-driven ones are in `indexing.py`, rearrangements in `layout.py`.)

Each kernel is one numpy call over whole arrays (Slice and Split return views). Parameters that
moved from attributes to inputs across opsets (Slice at 10, Split at 13, Pad at 11) are read with
`versioned`; Tile before opset 6 took a count of copies and an axis where it now takes repeats
per axis (`tile_repeats` reads both). Each op's index arithmetic lives in one function shared by
its kernel and its shape rule, so the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import (
    check_indices,
    check_integer_input,
    constant_input,
    float_attr,
    int_attr,
    integer_input,
    ints_attr,
    normalize_axes,
    normalize_axis,
    op_error,
    str_attr,
)
from hetsim.kernels.costs import movement_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import ALL_INPUTS, Kernel, register
from hetsim.kernels.shape import versioned
from hetsim.units import counted

__all__ = ["first_input", "pad_widths", "slices", "split_sizes", "tile_repeats"]


def first_input(op: Op, inputs: Sequence[Meta | None]) -> Meta:
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return x


def _perm(op: Op, rank: int) -> tuple[int, ...]:
    perm = ints_attr(op, "perm", None)
    if perm is None:
        return tuple(range(rank - 1, -1, -1))
    if sorted(perm) != list(range(rank)):
        raise op_error(op, f"expected a permutation of range({rank})", list(perm))
    return perm


def _compile_transpose(op: Op, opset: int) -> Kernel:
    perm = ints_attr(op, "perm", None)
    return lambda inputs: [np.transpose(inputs[0], perm)]


def _infer_transpose(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    return [Meta(tuple(x.shape[p] for p in _perm(op, len(x.shape))), x.dtype)]


register(
    "Transpose",
    "data_movement",
    compile=_compile_transpose,
    infer=_infer_transpose,
    cost=movement_cost,
)


def _concat_axis(op: Op, opset: int) -> int:
    """Concat's ``axis``: required from opset 4; before it, optional with default 1."""
    return int_attr(op, "axis", 1) if opset < 4 else int_attr(op, "axis")


def _compile_concat(op: Op, opset: int) -> Kernel:
    axis = _concat_axis(op, opset)
    return lambda inputs: [np.concatenate(inputs, axis=axis)]


def _infer_concat(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = [m for m in inputs if m is not None]
    rank = len(metas[0].shape)
    axis = normalize_axis(op, _concat_axis(op, opset), rank)
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
    check_integer_input(op, 1, "split", split, rank=1)
    if split is not None and len(split) > 0:
        sizes = [int(s) for s in split]
        # ONNX: each size >= 0 ([4, -1] sums to 3 yet gave a [.., 4] shape and a [.., -1] one)
        if sum(sizes) != dim or len(sizes) != outputs or min(sizes) < 0:
            raise op_error(op, f"expected {counted(outputs, 'size')} >= 0 summing to {dim}", sizes)
        return sizes
    count = int_attr(op, "num_outputs", outputs)
    if count != outputs:  # ONNX: an output per part; fewer would drop the rest of the data
        raise op_error(op, f"expected num_outputs {outputs} (the number of outputs)", count)
    # num_outputs (opset 18): ceil-sized chunks, the last one smaller; older: equal parts
    chunk = math.ceil(dim / count)
    if "num_outputs" not in op.attrs and chunk * count != dim:
        raise op_error(op, f"expected a dim divisible by {count} outputs", dim)
    return [min(chunk, max(dim - i * chunk, 0)) for i in range(count)]


def _compile_split(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", 0)
    fixed = ints_attr(op, "split", None) if opset < 13 else None
    outputs = len(op.outputs)

    def cuts(dim: int, split: Any) -> list[int]:
        sizes = split_sizes(op, dim, split, outputs)
        return [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]

    cached_cuts = memoize(cuts)  # for speed

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Split: input missing"
        given = inputs[1] if len(inputs) > 1 else None
        split = given if opset >= 13 or (opset < 2 and given is not None) else fixed
        dim = x.shape[axis]
        key = (dim, split.tobytes() if isinstance(split, np.ndarray) else None)
        return np.split(x, cached_cuts(key, dim, split), axis=axis)

    return kernel


def _infer_split(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    axis = normalize_axis(op, int_attr(op, "axis", 0), len(x.shape))
    split = versioned(op, opset, 13, "split", 1, inputs)
    if opset < 2 and len(inputs) > 1 and inputs[1] is not None:  # Split-1: an input, as at 13
        split = integer_input(op, inputs, 1, "split", rank=1)
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
    params = (starts, ends, axes, steps)
    for position, (name, values) in enumerate(zip(_SLICE_PARAMS, params, strict=True), start=1):
        check_integer_input(op, position, name, values, rank=1)
    _check_slice_lengths(op, params)
    rank = len(shape)
    if axes is None and len(starts) > rank:  # the default axes, the first len(starts), past X's
        expected = f"expected at most {rank} starts (no axes given: X's first ones, rank {rank})"
        raise op_error(op, expected, len(starts))
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


def _check_slice_lengths(op: Op, params: Sequence[Any]) -> None:
    """Slice's starts, ends and the axes and steps given are of one length (one value each per
    sliced axis), as the spec and onnxruntime ask."""
    given = [(name, len(v)) for name, v in zip(_SLICE_PARAMS, params, strict=True) if v is not None]
    if len({n for _, n in given}) > 1:
        names, lengths = zip(*given, strict=True)
        expected = f"expected {', '.join(names[:-1])} and {names[-1]} of one length"
        got = f"lengths {', '.join(map(str, lengths[:-1]))} and {lengths[-1]}"
        raise op_error(op, expected, got)


def _slice_attrs(op: Op) -> list[tuple[int, ...] | None]:
    """Slice-1's starts and ends (required) and axes attributes, which became inputs at 10."""
    return [ints_attr(op, "starts"), ints_attr(op, "ends"), ints_attr(op, "axes", None)]


def _compile_slice(op: Op, opset: int) -> Kernel:
    index = memoize(lambda shape, *params: slices(op, shape, *params))  # for speed
    if opset < 10:
        fixed = _slice_attrs(op)
        return lambda inputs: [inputs[0][index(inputs[0].shape, inputs[0].shape, *fixed, None)]]

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Slice: input missing"
        params = [*inputs[1:], None, None][:4]
        key = (x.shape, *(None if p is None else p.tobytes() for p in params))
        return [x[index(key, x.shape, *params)]]

    return kernel


def _infer_slice(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    if opset < 10:
        params = [*_slice_attrs(op), None]
    else:
        params = [versioned(op, opset, 10, n, i + 1, inputs) for i, n in enumerate(_SLICE_PARAMS)]
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
    required={1: 1, 10: 3},
)


def _compile_gather(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", 0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, indices = inputs[0], inputs[1]
        assert x is not None
        assert indices is not None
        check_indices(op, indices, x.shape, axis)
        return [np.take(x, indices, axis=axis)]

    return kernel


def _infer_gather(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, indices = first_input(op, inputs), inputs[1]
    assert indices is not None, f"{op!r}: indices missing"
    axis = normalize_axis(op, int_attr(op, "axis", 0), len(x.shape))
    if indices.value is not None:  # a constant: refused before the run, timing mode too
        check_indices(op, indices.value, x.shape, axis)
    return [Meta((*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]), x.dtype)]


register(
    "Gather",
    "data_movement",
    compile=_compile_gather,
    infer=_infer_gather,
    cost=movement_cost,
    required=2,
)


def tile_repeats(op: Op, opset: int, rank: int, values: Sequence[Any]) -> list[int]:
    """The repeats per axis of a Tile with an input of rank `rank`: its ``repeats`` input (one
    non-negative integer per axis) from opset 6; before it, its ``tiles`` copies along ``axis``
    (two one-element inputs typed as the data, so floats that must hold integers).

    Examples
    --------
    >>> tile1 = Op("Tile", "t", ("x", "n", "a"), ("y",))
    >>> tile_repeats(tile1, 1, 3, [np.array(4.0), np.array(-1.0)])
    [1, 1, 4]
    """
    if opset < 6:
        tiles, axis = (
            _whole_scalar(op, i, what, v)
            for i, what, v in zip((1, 2), ("tiles", "axis"), values, strict=True)
        )
        repeats = [1] * rank
        repeats[normalize_axis(op, axis, rank)] = tiles
    else:
        check_integer_input(op, 1, "repeats", values[0], rank=1)
        repeats = [int(r) for r in values[0]]
    if len(repeats) != rank or min(repeats, default=0) < 0:
        raise op_error(op, f"expected {rank} non-negative repeats", repeats)
    return repeats


def _whole_scalar(op: Op, index: int, what: str, value: Any) -> int:
    """Tile-1's `what` (input `index`, required: `register`): one element holding a whole
    number."""
    array = np.asarray(value)
    number = array.ravel()[0] if array.size == 1 and array.dtype.kind in "iuf" else None
    if number is None or not np.isfinite(number) or number != int(number):
        raise op_error(op, f"expected input {index} ({what}) one whole number", array.tolist())
    return int(number)


def _compile_tile(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input missing"
        assert inputs[1] is not None, f"{op!r}: repeats missing"
        return [np.tile(x, tile_repeats(op, opset, x.ndim, inputs[1:]))]

    return kernel


def _infer_tile(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = first_input(op, inputs)
    if opset < 6:
        values = [constant_input(op, inputs, i, what) for i, what in ((1, "tiles"), (2, "axis"))]
    else:
        values = [integer_input(op, inputs, 1, "repeats", rank=1)]
    repeats = tile_repeats(op, opset, len(x.shape), values)
    return [Meta(tuple(d * r for d, r in zip(x.shape, repeats, strict=True)), x.dtype)]


register(
    "Tile",
    "data_movement",
    compile=_compile_tile,
    infer=_infer_tile,
    cost=movement_cost,
    required={1: 3, 6: 2},  # Tile-1's tiles and axis, then repeats
)

_PAD_MODES = ("constant", "edge", "reflect", "wrap")


def pad_widths(op: Op, rank: int, pads: Any, axes: Any) -> list[tuple[int, int]]:
    """(before, after) per axis from ONNX pads ``[b1, b2, ..., e1, e2, ...]``; negative crops.

    Examples
    --------
    >>> pad_widths(Op("Pad", "p", ("x",), ("y",)), 3, [1, -1, 2, 0], [-1, 0])
    [(-1, 0), (0, 0), (1, 2)]
    """
    check_integer_input(op, 1, "pads", pads, rank=1)
    check_integer_input(op, 3, "axes", axes, rank=1)
    axes = range(rank) if axes is None else normalize_axes(op, axes, rank)
    pads = [int(p) for p in pads]
    if len(pads) != 2 * len(axes):
        raise op_error(op, f"expected {2 * len(axes)} pads", len(pads))
    widths = [(0, 0)] * rank
    for i, axis in enumerate(axes):
        widths[axis] = (pads[i], pads[i + len(axes)])
    return widths


def _pad_params(op: Op, opset: int) -> tuple[str, float]:
    mode = str_attr(op, "mode", "constant")
    if mode not in _PAD_MODES:
        raise op_error(op, f"expected a mode in {list(_PAD_MODES)}", repr(mode))
    return mode, float_attr(op, "value", 0.0) if opset < 11 else 0.0


def _pad(x: np.ndarray, widths: list[tuple[int, int]], mode: Any, value: Any) -> np.ndarray:
    if mode == "constant":
        return _pad_constant(x, widths, value)
    # negative pads crop first; numpy's pad takes only the non-negative rest
    crop = tuple(
        slice(max(-b, 0), d - max(-e, 0)) for (b, e), d in zip(widths, x.shape, strict=True)
    )
    padded: np.ndarray = np.pad(x[crop], [(max(b, 0), max(e, 0)) for b, e in widths], mode=mode)
    return padded


def _pad_constant(x: np.ndarray, widths: list[tuple[int, int]], value: Any) -> np.ndarray:
    """`x` at offset ``begin`` of a ``d + begin + end`` axis filled with `value`, per axis: what
    lies outside is cut. A begin pad that cuts more than the axis holds, against a growing end
    (``d`` 2, pads -3 and +2: one element, `value`), had cut first and then grown to 2."""
    shape = [d + b + e for d, (b, e) in zip(x.shape, widths, strict=True)]
    out = np.full(shape, value, x.dtype)
    src, dst = [], []
    for d, (b, _), n in zip(x.shape, widths, shape, strict=True):
        low, high = max(0, -b), min(d, n - b)  # the input's indices that land in the output
        if low >= high:
            return out
        src.append(slice(low, high))
        dst.append(slice(low + b, high + b))
    out[tuple(dst)] = x[tuple(src)]
    return out


def _pad_attr(op: Op, opset: int) -> tuple[int, ...]:
    """Pad's required pads attribute, before opset 11 made it an input (``paddings`` at 1)."""
    return ints_attr(op, "pads" if opset >= 2 else "paddings")


def _compile_pad(op: Op, opset: int) -> Kernel:
    mode, attr_value = _pad_params(op, opset)
    if opset < 11:
        pads = _pad_attr(op, opset)
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
    x = first_input(op, inputs)
    _pad_params(op, opset)
    pads: Sequence[int] | np.ndarray | None
    if opset < 11:
        pads = _pad_attr(op, opset)
        axes = None
    else:
        pads = integer_input(op, inputs, 1, "pads", rank=1)
        axes = versioned(op, opset, 18, "axes", 3, inputs)
        value = inputs[2] if len(inputs) > 2 else None
        if value is not None and value.size != 1:  # a scalar, or [1] as onnxruntime takes it
            expected = "expected input 2 (constant_value) of one element"
            raise op_error(op, expected, f"shape {list(value.shape)}")
    widths = pad_widths(op, len(x.shape), pads, axes)
    shape = tuple(d + b + e for d, (b, e) in zip(x.shape, widths, strict=True))
    if min(shape, default=0) < 0:
        raise op_error(op, f"expected pads that fit {list(x.shape)}", [w for w in widths])
    mode, _ = _pad_params(op, opset)
    if mode != "constant":  # cut first, then extended from what is left (`_pad`)
        for axis, (d, (b, e)) in enumerate(zip(x.shape, widths, strict=True)):
            kept = d - max(-b, 0) - max(-e, 0)
            if kept < 0 or (kept == 0 and max(b, e) > 0):
                expected = (
                    f"expected cuts that leave {mode} mode values to extend on axis {axis} (of {d})"
                )
                raise op_error(op, expected, f"pads {b} and {e}")
    return [Meta(shape, x.dtype)]


register(
    "Pad", "data_movement", compile=_compile_pad, infer=_infer_pad, cost=movement_cost,
    one_type=(0, 2),  # the data and the constant value; pads and axes are int64
    required={1: 1, 11: 2},
)  # fmt: skip
