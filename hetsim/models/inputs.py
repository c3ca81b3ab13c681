"""Made-up inputs for a model: what `hetsim.api.simulate` runs a model on when no arrays are
given, deterministic in the seed (`make_inputs`), the shapes and dtypes they take
(`input_types`), which `simulate` checks against the target's memory before making them, and
whether a failure owes to them (`made_up_read_by`, `owes_to_made_up`), which `simulate` then
says (`made_up_hint`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from hetsim.errors import ModelError, OpError, SimulationError, is_count
from hetsim.ir import Graph, bind_shape, check_graph, check_graph_dims
from hetsim.kernels import bind_dims, propagate_costs
from hetsim.units import format_bytes

MAX_NUMPY_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32
"""The most dims a numpy array has (numpy 2 raised it from 32): a made-up input of more is
refused by name (numpy says only "maximum supported dimension ... 64, found 100")."""

__all__ = [
    "INT_INPUT_HIGH",
    "REDRAWS",
    "check_seed",
    "input_label",
    "input_types",
    "made_up_hint",
    "made_up_read_by",
    "make_inputs",
    "owes_to_made_up",
]

INT_INPUT_HIGH = 4
"""Made-up integer inputs are drawn from ``[0, INT_INPUT_HIGH)``: valid indices of small tables."""


def input_types(graph: Graph, dims: Mapping[str, int]) -> dict[str, tuple[tuple[int, ...], Any]]:
    """The shape and dtype of each input `make_inputs` makes, with every symbolic dim bound."""
    bound = bind_dims(graph, dims)
    return {
        name: (bind_shape(declared.shape, bound), np.dtype(declared.dtype))
        for name, declared in graph.inputs.items()
        if name not in graph.initializers
    }


def input_label(name: str, shape: tuple[int, ...], dtype: Any) -> str:
    """How a message names an input: ``input 'x' (float32[1, 8, 64])``."""
    return f"input {name!r} ({dtype}[{', '.join(map(str, shape))}])"


def check_seed(seed: object) -> None:
    """Raise a `ModelError` unless `seed` is a non-negative integer.

    >>> check_seed("a")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: seed: expected a non-negative integer, got 'a'
    """
    if not is_count(seed):
        raise ModelError(f"seed: expected a non-negative integer, got {seed!r}")


def make_inputs(
    graph: Graph, seed: int = 0, dims: Mapping[str, int] | None = None
) -> dict[str, np.ndarray]:
    """Deterministic inputs for every graph input: same graph, seed and dims, same arrays.

    Floats come from ``np.random.default_rng(seed).standard_normal``, integers from
    ``integers(0, INT_INPUT_HIGH)``, booleans from ``integers(0, 2)``, one generator for all
    inputs in the graph's input order, each cast to its declared dtype.

    Raises
    ------
    ModelError
        `graph` not a `Graph`, a seed that is not a non-negative integer, `dims` that
        `check_graph_dims` refuses, or a symbolic dim without a size in `dims`.
    SimulationError
        An input too big for this machine's memory (the message names it and its size).

    Examples
    --------
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (), {"x": TensorType((2, "n"), "float32"),
    ...                     "i": TensorType(("n",), "int64")}, ())
    >>> made = make_inputs(g, seed=0, dims={"n": 3})
    >>> made["x"].shape, made["x"].dtype, made["i"].tolist()
    ((2, 3), dtype('float32'), [2, 2, 3])
    """
    check_graph(graph, "make_inputs")  # a model's name: an AttributeError on .inputs
    check_seed(seed)
    rng = np.random.default_rng(seed)
    made = {}
    for name, (shape, dtype) in input_types(graph, check_graph_dims(graph, dims)).items():
        try:
            if dtype.kind == "f":
                made[name] = rng.standard_normal(shape).astype(dtype)
            elif dtype.kind == "b":
                made[name] = rng.integers(0, 2, shape).astype(dtype)
            else:
                made[name] = rng.integers(0, INT_INPUT_HIGH, shape).astype(dtype)
        except (MemoryError, ValueError) as err:  # ValueError: a dim past numpy's int64 range
            if len(shape) > MAX_NUMPY_DIMS:  # timing mode takes them: it makes no array
                raise SimulationError(
                    f"{input_label(name, shape, dtype)}: expected at most {MAX_NUMPY_DIMS} dims "
                    f"(numpy's limit), got {len(shape)} ({err})"
                ) from err
            size = format_bytes(math.prod(shape) * dtype.itemsize)
            raise SimulationError(
                f"{input_label(name, shape, dtype)}: expected an array this machine can "
                f"allocate, got {size} ({err})"
            ) from err
    return made


def made_up_read_by(graph: Graph, op: str, made: Collection[str]) -> list[str]:
    """The inputs among `made` whose values op `op` reads, directly or through the ops before
    it (a shape computed from one): those a failure of its shape rule may owe to the seed."""
    reaches: dict[str, frozenset[str]] = {name: frozenset((name,)) for name in made}
    for node in graph.ops:
        found = frozenset().union(*(reaches.get(name, frozenset()) for name in node.inputs))
        if node.name == op:
            return sorted(found)
        if found:
            reaches.update(dict.fromkeys(node.outputs, found))
    return []


REDRAWS = 4
"""How many other sets of made-up values `owes_to_made_up` propagates a failed model with."""


def owes_to_made_up(
    made: Sequence[str],
    err: OpError,
    graph: Graph,
    dims: Mapping[str, int],
    given: Mapping[str, np.ndarray],
    seed: int,
) -> bool:
    """Whether propagation's failure `err` depends on the values of inputs `made` (made up from
    `seed`): propagated again with those inputs made up from each of the `REDRAWS` next seeds,
    it passes or fails otherwise at least once. A failure of the op's dtypes or of its own
    constants (a Softmax of an int64 input, a OneHot's negative depth) is the same with any
    values, and the hint to pass the inputs would mislead; values drawn anew, not shifted,
    change how they relate too (a Range's delta of ``a - b``, 0 where both came out 3)."""
    for other in range(seed + 1, seed + 1 + REDRAWS):
        drawn = make_inputs(graph, other, dims)
        try:  # not through hetsim.api's metas cache, which would keep every draw's metas
            propagate_costs(graph, dims, {**given, **{name: drawn[name] for name in made}})
        except Exception as again:  # another error (an UnknownValueError) depends on them too
            if type(again) is not type(err) or str(again) != str(err):
                return True
        else:
            return True
    return False


def made_up_hint(names: Sequence[str], seed: int, *, values: bool = False) -> str:
    """The hint for a model that failed on integer inputs `simulate` made from `seed`: a shape
    read from them (a Reshape's) is made up too; with `values`, what a kernel read of them (an
    index, a length) is.

    >>> made_up_hint(["s"], 0)
    "input 's' was made from seed 0, not given: a shape read from it is made up; pass it in inputs"
    >>> print(made_up_hint(["n"], 1, values=True))
    input 'n' was made from seed 1, not given: if the value refused is read from it, pass it in \
inputs
    """
    one = len(names) == 1
    who = f"input {names[0]!r} was" if one else f"inputs {', '.join(map(repr, names))} were"
    it = "it" if one else "them"
    if values:  # the op reads it, but the value refused may be the model's own
        advice = f"if the value refused is read from {it}, pass {it} in inputs"
    else:
        advice = f"a shape read from {it} is made up; pass {it} in inputs"
    return f"{who} made from seed {seed}, not given: {advice}"
