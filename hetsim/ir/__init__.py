"""The model IR: `Graph`, `Op`, `TensorType` and symbolic dims (`hetsim.ir.graph`), and the
`GraphBuilder` for writing graphs in Python (`hetsim.ir.builder`)."""

from hetsim.ir.builder import GraphBuilder
from hetsim.ir.graph import Dim, Graph, Op, TensorType, bind_shape, op_label, topological_order

__all__ = [
    "Dim",
    "Graph",
    "GraphBuilder",
    "Op",
    "TensorType",
    "bind_shape",
    "op_label",
    "topological_order",
]
