"""The model IR: tensors with (possibly symbolic) shapes, ops, and the graph that holds them.

Owns the data structures only; op semantics (kernels, shape and cost rules) live in
`hetsim.kernels`, and reading ONNX lives in `hetsim.frontend`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Dim", "Graph", "Op", "TensorType"]

Dim = int | str
"""A dimension: an int, or a str naming a symbolic dimension (``"seq"``)."""


@dataclass(frozen=True, slots=True)
class TensorType:
    """Shape and dtype of a tensor; a `str` dimension is symbolic."""

    shape: tuple[Dim, ...]
    dtype: str

    @property
    def is_static(self) -> bool:
        """True when no dimension is symbolic."""
        return all(isinstance(d, int) for d in self.shape)


@dataclass(frozen=True, slots=True)
class Op:
    """One node of the graph: an op type applied to named input tensors, giving named outputs.

    ``""`` in `inputs` marks an omitted optional input.
    """

    type: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Op {self.name} ({self.type})>"


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """A model: ops in topological order, graph inputs and outputs, initializers (weights)."""

    name: str
    ops: tuple[Op, ...]
    inputs: Mapping[str, TensorType]
    outputs: tuple[str, ...]
    initializers: Mapping[str, np.ndarray] = field(default_factory=dict)
    opset: int = 17
    value_types: Mapping[str, TensorType] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Graph {self.name} ops={len(self.ops)} inputs={list(self.inputs)}>"
