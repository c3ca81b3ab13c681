"""The model summary that ``hetsim model show`` prints: ops by type, parameters, flops and bytes.

Owns the tally and its two renderings (a text table and a JSON-ready dict). Shapes come from
`hetsim.kernels.propagate` and the work of each op from its OpDef's cost rule; this module only
adds them up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetsim.errors import ModelError
from hetsim.ir import Graph, TensorType, check_graph, check_graph_dims
from hetsim.kernels import OPS, Meta, propagate
from hetsim.units import counted, format_bytes, format_flops

__all__ = ["OpTypeSummary", "Summary", "summarize"]

DEFAULT_DIM = 1
"""The value a symbolic dimension takes when the caller gives none."""


@dataclass(frozen=True, slots=True)
class OpTypeSummary:
    """The ops of one type in a model: how many, and their total work."""

    type: str
    count: int
    flops: float
    bytes_read: int
    bytes_written: int


@dataclass(frozen=True, slots=True)
class Summary:
    """What a model is and how much work one run of it does, for bound input shapes.

    Examples
    --------
    >>> from hetsim.models.zoo import mlp
    >>> s = summarize(mlp())
    >>> s.parameter_count, [(t.type, t.count) for t in s.op_types]
    (17226, [('Gemm', 3), ('Relu', 2)])
    """

    name: str
    opset: int
    dims: Mapping[str, int]
    defaulted: tuple[str, ...]
    inputs: Mapping[str, TensorType]
    outputs: Mapping[str, TensorType]
    op_count: int
    op_types: tuple[OpTypeSummary, ...]
    parameter_count: int
    parameter_bytes: int
    flops: float
    bytes_read: int
    bytes_written: int

    def __repr__(self) -> str:
        return f"<Summary {self.name} ops={self.op_count} flops={self.flops:.4g}>"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: shapes as lists, op types in table order."""
        return {
            "name": self.name,
            "opset": self.opset,
            "dims": dict(self.dims),
            "defaulted_dims": list(self.defaulted),
            "inputs": {n: _type_dict(t) for n, t in self.inputs.items()},
            "outputs": {n: _type_dict(t) for n, t in self.outputs.items()},
            "op_count": self.op_count,
            "op_types": [
                {
                    "type": t.type,
                    "count": t.count,
                    "flops": t.flops,
                    "bytes_read": t.bytes_read,
                    "bytes_written": t.bytes_written,
                }
                for t in self.op_types
            ],
            "parameter_count": self.parameter_count,
            "parameter_bytes": self.parameter_bytes,
            "flops": self.flops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
        }

    def format(self) -> str:
        """The summary as a text table, one op type per row, heaviest first."""
        lines = [f"model {self.name} (opset {self.opset}, {counted(self.op_count, 'op')})"]
        if self.dims:
            dims = ", ".join(
                f"{k}={v}" + (" (default)" if k in self.defaulted else "")
                for k, v in self.dims.items()
            )
            lines.append(f"dims:       {dims}")
        lines += [f"input:      {n} {_type_text(t)}" for n, t in self.inputs.items()]
        lines += [f"output:     {n} {_type_text(t)}" for n, t in self.outputs.items()]
        lines.append(f"parameters: {self.parameter_count:,} ({format_bytes(self.parameter_bytes)})")
        lines.append(
            f"work:       {format_flops(self.flops)}, read {format_bytes(self.bytes_read)}, "
            f"written {format_bytes(self.bytes_written)}"
        )
        rows = [
            (t.type, str(t.count), format_flops(t.flops), format_bytes(t.bytes_read),
             format_bytes(t.bytes_written))
            for t in self.op_types
        ]  # fmt: skip
        return "\n".join(
            [*lines, "", *_columns(("op type", "count", "flops", "read", "written"), rows)]
        )


def _columns(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """`header`, a rule and `rows`, the first column left-aligned and the others right, each as
    wide as its widest cell (at least as the table's fixed widths were), two blanks apart, so
    that long numbers never run into each other."""
    least = (22, 4, 12, 10, 10)
    columns = zip(header, *rows, strict=True)
    widths = [max(floor, *map(len, cells)) for floor, cells in zip(least, columns, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        first, *rest = cells
        return first.ljust(widths[0]) + "".join(
            "  " + cell.rjust(width) for cell, width in zip(rest, widths[1:], strict=True)
        )

    head = line(header)
    return [head, "-" * len(head), *map(line, rows)]


def _type_dict(t: TensorType) -> dict[str, Any]:
    return {"shape": list(t.shape), "dtype": t.dtype}


def _type_text(t: TensorType) -> str:
    return f"{t.dtype}[{', '.join(str(d) for d in t.shape)}]"


def summarize(graph: Graph, dims: Mapping[str, int] | None = None) -> Summary:
    """Count what `graph` is and the work of one run with its symbolic dims bound to `dims`.

    Parameters
    ----------
    graph
        The model.
    dims
        Values of the symbolic dimensions; one not given takes `DEFAULT_DIM` and is listed
        in `Summary.defaulted`.

    Raises
    ------
    ModelError
        A name in `dims` that is not a symbolic dim of the graph; from the shape rules,
        when the shapes do not fit the ops.
    """
    given = dict(check_graph_dims(check_graph(graph, "summarize"), dims))
    defaulted = tuple(s for s in graph.symbols if s not in given)
    bound = {**given, **dict.fromkeys(defaulted, DEFAULT_DIM)}
    metas = propagate(graph, bound)
    tally: dict[str, list[float]] = {}
    for op in graph.ops:
        inputs = [metas[n] if n else None for n in op.inputs]
        outputs = [metas[n] for n in op.outputs if n]
        cost = OPS[op.type].cost(op, inputs, outputs)
        row = tally.setdefault(op.type, [0, 0.0, 0, 0])
        row[0] += 1
        row[1] += cost.flops
        row[2] += cost.bytes_read
        row[3] += cost.bytes_written
    op_types = tuple(
        sorted(
            (
                OpTypeSummary(t, int(c), float(f), int(r), int(w))
                for t, (c, f, r, w) in tally.items()
            ),
            key=lambda t: (-t.flops, -(t.bytes_read + t.bytes_written), t.type),
        )
    )
    flops = sum(t.flops for t in op_types)
    if not math.isfinite(flops):  # each op's fits (`hetsim.kernels.registry`), their sum not
        raise ModelError(
            f"model {graph.name}: expected total flops that fit a float64 (dims too large?), "
            f"got {flops} at dims {bound}"
        )
    return Summary(
        name=graph.name,
        opset=graph.opset,
        dims={s: bound[s] for s in graph.symbols},
        defaulted=defaulted,
        inputs={n: t.bind(bound) for n, t in graph.inputs.items()},
        outputs={n: _meta_type(metas[n]) for n in graph.outputs},
        op_count=len(graph.ops),
        op_types=op_types,
        parameter_count=graph.parameter_count,
        parameter_bytes=sum(int(a.nbytes) for a in graph.initializers.values()),
        flops=flops,
        bytes_read=sum(t.bytes_read for t in op_types),
        bytes_written=sum(t.bytes_written for t in op_types),
    )


def _meta_type(meta: Meta) -> TensorType:
    return TensorType(tuple(meta.shape), str(meta.dtype))
