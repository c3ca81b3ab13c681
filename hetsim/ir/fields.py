"""The checks of a `Graph`'s fields, run when it is built: each op's type, name, inputs, outputs
and attrs, each input's type, the mappings and names, with messages that name the graph and the
op ("graph g: op a (Relu): inputs: expected a tuple of tensor names, got str 'xy'"). Lists become
tuples and an input's dtype numpy's own name; well-typed fields are kept as the same objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from hetsim.errors import ModelError, printable
from hetsim.ir.nodes import Op, TensorType, op_label, shown

__all__ = [
    "RESERVED_OP_NAMES",
    "checked_dtype",
    "checked_input_type",
    "checked_mapping",
    "checked_names",
    "checked_ops",
    "checked_value_type",
]


def checked_input_type(graph: str, name: str, declared: object) -> TensorType:
    """A graph input's declared type: a `TensorType` whose shape is a tuple (a list becomes one)
    of sizes >= 0 (ONNX allows empty tensors) or names, and whose dtype is a numpy dtype name of
    a bool or number kind, or a numpy dtype or scalar type (``np.float32``). A negative size, a
    str iterated as dims, ``None`` read by numpy as float64 or an unknown dtype would only fail
    deep in a kernel or the engine, or not at all. Returns it with the shape a tuple of int and
    str and the dtype numpy's own name."""
    where = f"graph {printable(graph)}: input {name!r}"
    if not isinstance(declared, TensorType):
        raise ModelError(f"{where}: expected a TensorType, got {shown(declared)}")
    shape, dtype = declared.shape, declared.dtype
    if not isinstance(shape, tuple | list):
        raise ModelError(f"{where}: expected a shape (a tuple of dims), got {shown(shape)}")
    for dim in shape:
        is_size = isinstance(dim, int | np.integer) and not isinstance(dim, bool) and dim >= 0
        if not (is_size or (isinstance(dim, str) and dim)):
            raise ModelError(
                f"{where}: expected each dim an integer >= 0 or a symbolic name, got {dim!r} "
                f"in shape {list(shape)}"
            )
    known = checked_dtype(where, dtype)
    as_named = type(declared.dtype) is str and declared.dtype == known
    if as_named and type(shape) is tuple and all(type(d) in (int, str) for d in shape):
        return declared
    return TensorType(tuple(d if isinstance(d, str) else int(d) for d in shape), known)


def checked_value_type(graph: str, name: str, declared: object) -> TensorType:
    """A `value_types` entry: a `TensorType` whose dtype is one `checked_dtype` takes (its
    shape is the declaration's, as read); returned with the dtype numpy's own name."""
    where = f"graph {printable(graph)}: value_types[{name!r}]"
    if not isinstance(declared, TensorType):
        raise ModelError(f"{where}: expected a TensorType, got {shown(declared)}")
    known = checked_dtype(where, declared.dtype)
    if type(declared.dtype) is str and declared.dtype == known:
        return declared
    return TensorType(declared.shape, known)


def checked_dtype(where: str, dtype: object) -> str:
    """`dtype`'s numpy name: a numpy dtype name of a bool or number kind, or a numpy dtype or
    scalar type (``np.float32``); ``None`` and ``"float"``, which numpy reads as float64, and an
    unknown name are refused (they failed deep in a kernel, or read as float64)."""
    expected = "expected a numpy dtype name (float32, int64, ...)"
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name  # np.float32 or np.dtype("float32"): its name, as written
    elif not isinstance(dtype, str):  # None, or Python's float (numpy reads both as float64)
        raise ModelError(f"{where}: {expected}, got {shown(dtype)}")
    elif dtype == "float":  # numpy reads it as float64; ONNX's "float" is float32
        raise ModelError(
            f"{where}: {expected}, got 'float' (float64 to numpy, float32 to ONNX: write which)"
        )
    try:
        known = np.dtype(dtype)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: {expected}, got {dtype!r}") from None
    if known.kind not in "biuf":  # str, object, record, time: no kernel computes in them
        raise ModelError(f"{where}: {expected}, got {dtype!r} (not a bool or number dtype)")
    return known.name


def checked_mapping(where: str, value: object, of: str) -> dict[str, Any]:
    """A copy of `value`, a mapping of str names (-> `of`, for the message)."""
    if not isinstance(value, Mapping):
        raise ModelError(f"{where}: expected a mapping of name -> {of}, got {shown(value)}")
    if not set(map(type, value)) <= {str}:
        key = next(k for k in value if not isinstance(k, str))
        raise ModelError(f"{where}: expected each name a str, got {shown(key)}")
    return dict(value)


def checked_names(where: str, value: object, *, can_be_empty: bool) -> tuple[str, ...]:
    """Tensor names: a tuple (a list becomes one) of str, "" too when `can_be_empty`."""
    if not isinstance(value, tuple | list):
        raise ModelError(f"{where}: expected a tuple of tensor names, got {shown(value)}")
    for index, name in enumerate(value):
        if not (isinstance(name, str) and (name or can_be_empty)):
            what = "a str, '' if omitted" if can_be_empty else "a non-empty str"
            raise ModelError(
                f"{where}[{index}]: expected a tensor name ({what}), got {shown(name)}"
            )
    return tuple(value)


def _checked_op(graph: str, index: int, op: object) -> Op:
    """`op` with its fields checked; lists of names become tuples (in a new Op)."""
    if not isinstance(op, Op):
        raise ModelError(f"graph {printable(graph)}: ops[{index}]: expected an Op, got {shown(op)}")
    where = f"graph {printable(graph)}: {op_label(op)}"
    for field_name, value in (("type", op.type), ("name", op.name)):
        if not (isinstance(value, str) and value):
            raise ModelError(f"{where}: {field_name}: expected a non-empty str, got {shown(value)}")
    inputs = checked_names(f"{where}: inputs", op.inputs, can_be_empty=True)
    outputs = checked_names(f"{where}: outputs", op.outputs, can_be_empty=True)
    if not any(outputs):  # ONNX: every op makes at least one (a cost rule raised IndexError)
        raise ModelError(f"{where}: outputs: expected at least one named output, got {outputs}")
    checked_mapping(f"{where}: attrs", op.attrs, "value")
    if inputs is op.inputs and outputs is op.outputs:
        return op
    return replace(op, inputs=inputs, outputs=outputs)


_TYPE, _NAME, _ATTRS = attrgetter("type"), attrgetter("name"), attrgetter("attrs")
_NAMES_FIELDS = (attrgetter("inputs"), attrgetter("outputs"))


def _has_usual_fields(ops: tuple[object, ...]) -> bool:
    """Whether every item is an `Op` whose fields have exactly the usual types (no subclass, no
    list): type and name a non-empty str, no two ops of one name, inputs and outputs tuples of
    str (a named output among the outputs), attrs a dict with str keys."""
    # Inlined for speed: map and set run each pass in C (the distinct-name test included, which
    # replaces the loop of `_check_op_names`): building the 1e6-op chain of
    # benchmarks/sim_speed.py took 2.85-2.88 s against 2.43-2.49 before the field checks (best
    # of 3, alternating, two rounds). Any surprise sends the ops to `_checked_op` and
    # `_check_op_names`, which say which op and field.
    if not set(map(type, ops)) <= {Op}:
        return False
    names = list(map(_NAME, ops))
    if not set(map(type, names)) <= {str}:
        return False
    distinct = set(names)
    if len(distinct) < len(names) or "" in distinct or not distinct.isdisjoint(RESERVED_OP_NAMES):
        return False
    try:
        types = set(map(_TYPE, ops))  # a few op types: the checks below take no time
    except TypeError:  # an unhashable op type
        return False
    return "" not in types and set(map(type, types)) <= {str} and _has_usual_io(ops)


def _has_usual_io(ops: tuple[object, ...]) -> bool:
    """`_has_usual_fields` for inputs, outputs and attrs."""
    for getter in _NAMES_FIELDS:
        values = list(map(getter, ops))
        if not set(map(type, values)) <= {tuple}:
            return False
        if not set(map(type, chain.from_iterable(values))) <= {str}:
            return False
    if not all(map(any, values)):  # the outputs, the last field: each op names one at least
        return False
    attrs = list(map(_ATTRS, ops))
    return set(map(type, attrs)) <= {dict} and set(map(type, chain.from_iterable(attrs))) <= {str}


def checked_ops(graph: str, ops: object) -> tuple[Op, ...]:
    """`ops`, an iterable of `Op` (not a str, not one Op), as a tuple of checked ops with
    distinct names."""
    if isinstance(ops, str | Op | Mapping) or not isinstance(ops, Iterable):
        raise ModelError(
            f"graph {printable(graph)}: ops: expected an iterable of Op, got {shown(ops)}"
        )
    ops = tuple(ops)
    if _has_usual_fields(ops):
        return ops
    checked = tuple(_checked_op(graph, index, op) for index, op in enumerate(ops))
    _check_op_names(graph, checked)
    return checked


RESERVED_OP_NAMES = frozenset({"(return)", "(load)", "(stage)", "(graph pool)"})
"""The names the engine gives its own steps in place of an op's (a result's copy for RET, a
resident input, a routed copy's staging buffer, a CUDA graph's pool:
`hetsim.runtime.bytecode.RETURN_OP`, `hetsim.sim.steps`' ``*_OP``), which no op may take: an op
named ``(stage)`` that ran out of memory crashed the message meant for a staged copy."""


def _check_op_names(graph: str, ops: Iterable[Op]) -> None:
    """Op names are unique: placements, plans and spans are keyed by them; none is one of the
    engine's own (`RESERVED_OP_NAMES`)."""
    seen: set[str] = set()
    for op in ops:
        if op.name in seen:
            raise ModelError(
                f"graph {printable(graph)}: expected distinct op names, got {op.name!r} twice"
            )
        if op.name in RESERVED_OP_NAMES:
            kept = ", ".join(map(repr, sorted(RESERVED_OP_NAMES)))
            raise ModelError(
                f"graph {printable(graph)}: expected op names other than those hetsim gives its "
                f"own steps ({kept}), got {op.name!r}"
            )
        seen.add(op.name)
