"""Compile-time fusion for eager runs: the ops `compile_program` compiles instead of the graph's.

Owns two rewrites that ONNX semantics allow when the weights are constants:

- a BatchNormalization (inference mode) whose input only a Conv makes is folded into that Conv's
  weight and bias: ``W' = W·s`` and ``b' = (b - mean)·s + B`` per output channel, with
  ``s = scale / sqrt(var + epsilon)``, computed once in float64;
- a Relu whose input only a Conv, Add, Sum or Concat makes runs in place on that op's fresh
  output (an *epilogue*), so the activation is neither copied nor kept twice.

The `Graph` itself is never changed: the partitioner, the cost model and the simulator see the
original ops. Only `hetsim.kernels.execute` uses the result. Kernels live in their op modules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from hetsim.ir import Graph, Op
from hetsim.kernels.registry import Kernel, zeros

__all__ = ["EPILOGUES", "FRESH_OUTPUT", "Epilogue", "Fused", "fuse", "with_epilogue"]

Epilogue = Callable[[np.ndarray], np.ndarray]
"""Rewrites one array in place and returns it (a numpy scalar, which has no place, anew)."""


def _relu_in_place(y: np.ndarray) -> np.ndarray:
    if isinstance(y, np.ndarray):
        return np.maximum(y, zeros(y.shape, y.dtype), out=y)
    return np.maximum(y, 0)  # a 0-d Add or Sum gives a numpy scalar


EPILOGUES: dict[str, Epilogue] = {"Relu": _relu_in_place}
"""Op type -> the in-place form of that single-input, single-output, shape-keeping op."""

FRESH_OUTPUT: dict[str, int] = {"Conv": 1, "Add": 2, "Sum": 2, "Concat": 1}
"""Op type -> the fewest inputs with which its kernel always returns a new array that no other
tensor shares, so that an epilogue may overwrite it (a one-input Sum returns its input)."""

_FOLDED = "\0folded"  # suffix of the new constants' names; no ONNX name holds a NUL


@dataclass(frozen=True, slots=True)
class Fused:
    """The ops to compile, the new constants they read, and epilogues by output tensor name."""

    ops: tuple[Op, ...]
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)
    epilogues: Mapping[str, Epilogue] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Fused ops={len(self.ops)} epilogues={len(self.epilogues)}>"


def fuse(graph: Graph) -> Fused:
    """The ops of `graph` with BatchNormalizations folded into Convs and Relus made epilogues.

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
    """
    uses = Counter(name for op in graph.ops for name in op.inputs)
    uses.update(graph.outputs)
    ops, constants = _fold_batch_norms(graph, uses)
    ops, epilogues = _fold_epilogues(ops, uses)
    return Fused(tuple(ops), constants, epilogues)


def with_epilogue(kernel: Kernel, epilogue: Epilogue) -> Kernel:
    """`kernel` followed by `epilogue` on its one output, in place."""

    def fused(inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        return [epilogue(kernel(inputs)[0])]

    return fused


def _sole_consumers(ops: list[Op], uses: Counter[str]) -> dict[str, Op]:
    """Tensor name -> the op that reads it, for tensors read once, as one op's first input."""
    return {op.inputs[0]: op for op in ops if op.inputs and uses[op.inputs[0]] == 1}


def _fold_batch_norms(graph: Graph, uses: Counter[str]) -> tuple[list[Op], dict[str, np.ndarray]]:
    ops = list(graph.ops)
    consumers = _sole_consumers(ops, uses)
    constants: dict[str, np.ndarray] = {}
    dropped: set[int] = set()
    for index, op in enumerate(ops):
        norm = consumers.get(op.outputs[0]) if op.type == "Conv" else None
        if norm is None or norm.type != "BatchNormalization":
            continue
        folded = _folded_weights(op, norm, graph.initializers)
        if folded is None:
            continue
        weight, bias = op.outputs[0] + _FOLDED + "w", op.outputs[0] + _FOLDED + "b"
        constants[weight], constants[bias] = folded
        ops[index] = replace(op, inputs=(op.inputs[0], weight, bias), outputs=norm.outputs[:1])
        dropped.add(id(norm))
    return [op for op in ops if id(op) not in dropped], constants


def _folded_weights(
    conv: Op, norm: Op, initializers: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The Conv weight and bias with `norm` folded in, or None when the fold is not exact."""
    params = [initializers.get(name) for name in norm.inputs[1:5]]
    conv_bias = conv.inputs[2] if len(conv.inputs) > 2 else ""
    weight = initializers.get(conv.inputs[1])
    inference = not int(norm.attrs.get("training_mode", 0)) and not any(norm.outputs[1:])
    if weight is None or weight.ndim < 3 or len(params) != 4 or not inference:
        return None
    if not int(norm.attrs.get("spatial", 1)) or (conv_bias and conv_bias not in initializers):
        return None
    present = [p for p in params if p is not None and p.shape == weight.shape[:1]]
    if len(present) != 4:
        return None
    scale, shift, mean, var = (p.astype(np.float64) for p in present)
    factor = scale / np.sqrt(var + float(norm.attrs.get("epsilon", 1e-5)))
    bias = initializers[conv_bias].astype(np.float64) if conv_bias else np.zeros_like(mean)
    per_channel = (-1, *(1,) * (weight.ndim - 1))
    new_weight = (weight * factor.reshape(per_channel)).astype(weight.dtype)
    return new_weight, ((bias - mean) * factor + shift).astype(weight.dtype)


def _fold_epilogues(ops: list[Op], uses: Counter[str]) -> tuple[list[Op], dict[str, Epilogue]]:
    consumers = _sole_consumers(ops, uses)
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
    return [op for op in ops if id(op) not in dropped], epilogues
