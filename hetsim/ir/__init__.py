"""The model IR: `Graph`, `Op`, `TensorType` (see `hetsim.ir.graph`)."""

from hetsim.ir.graph import Dim, Graph, Op, TensorType

__all__ = ["Dim", "Graph", "Op", "TensorType"]
