"""Neural-network ops: Gemm, MatMul, Einsum, Softmax, LogSoftmax and Hardmax here; importing it
registers the rest.

`conv.py` (Conv), `conv_transpose.py` (ConvTranspose), `pool.py` (MaxPool, AveragePool, the
global pools), `norm.py` (BatchNormalization, InstanceNormalization, LayerNormalization, ...) and
`lrn.py` (LRN) are imported below, so ``import hetsim.kernels.nn`` registers every NN op.
Element-wise, reduction and tensor ops live in their own modules.

Softmax, LogSoftmax and Hardmax follow the op's version: before opset 13 the input is flattened
to 2-D at ``axis`` (default 1) and normalized along the second dim, which is what opset-9 models
such as the ONNX zoo's squeezenet expect; from opset 13 it is normalized along ``axis`` (default
-1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np

from hetsim.ir import Op
from hetsim.kernels import conv, conv_transpose, lrn, norm, pool
from hetsim.kernels.arrays import accumulating
from hetsim.kernels.checks import (
    broadcast_shape,
    flag_attr,
    float_attr,
    int_attr,
    normalize_axis,
    op_error,
    str_attr,
)
from hetsim.kernels.costs import Cost, elementwise_cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import ALL_INPUTS, Kernel, register

__all__ = ["NN_MODULES", "cost_matmul", "gemm", "infer_matmul", "log_softmax", "softmax"]

NN_MODULES = (conv, conv_transpose, pool, norm, lrn)
"""The modules whose ops this one registers by importing them."""


def gemm(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray | None,
    alpha: float = 1.0,
    beta: float = 1.0,
    trans_a: bool = False,
    trans_b: bool = False,
) -> np.ndarray:
    """``alpha · A' @ B' + beta · C``, where ``'`` transposes when asked; C broadcasts.

    Examples
    --------
    >>> a = np.array([[1.0, 2.0]], np.float32)
    >>> gemm(a, np.eye(2, dtype=np.float32), np.array([10.0], np.float32), 2.0, 0.5).tolist()
    [[7.0, 9.0]]

    On integers, an alpha or beta that is not a whole number scales in float64 and the sum is
    cast back, toward zero (onnx's reference; onnxruntime has no integer Gemm): casting 0.5 to
    the integer type first had made it 0.

    >>> gemm(np.array([[1, 2, 3]]), np.ones((3, 1), np.int64), np.array([1]), 0.5).tolist()
    [[4]]
    """
    y: np.ndarray = np.matmul(a.T if trans_a else a, b.T if trans_b else b)
    if y.dtype.kind in "iu" and not (float(alpha).is_integer() and float(beta).is_integer()):
        exact = y * alpha  # float64
        if c is not None and beta != 0.0:
            exact += c * beta
        return exact.astype(y.dtype)
    if alpha != 1.0:
        y *= y.dtype.type(alpha)
    if c is not None and beta != 0.0:
        y += c if beta == 1.0 else c * c.dtype.type(beta)
    return y


def _gemm_flags(op: Op) -> tuple[float, float, bool, bool]:
    return (
        float_attr(op, "alpha", 1.0),
        float_attr(op, "beta", 1.0),
        flag_attr(op, "transA", 0),
        flag_attr(op, "transB", 0),
    )


def _compile_gemm(op: Op, opset: int) -> Kernel:
    alpha, beta, trans_a, trans_b = _gemm_flags(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, b = inputs[0], inputs[1]
        assert a is not None, f"{op!r}: input a is required"
        assert b is not None, f"{op!r}: input b is required"
        c = inputs[2] if len(inputs) > 2 else None
        return [gemm(a, b, c, alpha, beta, trans_a, trans_b)]

    return kernel


def _infer_gemm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b = inputs[0], inputs[1]
    assert a is not None, f"{op!r}: input a is required"
    assert b is not None, f"{op!r}: input b is required"
    _, _, trans_a, trans_b = _gemm_flags(op)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise op_error(op, "expected 2-D A and B", f"shapes {list(a.shape)} and {list(b.shape)}")
    m, k = a.shape[::-1] if trans_a else a.shape
    k_b, n = b.shape[::-1] if trans_b else b.shape
    if k != k_b:
        shown = f"A' {[m, k]} and B' {[k_b, n]}"
        raise op_error(op, "expected inner dims of A' and B' to match", shown)
    c = inputs[2] if len(inputs) > 2 else None
    if c is not None and broadcast_shape(op, c.shape, (m, n)) != (m, n):
        raise op_error(op, f"expected C to broadcast to {[m, n]}", f"shape {list(c.shape)}")
    return [Meta((m, n), a.dtype)]


def _cost_gemm(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2·M·N·K`` flops (2 per MAC), plus ``M·N`` each for alpha ≠ 1 and for adding C;
    `Cost.gemm_dim` the smallest of M, N and K."""
    a = inputs[0]
    assert a is not None, f"{op!r}: A is required"
    alpha, _, trans_a, _ = _gemm_flags(op)
    k = a.shape[0] if trans_a else a.shape[1]
    m, n = outputs[0].shape
    size = outputs[0].size
    flops = 2 * size * k + (size if alpha != 1.0 else 0)
    if len(inputs) > 2 and inputs[2] is not None:
        flops += size
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "matmul", gemm_dim=min(m, n, k))


def _compile_matmul(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, b = inputs[0], inputs[1]
        assert a is not None, f"{op!r}: input a is required"
        assert b is not None, f"{op!r}: input b is required"
        return [np.matmul(a, b)]

    return kernel


def infer_matmul(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """numpy's matmul rule: a 1-D operand gains a dim that the result drops; batches broadcast."""
    a, b = inputs[0], inputs[1]
    assert a is not None, f"{op!r}: input a is required"
    assert b is not None, f"{op!r}: input b is required"
    if not a.shape or not b.shape:
        raise op_error(op, "expected A and B of rank >= 1", f"{list(a.shape)} and {list(b.shape)}")
    left = (1, *a.shape) if len(a.shape) == 1 else a.shape
    right = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    if left[-1] != right[-2]:
        shown = f"{list(a.shape)} and {list(b.shape)}"
        raise op_error(op, "expected the last dim of A to match the rows of B", shown)
    batch = broadcast_shape(op, left[:-2], right[:-2])
    rows = () if len(a.shape) == 1 else (left[-2],)
    cols = () if len(b.shape) == 1 else (right[-1],)
    return [Meta((*batch, *rows, *cols), a.dtype)]


def cost_matmul(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2·prod(batch)·M·N·K`` flops: 2 per MAC, K the last dim of A; `Cost.gemm_dim` the
    smallest of M, N and K of one GEMM of the batch (a vector operand's M or N is 1)."""
    a, b = inputs[0], inputs[1]
    assert a is not None, f"{op!r}: A is required"
    assert b is not None, f"{op!r}: B is required"
    k = a.shape[-1]
    m = a.shape[-2] if len(a.shape) > 1 else 1
    n = b.shape[-1] if len(b.shape) > 1 else 1
    flops = 2 * outputs[0].size * k
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "matmul", gemm_dim=min(m, n, k))


ELLIPSIS = "..."


def _einsum_terms(op: Op, count: int) -> tuple[list[str], str | None]:
    """The equation's input terms and its output term (None when implicit), checked."""
    equation = str_attr(op, "equation").replace(" ", "")
    left, arrow, right = equation.partition("->")
    terms = left.split(",")
    if len(terms) != count:
        raise op_error(op, f"expected an equation of {count} input terms", repr(equation))
    for term in (*terms, right):
        letters = term.replace(ELLIPSIS, "", 1)
        if not all(c.isalpha() for c in letters) or term.count(".") not in (0, 3):
            raise op_error(op, "expected terms of letters and at most one '...'", repr(equation))
    return terms, right if arrow else None


@dataclass(frozen=True)
class _Labels:
    """An Einsum's labels over given input shapes: each label's size, the broadcast dims under
    '...', and the output term (made explicit)."""

    sizes: dict[str, int]
    ellipsis: tuple[int, ...]
    output: str


def _labels(op: Op, shapes: Sequence[tuple[int, ...]]) -> _Labels:
    terms, output = _einsum_terms(op, len(shapes))
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    broadcast: list[tuple[int, ...]] = []
    for term, shape in zip(terms, shapes, strict=True):
        letters = term.replace(ELLIPSIS, "")
        extra = len(shape) - len(letters)
        if extra < 0 or (extra and ELLIPSIS not in term):
            raise op_error(op, f"expected an input of rank {len(letters)} for {term!r}", len(shape))
        before = term.find(ELLIPSIS)
        dims = list(shape)
        if before >= 0:
            broadcast.append(tuple(dims[before : before + extra]))
            del dims[before : before + extra]
        for letter, size in zip(letters, dims, strict=True):
            if sizes.setdefault(letter, size) != size:
                expected = f"expected label {letter!r} of one size"
                raise op_error(op, expected, f"{sizes[letter]} and {size}")
            counts[letter] = counts.get(letter, 0) + 1
    ellipsis = broadcast_shape(op, *broadcast) if broadcast else ()
    if output is None:  # numpy's implicit output: '...', then the labels seen once, sorted
        output = ELLIPSIS + "".join(sorted(c for c, n in counts.items() if n == 1))
    kept = output.replace(ELLIPSIS, "")
    for letter in kept:
        if letter not in sizes:
            raise op_error(op, f"expected output labels among the inputs' {sorted(sizes)}", letter)
    twice = sorted({letter for letter in kept if kept.count(letter) > 1})
    if twice:  # 'ii->ii' passed the rule, and numpy's einsum refused it in the kernel
        raise op_error(op, f"expected each output label once in {output!r}", repr(twice[0]))
    if ellipsis and ELLIPSIS not in output:
        raise op_error(op, "expected '...' in the output, as the inputs have it", list(ellipsis))
    return _Labels(sizes, ellipsis, output)


def einsum_shape(op: Op, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The output shape of `op`'s equation over inputs of `shapes` (numpy's rules: a label
    has one size wherever it appears; the dims under '...' broadcast; an implicit output is the
    broadcast '...' dims, then the labels seen once, in alphabetical order).

    Examples
    --------
    >>> einsum_shape(Op("Einsum", "e", ("a", "b"), ("y",), {"equation": "bij,bjk->bik"}),
    ...              [(2, 3, 4), (2, 4, 5)])
    (2, 3, 5)
    >>> einsum_shape(Op("Einsum", "e", ("a",), ("y",), {"equation": "...ii"}), [(7, 3, 3)])
    (7,)
    """
    labels = _labels(op, shapes)
    head, _, tail = labels.output.partition(ELLIPSIS)
    if ELLIPSIS not in labels.output:
        return tuple(labels.sizes[c] for c in head)
    return (
        *(labels.sizes[c] for c in head),
        *labels.ellipsis,
        *(labels.sizes[c] for c in tail),
    )


def _compile_einsum(op: Op, opset: int) -> Kernel:
    equation = str_attr(op, "equation").replace(" ", "")
    return lambda inputs: [np.asarray(np.einsum(equation, *inputs, optimize=len(inputs) > 2))]


def _infer_einsum(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    metas = [m for m in inputs if m is not None]
    return [Meta(einsum_shape(op, [m.shape for m in metas]), metas[0].dtype)]


def _cost_einsum(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2·prod(every label's size)·prod('...' dims)`` flops: a multiply and an add per point of
    the iteration space (one operand's sum or trace counts the same); class ``matmul``."""
    labels = _labels(op, [m.shape for m in inputs if m is not None])
    flops = 2 * prod(labels.sizes.values()) * prod(labels.ellipsis)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "matmul")


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``exp(x - max) / sum(exp(x - max))`` along `axis`.

    Examples
    --------
    >>> softmax(np.log(np.array([[1.0, 3.0]], np.float32)), 1).tolist()
    [[0.25, 0.75]]
    """
    wide = accumulating(x)  # float16's exponentials summed in float32: 70000 passed 65504
    y: np.ndarray = wide - wide.max(axis=axis, keepdims=True)
    np.exp(y, out=y)
    y /= y.sum(axis=axis, keepdims=True)
    return y.astype(x.dtype, copy=False)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``x - max - log(sum(exp(x - max)))`` along `axis`.

    Examples
    --------
    >>> np.exp(log_softmax(np.log(np.array([[1.0, 3.0]], np.float32)), 1)).round(6).tolist()
    [[0.25, 0.75]]
    """
    wide = accumulating(x)
    y: np.ndarray = wide - wide.max(axis=axis, keepdims=True)
    y -= np.log(np.exp(y).sum(axis=axis, keepdims=True))
    return y.astype(x.dtype, copy=False)


def hardmax(x: np.ndarray, axis: int) -> np.ndarray:
    """1 at the first largest element along `axis`, 0 elsewhere.

    Examples
    --------
    >>> hardmax(np.array([[1.0, 3.0, 3.0]], np.float32), 1).tolist()
    [[0.0, 1.0, 0.0]]
    """
    first = np.expand_dims(np.argmax(x, axis=axis), axis)
    y = np.zeros_like(x)
    np.put_along_axis(y, first, 1, axis=axis)
    return y


def _softmax_axis(op: Op, opset: int, rank: int) -> int:
    axis = int_attr(op, "axis", 1 if opset < 13 else -1)
    if rank == 0:  # no axis to normalize along (onnxruntime refuses it too)
        expected = f"expected an input of rank >= 1 (a scalar has no axis {axis})"
        raise op_error(op, expected, "shape []")
    return normalize_axis(op, axis, rank)


def _compile_softmax(function: Callable[[np.ndarray, int], np.ndarray]) -> Callable[..., Kernel]:
    """The compile rule of Softmax or LogSoftmax, with `function` as the normalization."""

    def compile_op(op: Op, opset: int) -> Kernel:
        axis = int_attr(op, "axis", 1 if opset < 13 else -1)
        flatten = opset < 13

        def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
            x = inputs[0]
            assert x is not None, f"{op!r}: X is required"
            at = normalize_axis(op, axis, x.ndim)
            if x.size == 0:  # an empty set along the axis (numpy's max and argmax refuse it)
                return [np.empty_like(x)]
            if not flatten:
                return [function(x, at)]
            rows = prod(x.shape[:at])
            return [function(x.reshape(rows, -1), 1).reshape(x.shape)]

        return kernel

    return compile_op


def _infer_softmax(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    _softmax_axis(op, opset, len(x.shape))
    return [Meta(x.shape, x.dtype)]


register(
    "Gemm",
    "matmul",
    compile=_compile_gemm,
    infer=_infer_gemm,
    cost=_cost_gemm,
    one_type=(0, 1, 2),
    required={1: 3, 11: 2},  # C became optional at opset 11
)
register(
    "MatMul", "matmul", compile=_compile_matmul, infer=infer_matmul, cost=cost_matmul,
    one_type=(0, 1), required=2,
)  # fmt: skip
# Softmax and LogSoftmax: max, subtract, exp, sum and divide (or log-subtract): 5 flops per element.
register(
    "Softmax",
    "normalization",
    compile=_compile_softmax(softmax),
    infer=_infer_softmax,
    cost=elementwise_cost("normalization", 5.0),
)
register(
    "Einsum", "matmul", compile=_compile_einsum, infer=_infer_einsum, cost=_cost_einsum,
    one_type=ALL_INPUTS,
)  # fmt: skip
register(
    "Hardmax",
    "normalization",
    compile=_compile_softmax(hardmax),
    infer=_infer_softmax,
    cost=elementwise_cost("normalization", 2.0),  # compare, write
)
register(
    "LogSoftmax",
    "normalization",
    compile=_compile_softmax(log_softmax),
    infer=_infer_softmax,
    cost=elementwise_cost("normalization", 5.0),
)
