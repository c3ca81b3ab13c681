"""The model IR: tensors with (possibly symbolic) shapes, ops, and the graph that holds them.

Owns the data structures and their structural rules: every op input is produced somewhere,
every tensor is produced once, the ops form no cycle, and `Graph.ops` is in topological order.
Op semantics (kernels, shape and cost rules) live in `hetsim.kernels`, reading ONNX lives in
`hetsim.frontend`, and writing graphs by hand lives in `hetsim.ir.builder`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import ModelError

__all__ = ["Dim", "Graph", "Op", "TensorType", "bind_shape", "op_label", "topological_order"]

Dim = int | str
"""A dimension: an int, or a str naming a symbolic dimension (``"seq"``)."""


def bind_shape(shape: tuple[Dim, ...], dims: Mapping[str, int], where: str = "") -> tuple[int, ...]:
    """Replace each symbolic dimension of `shape` with its value in `dims`.

    Raises
    ------
    ModelError
        When a symbolic dimension has no value in `dims`.

    Examples
    --------
    >>> bind_shape((1, "seq", 64), {"seq": 128})
    (1, 128, 64)
    >>> bind_shape((1, "seq"), {}, where="input x")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input x: expected a value for symbolic dim 'seq', got none
    """
    bound = []
    for dim in shape:
        if isinstance(dim, str):
            if dim not in dims:
                prefix = f"{where}: " if where else ""
                raise ModelError(f"{prefix}expected a value for symbolic dim {dim!r}, got none")
            bound.append(int(dims[dim]))
        else:
            bound.append(dim)
    return tuple(bound)


@dataclass(frozen=True, slots=True)
class TensorType:
    """Shape and dtype of a tensor; a `str` dimension is symbolic.

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
    """How a message names `op`: ``op <name> (<type>)``."""
    return f"op {op.name} ({op.type})"


def _producers(
    ops: Iterable[Op], sources: Iterable[str], source_kind: Mapping[str, str]
) -> dict[str, Op]:
    """Map each op output to its op; a name produced twice is a ModelError naming the op."""
    producer: dict[str, Op] = {}
    known = set(sources)
    for op in ops:
        for name in filter(None, op.outputs):
            if name in producer:
                raise ModelError(
                    f"{op_label(op)}: expected a new output name, got {name!r} "
                    f"(already the output of {op_label(producer[name])})"
                )
            if name in known:
                raise ModelError(
                    f"{op_label(op)}: expected a new output name, got {name!r} "
                    f"(already {source_kind[name]})"
                )
            producer[name] = op
    return producer


def _cycle(ops: list[Op], producer: Mapping[str, Op], done: set[int]) -> list[Op]:
    """A cycle among the ops not in `done` (ids), in data-flow order, first op repeated last."""
    start = next(op for op in ops if id(op) not in done)
    path: list[Op] = []
    seen: dict[int, int] = {}
    op = start
    while id(op) not in seen:
        seen[id(op)] = len(path)
        path.append(op)
        op = next(
            producer[name]
            for name in op.inputs
            if name in producer and id(producer[name]) not in done
        )
    # The walk follows inputs back to producers; reversed, the cycle reads in data-flow order.
    return [op, *reversed(path[seen[id(op)] :])]


def topological_order(
    ops: Iterable[Op], sources: Iterable[str] = (), *, source_kind: Mapping[str, str] | None = None
) -> tuple[Op, ...]:
    """The ops in an order where each op comes after the producers of its inputs.

    The order is stable: among ops that are ready together, the one listed first comes first,
    so an already ordered list comes back unchanged.

    Parameters
    ----------
    ops
        The ops, in any order.
    sources
        Tensor names available before any op runs (graph inputs, initializers).
    source_kind
        For error messages: what each source is (``"a graph input"``).

    Raises
    ------
    ModelError
        On an input that nothing produces, a tensor produced twice, or a cycle; the message
        names the op.

    Examples
    --------
    >>> a = Op("Relu", "a", ("x",), ("y",))
    >>> b = Op("Neg", "b", ("y",), ("z",))
    >>> [op.name for op in topological_order([b, a], ["x"])]
    ['a', 'b']
    >>> topological_order([Op("Add", "c", ("x", "w"), ("z",))], ["x"])
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: op c (Add): expected each input to be a graph input, \
an initializer or an op output, got 'w'
    """
    ops = list(ops)
    sources = set(sources)
    kinds = source_kind or dict.fromkeys(sources, "a graph input")
    producer = _producers(ops, sources, kinds)
    waiting: list[int] = []
    consumers: dict[str, list[int]] = {}
    for index, op in enumerate(ops):
        pending = {n for n in op.inputs if n and n not in sources}
        for name in pending:
            if name not in producer:
                raise ModelError(
                    f"{op_label(op)}: expected each input to be a graph input, an initializer "
                    f"or an op output, got {name!r}"
                )
            consumers.setdefault(name, []).append(index)
        waiting.append(len(pending))
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[Op] = []
    while ready:
        op = ops[heapq.heappop(ready)]
        order.append(op)
        for name in op.outputs:
            for index in consumers.get(name, ()):
                waiting[index] -= 1
                if waiting[index] == 0:
                    heapq.heappush(ready, index)
    if len(order) < len(ops):
        cycle = _cycle(ops, producer, {id(op) for op in order})
        names = " -> ".join(op.name for op in cycle)
        raise ModelError(f"{op_label(cycle[0])}: expected no cycle, got {names}")
    return tuple(order)


def _check_input_type(graph: str, name: str, declared: Any) -> None:
    """A graph input's declared type: a `TensorType` whose dims are sizes >= 0 (ONNX allows
    empty tensors) or names, and whose dtype numpy knows (a negative size or an unknown dtype
    would only fail deep in a kernel or the engine)."""
    where = f"graph {graph}: input {name!r}"
    if not isinstance(declared, TensorType):
        raise ModelError(f"{where}: expected a TensorType, got {type(declared).__name__}")
    for dim in declared.shape:
        is_size = isinstance(dim, int | np.integer) and not isinstance(dim, bool) and dim >= 0
        if not (is_size or (isinstance(dim, str) and dim)):
            raise ModelError(
                f"{where}: expected each dim an integer >= 0 or a symbolic name, got {dim!r} "
                f"in shape {list(declared.shape)}"
            )
    try:
        np.dtype(declared.dtype)
    except TypeError:
        raise ModelError(
            f"{where}: expected a numpy dtype name (float32, int64, ...), got {declared.dtype!r}"
        ) from None


def _check_op_names(graph: str, ops: Iterable[Op]) -> None:
    """Op names are unique: placements, plans and spans are keyed by them."""
    seen: set[str] = set()
    for op in ops:
        if op.name in seen:
            raise ModelError(f"graph {graph}: expected distinct op names, got {op.name!r} twice")
        seen.add(op.name)


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """A model: ops in topological order, graph inputs and outputs, initializers (weights).

    Building a Graph checks its structure and puts `ops` in topological order (stable: an
    ordered list stays as it is). Mappings are copied, so the caller's dicts stay its own;
    treat them as read-only (plain dicts keep a Graph picklable for a distributed sweep).

    Raises
    ------
    ModelError
        On a dangling input, a tensor produced twice, a cycle, an output nothing produces, two
        ops of one name, an input dim that is not a size >= 0 or a name, an unknown dtype, or an
        initializer that is not a numpy array.

    Examples
    --------
    >>> g = Graph(
    ...     "tiny",
    ...     ops=(Op("Neg", "n", ("y",), ("z",)), Op("Relu", "r", ("x",), ("y",))),
    ...     inputs={"x": TensorType(("seq", 4), "float32")},
    ...     outputs=("z",),
    ... )
    >>> [op.name for op in g.ops], g.symbols
    (['r', 'n'], ('seq',))
    >>> g
    <Graph tiny ops=2 inputs=['x']>
    """

    name: str
    ops: tuple[Op, ...]
    inputs: Mapping[str, TensorType]
    outputs: tuple[str, ...]
    initializers: Mapping[str, np.ndarray] = field(default_factory=dict)
    opset: int = 17
    value_types: Mapping[str, TensorType] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, declared in self.inputs.items():
            _check_input_type(self.name, name, declared)
        for name, value in self.initializers.items():
            if not isinstance(value, np.ndarray):
                raise ModelError(
                    f"graph {self.name}: initializer {name!r}: expected a numpy array, "
                    f"got {type(value).__name__}"
                )
        _check_op_names(self.name, self.ops)
        kind = dict.fromkeys(self.initializers, "an initializer")
        for name in self.inputs:
            if name in kind:
                raise ModelError(
                    f"graph {self.name}: expected distinct input and initializer names, "
                    f"got {name!r} as both"
                )
            kind[name] = "a graph input"
        ops = topological_order(self.ops, kind, source_kind=kind)
        produced = set(kind).union(*(op.outputs for op in ops))
        missing = [name for name in self.outputs if name not in produced]
        if missing:
            raise ModelError(
                f"graph {self.name}: expected each output to be produced, got {missing[0]!r}"
            )
        # Frozen: the normalized fields are set once, here, and never again.
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "inputs", dict(self.inputs))
        object.__setattr__(self, "initializers", dict(self.initializers))
        object.__setattr__(self, "value_types", dict(self.value_types))

    @property
    def symbols(self) -> tuple[str, ...]:
        """The symbolic dimension names of the graph inputs, in order of first appearance."""
        return tuple(dict.fromkeys(s for t in self.inputs.values() for s in t.symbols))

    @property
    def is_static(self) -> bool:
        """True when every graph input has a static shape."""
        return all(t.is_static for t in self.inputs.values())

    @property
    def parameter_count(self) -> int:
        """Number of elements in the initializers."""
        return sum(int(a.size) for a in self.initializers.values())

    def producer(self, tensor: str) -> Op | None:
        """The op that produces `tensor`, or None for a graph input or initializer."""
        return next((op for op in self.ops if tensor in op.outputs), None)

    def consumers(self, tensor: str) -> tuple[Op, ...]:
        """The ops that read `tensor`, in graph order."""
        return tuple(op for op in self.ops if tensor in op.inputs)

    def __repr__(self) -> str:
        return f"<Graph {self.name} ops={len(self.ops)} inputs={list(self.inputs)}>"
