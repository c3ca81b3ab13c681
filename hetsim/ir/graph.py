"""The model IR's graph: the ops and tensors of a model (`hetsim.ir.nodes`), in a `Graph`.

Owns the graph's structural rules: every op input is produced somewhere,
every tensor is produced once, the ops form no cycle, and `Graph.ops` is in topological order.
Op semantics (kernels, shape and cost rules) live in `hetsim.kernels`, reading ONNX lives in
`hetsim.frontend`, and writing graphs by hand lives in `hetsim.ir.builder`.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from hetsim.errors import ModelError, is_count, printable
from hetsim.ir.fields import (
    checked_dtype,
    checked_input_type,
    checked_mapping,
    checked_names,
    checked_ops,
    checked_value_type,
)
from hetsim.ir.nodes import Dim, Op, TensorType, bind_shape, op_label, shown

__all__ = ["Dim", "Graph", "Op", "TensorType", "bind_shape", "op_label", "topological_order"]


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


def check_graph(graph: object, what: str) -> Graph:
    """`graph`, if it is a `Graph`; the function `what` that takes it refuses anything else (a
    zoo model's name, None) by name, where it failed inside on an attribute of it.

    Raises
    ------
    ModelError
        Not a Graph.

    Examples
    --------
    >>> check_graph("mlp", "summarize")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: summarize: expected a Graph (hetsim.load_model makes one of a zoo \
name or an .onnx path), got str 'mlp'
    """
    if not isinstance(graph, Graph):
        raise ModelError(
            f"{what}: expected a Graph (hetsim.load_model makes one of a zoo name or an .onnx "
            f"path), got {shown(graph)}"
        )
    return graph


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
    try:
        producer = _producers(ops, sources, kinds)
    except AttributeError:  # found on failure only: nothing per op
        other = next((op for op in ops if not isinstance(op, Op)), None)
        if other is None:
            raise
        raise ModelError(
            f"topological_order: expected ops a collection of Ops, got {shown(other)} in it"
        ) from None
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


def _read_only(array: np.ndarray) -> np.ndarray:
    """`array`, or a read-only view of it where it is writeable (no copy)."""
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)  # weakly keyed: value_inputs
class Graph:
    """A model: ops in topological order, graph inputs and outputs, initializers (weights).

    Building a Graph checks its fields and structure and puts `ops` in topological order
    (stable: an ordered list stays as it is). Mappings are copied, so the caller's dicts stay
    its own; treat them as read-only (plain dicts keep a Graph picklable for a distributed
    sweep). The initializer arrays are the caller's, not copied, and the Graph holds read-only
    views of them: a Graph is a value, and what `execute` and `simulate` keep of it (folded
    constants, fused weights) is computed once, so an array changed in place after a first run
    would not be seen there while the op-by-op kernels read the change. Writing through
    ``graph.initializers`` is refused by numpy (``assignment destination is read-only``); the
    caller's own array can still be written, and must not be once the Graph is built (build a
    new Graph with new arrays). A pickled or copied Graph holds read-only arrays too. Lists
    become tuples (of outputs, of an op's inputs or outputs, of an input's shape: such an op or
    type is replaced by a copy), an input's numpy integer dims become ints and its dtype numpy's
    own name (``"f4"`` becomes ``"float32"``). `value_types` (declared types of inner tensors,
    where known) and `value_dtypes` (declared dtypes of tensors whose shape the model does not
    state: an ONNX ``value_info`` or output of unknown rank) are checked here for their dtype
    alone; propagation (`hetsim.kernels.propagate`) refuses an op whose output dtype is not the
    declared one.

    Raises
    ------
    ModelError
        On a field of the wrong type: a `name` that is not a str; `ops` not an iterable of `Op`
        (a str, a single Op); `inputs`, `initializers` or `value_types` not a mapping with str
        keys; `outputs` not a tuple or list of non-empty str; `opset` not an integer >= 1 (a
        bool neither); an op whose type or name is not a non-empty str, whose inputs or outputs
        are not a tuple or list of str, or whose attrs are not a mapping with str keys (the
        message names the graph and the op); a graph input that is not a `TensorType`, or
        whose shape is not a tuple or list of sizes >= 0 and names, or whose dtype is not a
        numpy dtype name of a bool or number; an initializer that is not a numpy array; a
        `value_types` entry that is not a `TensorType` or whose dtype is not such a name, or a
        `value_dtypes` entry that is not such a name. On a
        dangling input, a tensor produced twice, a cycle (the message names the op), an output
        nothing produces, two ops of one name, or an op named as hetsim names its own steps
        (`hetsim.ir.fields.RESERVED_OP_NAMES`: ``(return)``, ``(load)``, ``(stage)``,
        ``(graph pool)``).

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
    value_dtypes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ModelError(f"graph: expected a str name, got {shown(self.name)}")
        where = f"graph {printable(self.name)}"
        inputs = checked_mapping(f"{where}: inputs", self.inputs, "TensorType")
        initializers = checked_mapping(f"{where}: initializers", self.initializers, "array")
        value_types = checked_mapping(f"{where}: value_types", self.value_types, "TensorType")
        outputs = checked_names(f"{where}: outputs", self.outputs, can_be_empty=False)
        for field_name, names in (("inputs", inputs), ("initializers", initializers)):
            if "" in names:  # it names an omitted input: an op reading it read nothing
                raise ModelError(
                    f"{where}: {field_name}: expected non-empty names ('' marks an omitted "
                    "input), got ''"
                )
        if not is_count(self.opset, 1):
            raise ModelError(f"{where}: opset: expected an integer >= 1, got {shown(self.opset)}")
        for name, declared in inputs.items():
            inputs[name] = checked_input_type(self.name, name, declared)
        for name, value in initializers.items():
            if not isinstance(value, np.ndarray):
                raise ModelError(
                    f"{where}: initializer {name!r}: expected a numpy array, "
                    f"got {type(value).__name__}"
                )
            initializers[name] = _read_only(value)
        for name, declared in value_types.items():
            value_types[name] = checked_value_type(self.name, name, declared)
        value_dtypes = checked_mapping(f"{where}: value_dtypes", self.value_dtypes, "dtype name")
        for name, dtype in value_dtypes.items():
            value_dtypes[name] = checked_dtype(f"{where}: value_dtypes[{name!r}]", dtype)
        ops = checked_ops(self.name, self.ops)
        kind = dict.fromkeys(initializers, "an initializer")
        for name in inputs:
            if name in kind:
                raise ModelError(
                    f"{where}: expected distinct input and initializer names, got {name!r} as both"
                )
            kind[name] = "a graph input"
        ops = topological_order(ops, kind, source_kind=kind)
        produced = set(kind).union(*(op.outputs for op in ops))
        missing = [name for name in outputs if name not in produced]
        if missing:
            raise ModelError(f"{where}: expected each output to be produced, got {missing[0]!r}")
        # Frozen: the normalized fields are set once, here, and never again.
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "initializers", initializers)
        object.__setattr__(self, "opset", int(self.opset))
        object.__setattr__(self, "value_types", value_types)
        object.__setattr__(self, "value_dtypes", value_dtypes)

    def __setstate__(self, state: list[Any]) -> None:
        """Unpickled or deep-copied (no `__post_init__`): the fields as the dataclass sets them,
        the initializers read-only again (unpickled arrays are writeable)."""
        for item, value in zip(fields(self), state, strict=True):
            object.__setattr__(self, item.name, value)
        frozen = {name: _read_only(array) for name, array in self.initializers.items()}
        object.__setattr__(self, "initializers", frozen)

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

    def declared_for(
        self, keep: Callable[[str], bool]
    ) -> tuple[dict[str, TensorType], dict[str, str]]:
        """The declarations (`value_types`, `value_dtypes`) of the tensors `keep` takes, for a
        rewrite of this graph to carry: each rewrite that drops tensors keeps both maps alike.

        >>> x = TensorType((2,), "float32")
        >>> g = Graph("g", (Op("Relu", "r", ("x",), ("y",)),), {"x": x}, ("y",),
        ...           value_types={"x": x, "z": x}, value_dtypes={"y": "float32", "z": "int64"})
        >>> g.declared_for(lambda name: name != "z")
        ({'x': TensorType(shape=(2,), dtype='float32')}, {'y': 'float32'})
        """
        types = {name: t for name, t in self.value_types.items() if keep(name)}
        dtypes = {name: d for name, d in self.value_dtypes.items() if keep(name)}
        return types, dtypes

    def producer(self, tensor: str) -> Op | None:
        """The op that produces `tensor`, or None for a graph input or initializer (and for
        ``""``, an omitted output: no tensor)."""
        if not tensor:
            return None
        return next((op for op in self.ops if tensor in op.outputs), None)

    def consumers(self, tensor: str) -> tuple[Op, ...]:
        """The ops that read `tensor`, in graph order (none for ``""``, an omitted input)."""
        if not tensor:
            return ()
        return tuple(op for op in self.ops if tensor in op.inputs)

    def __repr__(self) -> str:
        return f"<Graph {self.name} ops={len(self.ops)} inputs={list(self.inputs)}>"
