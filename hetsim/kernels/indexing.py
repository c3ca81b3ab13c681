"""Ops that read or write tensors at computed indices: GatherElements, GatherND, ScatterND,
ScatterElements, OneHot and TopK.

Each kernel is a few numpy calls over whole arrays (`np.take_along_axis`, fancy indexing,
``ufunc.at`` for a scatter's reduction, a stable `np.argsort`); negative indices count from the
end, as ONNX allows. A scatter writes into a copy of its data; duplicate indices are combined in
turn by the reduction (``none``: the last write wins, as numpy's assignment does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_indices,
    check_integer_input,
    constant_input,
    flag_attr,
    int_attr,
    normalize_axis,
    op_error,
    present,
)
from hetsim.kernels.costs import Cost, elementwise_cost, movement_cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.tensor import first_input

__all__: list[str] = []


def _compile_gather_elements(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", 0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, indices = inputs[0], inputs[1]
        assert x is not None
        assert indices is not None
        # the output has the indices' shape: off the axis, indices may be shorter than x (only
        # that part of x is read), where np.take_along_axis would broadcast them to x's size
        at = axis + x.ndim if axis < 0 else axis
        check_indices(op, indices, x.shape, at)
        part = tuple(
            slice(None) if dim == at else slice(0, size) for dim, size in enumerate(indices.shape)
        )
        return [np.take_along_axis(x[part], indices, axis=at)]

    return kernel


def _infer_gather_elements(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, indices = first_input(op, inputs), inputs[1]
    assert indices is not None, f"{op!r}: indices missing"
    if len(indices.shape) != len(x.shape):
        raise op_error(op, f"expected indices of rank {len(x.shape)}", len(indices.shape))
    axis = normalize_axis(op, int_attr(op, "axis", 0), len(x.shape))
    _check_within(op, indices.shape, x.shape, axis)
    if indices.value is not None:  # a constant: refused before the run, timing mode too
        check_indices(op, indices.value, x.shape, axis)
    return [Meta(indices.shape, x.dtype)]


def _check_tuples(op: Op, indices: np.ndarray, shape: tuple[int, ...], batch: int) -> None:
    """GatherND's and ScatterND's index tuples (the last axis of `indices`), element j into
    `shape`'s axis ``batch + j``."""
    for j in range(indices.shape[-1] if indices.ndim else 0):
        check_indices(op, indices[..., j], shape, batch + j)


def _check_within(op: Op, shape: tuple[Any, ...], data: tuple[Any, ...], axis: int) -> None:
    """GatherElements' and ScatterElements' indices (of rank data's) may be no longer than data
    off `axis`: the spec reads and writes data at their positions there (ScatterElements had
    failed inside its kernel with an IndexError)."""
    longer = [
        dim
        for dim, (n, size) in enumerate(zip(shape, data, strict=True))
        if dim != axis and isinstance(n, int) and isinstance(size, int) and n > size
    ]
    if longer:
        expected = f"expected indices no longer than data off the axis (data {list(data)})"
        raise op_error(op, expected, f"shape {list(shape)}")


register(
    "GatherElements",
    "data_movement",
    compile=_compile_gather_elements,
    infer=_infer_gather_elements,
    cost=movement_cost,
    required=2,
)


def _batch_dims(op: Op, data_rank: int, indices_rank: int) -> int:
    batch = int_attr(op, "batch_dims", 0)
    if not 0 <= batch < min(data_rank, indices_rank):
        expected = f"expected batch_dims in [0, {min(data_rank, indices_rank) - 1}]"
        raise op_error(op, expected, batch)
    return batch


def _compile_gather_nd(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, indices = present(op, inputs, 2)
        batch = _batch_dims(op, data.ndim, indices.ndim)
        _check_tuples(op, indices, data.shape, batch)
        outer = indices.shape[:batch]
        count = math.prod(outer)
        flat_data = data.reshape(count, *data.shape[batch:])
        flat_indices = indices.reshape(count, -1, indices.shape[-1])
        rows = np.arange(count).reshape(count, 1)
        picked = flat_data[(rows, *np.moveaxis(flat_indices, -1, 0))]
        # a tuple: a rank-0 output (whole index tuples into the data) has no sizes to pass
        return [picked.reshape((*indices.shape[:-1], *data.shape[batch + indices.shape[-1] :]))]

    return kernel


def _infer_gather_nd(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices = first_input(op, inputs), inputs[1]
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
    if indices.value is not None:
        _check_tuples(op, indices.value, data.shape, batch)
    return [Meta((*indices.shape[:-1], *data.shape[batch + depth :]), data.dtype)]


register(
    "GatherND", "data_movement", compile=_compile_gather_nd, infer=_infer_gather_nd,
    cost=movement_cost, required=2,
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
        data, indices, updates = present(op, inputs, 3)
        _check_tuples(op, indices, data.shape, 0)
        return [_scattered(data, tuple(np.moveaxis(indices, -1, 0)), updates, ufunc)]

    return kernel


def _infer_scatter_nd(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices, updates = present(op, inputs, 3)
    _scatter_reduction(op)
    depth = indices.shape[-1] if indices.shape else 0
    expected_updates = (*indices.shape[:-1], *data.shape[depth:])
    if not 1 <= depth <= len(data.shape) or updates.shape != expected_updates:
        expected = f"expected updates of shape {list(expected_updates)} for index tuples of {depth}"
        raise op_error(op, expected, list(updates.shape))
    if indices.value is not None:
        _check_tuples(op, indices.value, data.shape, 0)
    return [Meta(data.shape, data.dtype)]


def _compile_scatter_elements(op: Op, opset: int) -> Kernel:
    ufunc = _scatter_reduction(op)
    axis = int_attr(op, "axis", 0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, indices, updates = present(op, inputs, 3)
        at = normalize_axis(op, axis, data.ndim)
        check_indices(op, indices, data.shape, at)
        where: list[np.ndarray] = list(np.indices(indices.shape, sparse=True))
        where[at] = indices
        return [_scattered(data, tuple(where), updates, ufunc)]

    return kernel


def _infer_scatter_elements(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data, indices, updates = present(op, inputs, 3)
    _scatter_reduction(op)
    axis = normalize_axis(op, int_attr(op, "axis", 0), len(data.shape))
    if updates.shape != indices.shape or len(indices.shape) != len(data.shape):
        expected = f"expected indices and updates of one shape, of rank {len(data.shape)}"
        raise op_error(op, expected, f"{list(indices.shape)} and {list(updates.shape)}")
    _check_within(op, indices.shape, data.shape, axis)
    if indices.value is not None:
        check_indices(op, indices.value, data.shape, axis)
    return [Meta(data.shape, data.dtype)]


register(
    "ScatterND", "data_movement", compile=_compile_scatter_nd, infer=_infer_scatter_nd,
    cost=movement_cost, one_type=(0, 2), required=3,
)  # fmt: skip
register(
    "ScatterElements", "data_movement", compile=_compile_scatter_elements,
    infer=_infer_scatter_elements, cost=movement_cost, one_type=(0, 2), required=3,
)  # fmt: skip


def _one_hot_axis(op: Op, rank: int) -> int:
    return normalize_axis(op, int_attr(op, "axis", -1), rank + 1)


def _compile_one_hot(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        indices, depth_value, values = present(op, inputs, 3)
        depth = int(depth_value.reshape(-1)[0])
        axis = _one_hot_axis(op, indices.ndim)
        index = indices.astype(np.int64)
        index = np.where(index < 0, index + depth, index)  # -1 is the last class
        classes = np.arange(depth).reshape(-1, *(1,) * (indices.ndim - axis))
        is_on = np.expand_dims(index, axis) == classes
        return [np.where(is_on, values[1], values[0]).astype(values.dtype, copy=False)]

    return kernel


def _infer_one_hot(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    indices, values = first_input(op, inputs), inputs[2]
    assert values is not None, f"{op!r}: values missing"
    if not indices.shape:  # as ONNX's shape inference and onnxruntime refuse it
        raise op_error(op, "expected indices of rank >= 1", "shape []")
    depth_value = constant_input(op, inputs, 1, "depth").reshape(-1)
    if depth_value.size == 1 and not np.isfinite(depth_value[0]):
        raise op_error(op, "expected a finite depth", depth_value[0])
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
    required=3,
)  # fmt: skip


def _top_k_params(op: Op, opset: int) -> tuple[int, bool]:
    flag_attr(op, "sorted", 1)  # checked only: the kernel always sorts, one order sorted=0 allows
    return int_attr(op, "axis", -1), flag_attr(op, "largest", 1)


def _check_k_shape(op: Op, k: Meta | np.ndarray) -> None:
    """K is "a 1-D tensor containing a single positive value": a scalar, [1, 1] or [2] had
    passed (the first element read), and onnxruntime refuses each."""
    if k.shape != (1,):
        raise op_error(op, "expected input 1 (K) of shape [1]", f"shape {list(k.shape)}")


def _top_k_count(op: Op, opset: int, k: np.ndarray | None) -> int:
    """K: an attribute to opset 9, then a one-element 1-D input."""
    if opset < 10:
        return int_attr(op, "k")
    assert k is not None, f"{op!r}: K missing"
    check_integer_input(op, 1, "K", k)
    _check_k_shape(op, k)
    return int(k[0])


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
    x = first_input(op, inputs)
    axis, _ = _top_k_params(op, opset)
    at = normalize_axis(op, axis, len(x.shape))
    k = None
    if opset >= 10:
        k_meta = inputs[1]
        assert k_meta is not None, f"{op!r}: K missing"
        check_integer_input(op, 1, "K", k_meta)
        _check_k_shape(op, k_meta)  # before its value is read: it may be unknown
        k = constant_input(op, inputs, 1, "K")
    count = _top_k_count(op, opset, k)
    if not 0 <= count <= x.shape[at]:
        raise op_error(op, f"expected K from 0 to {x.shape[at]} (axis {at})", count)
    shape = (*x.shape[:at], count, *x.shape[at + 1 :])
    return [Meta(shape, x.dtype), Meta(shape, np.dtype(np.int64))]


def _top_k_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """A sort along the axis: ``n·ceil(log2 n)`` compares per row of ``n``, as flops."""
    x = first_input(op, inputs)
    n = x.shape[normalize_axis(op, int_attr(op, "axis", -1), len(x.shape))] if x.shape else 1
    flops = x.size * math.ceil(math.log2(n)) if n > 1 else 0  # a row of one needs no compare
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


register(
    "TopK",
    "reduction",
    compile=_compile_top_k,
    infer=_infer_top_k,
    cost=_top_k_cost,
    required={1: 1, 10: 2},
)
