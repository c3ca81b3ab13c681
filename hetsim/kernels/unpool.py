"""MaxUnpool and Col2Im: the ops that put values back into an image, undoing a max pool or
folding sliding blocks back into an image.

- MaxUnpool zeroes the output and scatters ``X`` to the flat positions ``I`` of the unpooled
  shape ``(in - 1)·stride - (pad_begin + pad_end) + kernel``, which then sits at the origin of a
  larger ``output_shape`` if one is given. A position outside the unpooled shape is refused,
  a negative one too (onnx's reference counts it from the end, numpy's way).
- Col2Im adds each of the ``prod(block_shape)`` taps' columns into a strided view of the padded
  image, one vectorized add per tap, then crops the pads.

Costs:

- MaxUnpool, ``data_movement``: no flops; reads X and I, writes the output twice (zeroed, then
  the values scattered): ``bytes_written = 2·Y.nbytes``;
- Col2Im, ``data_movement``: one add per input element; reads the input, writes the output.

RoiAlign, the vision op that pools regions of interest, lives in `vision.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import check_integer_input, integer_input, ints_attr, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = ["col2im", "max_unpool"]


# --- MaxUnpool --------------------------------------------------------------------------------


def _ints(op: Op, name: str, default: Sequence[int] | None, count: int) -> tuple[int, ...]:
    """Attribute `name`: `count` ints (`default` when absent), checked."""
    value = ints_attr(op, name) if default is None else ints_attr(op, name, default)
    if len(value) != count:
        raise op_error(op, f"expected {count} values of {name}", list(value))
    return value


def _unpool_attrs(op: Op) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(kernel_shape, strides, pads)``, checked; pads are begins then ends."""
    kernel = ints_attr(op, "kernel_shape")
    dims = len(kernel)
    strides = _ints(op, "strides", (1,) * dims, dims)
    pads = _ints(op, "pads", (0,) * 2 * dims, 2 * dims)
    if min(kernel, default=1) < 1 or min(strides, default=1) < 1 or min(pads, default=0) < 0:
        expected = "expected kernel_shape and strides >= 1 and pads >= 0"
        raise op_error(op, expected, f"{list(kernel)}, {list(strides)}, {list(pads)}")
    return kernel, strides, pads


def _unpooled_shape(
    shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
) -> tuple[int, ...]:
    """``(in - 1)·stride - (pad_begin + pad_end) + kernel`` per spatial dim."""
    dims = len(kernel)
    spatial = (
        (n - 1) * s - (pads[i] + pads[dims + i]) + k
        for i, (n, k, s) in enumerate(zip(shape[2:], kernel, strides, strict=True))
    )
    return (*shape[:2], *spatial)


def max_unpool(x: np.ndarray, indices: np.ndarray, unpooled: Sequence[int]) -> np.ndarray:
    """`x` scattered to the flat positions `indices` of a zeroed `unpooled`-shaped output.

    Examples
    --------
    >>> max_unpool(np.array([[[5.0, 6.0]]]), np.array([[[1, 2]]]), (1, 1, 4)).tolist()
    [[[0.0, 5.0, 6.0, 0.0]]]
    """
    y = np.zeros(math.prod(unpooled), x.dtype)
    y[indices.reshape(-1)] = x.reshape(-1)
    return y.reshape(tuple(unpooled))


def _check_positions(op: Op, indices: np.ndarray, size: int, unpooled: Sequence[int]) -> None:
    """Refuse an index of `I` outside the unpooled output: a negative one had counted from its
    end (numpy's indexing), a silently wrong scatter; a large one failed inside numpy."""
    if indices.size == 0:
        return
    bad = (indices < 0) | (indices >= size)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise op_error(
            op,
            f"expected I's flat positions in [0, {size}) of the unpooled output {list(unpooled)}",
            f"{int(indices[at])} at I{list(at)}",
        )


def _compile_max_unpool(op: Op, opset: int) -> Kernel:
    kernel_shape, strides, pads = _unpool_attrs(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, indices = inputs[0], inputs[1]
        assert x is not None
        assert indices is not None
        unpooled = _unpooled_shape(x.shape, kernel_shape, strides, pads)
        _check_positions(op, indices, math.prod(unpooled), unpooled)
        y = max_unpool(x, indices, unpooled)
        wanted = inputs[2] if len(inputs) > 2 else None
        check_integer_input(op, 2, "output_shape", wanted, rank=1)
        if wanted is None or tuple(int(n) for n in wanted) == y.shape:
            return [y]
        out = np.zeros(tuple(int(n) for n in wanted), x.dtype)
        out[tuple(slice(0, n) for n in y.shape)] = y
        return [out]

    return kernel


def _infer_max_unpool(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    kernel_shape, strides, pads = _unpool_attrs(op)
    x, indices = inputs[0], inputs[1] if len(inputs) > 1 else None
    assert x is not None, f"{op!r}: X is required"
    if indices is None:
        raise op_error(op, "expected 2 or 3 inputs (X, I, output_shape)", len(inputs))
    if len(x.shape) != len(kernel_shape) + 2:
        rank = len(kernel_shape) + 2
        raise op_error(op, f"expected a rank-{rank} X", f"shape {list(x.shape)}")
    if indices.shape != x.shape:
        raise op_error(op, f"expected I of X's shape {list(x.shape)}", f"{list(indices.shape)}")
    shape = _unpooled_shape(x.shape, kernel_shape, strides, pads)
    if min(shape[2:], default=1) < 1:
        raise op_error(op, "expected a positive unpooled shape", list(shape))
    if len(inputs) > 2 and inputs[2] is not None:
        wanted = tuple(int(n) for n in integer_input(op, inputs, 2, "output_shape", rank=1))
        is_larger = len(wanted) == len(shape) and all(
            w >= n for w, n in zip(wanted, shape, strict=True)
        )
        if not is_larger:
            expected = f"expected an output_shape of rank {len(shape)}, each dim >= {list(shape)}"
            raise op_error(op, expected, list(wanted))
        shape = wanted
    return [Meta(shape, x.dtype)]


def _cost_max_unpool(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """No flops; the output is written twice: zeroed, then the values scattered."""
    return Cost(0.0, nbytes(inputs), 2 * nbytes(outputs), "data_movement")


register(
    "MaxUnpool",
    "data_movement",
    compile=_compile_max_unpool,
    infer=_infer_max_unpool,
    cost=_cost_max_unpool,
    one_type=(1, 2),
    required=2,
)


# --- Col2Im -----------------------------------------------------------------------------------


def _col2im_attrs(op: Op, dims: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(dilations, pads, strides)`` for `dims` spatial dims, checked."""
    dilations = _ints(op, "dilations", (1,) * dims, dims)
    pads = _ints(op, "pads", (0,) * 2 * dims, 2 * dims)
    strides = _ints(op, "strides", (1,) * dims, dims)
    if min(dilations) < 1 or min(strides) < 1 or min(pads) < 0:
        expected = "expected dilations and strides >= 1 and pads >= 0"
        raise op_error(op, expected, f"{list(dilations)}, {list(strides)}, {list(pads)}")
    return dilations, pads, strides


def _blocks(
    image: Sequence[int],
    block: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    strides: Sequence[int],
) -> tuple[int, ...]:
    """Sliding blocks per dim: ``floor((n + b + e - ((k - 1)·d + 1)) / s) + 1``."""
    dims = len(image)
    return tuple(
        (n + pads[i] + pads[dims + i] - ((k - 1) * d + 1)) // s + 1
        for i, (n, k, d, s) in enumerate(zip(image, block, dilations, strides, strict=True))
    )


def col2im(
    data: np.ndarray,
    image: Sequence[int],
    block: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    strides: Sequence[int],
) -> np.ndarray:
    """The blocks of `data` ``(N, C·prod(block), L)`` summed into images ``(N, C, *image)``.

    Examples
    --------
    >>> data = np.ones((1, 2, 2), np.float32)  # a 2-tap block sliding over 3 pixels
    >>> col2im(data, (3,), (2,), (1,), (0, 0), (1,)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    dims = len(image)
    blocks = _blocks(image, block, dilations, pads, strides)
    taps = math.prod(block)
    n, channels = data.shape[0], data.shape[1] // taps
    columns = data.reshape(n, channels, taps, *blocks)
    padded = np.zeros((n, channels, *(image[i] + pads[i] + pads[dims + i] for i in range(dims))))
    padded = padded.astype(data.dtype)
    for tap, offsets in enumerate(np.ndindex(*block)):
        where = tuple(
            slice(o * d, o * d + (b - 1) * s + 1, s)
            for o, d, s, b in zip(offsets, dilations, strides, blocks, strict=True)
        )
        padded[(slice(None), slice(None), *where)] += columns[:, :, tap]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(dims))
    return np.ascontiguousarray(padded[(slice(None), slice(None), *crop)])


def _compile_col2im(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        data, image, block = inputs[:3]
        assert data is not None
        assert image is not None
        assert block is not None
        check_integer_input(op, 1, "image_shape", image, rank=1)
        check_integer_input(op, 2, "block_shape", block, rank=1)
        image_shape, block_shape = tuple(map(int, image)), tuple(map(int, block))
        dilations, pads, strides = _col2im_attrs(op, len(image_shape))
        return [col2im(data, image_shape, block_shape, dilations, pads, strides)]

    return kernel


def _infer_col2im(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    data = inputs[0]
    assert data is not None, f"{op!r}: input is required"
    image = tuple(int(v) for v in integer_input(op, inputs, 1, "image_shape", rank=1))
    block = tuple(int(v) for v in integer_input(op, inputs, 2, "block_shape", rank=1))
    if len(block) != len(image) or not image:
        expected = "expected image_shape and block_shape of one length"
        raise op_error(op, expected, f"{list(image)} and {list(block)}")
    if min(image) < 1 or min(block) < 1:
        raise op_error(op, "expected positive image_shape and block_shape", f"{image}, {block}")
    dilations, pads, strides = _col2im_attrs(op, len(image))
    if len(data.shape) != 3:
        raise op_error(op, "expected a rank-3 input (N, C·prod(block), L)", list(data.shape))
    taps = math.prod(block)
    if data.shape[1] % taps:
        expected = f"expected input dim 1 divisible by prod(block_shape) {taps}"
        raise op_error(op, expected, data.shape[1])
    blocks = _blocks(image, block, dilations, pads, strides)
    if min(blocks) < 1 or data.shape[2] != math.prod(blocks):
        expected = f"expected input dim 2 to be the number of blocks {math.prod(blocks)}"
        raise op_error(op, f"{expected} ({' × '.join(map(str, blocks))})", data.shape[2])
    return [Meta((data.shape[0], data.shape[1] // taps, *image), data.dtype)]


def _cost_col2im(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """One add per input element; the input read, the output written."""
    data = inputs[0]
    assert data is not None, f"{op!r}: input is required"
    return Cost(float(data.size), nbytes(inputs), nbytes(outputs), "data_movement")


register(
    "Col2Im",
    "data_movement",
    compile=_compile_col2im,
    infer=_infer_col2im,
    cost=_cost_col2im,
    one_type=(1, 2),  # image_shape and block_shape: both tensor(int64)
    required=3,
)
