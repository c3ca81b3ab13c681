"""The model IR: `Graph`, `Op`, `TensorType` and symbolic dims (`hetsim.ir.graph`), the sizes
a caller gives them, checked (`hetsim.ir.dims`), and the `GraphBuilder` for writing graphs in
Python (`hetsim.ir.builder`)."""

from hetsim.ir.builder import GraphBuilder
from hetsim.ir.dims import check_dims, check_graph_dims, format_dims
from hetsim.ir.graph import (
    Dim,
    Graph,
    Op,
    TensorType,
    bind_shape,
    check_graph,
    op_label,
    topological_order,
)

__all__ = [
    "Dim",
    "Graph",
    "GraphBuilder",
    "Op",
    "TensorType",
    "bind_shape",
    "check_dims",
    "check_graph",
    "check_graph_dims",
    "format_dims",
    "op_label",
    "topological_order",
]
