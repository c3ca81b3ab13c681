"""Compile-time fusion for eager runs: the ops `compile_program` compiles instead of the graph's.

Owns two rewrites that ONNX semantics allow when the weights are constants:

- the per-channel affine ops after a Conv are folded into its weight and bias, one after the
  other while each is the only reader of the tensor before it: a BatchNormalization (inference
  mode, ``s = scale / sqrt(var + epsilon)``, ``t = B - mean·s``), and a Mul or an Add by a
  constant that varies only along the channels (``s`` or ``t`` that constant). Each gives
  ``W' = W·s`` and ``b' = b·s + t`` per output channel, computed in float64 and cast once;
- a Relu whose input only a Conv, Add, Sum or Concat makes runs in place on that op's fresh
  output (an *epilogue*), so the activation is neither copied nor kept twice.

The `Graph` itself is never changed: the partitioner, the cost model and the simulator's timing
see the original ops. `hetsim.kernels.execute` compiles the result, and a functional
`hetsim.simulate` computes values with it (`Fused.absorbed` says which op's kernel does whose
work: `hetsim.sim.fusion`). Kernels live in their op modules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hetsim.ir import Graph, Op
from hetsim.ir.cache import GraphCache
from hetsim.kernels.arrays import zeros
from hetsim.kernels.checks import flag_attr, float_attr
from hetsim.kernels.elementwise import NUMPY_BROADCAST_OPSET
from hetsim.kernels.registry import Kernel

__all__ = [
    "EPILOGUES",
    "FRESH_OUTPUT",
    "Epilogue",
    "Fused",
    "clear_fused",
    "fuse",
    "fused_of",
    "with_epilogue",
]

Epilogue = Callable[[np.ndarray], np.ndarray]
"""Rewrites one array in place and returns it (a numpy scalar, which has no place, anew)."""


def _relu_in_place(y: np.ndarray) -> np.ndarray:
    if isinstance(y, np.ndarray):
        result: np.ndarray = np.maximum(y, zeros(y.shape, y.dtype), out=y)
        return result
    return np.maximum(y, 0)  # a 0-d Add or Sum gives a numpy scalar


EPILOGUES: dict[str, Epilogue] = {"Relu": _relu_in_place}
"""Op type -> the in-place form of that single-input, single-output, shape-keeping op."""

FRESH_OUTPUT: dict[str, int] = {"Conv": 1, "Add": 2, "Sum": 2, "Concat": 1}
"""Op type -> the fewest inputs with which its kernel always returns a new array that no other
tensor shares, so that an epilogue may overwrite it (a one-input Sum returns its input)."""

_FOLDED = "\0folded"
"""The suffix of the new constants' names (a NUL, which names rarely hold: a graph's name that
takes it anyway makes `_fresh` lengthen the suffix)."""


@dataclass(frozen=True, slots=True)
class Fused:
    """The ops to compile, the new constants they read, epilogues by output tensor name, and
    the names of the graph's ops each kept op absorbed (in graph order; kept ops that absorbed
    nothing are left out). A kept op keeps its name, reads its own first input (its others may
    be new constants) and writes the outputs of the last op it absorbed."""

    ops: tuple[Op, ...]
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)
    epilogues: Mapping[str, Epilogue] = field(default_factory=dict)
    absorbed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Fused ops={len(self.ops)} epilogues={len(self.epilogues)}>"


def fuse(graph: Graph) -> Fused:
    """The ops of `graph` with per-channel affine ops folded into Convs and Relus made epilogues.

    Examples
    --------
    >>> from hetsim.ir import GraphBuilder
    >>> b = GraphBuilder("g")
    >>> x = b.input("x", (1, 1, 3), "float32")
    >>> w = b.initializer(np.array([[[2.0]]], np.float32), "w")
    >>> one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    >>> params = [b.initializer(v, n) for n, v in [("s", one), ("b", zero), ("m", one), ("v", one)]]
    >>> y = b.op("Conv", x, w)
    >>> z = b.op("BatchNormalization", y, *params, epsilon=0.0)
    >>> fused = fuse(b.build(b.op("Relu", z)))
    >>> [op.type for op in fused.ops], [v.tolist() for v in fused.constants.values()]
    (['Conv'], [[[[2.0]]], [-1.0]])
    >>> list(fused.epilogues) == [fused.ops[0].outputs[0]]  # the Relu runs in place
    True
    >>> dict(fused.absorbed)  # the Conv's kernel does the work of both ops after it
    {'conv0': ('batchnormalization0', 'relu0')}
    """
    uses = Counter(name for op in graph.ops for name in op.inputs)
    uses.update(graph.outputs)
    absorbed: dict[str, list[str]] = {}
    ops, constants = _fold_into_convs(graph, uses, absorbed)
    ops, epilogues = _fold_epilogues(ops, uses, absorbed)
    return Fused(
        tuple(ops), constants, epilogues, {head: tuple(names) for head, names in absorbed.items()}
    )


FUSED_GRAPHS = 4
"""Graphs whose `fuse` result `fused_of` keeps (the most recently first seen)."""
_fused: GraphCache[Fused] = GraphCache(FUSED_GRAPHS)


def fused_of(graph: Graph) -> Fused:
    """`fuse(graph)`, kept for the last `FUSED_GRAPHS` graphs (`hetsim.ir.cache.GraphCache`).

    `hetsim.execute` and a functional `hetsim.simulate` both compute with it, so a model's
    folded weights exist once: ResNet-50's take 94 MB, and 0.24-0.31 s to make.
    """
    return _fused.get(graph, lambda: fuse(graph))


def clear_fused() -> None:
    """Forget every graph's `fuse` result `fused_of` keeps."""
    _fused.clear()


def with_epilogue(kernel: Kernel, epilogue: Epilogue) -> Kernel:
    """`kernel` followed by `epilogue` on its one output, in place."""

    def fused(inputs: Sequence[Any]) -> list[np.ndarray]:
        return [epilogue(kernel(inputs)[0])]

    return fused


def _sole_readers(ops: list[Op], uses: Counter[str]) -> dict[str, Op]:
    """Tensor name -> the op that reads it, for tensors read once (graph outputs count)."""
    return {name: op for op in ops for name in op.inputs if name and uses[name] == 1}


def _fold_into_convs(
    graph: Graph, uses: Counter[str], absorbed: dict[str, list[str]]
) -> tuple[list[Op], dict[str, np.ndarray]]:
    """Each Conv with constant weights absorbs the per-channel affine ops that follow it (their
    names go to `absorbed`, under the Conv's)."""
    ops = list(graph.ops)
    inits = graph.initializers
    readers = _sole_readers(ops, uses)
    constants: dict[str, np.ndarray] = {}
    dropped: set[int] = set()
    taken = {*graph.inputs, *inits, *(n for op in ops for n in (*op.inputs, *op.outputs))}
    for index, op in enumerate(ops):
        start = _conv_affine(op, inits) if op.type == "Conv" else None
        if start is None:
            continue
        weight, bias = start
        dtype = inits[op.inputs[1]].dtype
        out = op.outputs[0]
        while (after := readers.get(out)) is not None:
            step = _affine(after, out, weight, dtype, inits, graph.opset)
            if step is None:
                break
            scale, shift = step
            folded = weight * scale.reshape(-1, *(1,) * (weight.ndim - 1))
            shifted = bias * scale + shift
            if not (_fits(folded, dtype) and _fits(shifted, dtype)):
                break  # run `after` as it is: its product passes the weight's dtype
            weight, bias = folded, shifted
            dropped.add(id(after))
            absorbed.setdefault(op.name, []).append(after.name)
            out = after.outputs[0]
        if out == op.outputs[0]:  # nothing absorbed
            continue
        names = (_fresh(op.outputs[0] + "w", taken), _fresh(op.outputs[0] + "b", taken))
        constants[names[0]], constants[names[1]] = weight.astype(dtype), bias.astype(dtype)
        ops[index] = replace(op, inputs=(op.inputs[0], *names), outputs=(out,))
    return [op for op in ops if id(op) not in dropped], constants


def _fits(values: np.ndarray, dtype: np.dtype[Any]) -> bool:
    """Whether the float64 `values` stay finite in `dtype` where they are finite: a float16 Conv
    weight of 1000 times a BatchNormalization scale of 95 is past float16's 65504, and folded it
    made every output inf where the two ops give 953.

    >>> _fits(np.array([95346.0]), np.dtype(np.float16)), _fits(np.array([953.0]), np.float16)
    (False, True)
    """
    with np.errstate(over="ignore"):
        cast = values.astype(dtype)
    return bool(np.all(np.isfinite(cast) | ~np.isfinite(values)))


def _fresh(stem: str, taken: set[str]) -> str:
    """A name for a new constant made from `stem`, which no tensor of the graph has (a graph
    input named like a folded weight was read in its place, silently); taken from now on.

    >>> _fresh("cw", {"a"}) == "cw" + _FOLDED, _fresh("cw", {"cw" + _FOLDED}) == "cw\\0" + _FOLDED
    (True, True)
    """
    name = stem + _FOLDED
    while name in taken:
        stem += "\0"
        name = stem + _FOLDED
    taken.add(name)
    return name


def _conv_affine(conv: Op, inits: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """A Conv's weight and bias in float64, or None when either is not a constant."""
    weight = inits.get(conv.inputs[1]) if len(conv.inputs) > 1 else None
    conv_bias = conv.inputs[2] if len(conv.inputs) > 2 else ""
    if weight is None or weight.ndim < 3 or (conv_bias and conv_bias not in inits):
        return None
    if len(conv.outputs) != 1:
        return None
    channels = weight.shape[0]
    bias = inits[conv_bias] if conv_bias else np.zeros(channels)
    if bias.shape != (channels,):  # the Conv's shape rule refuses it, naming the op
        return None
    return weight.astype(np.float64), bias.astype(np.float64)


def _affine(
    op: Op,
    name: str,
    weight: np.ndarray,
    dtype: np.dtype[Any],
    inits: Mapping[str, np.ndarray],
    opset: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(scale, shift)`` per output channel when `op` computes ``x·scale + shift`` of the
    Conv output `name` (of `dtype`) exactly that way (same dtype, same shape out), else None.

    A BatchNormalization in inference mode: ``scale = γ / sqrt(var + ε)``, ``shift = β -
    mean·scale``; a Mul or an Add of `name` by a constant that only varies along the channels
    (a scalar, ``(C, 1, ..., 1)`` or ``(1, C, 1, ..., 1)``), as numpy broadcasts it: not in an
    opset before `NUMPY_BROADCAST_OPSET`, where B is aligned at ``axis`` (a ``(C, 1, 1)`` at
    axis 0 varies along the batch: folded, it had been added along the channels).
    """
    channels, rank = weight.shape[0], weight.ndim
    if op.type == "BatchNormalization":
        if op.inputs[0] != name or any(op.outputs[1:]) or flag_attr(op, "training_mode", 0):
            return None
        params = [inits.get(n) for n in op.inputs[1:5]]
        if not flag_attr(op, "spatial", 1) or len(params) != 4:
            return None
        if any(p is None or p.shape != (channels,) for p in params):
            return None
        gamma, beta, mean, var = (np.asarray(p, np.float64) for p in params)
        scale = gamma / np.sqrt(var + float_attr(op, "epsilon", 1e-5))
        return scale, beta - mean * scale
    if op.type not in ("Mul", "Add") or len(op.inputs) != 2 or name not in op.inputs:
        return None
    if opset < NUMPY_BROADCAST_OPSET:
        return None
    other = op.inputs[1] if op.inputs[0] == name else op.inputs[0]
    value = inits.get(other)  # `name` is read once, so `other` is not `name`
    if value is None or value.dtype != dtype:
        return None
    vector = _per_channel(value, channels, rank)
    if vector is None:
        return None
    if op.type == "Mul":
        return vector, np.zeros(channels)
    return np.ones(channels), vector


def _per_channel(value: np.ndarray, channels: int, rank: int) -> np.ndarray | None:
    """`value` as one float64 per channel of a rank-`rank` ``(N, C, ...)`` tensor, when
    broadcasting it against that tensor varies only along C and changes no shape.

    >>> _per_channel(np.arange(3.0).reshape(3, 1, 1), 3, 4).tolist()
    [0.0, 1.0, 2.0]
    >>> _per_channel(np.float32(2.0), 3, 4).tolist(), _per_channel(np.ones((3, 2, 1)), 3, 4)
    ([2.0, 2.0, 2.0], None)
    """
    if value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + value.shape  # numpy aligns shapes on the right
    if shape[0] != 1 or any(size != 1 for size in shape[2:]):
        return None
    if shape[1] == channels:
        return value.reshape(channels).astype(np.float64)
    if shape[1] == 1:
        return np.full(channels, float(value.reshape(-1)[0]))
    return None


def _fold_epilogues(
    ops: list[Op], uses: Counter[str], absorbed: dict[str, list[str]]
) -> tuple[list[Op], dict[str, Epilogue]]:
    consumers = _sole_readers(ops, uses)
    epilogues: dict[str, Epilogue] = {}
    dropped: set[int] = set()
    for index, op in enumerate(ops):
        is_fresh = len(op.inputs) >= FRESH_OUTPUT.get(op.type, len(op.inputs) + 1)
        after = consumers.get(op.outputs[0]) if is_fresh and len(op.outputs) == 1 else None
        if after is None or after.type not in EPILOGUES or len(after.inputs) != 1:
            continue
        ops[index] = replace(op, outputs=after.outputs)
        epilogues[after.outputs[0]] = EPILOGUES[after.type]
        dropped.add(id(after))
        absorbed.setdefault(op.name, []).append(after.name)
    return [op for op in ops if id(op) not in dropped], epilogues
