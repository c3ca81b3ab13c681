"""The checks that op modules share, on attributes, inputs, dtypes and axes, and their errors.

Every failure is a ModelError naming the op, in one shape: ``op <name> (<type>): <expected>, got
<got>`` (`op_error`; `raise_kernel_error` for a kernel's own failure). Also here: the ONNX dtype
codes (`ONNX_DTYPES`), numpy's broadcast rule and the shape rule `same_as_input`. Each op module
checks what is particular to its ops; `registry` uses these to wrap what `register` is given.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np

from hetsim.errors import HetsimError, ModelError, UnknownValueError
from hetsim.ir import Op, op_label
from hetsim.kernels.meta import Meta

__all__ = [
    "ONNX_DTYPES",
    "attr",
    "broadcast_shape",
    "choice",
    "constant_input",
    "dtype_of",
    "normalize_axes",
    "normalize_axis",
    "op_error",
    "present",
    "raise_kernel_error",
    "same_as_input",
]

T = TypeVar("T")

_MISSING = object()


def attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """Attribute `name` of `op`, or `default`; a missing required attribute is a ModelError."""
    value = op.attrs.get(name, default)
    if value is _MISSING:
        raise ModelError(f"{op_label(op)}: missing required attribute {name!r}")
    return value


ONNX_DTYPES: dict[int, np.dtype[Any]] = {
    code: np.dtype(name)
    for code, name in {
        1: "float32",
        2: "uint8",
        3: "int8",
        4: "uint16",
        5: "int16",
        6: "int32",
        7: "int64",
        9: "bool",
        10: "float16",
        11: "float64",
        12: "uint32",
        13: "uint64",
    }.items()
}
"""ONNX `TensorProto.DataType` codes of the dtypes hetsim supports, to numpy dtypes."""


def present(op: Op, values: Sequence[T | None], count: int) -> list[T]:
    """The first `count` of an op's inputs (metas or arrays), each given; a missing one is a
    ModelError naming the op."""
    found = [value for value in values[:count] if value is not None]
    if len(found) != count:
        raise op_error(op, f"expected {count} inputs", len(found))
    return found


def choice(op: Op, name: str, value: object, allowed: Sequence[str]) -> str:
    """`value` of attribute `name`, one of `allowed`; anything else is a ModelError listing
    them, with the closest as a hint."""
    if value in allowed:
        return str(value)
    shown = ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
    close = difflib.get_close_matches(str(value), allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise op_error(op, f"expected {name} {shown}", f"{value!r}{hint}")


def op_error(op: Op, expected: str, got: object) -> ModelError:
    """A ModelError in the shared shape: ``op <name> (<type>): <expected>, got <got>``.

    Examples
    --------
    >>> str(op_error(Op("Reshape", "r0", ("x",), ("y",)), "expected 2 inputs", 1))
    'op r0 (Reshape): expected 2 inputs, got 1'
    """
    return ModelError(f"{op_label(op)}: {expected}, got {got}")


def raise_kernel_error(
    op: Op, err: Exception, expected: str = "expected its kernel to compute"
) -> NoReturn:
    """Raise what a failure of `op`'s kernel (or of its compile or shape rule: `expected` says
    which) is: `err` itself when it is already a `HetsimError` (it says what and where) or a
    `MemoryError`, else a ModelError naming the op (an out-of-range Gather index, a reduction
    over an empty axis: numpy's message alone would not say which of thousands of ops it was),
    chained to `err` for whoever debugs a kernel. Call it in an ``except`` block.

    Examples
    --------
    >>> op = Op("Gather", "g0", ("x", "i"), ("y",))
    >>> raise_kernel_error(op, IndexError("index 10 is out of bounds for axis 1 with size 4"))
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: op g0 (Gather): expected its kernel to compute, got IndexError: \
index 10 is out of bounds for axis 1 with size 4
    """
    if isinstance(err, HetsimError | MemoryError):
        raise err
    raise op_error(op, expected, f"{type(err).__name__}: {err}") from err


def dtype_of(op: Op, code: int | str) -> np.dtype[Any]:
    """The numpy dtype of an ONNX dtype code (or a numpy dtype name), checked.

    Examples
    --------
    >>> dtype_of(Op("Cast", "c", ("x",), ("y",)), 7)
    dtype('int64')
    """
    if isinstance(code, str):
        return np.dtype(code)
    if code not in ONNX_DTYPES:
        raise op_error(op, f"expected a supported dtype code {sorted(ONNX_DTYPES)}", code)
    return ONNX_DTYPES[code]


def normalize_axis(op: Op, axis: int, rank: int) -> int:
    """`axis` in ``[0, rank)``; a negative axis counts from the end.

    Examples
    --------
    >>> normalize_axis(Op("Concat", "c", ("a",), ("y",)), -1, 3)
    2
    """
    if not -rank <= axis < rank:
        raise op_error(op, f"expected an axis in [{-rank}, {rank})", axis)
    return axis + rank if axis < 0 else axis


def normalize_axes(op: Op, axes: Sequence[int] | np.ndarray, rank: int) -> tuple[int, ...]:
    """Each axis of `axes` normalized; a repeated axis is a ModelError."""
    result = tuple(normalize_axis(op, int(a), rank) for a in axes)
    if len(set(result)) != len(result):
        raise op_error(op, "expected distinct axes", list(result))
    return result


def broadcast_shape(op: Op, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The numpy (multidirectional ONNX) broadcast of `shapes`.

    Examples
    --------
    >>> broadcast_shape(Op("Add", "a", ("x", "y"), ("z",)), (2, 1, 3), (4, 1))
    (2, 4, 3)
    """
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-rank, 0):  # numpy's rule, on Python ints: no size is too large for it
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            shown = " and ".join(str(list(s)) for s in shapes)
            raise op_error(op, "expected broadcastable shapes", shown)
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def same_as_input(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """The shape rule of an op whose single output has its first input's shape and dtype."""
    first = inputs[0]
    assert first is not None, f"{op!r}: first input missing"
    return [Meta(first.shape, first.dtype)]


def constant_input(op: Op, inputs: Sequence[Meta | None], index: int, what: str) -> np.ndarray:
    """The value of input `index`, which a shape rule needs to know (a Reshape's shape).

    Propagation computes small integer tensors for real; an input whose value is still unknown
    was computed from data (or is a graph input given without its array), and the output shape
    cannot be known without running the model: `UnknownValueError`.
    """
    meta = inputs[index] if index < len(inputs) else None
    if meta is None:
        raise op_error(op, f"expected a known value for input {index} ({what})", "no input")
    if meta.value is None:
        expected = f"{op_label(op)}: expected a known value for input {index} ({what})"
        raise UnknownValueError(expected, op.inputs[index])
    return meta.value
