"""A small builder API for writing graphs in Python (the zoo and tests use it).

Owns naming (each op and tensor gets a unique, readable name) and the bookkeeping of inputs,
initializers and outputs; the structural checks are `Graph`'s own. Op semantics are not
checked here: the kernels registry does that when the graph is compiled or propagated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from hetsim.errors import ModelError
from hetsim.ir.graph import Dim, Graph, Op, TensorType

__all__ = ["MAX_OUTPUTS", "GraphBuilder"]

MAX_OUTPUTS = 65_536
"""The most outputs `GraphBuilder.op_with_outputs` names from a count (a Split into as many)."""

Source = str | np.ndarray | None
"""An op input: a tensor name, an array (added as an initializer), or None (omitted)."""


class GraphBuilder:
    """Collects inputs, initializers and ops, then builds a validated `Graph`.

    Parameters
    ----------
    name
        The graph name.
    opset
        The ONNX opset whose op semantics the graph follows.

    Examples
    --------
    >>> b = GraphBuilder("affine")
    >>> x = b.input("x", ("batch", 3))
    >>> y = b.op("Add", b.op("MatMul", x, np.eye(3, dtype=np.float32)), np.ones(3, np.float32))
    >>> g = b.build(y)
    >>> [(op.name, op.type, op.inputs) for op in g.ops]
    [('matmul0', 'MatMul', ('x', 'const0')), ('add0', 'Add', ('matmul0', 'const1'))]
    >>> g.outputs, sorted(g.initializers), g.symbols
    (('add0',), ['const0', 'const1'], ('batch',))
    """

    def __init__(self, name: str, opset: int = 17) -> None:
        self.name = name
        self.opset = opset
        self._inputs: dict[str, TensorType] = {}
        self._initializers: dict[str, np.ndarray] = {}
        self._ops: list[Op] = []
        self._outputs: list[str] = []
        self._names: set[str] = set()
        self._op_names: set[str] = set()
        self._counts: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"<GraphBuilder {self.name} ops={len(self._ops)} inputs={list(self._inputs)}>"

    def _claim(self, name: str) -> str:
        if name in self._names:
            raise ModelError(f"graph {self.name}: expected a new tensor name, got {name!r}")
        self._names.add(name)
        return name

    def _fresh(self, prefix: str, outputs: int = 0) -> str:
        """The next name ``<prefix><n>`` no tensor and no op has (an op named ``relu0`` by its
        caller, its output ``a``, had the next Relu named ``relu0`` too), nor, given `outputs`,
        its outputs ``<prefix><n>_<i>`` (a graph input ``split0_1`` had been taken again)."""
        while True:
            count = self._counts.get(prefix, 0)
            self._counts[prefix] = count + 1
            fresh = f"{prefix}{count}"
            names = (fresh, *(f"{fresh}_{i}" for i in range(outputs)))
            if not any(n in self._names or n in self._op_names for n in names):
                return fresh

    def input(self, name: str, shape: Sequence[Dim], dtype: str = "float32") -> str:
        """Declare a graph input; a `str` dimension is symbolic. Returns the tensor name.

        `build` checks the shape and the dtype (a numpy dtype name), as `Graph` does."""
        # Passed on as given, for `Graph` to refuse: a str shape made a tuple would be symbolic
        # dims, one per char, and np.dtype(None) is float64.
        is_dims = isinstance(shape, Sequence) and not isinstance(shape, str)
        dims = tuple(shape) if is_dims else cast(tuple[Dim, ...], shape)
        self._inputs[self._claim(name)] = TensorType(dims, dtype)
        return name

    def initializer(self, array: np.ndarray, name: str | None = None) -> str:
        """Add a constant tensor (a weight); returns its name (``const<n>`` unless given)."""
        name = self._claim(name or self._fresh("const"))
        self._initializers[name] = np.asarray(array)
        return name

    def op(
        self,
        op_type: str,
        *inputs: Source,
        name: str | None = None,
        output: str | None = None,
        **attrs: Any,
    ) -> str:
        """Append an op with one output; returns the output name.

        Parameters
        ----------
        op_type
            The ONNX op type (``"Conv"``).
        *inputs
            Tensor names, arrays (added as initializers) or None for an omitted input.
        name
            The op name; ``<optype><n>`` in lower case unless given.
        output
            The output name; the op name unless given.
        **attrs
            The op's attributes, as Python values.
        """
        name = name or self._fresh(self._op_type(op_type).lower())
        (result,) = self._append(op_type, inputs, name, [output or name], attrs)
        return result

    def op_with_outputs(
        self,
        op_type: str,
        *inputs: Source,
        outputs: int | Sequence[str],
        name: str | None = None,
        **attrs: Any,
    ) -> tuple[str, ...]:
        """Append an op with several outputs: a count (named ``<op name>_<i>``, at most
        `MAX_OUTPUTS`) or the names."""
        if (
            isinstance(outputs, bool)
            or not isinstance(outputs, int | Sequence)
            or isinstance(outputs, str)
        ):
            expected = "expected outputs a count or a sequence of names"
            raise ModelError(f"graph {self.name}: {expected}, got {outputs!r}")
        if isinstance(outputs, int) and not 0 <= outputs <= MAX_OUTPUTS:  # 2**70 ran for ever
            expected = f"expected an output count from 0 to {MAX_OUTPUTS:,}"
            raise ModelError(f"graph {self.name}: {expected}, got {outputs}")
        count = outputs if isinstance(outputs, int) else 0
        name = name or self._fresh(self._op_type(op_type).lower(), count)
        names = [f"{name}_{i}" for i in range(outputs)] if isinstance(outputs, int) else outputs
        return self._append(op_type, inputs, name, names, attrs)

    def _op_type(self, op_type: object) -> str:
        """`op_type`, refused unless a non-empty str (None failed on ``.lower()``)."""
        if not isinstance(op_type, str) or not op_type:
            expected = "expected an op type (a non-empty str)"
            raise ModelError(f"graph {self.name}: {expected}, got {op_type!r}")
        return op_type

    def _append(
        self,
        op_type: str,
        inputs: Sequence[Source],
        name: str,
        outputs: Sequence[str],
        attrs: dict[str, Any],
    ) -> tuple[str, ...]:
        # the outputs first, all or none: a refused op leaves no weight or name behind
        taken = [n for n in outputs if n]  # "" is an omitted output, as often as need be
        seen: set[str] = set()
        for n in taken:
            if n in self._names or n in seen:
                raise ModelError(f"graph {self.name}: expected a new tensor name, got {n!r}")
            seen.add(n)
        self._names.update(taken)  # before the inputs: a weight's fresh name avoids them
        sources = tuple(self._source(item) for item in inputs)
        claimed = tuple(outputs)
        self._ops.append(Op(op_type, name, sources, claimed, attrs))
        self._op_names.add(name)
        return claimed

    def _source(self, item: Source) -> str:
        if item is None:
            return ""
        if isinstance(item, np.ndarray):
            return self.initializer(item)
        return item

    def output(self, *names: str) -> None:
        """Mark tensors as graph outputs, in order."""
        self._outputs.extend(names)

    def build(self, *outputs: str) -> Graph:
        """The validated graph; `outputs` are added to the graph outputs first."""
        self.output(*outputs)
        return Graph(
            self.name,
            tuple(self._ops),
            dict(self._inputs),
            tuple(self._outputs),
            dict(self._initializers),
            self.opset,
        )
