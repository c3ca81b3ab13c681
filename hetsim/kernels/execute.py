"""The eager reference run: every op's numpy kernel, in order, on real arrays.

Owns compiling a graph into a `Program` (kernels compiled once, tensors numbered into slots,
constant sub-graphs folded, the ops `fuse.py` rewrites fused, each intermediate freed after its
last use) and running it. This is
the reference simulated runs are checked against and the functional-mode kernel path, so the run
loop is kept tight: no attribute parsing, no name lookups, no per-op branching.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import ModelError, UnknownValueError, as_bool
from hetsim.ir import Graph, Op, TensorType, check_graph
from hetsim.ir.cache import GraphCache
from hetsim.kernels.arrays import owned_outputs, read_only
from hetsim.kernels.checks import raise_kernel_error
from hetsim.kernels.fuse import Fused, fused_of, with_epilogue
from hetsim.kernels.propagate import (
    bind_dims,
    check_input_array,
    check_input_names,
    check_inputs_mapping,
    input_signature,
    propagate,
)
from hetsim.kernels.registry import Kernel, lookup

__all__ = ["Program", "compile_program", "execute"]

_NONE_SLOT = 0  # always None: omitted optional inputs read from it
_DISCARD_SLOT = 1  # omitted outputs are written here, never read


@dataclass(frozen=True, slots=True)
class _Step:
    kernel: Kernel
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    frees: tuple[int, ...]
    op: Op  # the op it runs (a fused one: the head's): named when its kernel fails


@dataclass(frozen=True, slots=True)
class _Input:
    name: str
    slot: int
    declared: TensorType
    dtype: np.dtype[Any]


@dataclass(frozen=True, slots=True, eq=False)
class Program:
    """A graph compiled for eager runs: call `run` with input arrays, as often as needed."""

    graph: Graph
    steps: tuple[_Step, ...]
    initial: tuple[np.ndarray | None, ...]
    inputs: tuple[_Input, ...]
    outputs: tuple[tuple[str, int], ...]
    is_static: bool
    plan: tuple[tuple[Kernel, tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...] = field(
        init=False, repr=False
    )

    def __post_init__(self) -> None:
        plan = tuple((s.kernel, s.inputs, s.outputs, s.frees) for s in self.steps)
        object.__setattr__(self, "plan", plan)

    def __repr__(self) -> str:
        return f"<Program {self.graph.name} steps={len(self.steps)}>"

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Output name -> array for the graph's outputs; `inputs` are checked first."""
        self.check(inputs)
        return self._run(inputs)

    def _run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`run`, of `inputs` checked already."""
        values = list(self.initial)
        for spec in self.inputs:
            values[spec.slot] = inputs[spec.name]
        kernel = outs = None
        try:
            for kernel, ins, outs, frees in self.plan:  # plain tuples: unpacked for speed
                results = kernel([values[i] for i in ins])
                if len(outs) == 1:
                    values[outs[0]] = results[0]
                else:
                    for slot, result in zip(outs, results, strict=False):
                        values[slot] = result
                for slot in frees:
                    values[slot] = None
        except Exception as err:  # the step whose kernel failed, found only then: no cost
            failed = next(s.op for s in self.steps if s.kernel is kernel and s.outputs is outs)
            raise_kernel_error(failed, err)
        return owned_outputs({name: values[slot] for name, slot in self.outputs}, inputs)

    def check(self, inputs: Mapping[str, np.ndarray]) -> None:
        """Refuse `inputs` that `run` cannot take: missing or unknown names, another dtype than
        declared, a shape that does not match the declared one (the message names the input)."""
        check_input_names(self.graph, inputs, complete=True)
        for spec in self.inputs:
            given = inputs[spec.name]
            check_input_array(spec.name, given, spec.dtype)
            if self.is_static and given.shape != spec.declared.shape:
                bind_dims(self.graph, None, {spec.name: given.shape})
        if not self.is_static:
            bind_dims(self.graph, None, {s.name: inputs[s.name].shape for s in self.inputs})


def compile_program(graph: Graph, *, fuse_ops: bool = True) -> Program:
    """Compile every op of `graph` once and fold the ops whose inputs are all constants.

    With `fuse_ops`, the per-channel affine ops after a Conv (BatchNormalization, Mul and Add by
    constants) are first folded into it and a Relu after a Conv, Add, Sum or Concat runs in place
    (`hetsim.kernels.fuse`); the graph itself is left as it is.

    Raises
    ------
    ModelError
        An unsupported op or bad attributes.

    Examples
    --------
    >>> from hetsim.ir import Op
    >>> g = Graph(
    ...     "g",
    ...     (Op("Neg", "neg", ("w",), ("v",)), Op("Mul", "mul", ("x", "v"), ("y",))),
    ...     {"x": TensorType((2,), "float32")},
    ...     ("y",),
    ...     {"w": np.array([2.0, 3.0], np.float32)},
    ... )
    >>> program = compile_program(g)  # Neg reads only a weight: folded away
    >>> len(program.steps), program.run({"x": np.ones(2, np.float32)})["y"].tolist()
    (1, [-2.0, -3.0])
    """
    check_graph(graph, "compile_program")
    # tensor name -> its slot; the discard slot has no name (a tensor may have any name)
    slots: dict[str, int] = {"": _NONE_SLOT}
    constants: dict[int, np.ndarray] = {}

    def slot(name: str) -> int:
        found = slots.get(name)
        if found is None:
            found = slots[name] = len(slots) + 1  # after _DISCARD_SLOT
        return found

    fused = fused_of(graph) if fuse_ops else Fused(graph.ops)
    for name, value in itertools.chain(graph.initializers.items(), fused.constants.items()):
        constants[slot(name)] = value
    inputs = tuple(
        _Input(name, slot(name), t, np.dtype(t.dtype)) for name, t in graph.inputs.items()
    )
    steps: list[_Step] = []
    for op in fused.ops:
        kernel = lookup(op).compile(op, graph.opset)
        epilogue = fused.epilogues.get(op.outputs[0]) if op.outputs else None
        if epilogue is not None:
            kernel = with_epilogue(kernel, epilogue)
        ins = tuple(slots[name] for name in op.inputs)
        outs = tuple(slot(name) if name else _DISCARD_SLOT for name in op.outputs)
        if all(i in constants or i == _NONE_SLOT for i in ins):
            try:
                results = kernel([constants.get(i) for i in ins])
            except Exception as err:
                raise_kernel_error(op, err)
            pairs = zip(outs, results, strict=False)
            constants.update((o, r) for o, r in pairs if o != _DISCARD_SLOT)
            continue
        steps.append(_Step(kernel, ins, outs, (), op))
    kept = {slots[name] for name in graph.outputs}
    initial: list[np.ndarray | None] = [None] * (len(slots) + 1)  # and _DISCARD_SLOT
    for index, value in constants.items():
        initial[index] = read_only(value)  # kept for every run: an output may hand it out
    return Program(
        graph,
        _with_frees(steps, kept),
        tuple(initial),
        inputs,
        tuple((name, slots[name]) for name in graph.outputs),
        graph.is_static,
    )


def _with_frees(steps: list[_Step], kept: set[int]) -> tuple[_Step, ...]:
    """`steps` with each op output freed after its last reader (an unread one: at once).

    Inputs and constants are left alone: the caller and the program hold them anyway.
    """
    last_use: dict[int, int] = {}
    for index, step in enumerate(steps):
        for slot in step.inputs:
            if slot in last_use:
                last_use[slot] = index
        for slot in step.outputs:
            last_use[slot] = index
    frees: dict[int, list[int]] = {}
    for slot, index in last_use.items():
        if slot not in kept:
            frees.setdefault(index, []).append(slot)
    return tuple(
        _Step(s.kernel, s.inputs, s.outputs, tuple(frees.get(i, ())), s.op)
        for i, s in enumerate(steps)
    )


_CACHE_SIZE = 4  # each entry keeps a graph and its folded constants alive
_programs: GraphCache[Program] = GraphCache(_CACHE_SIZE)


def execute(
    graph: Graph, inputs: Mapping[str, np.ndarray], *, fuse: bool = True
) -> dict[str, np.ndarray]:
    """Run `graph` eagerly on `inputs` with the numpy kernels; no simulation.

    The compiled `Program` is cached per graph (the last four graphs), so repeated calls pay
    only for the kernels; a caller juggling more graphs keeps its own `compile_program` results.
    With `fuse` (the default), BatchNormalizations and per-channel Mul/Add are folded into the
    Convs before them (`hetsim.kernels.fuse`), as onnxruntime does: the outputs then differ from
    the op-by-op run by float32 rounding. ``fuse=False`` runs every op as the graph states it. A
    functional `hetsim.simulate` computes bit for bit what this does with the same `fuse`.

    Parameters
    ----------
    graph
        The model.
    inputs
        Input name -> numpy array, each with the declared dtype and a shape matching the
        declared one (symbolic dims bind to whatever size comes, consistently).
    fuse
        Fold per-channel affine ops into Convs and run Relus in place after their producers.

    Returns
    -------
    dict
        Output name -> array, in the graph's output order: writeable arrays of the caller's own,
        none a view of an input, a constant or another output (`owned_outputs`).

    Raises
    ------
    ModelError
        A missing or unknown input name, a wrong dtype, rank or dim (the message names the input),
        a `graph` that is not a `Graph`, `inputs` that are not a mapping, or `fuse` not a bool;
        an op whose inputs its shape rule refuses, as `hetsim.simulate` does (an Add of float32
        and int32, a 3-D Gemm: numpy would compute something); a kernel that fails on its
        inputs (naming its op).
    SimulationError
        A kernel whose arrays this machine has no room for (naming its op).

    Examples
    --------
    >>> from hetsim.ir import Op
    >>> g = Graph(
    ...     "g",
    ...     (Op("Add", "add", ("x", "w"), ("y",)), Op("Relu", "relu", ("y",), ("z",))),
    ...     {"x": TensorType(("n",), "float32")},
    ...     ("z",),
    ...     {"w": np.array([1.0, -5.0, 0.5], np.float32)},
    ... )
    >>> execute(g, {"x": np.array([1.0, 2.0, -3.0], np.float32)})["z"].tolist()
    [2.0, 0.0, 0.0]
    """
    check_graph(graph, "execute")  # simulate loads models by name; this runs graphs only
    flag = as_bool(fuse)  # numpy's bool as Python's
    if not isinstance(flag, bool):  # "no" read as true: fused, as simulate refuses it
        raise ModelError(f"execute: expected fuse True or False, got {fuse!r}")
    fuse = flag
    check_inputs_mapping(inputs)
    program = _programs.get(graph, lambda: compile_program(graph, fuse_ops=fuse), extra=fuse)
    program.check(inputs)
    _check_shapes(graph, inputs)  # after the inputs' own checks, which name the input
    return program._run(inputs)


_SHAPES_CHECKED_MAX = 64
"""Input signatures per graph whose shape checks `_check_shapes` remembers (then it starts over)."""
_shapes_checked: GraphCache[set[tuple[Any, ...]]] = GraphCache(_CACHE_SIZE)


def _check_shapes(graph: Graph, inputs: Mapping[str, np.ndarray]) -> None:
    """Run the ops' shape rules on `inputs`, as `hetsim.simulate` does, for the checks they hold:
    an op whose inputs its ONNX definition refuses (an Add of float32 and int32, a 3-D Gemm,
    Mod of floats without fmod=1) is refused here too, where numpy's rules computed a value.

    Once per graph and input signature (shape, dtype and, for the inputs shapes may depend on,
    the value: `input_signature`): about 2 ms cold for ResNet-50, against 70 ms for its kernels.
    A shape that follows a value not known before the run (one computed from data) is left to
    the kernels.
    """
    key = input_signature(graph, inputs)
    seen = _shapes_checked.get(graph, set)
    if key in seen:
        return
    with contextlib.suppress(UnknownValueError):
        propagate(graph, None, inputs)
    if len(seen) >= _SHAPES_CHECKED_MAX:
        seen.clear()
    seen.add(key)
