"""The IR's nodes: tensor types with (possibly symbolic) shapes, ops, and binding symbolic dims.

`hetsim.ir.graph` holds them in a `Graph`, which checks their fields (`hetsim.ir.fields`) and the
structure they form.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hetsim.errors import ModelError, is_count, printable

__all__ = ["Dim", "Op", "TensorType", "bind_shape", "op_label", "shown"]

Dim = int | str
"""A dimension: an int, or a str naming a symbolic dimension (``"seq"``)."""

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def shown(value: object) -> str:
    """How a message shows a value it did not expect: type name and repr, cut short; bytes
    that are not UTF-8 say so (protobuf gives a name it cannot decode as bytes, where it gives
    every other name as a str).

    >>> shown(None), shown("23"), shown(list(range(100)))[:30]
    ('None', "str '23'", 'list [0, 1, 2, 3, 4, 5, ...]')
    >>> print(shown(b"Q\\xffQ"))
    bytes b'Q\\xffQ' (not UTF-8 text)
    """
    if value is None:
        return "None"
    text = f"{type(value).__name__} {_REPR.repr(value)}"
    if isinstance(value, bytes):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return f"{text} (not UTF-8 text)"
    return text


def bind_shape(shape: tuple[Dim, ...], dims: Mapping[str, int], where: str = "") -> tuple[int, ...]:
    """Replace each symbolic dimension of `shape` with its value in `dims`.

    Raises
    ------
    ModelError
        When a symbolic dimension has no value in `dims`, or one that is not an integer >= 0
        (a float, a str or a bool is refused rather than truncated or parsed: the entry points
        check dims first, with `hetsim.ir.check_dims`, but this and `TensorType.bind` are
        public too).

    Examples
    --------
    >>> bind_shape((1, "seq", 64), {"seq": 128})
    (1, 128, 64)
    >>> bind_shape((1, "seq"), {}, where="input x")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input x: expected a value for symbolic dim 'seq', got none
    >>> bind_shape((1, "seq"), {"seq": 2.5}, where="input x")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input x: expected an integer >= 0 for symbolic dim 'seq', \
got float 2.5
    """
    bound = []
    for dim in shape:
        if isinstance(dim, str):
            prefix = f"{where}: " if where else ""
            if dim not in dims:
                raise ModelError(f"{prefix}expected a value for symbolic dim {dim!r}, got none")
            if not is_count(dims[dim]):
                raise ModelError(
                    f"{prefix}expected an integer >= 0 for symbolic dim {dim!r}, "
                    f"got {shown(dims[dim])}"
                )
            bound.append(int(dims[dim]))
        else:
            bound.append(dim)
    return tuple(bound)


@dataclass(frozen=True, slots=True)
class TensorType:
    """Shape and dtype of a tensor; a `str` dimension is symbolic.

    `shape` holds ints >= 0 and non-empty names; `dtype` is a numpy dtype name (``"float32"``),
    a str so that it prints and serializes as written. A `Graph` checks the types of its inputs
    (see `Op` for why there and not here).

    Examples
    --------
    >>> t = TensorType((1, "seq", 64), "float32")
    >>> t.is_static, t.symbols
    (False, ('seq',))
    >>> t.bind({"seq": 8})
    TensorType(shape=(1, 8, 64), dtype='float32')
    """

    shape: tuple[Dim, ...]
    dtype: str

    @property
    def is_static(self) -> bool:
        """True when no dimension is symbolic."""
        return all(isinstance(d, int) for d in self.shape)

    @property
    def symbols(self) -> tuple[str, ...]:
        """The symbolic dimension names, in order of first appearance."""
        return tuple(dict.fromkeys(d for d in self.shape if isinstance(d, str)))

    def bind(self, dims: Mapping[str, int]) -> TensorType:
        """This type with every symbolic dimension replaced by its value in `dims`."""
        return TensorType(bind_shape(self.shape, dims), self.dtype)


@dataclass(frozen=True, slots=True)
class Op:
    """One node of the graph: an op type applied to named input tensors, giving named outputs.

    ``""`` in `inputs` marks an omitted optional input.

    The fields are checked when a `Graph` is built, not here: there the message can name the
    graph, and one pass over all ops (`hetsim.ir.fields.checked_ops`) costs far less than a
    `__post_init__` on each of the 1e6 ops of a big chain or of every op an ONNX import makes.
    An Op never put in a Graph (a kernel's helper builds some) is unchecked, which is fine:
    nothing runs it.

    Examples
    --------
    >>> Op("Relu", "relu1", ("x",), ("y",))
    <Op relu1 (Relu)>
    """

    type: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Op {self.name} ({self.type})>"


def op_label(op: Op) -> str:
    """How a message names `op`: ``op <name> (<type>)``, each `printable` (a model's names are
    any text).

    >>> print(op_label(Op("Relu", "r\\n0", ("x",), ("y",))))
    op r\\n0 (Relu)
    """
    return f"op {printable(op.name)} ({printable(op.type)})"
