"""The op registry: one `OpDef` per ONNX op type, holding its kernel, shape rule and cost rule.

Op modules (`elementwise.py`, `nn.py`, ...) fill `OPS` with `register`; nothing else writes it.
This module owns the shared vocabulary (`Meta`, `Cost`, op classes) and the helpers every op
module uses to read attributes and to describe a default cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.errors import ModelError
from hetsim.ir import Op

__all__ = [
    "OPS",
    "OP_CLASSES",
    "Cost",
    "Kernel",
    "Meta",
    "OpDef",
    "attr",
    "elementwise_cost",
    "nbytes",
    "register",
]

OP_CLASSES = (
    "matmul",
    "conv",
    "elementwise",
    "reduction",
    "normalization",
    "data_movement",
    "other",
)


@dataclass(frozen=True, slots=True)
class Meta:
    """What is known of one tensor while shapes propagate: shape, dtype and maybe its value.

    `value` is set for constants and for small tensors computed during propagation (shape
    arithmetic), so that rules such as Reshape's can read them.
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    value: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes the tensor occupies."""
        return self.size * self.dtype.itemsize

    @classmethod
    def of(cls, array: np.ndarray, *, keep_value: bool = True) -> Meta:
        """The Meta of a concrete array, keeping its value when asked."""
        return cls(tuple(array.shape), array.dtype, array if keep_value else None)

    def __repr__(self) -> str:
        known = " value" if self.value is not None else ""
        return f"<Meta {self.dtype}{list(self.shape)}{known}>"


@dataclass(frozen=True, slots=True)
class Cost:
    """The work of one op: flops, bytes read and written, and the op class its efficiency uses."""

    flops: float
    bytes_read: int
    bytes_written: int
    op_class: str

    @property
    def bytes_total(self) -> int:
        return self.bytes_read + self.bytes_written


Kernel = Callable[[Sequence[np.ndarray | None]], list[np.ndarray]]
Compile = Callable[[Op, int], Kernel]
Infer = Callable[[Op, int, Sequence[Meta | None]], list[Meta]]
CostRule = Callable[[Op, Sequence[Meta | None], Sequence[Meta]], Cost]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op type: how to compile its kernel, infer its output shapes and count its cost.

    Parameters
    ----------
    type
        The ONNX op type, e.g. ``"Conv"``.
    op_class
        One of `OP_CLASSES`; the cost model picks the device's efficiency by it.
    compile
        ``compile(op, opset) -> kernel``; reads and checks the attributes once.
    infer
        ``infer(op, opset, input_metas) -> output_metas``; the shape rule.
    cost
        ``cost(op, input_metas, output_metas) -> Cost``.
    """

    type: str
    op_class: str
    compile: Compile
    infer: Infer
    cost: CostRule

    def __repr__(self) -> str:
        return f"<OpDef {self.type} class={self.op_class}>"


OPS: dict[str, OpDef] = {}


def register(
    op_type: str,
    op_class: str,
    *,
    compile: Compile,
    infer: Infer,
    cost: CostRule | None = None,
) -> OpDef:
    """Add `op_type` to `OPS`; the default cost is `elementwise_cost` (one flop per output)."""
    assert op_class in OP_CLASSES, f"{op_type}: unknown op class {op_class!r}"
    assert op_type not in OPS, f"{op_type} registered twice"
    definition = OpDef(op_type, op_class, compile, infer, cost or elementwise_cost(op_class))
    OPS[op_type] = definition
    return definition


_MISSING = object()


def attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """Attribute `name` of `op`, or `default`; a missing required attribute is a ModelError."""
    value = op.attrs.get(name, default)
    if value is _MISSING:
        raise ModelError(f"op {op.name} ({op.type}): missing required attribute {name!r}")
    return value


def nbytes(metas: Sequence[Meta | None]) -> int:
    """Total bytes of the present tensors."""
    return sum(m.nbytes for m in metas if m is not None)


def elementwise_cost(op_class: str, flops_per_element: float = 1.0) -> CostRule:
    """A cost rule: `flops_per_element` per output element; inputs read, outputs written once."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        flops = flops_per_element * sum(m.size for m in outputs)
        return Cost(flops, nbytes(inputs), nbytes(outputs), op_class)

    return cost
