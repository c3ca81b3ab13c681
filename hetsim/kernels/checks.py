"""The checks that op modules share, on attributes, inputs, dtypes and axes, and their errors.

Every failure is a ModelError naming the op, in one shape: ``op <name> (<type>): <expected>, got
<got>`` (`op_error`; `raise_kernel_error` for a kernel's own failure). Attributes are read with
the reader of their ONNX type (`int_attr`, `flag_attr`, `float_attr`, `str_attr`, `ints_attr`,
`floats_attr`), which refuses a value of another type rather than converting it; inputs ONNX
types as integers (a shape, axes, pads) with `integer_input` and `check_integer_input`, of the
rank ONNX gives them where the caller says (`check_input_rank`). Also here: the ONNX dtype codes
and names (`ONNX_DTYPES`, `ONNX_DTYPE_CODES`), numpy's broadcast rule and the shape rule
`same_as_input`.
Each op module checks what is particular to its ops; `registry` uses these to wrap what
`register` is given (`check_required_inputs`, `check_output_count`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar, overload

import numpy as np

from hetsim.errors import HetsimError, OpError, SimulationError, UnknownValueError
from hetsim.ir import Op, op_label
from hetsim.kernels.meta import Meta

__all__ = [
    "ONNX_DTYPES",
    "ONNX_DTYPE_CODES",
    "attr",
    "broadcast_shape",
    "check_at_most",
    "check_indices",
    "check_input_rank",
    "check_integer_input",
    "check_output_count",
    "check_required_inputs",
    "choice",
    "constant_input",
    "dtype_of",
    "flag_attr",
    "float_attr",
    "floats_attr",
    "int_attr",
    "integer_input",
    "ints_attr",
    "named_outputs",
    "normalize_axes",
    "normalize_axis",
    "op_error",
    "present",
    "raise_kernel_error",
    "same_as_input",
    "str_attr",
]

T = TypeVar("T")

_MISSING = object()


def attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """Attribute `name` of `op`, or `default`; a missing required attribute is a ModelError."""
    value = op.attrs.get(name, default)
    if value is _MISSING:
        raise missing_attribute(op, name)
    return value


def missing_attribute(op: Op, name: str) -> OpError:
    """The error of `op` without its required attribute `name`.

    >>> str(missing_attribute(Op("Conv", "c0", ("x", "w"), ("y",)), "kernel_shape"))
    "op c0 (Conv): missing required attribute 'kernel_shape'"
    """
    return OpError(f"{op_label(op)}: missing required attribute {name!r}", op.name)


_INTEGER_TYPES = (int, np.integer)  # a bool is an int: 0 or 1
_REAL_TYPES = (int, float, np.integer, np.floating)


def _is_int(value: object) -> bool:
    return isinstance(value, _INTEGER_TYPES)


def _is_real(value: object) -> bool:
    return isinstance(value, _REAL_TYPES) and value.__class__ is not bool


def _is_sequence_of(is_item: Callable[[object], bool]) -> Callable[[object], bool]:
    def is_sequence(value: object) -> bool:
        if isinstance(value, np.ndarray):
            return value.ndim == 1 and all(map(is_item, value))
        return isinstance(value, list | tuple) and all(map(is_item, value))

    return is_sequence


_is_ints = _is_sequence_of(_is_int)
_is_reals = _is_sequence_of(_is_real)


def _typed_attr(
    op: Op, name: str, default: Any, expected: str, is_expected: Callable[[object], bool]
) -> Any:
    """Attribute `name` of `op` (or `default`, trusted), of the ONNX attribute type `expected`
    names: another type is a ModelError rather than converted (``int("0")`` is 0, but
    ``bool("0")`` is True, and ``int(2.7)`` is 2)."""
    value = attr(op, name, default)
    if value is default or is_expected(value):
        return value
    raise op_error(op, f"expected attribute {name!r} to be {expected}", repr(value))


@overload
def int_attr(op: Op, name: str, default: int = ...) -> int: ...
@overload
def int_attr(op: Op, name: str, default: None) -> int | None: ...
def int_attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """INT attribute `name` of `op` (a bool or numpy integer too), or `default`; checked.

    Examples
    --------
    >>> op = Op("ReduceSum", "r", ("x",), ("y",), {"keepdims": "0"})
    >>> int_attr(op, "keepdims", 1)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op r (ReduceSum): expected attribute 'keepdims' to be an integer, \
got '0'
    """
    value = _typed_attr(op, name, default, "an integer", _is_int)
    return None if value is None else int(value)


def check_values_below(op: Op, values: np.ndarray, stop: int, expected: str) -> None:
    """Refuse integer `values` outside ``[0, stop)`` (`expected` says which range), naming the
    first bound passed: the least value if negative (numpy indexing counts it from the end,
    silently), else the greatest.

    >>> check_values_below(Op("X", "x", (), ("y",)), np.array([0, -1]), 4, "expected i in [0, 4)")
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op x (X): expected i in [0, 4), got -1
    """
    if values.size:
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= stop:
            raise op_error(op, expected, low if low < 0 else high)


def check_indices(op: Op, indices: np.ndarray, shape: tuple[int, ...], axis: int) -> None:
    """Refuse integer `indices` into axis `axis` of data of `shape` (a negative axis counts from
    the end) outside ``[-size, size)``, ONNX's range for an axis of `size` elements, naming the
    first bound passed (numpy's own IndexError had been the message).

    >>> check_indices(Op("Gather", "g", (), ("y",)), np.array([1, -3]), (2,), -1)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op g (Gather): expected indices in [-2, 2) (axis 0 of data [2]), got -3
    """
    if indices.size:
        at = axis % len(shape)
        size = shape[at]
        low, high = int(indices.min()), int(indices.max())
        if low < -size or high >= size:
            expected = f"expected indices in [{-size}, {size}) (axis {at} of data {list(shape)})"
            raise op_error(op, expected, low if low < -size else high)


def flag_attr(op: Op, name: str, default: int) -> bool:
    """INT attribute `name` of `op` read as a flag (``keepdims``, ``transB``): 0 or 1, as ONNX
    defines its flags (``exclusive=2`` had read as set; onnxruntime refuses it for CumSum, and
    reads another flag's 2 as set or as unset, op by op).

    >>> flag_attr(Op("CumSum", "c", ("x", "a"), ("y",), {"exclusive": 2}), "exclusive", 0)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op c (CumSum): expected exclusive 0 or 1, got 2
    """
    value = int_attr(op, name, default)
    if value not in (0, 1):
        raise op_error(op, f"expected {name} 0 or 1", value)
    return value == 1


@overload
def float_attr(op: Op, name: str, default: float = ...) -> float: ...
@overload
def float_attr(op: Op, name: str, default: None) -> float | None: ...
def float_attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """FLOAT attribute `name` of `op` (an int or numpy number too, not a bool), or `default`."""
    value = _typed_attr(op, name, default, "a number", _is_real)
    return None if value is None else float(value)


def str_attr(op: Op, name: str, default: Any = _MISSING) -> str:
    """STRING attribute `name` of `op`, or `default`; checked."""
    value: str = _typed_attr(op, name, default, "a string", lambda v: isinstance(v, str))
    return value


@overload
def ints_attr(op: Op, name: str, default: Sequence[int] = ...) -> tuple[int, ...]: ...
@overload
def ints_attr(op: Op, name: str, default: None) -> tuple[int, ...] | None: ...
def ints_attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """INTS attribute `name` of `op` as a tuple (`default` when absent, None stays None)."""
    value = _typed_attr(op, name, default, "a list of integers", _is_ints)
    return None if value is None else tuple(map(int, value))


@overload
def floats_attr(op: Op, name: str, default: Sequence[float] = ...) -> tuple[float, ...]: ...
@overload
def floats_attr(op: Op, name: str, default: None) -> tuple[float, ...] | None: ...
def floats_attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """FLOATS attribute `name` of `op` as a tuple (`default` when absent, None stays None)."""
    value = _typed_attr(op, name, default, "a list of numbers", _is_reals)
    return None if value is None else tuple(map(float, value))


_ONNX_TYPES: dict[int, tuple[str, str]] = {
    1: ("FLOAT", "float32"),
    2: ("UINT8", "uint8"),
    3: ("INT8", "int8"),
    4: ("UINT16", "uint16"),
    5: ("INT16", "int16"),
    6: ("INT32", "int32"),
    7: ("INT64", "int64"),
    9: ("BOOL", "bool"),
    10: ("FLOAT16", "float16"),
    11: ("DOUBLE", "float64"),
    12: ("UINT32", "uint32"),
    13: ("UINT64", "uint64"),
}
"""ONNX `TensorProto.DataType` codes of the dtypes hetsim supports: (ONNX name, numpy name)."""

ONNX_DTYPES: dict[int, np.dtype[Any]] = {
    code: np.dtype(name) for code, (_, name) in _ONNX_TYPES.items()
}
"""ONNX `TensorProto.DataType` codes of the dtypes hetsim supports, to numpy dtypes."""

_SUPPORTED_DTYPES = frozenset(ONNX_DTYPES.values())

ONNX_DTYPE_CODES: dict[str, int] = {name: code for code, (name, _) in _ONNX_TYPES.items()}
"""ONNX `TensorProto.DataType` names of the dtypes hetsim supports (Cast-1's ``to``: ``"FLOAT"``),
to their codes."""


def check_required_inputs(op: Op, count: int) -> None:
    """The first `count` inputs of `op` are named: ONNX requires them (a Relu's X, a Reshape's
    shape); one omitted, or too few inputs, is a ModelError naming the op and the position.

    Examples
    --------
    >>> check_required_inputs(Op("Relu", "r", ("",), ("y",)), 1)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op r (Relu): expected input 0 (a tensor), got none (an omitted input)
    """
    named = op.inputs[:count]
    if len(named) == count and all(named):  # inlined for speed: every infer and compile
        return
    if len(named) < count:
        raise op_error(op, f"expected at least {count} input{'s' * (count != 1)}", len(op.inputs))
    raise op_error(op, f"expected input {named.index('')} (a tensor)", "none (an omitted input)")


def named_outputs(op: Op) -> int:
    """How many outputs `op` names, trailing omitted ones aside: ``("y", "", "z", "")`` is 3."""
    named = len(op.outputs)
    while named and not op.outputs[named - 1]:
        named -= 1
    return named


def check_output_count(op: Op, count: int) -> None:
    """`op` names no more outputs than the `count` its rule or kernel gives (trailing omitted
    ones aside): an extra one would be left without a value.

    Examples
    --------
    >>> check_output_count(Op("Relu", "r", ("x",), ("y", "z")), 1)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op r (Relu): expected at most 1 output, got 2
    """
    check_at_most(op, op.outputs, count, "output")


def check_at_most(op: Op, names: tuple[str, ...], most: int, what: str, at: str = "") -> None:
    """`op` names at most `most` of `names` (its inputs or outputs, `what`), trailing omitted
    ones aside (ONNX reads those as absent); `at` says where the limit holds (an opset).

    >>> check_at_most(Op("Add", "a", ("x", "y", "", ""), ("s",)), ("x", "y", "", ""), 2, "input")
    """
    named = len(names)
    while named > most and not names[named - 1]:  # callers come only for an op past its count
        named -= 1
    if named > most:
        raise op_error(op, f"expected at most {most} {what}{'s' * (most != 1)}{at}", named)


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
    raise _not_one_of(op, name, value, allowed)


def _not_one_of(op: Op, name: str, value: object, allowed: Sequence[str]) -> OpError:
    """The error of `value` of `name`, not one of `allowed`: it lists them, with the closest as
    a hint."""
    shown = ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
    close = difflib.get_close_matches(str(value), allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return op_error(op, f"expected {name} {shown}", f"{value!r}{hint}")


def op_error(op: Op, expected: str, got: object) -> OpError:
    """An `OpError` in the shared shape: ``op <name> (<type>): <expected>, got <got>``.

    Examples
    --------
    >>> str(op_error(Op("Reshape", "r0", ("x",), ("y",)), "expected 2 inputs", 1))
    'op r0 (Reshape): expected 2 inputs, got 1'
    """
    return OpError(f"{op_label(op)}: {expected}, got {got}", op.name)


def raise_kernel_error(
    op: Op,
    err: Exception,
    expected: str = "expected its kernel to compute",
    *,
    no_room: str = "timing mode computes no values",
) -> NoReturn:
    """Raise what a failure of `op`'s kernel (or of its compile or shape rule: `expected` says
    which) is: `err` itself when it is already a `HetsimError` (it says what and where); a
    SimulationError naming the op when this machine has no room for its arrays (a functional
    run of a model at sizes only a timing-mode run can take: numpy's ``_ArrayMemoryError``
    came out of ``hetsim run`` as a traceback), `no_room` saying what to do about it; else a
    ModelError naming the op (an integer division by zero, a reduction over an empty axis:
    numpy's message alone would not say which of thousands of ops it was). Chained to `err` for
    whoever debugs a kernel. Call it in an ``except`` block.

    Examples
    --------
    >>> op = Op("Gather", "g0", ("x", "i"), ("y",))
    >>> raise_kernel_error(op, IndexError("index 10 is out of bounds for axis 1 with size 4"))
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op g0 (Gather): expected its kernel to compute, got IndexError: \
index 10 is out of bounds for axis 1 with size 4
    >>> raise_kernel_error(op, MemoryError("Unable to allocate 149. GiB for an array"))
    Traceback (most recent call last):
    ...
    hetsim.errors.SimulationError: op g0 (Gather): expected arrays this machine can allocate, \
got MemoryError: Unable to allocate 149. GiB for an array (timing mode computes no values)
    """
    if isinstance(err, HetsimError):
        raise err
    if isinstance(err, MemoryError):
        got = f"MemoryError: {err} ({no_room})"
        raise SimulationError(
            f"{op_label(op)}: expected arrays this machine can allocate, got {got}"
        ) from err
    raise op_error(op, expected, f"{type(err).__name__}: {err}") from err


def dtype_of(op: Op, code: int | str) -> np.dtype[Any]:
    """The numpy dtype of an ONNX dtype code, an ONNX dtype name (Cast-1's ``to`` is a STRING:
    ``"INT32"``) or a numpy dtype name, checked.

    Examples
    --------
    >>> cast = Op("Cast", "c", ("x",), ("y",))
    >>> dtype_of(cast, 7), dtype_of(cast, "INT32"), dtype_of(cast, "float16")
    (dtype('int64'), dtype('int32'), dtype('float16'))
    >>> dtype_of(cast, "INT33")
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op c (Cast): expected a dtype name 'BOOL', 'DOUBLE', 'FLOAT', \
'FLOAT16', 'INT16', 'INT32', 'INT64', 'INT8', 'UINT16', 'UINT32', 'UINT64' or 'UINT8', got \
'INT33' (did you mean 'INT32'?)
    """
    if isinstance(code, str):
        return _named_dtype(op, code)
    if code not in ONNX_DTYPES:
        raise op_error(op, f"expected a supported dtype code {sorted(ONNX_DTYPES)}", code)
    return ONNX_DTYPES[code]


def _named_dtype(op: Op, name: str) -> np.dtype[Any]:
    """The dtype an ONNX or numpy dtype name names; another name (``np.dtype`` would raise a
    bare TypeError) or an unsupported dtype is a ModelError listing the ONNX names."""
    if name in ONNX_DTYPE_CODES:
        return ONNX_DTYPES[ONNX_DTYPE_CODES[name]]
    try:
        dtype = np.dtype(name)  # a numpy name ("int32"), as graphs built in Python write it
    except TypeError as err:
        raise _not_one_of(op, "a dtype name", name, sorted(ONNX_DTYPE_CODES)) from err
    if dtype not in _SUPPORTED_DTYPES:
        raise _not_one_of(op, "a dtype name", name, sorted(ONNX_DTYPE_CODES))
    return dtype


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


def check_integer_input(
    op: Op, index: int, what: str, value: object, rank: int | None = None
) -> None:
    """Input `index` of `op` (`what`: a shape, axes, pads), which ONNX types as integers, is of
    an integer dtype: float values would be truncated; and of rank `rank`, where given
    (`check_input_rank`). `value` is the input's array or `Meta`; an attribute's ints (before
    the opset that made it an input), or None, pass.

    Examples
    --------
    >>> op = Op("Reshape", "r", ("x", "s"), ("y",))
    >>> check_integer_input(op, 1, "shape", np.array([2.7, 4.2], np.float32))
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op r (Reshape): expected input 1 (shape) of an integer dtype, got \
float32
    """
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.kind not in "iu":
        raise op_error(op, f"expected input {index} ({what}) of an integer dtype", dtype)
    if rank is not None:
        check_input_rank(op, index, what, value, rank)


def check_input_rank(op: Op, index: int, what: str, value: object, rank: int) -> None:
    """Input `index` of `op` (`what`) has the rank ONNX gives it (axes and shapes are 1-D,
    Range's bounds scalars): another would fail deep in a rule with numpy's bare TypeError.
    `value` is the input's array or `Meta`; an attribute's ints, or None, pass.

    Examples
    --------
    >>> op = Op("Unsqueeze", "u", ("x", "axes"), ("y",))
    >>> check_input_rank(op, 1, "axes", Meta.of(np.array(2)), 1)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op u (Unsqueeze): expected input 1 (axes) 1-D, got shape ()
    """
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) != rank:
        expected = "a scalar" if rank == 0 else f"{rank}-D"
        raise op_error(op, f"expected input {index} ({what}) {expected}", f"shape {tuple(shape)}")


def integer_input(
    op: Op, inputs: Sequence[Meta | None], index: int, what: str, rank: int | None = None
) -> np.ndarray:
    """`constant_input` of an input ONNX types as integers, of rank `rank` where given
    (`check_integer_input`), checked first: a float graph input has no value to read, but a
    dtype to refuse."""
    check_integer_input(op, index, what, inputs[index] if index < len(inputs) else None, rank)
    return constant_input(op, inputs, index, what)


def constant_input(
    op: Op, inputs: Sequence[Meta | None], index: int, what: str, rank: int | None = None
) -> np.ndarray:
    """The value of input `index`, which a shape rule needs to know (a Reshape's shape), of
    rank `rank` where given (`check_input_rank`).

    Propagation computes small integer tensors for real; an input whose value is still unknown
    was computed from data (or is a graph input given without its array), and the output shape
    cannot be known without running the model: `UnknownValueError`.
    """
    meta = inputs[index] if index < len(inputs) else None
    if meta is None:
        raise op_error(op, f"expected a known value for input {index} ({what})", "no input")
    if rank is not None:
        check_input_rank(op, index, what, meta, rank)
    if meta.value is None:
        expected = f"{op_label(op)}: expected a known value for input {index} ({what})"
        raise UnknownValueError(expected, op.inputs[index])
    return meta.value
