"""Shape propagation: give every tensor of a graph its `Meta` without running the model.

Owns binding symbolic dims (``"seq"``) to sizes, from explicit `dims` or from the shapes of given
input arrays, and walking the ops' shape rules in order. Small tensors whose inputs are all known
(shape arithmetic: Shape -> Gather -> Concat -> Reshape) are computed for real with the op's
kernel, so value-dependent shape rules resolve in timing mode too. `propagate_costs` gives every
op's `Cost` from the same walk. The rules themselves live in the op modules; the eager run is
`execute.py`.
"""

from __future__ import annotations

import shlex
import weakref
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from hetsim.errors import ModelError, OpError, UnknownValueError, close_name, is_count
from hetsim.ir import Graph, Op, bind_shape, check_graph, op_label
from hetsim.ir.dims import dim_pairs
from hetsim.kernels.checks import raise_kernel_error
from hetsim.kernels.costs import Cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import lookup
from hetsim.memo import plain_key

__all__ = [
    "SMALL_VALUE_SIZE",
    "bind_dims",
    "check_input_array",
    "check_input_names",
    "check_inputs_mapping",
    "declared_shape_notes",
    "infer_metas",
    "initializer_note",
    "input_dtype_error",
    "input_signature",
    "keeps_value",
    "propagate",
    "propagate_costs",
    "value_inputs",
]

SMALL_VALUE_SIZE = 1024
"""Outputs up to this many elements are computed for real when all their inputs are known."""


def _shown(shape: tuple[int | str, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def bind_dims(
    graph: Graph,
    dims: Mapping[str, int] | None = None,
    shapes: Mapping[str, tuple[int, ...]] | None = None,
) -> dict[str, int]:
    """Bind every symbolic dim of the graph's inputs to a size.

    Parameters
    ----------
    graph
        The graph whose `inputs` declare the (possibly symbolic) shapes.
    dims
        Explicit bindings, e.g. ``{"seq": 128}``.
    shapes
        Actual shapes of some inputs; each symbolic dim in them binds to the size found.

    Raises
    ------
    ModelError
        A size in `dims` that is not a non-negative integer, a symbolic dim left unbound, two
        conflicting bindings, a rank or static dim mismatch; the message names the input and
        the dim.

    Examples
    --------
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (), {"x": TensorType(("batch", "seq"), "float32")}, ())
    >>> bind_dims(g, {"batch": 1}, {"x": (1, 8)})
    {'batch': 1, 'seq': 8}
    """
    bound = {name: _checked_size(name, size) for name, size in (dims or {}).items()}
    source = {name: "dims" for name in bound}
    for name, array_shape in (shapes or {}).items():
        declared = graph.inputs[name].shape
        if len(array_shape) != len(declared):
            raise ModelError(
                f"input {name!r}: expected rank {len(declared)} {_shown(declared)}, "
                f"got shape {_shown(array_shape)}"
            )
        for axis, (want, size) in enumerate(zip(declared, array_shape, strict=True)):
            if isinstance(want, int):
                if want != size:
                    raise ModelError(
                        f"input {name!r}: expected shape {_shown(declared)}, "
                        f"got {_shown(array_shape)} (axis {axis})"
                    )
            elif bound.setdefault(want, size) != size:
                raise ModelError(
                    f"input {name!r}: expected dim {want!r} = {bound[want]} "
                    f"(from {source[want]}), got {size}"
                )
            else:
                source.setdefault(want, f"input {name!r}")
    for name, declared_type in graph.inputs.items():
        for want in declared_type.shape:
            if isinstance(want, str) and want not in bound:
                raise ModelError(
                    f"input {name!r}: expected a size for symbolic dim {want!r} "
                    f"(pass dims={{{want!r}: ...}},{_dims_option(want)} or an input array), "
                    "got none"
                )
    return bound


def _dims_option(name: str) -> str:
    """How ``--dims`` takes a size for dim `name`, quoted for a shell; nothing for a name it
    cannot take (`hetsim.ir.dims.dim_pairs` reads it as another: an ``=`` before a ``,``, or
    spaces at an end).

    >>> _dims_option("seq"), _dims_option("Min(s0, 10)"), _dims_option("p=1,q")
    (' --dims seq=N on the command line,', " --dims 'Min(s0, 10)=N' on the command line,", '')
    """
    pair = f"{name}=N"
    if dim_pairs(pair) != [pair]:
        return ""
    return f" --dims {shlex.quote(pair)} on the command line,"


def _checked_size(name: str, size: Any) -> int:
    """A dim's size as given in `dims`: an integer of at least 0 (a bool, a float or a string is
    refused rather than rounded or parsed)."""
    if not is_count(size):
        raise ModelError(f"dims: expected a non-negative integer size for {name!r}, got {size!r}")
    return int(size)


def check_input_array(name: str, value: Any, declared: Any) -> None:
    """Graph input `name` must be given as a numpy array of its declared dtype (`propagate`,
    `hetsim.execute` and `hetsim.simulate` alike): the graph's kernels, byte sizes and costs all
    follow from it.

    A subclass that computes otherwise (``np.matrix`` stays 2-D through a reduction, a masked
    array's mask is honoured by some numpy calls and not others) is refused: its results were
    silently wrong; a memory-mapped array computes as an array and is taken.

    >>> check_input_array("x", [1.0], "float32")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input 'x': expected float32 array, got list
    >>> check_input_array("x", np.float32(1.0), "float32")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input 'x': expected float32 array, got a numpy scalar float32 \
(np.array(x) makes it a 0-d array)
    >>> check_input_array("x", np.ma.array(np.ones(2, np.float32), mask=[1, 0]), "float32")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: input 'x': expected float32 array, got MaskedArray, a subclass of \
numpy.ndarray (np.asarray(x) makes it a plain array)
    """
    if isinstance(value, np.generic):  # "expected float32 array, got float32" said nothing
        found = f"a numpy scalar {value.dtype} (np.array(x) makes it a 0-d array)"
        raise input_dtype_error(name, declared, found)
    if not isinstance(value, np.ndarray):  # a list read as float64 named the wrong problem
        raise input_dtype_error(name, declared, type(value).__name__)
    if type(value) is not np.ndarray and not isinstance(value, np.memmap):
        why = "a subclass of numpy.ndarray (np.asarray(x) makes it a plain array)"
        found = f"{type(value).__name__}, {why}"
        raise input_dtype_error(name, declared, found)
    if value.dtype != np.dtype(declared):
        raise input_dtype_error(name, declared, value.dtype)


def check_inputs_mapping(inputs: object) -> None:
    """Input arrays come by name: a list (or anything but a mapping) is a ModelError, one
    wording for `simulate` and `hetsim.execute`.

    >>> check_inputs_mapping([1.0])
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: inputs: expected a mapping of input name -> array, got list
    """
    if not isinstance(inputs, Mapping):
        raise ModelError(
            f"inputs: expected a mapping of input name -> array, got {type(inputs).__name__}"
        )
    keys = [key for key in inputs if not isinstance(key, str)]
    if keys:  # sorted with the names, a 1 among them was a TypeError from deep inside
        raise ModelError(f"inputs: expected input names (str) as keys, got {keys!r}")


def check_input_names(graph: Graph, inputs: Mapping[str, Any], *, complete: bool) -> None:
    """Every name of `inputs` is an input of `graph`, and (`complete`) every input is given:
    one error naming the missing and the unknown together (a misspelt name is both), for
    `hetsim.execute`, `propagate` and `hetsim.simulate` alike.

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Relu", "r", ("x",), ("y",)),), {"x": TensorType((2,), "float32")},
    ...     ("y",))
    >>> check_input_names(g, {"z": np.ones(2, np.float32)}, complete=True)
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: inputs: expected ['x'], got missing ['x'] and unknown ['z']
    >>> check_input_names(g, {"z": np.ones(2, np.float32)}, complete=False)
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: inputs: expected names from ['x'], got unknown ['z']
    """
    missing = [name for name in graph.inputs if name not in inputs] if complete else []
    unknown = sorted(set(inputs) - set(graph.inputs))
    if not (missing or unknown):
        return
    got = " and ".join(
        [*([f"missing {missing}"] if missing else []), *([f"unknown {unknown}"] if unknown else [])]
    )
    expected = sorted(graph.inputs) if complete else f"names from {sorted(graph.inputs)}"
    note = initializer_note(graph, unknown) or _misspelt_note(unknown, missing or graph.inputs)
    raise ModelError(f"inputs: expected {expected}, got {got}{note}")


def _misspelt_note(unknown: list[str], names: Collection[str]) -> str:
    """Which of `names` each unknown input name likely misspells, where one is close.

    >>> _misspelt_note(["data", "extra"], ["data_0"])
    " (did you mean 'data_0' for 'data'?)"
    """
    guesses = [(name, close_name(name, names)) for name in unknown]
    said = ", ".join(f"{close!r} for {name!r}" for name, close in guesses if close is not None)
    return f" (did you mean {said}?)" if said else ""


def input_dtype_error(name: str, declared: Any, found: Any) -> ModelError:
    """The error of graph input `name` given as `found` (a dtype, or a type that is not an
    array) where an array of dtype `declared` was expected: one wording for `propagate` and
    `hetsim.execute`.

    >>> print(input_dtype_error("x", "float32", np.dtype("int64")))
    input 'x': expected float32 array, got int64
    """
    return ModelError(f"input {name!r}: expected {np.dtype(declared)} array, got {found}")


def initializer_note(graph: Graph, names: list[str]) -> str:
    """What an input error adds when one of `names`, given as inputs, is a weight of `graph`:
    an ONNX file may list its initializers among its inputs, and the frontend keeps them as
    constants (folded, placed with the ops that read them), so they take no value at run time.

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Add", "a", ("x", "w"), ("y",)),), {"x": TensorType((2,), "float32")},
    ...     ("y",), {"w": np.ones(2, np.float32)})
    >>> initializer_note(g, ["w", "z"]), initializer_note(g, ["z"])
    (" ('w' is an initializer of the model: a constant, not an input)", '')
    """
    weights = [name for name in names if name in graph.initializers]
    if not weights:
        return ""
    return f" ({weights[0]!r} is an initializer of the model: a constant, not an input)"


def keeps_value(array: np.ndarray) -> bool:
    """Whether propagation keeps an input array's value, not just its shape, before any shape is
    known to need it: a small integer array (at most `SMALL_VALUE_SIZE` elements) may feed shape
    arithmetic (an Expand's shape); float data is left to `hetsim.execute`, unless a shape of the
    graph needs it (`value_inputs`).

    Examples
    --------
    >>> keeps_value(np.array([3, 1])), keeps_value(np.zeros(2, np.float32))
    (True, False)
    """
    return array.dtype.kind in "iub" and array.size <= SMALL_VALUE_SIZE


_needed: weakref.WeakKeyDictionary[Graph, frozenset[str]] = weakref.WeakKeyDictionary()
"""Graph -> the inputs a shape of it was found to need (`value_inputs`), for as long as the
graph lives (a `Graph` hashes by identity); only a graph with such an input has an entry."""


def value_inputs(graph: Graph, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs among `inputs` whose values propagation keeps: the small integer ones
    (`keeps_value`), and any other a shape of `graph` was found to need (a Resize's float scales,
    a Range's float limit, given as inputs: learned by `propagate` when a shape rule asked).

    A cache of propagation's results keys them on these values.
    """
    needed = _needed.get(graph, frozenset())
    return {name: v for name, v in inputs.items() if name in needed or keeps_value(np.asarray(v))}


def input_signature(graph: Graph, inputs: Mapping[str, Any]) -> tuple[Any, ...]:
    """What propagation reads of `inputs`: each one's name, shape and dtype, and the bytes of
    the values it keeps (`value_inputs`); the key of a cache of its results.

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (), {"x": TensorType((2,), "float32"), "s": TensorType((1,), "int64")},
    ...           ("x",))
    >>> input_signature(g, {"x": np.zeros(2, np.float32), "s": np.array([3])})[0][:3]
    ('s', (1,), '<i8')
    """
    arrays = {name: np.asarray(value) for name, value in inputs.items()}
    kept = value_inputs(graph, arrays)
    return tuple(
        (name, a.shape, a.dtype.str, a.tobytes() if name in kept else None)
        for name, a in sorted(arrays.items())
    )


def _given_upstream(graph: Graph, tensor: str, given: Mapping[str, Any]) -> set[str]:
    """The inputs among `given` that `tensor` is computed from (itself, if it is one)."""
    producers = {out: op for op in graph.ops for out in op.outputs if out}
    found, stack, seen = set(), [tensor], {tensor}
    while stack:
        name = stack.pop()
        if name in given:
            found.add(name)
        op = producers.get(name)
        for source in op.inputs if op is not None else ():
            if source and source not in seen:
                seen.add(source)
                stack.append(source)
    return found


def _initial_metas(
    graph: Graph,
    bound: Mapping[str, int],
    inputs: Mapping[str, np.ndarray],
    shared: dict[tuple[tuple[int, ...], np.dtype[Any]], Meta],
    needed: frozenset[str],
) -> dict[str, Meta]:
    metas = {name: Meta.of(value) for name, value in graph.initializers.items()}
    for name, declared in graph.inputs.items():
        given = inputs.get(name)
        if given is not None:
            array = np.asarray(given)
            keep = name in needed or keeps_value(array)
            metas[name] = _shared(Meta.of(array, keep_value=keep), shared)
        elif name not in metas:
            meta = Meta(bind_shape(declared.shape, bound), np.dtype(declared.dtype))
            metas[name] = _shared(meta, shared)
    return metas


def _shared(meta: Meta, shared: dict[tuple[tuple[int, ...], np.dtype[Any]], Meta]) -> Meta:
    """One `Meta` object per (shape, dtype) without a value, so signatures can key on `id`."""
    if meta.value is not None:
        return meta
    return shared.setdefault((meta.shape, meta.dtype), meta)


def propagate(
    graph: Graph,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
) -> dict[str, Meta]:
    """The `Meta` of every tensor in `graph`: inputs, initializers and every op output.

    Parameters
    ----------
    graph
        The model.
    dims
        Sizes of symbolic dims; others are taken from the shapes of `inputs`.
    inputs
        Optional input arrays; their shapes bind dims, and small integer ones keep their values.

    Raises
    ------
    ModelError
        An input of another dtype than declared, an unbound or conflicting dim, an unsupported
        op, or a shape rule that rejects its inputs.

    Examples
    --------
    >>> from hetsim.ir import Op, TensorType
    >>> g = Graph(
    ...     "g",
    ...     (Op("Shape", "s", ("x",), ("n",)), Op("ConstantOfShape", "c", ("n",), ("y",))),
    ...     {"x": TensorType(("seq", 2), "float32")},
    ...     ("y",),
    ... )
    >>> metas = propagate(g, {"seq": 3})
    >>> metas["n"].value.tolist(), metas["y"].shape
    ([3, 2], (3, 2))
    """
    return _walk(check_graph(graph, "propagate"), dims, inputs, None)


def propagate_costs(
    graph: Graph,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, Meta], dict[str, Cost]]:
    """`propagate`, and every op's `Cost` at those metas (op name -> cost), from one walk.

    An op's cost is a function of its type, attributes and input and output metas; the outputs
    are a function of what the walk keys its reuse on, so ops that reuse a shape rule's outputs
    share one `Cost` object as well (as `hetsim.partition.costs.op_costs` shares them). One walk
    instead of propagation and then `op_costs`: 1.1-1.2 against 1.8-2.1 µs per op on a 1e5-op
    chain or DAG. Raises as `propagate` does.

    Examples
    --------
    >>> from hetsim.ir import Op, TensorType
    >>> g = Graph("g", (Op("Relu", "a", ("x",), ("y",)), Op("Relu", "b", ("y",), ("z",))),
    ...           {"x": TensorType((2,), "float32")}, ("z",))
    >>> metas, costs = propagate_costs(g)
    >>> costs["a"], costs["a"] is costs["b"]
    (Cost(flops=2, bytes_read=8, bytes_written=8, op_class='elementwise'), True)
    """
    costs: dict[str, Cost] = {}
    return _walk(check_graph(graph, "propagate_costs"), dims, inputs, costs), costs


def _walk(
    graph: Graph,
    dims: Mapping[str, int] | None,
    inputs: Mapping[str, np.ndarray] | None,
    costs: dict[str, Cost] | None,
) -> dict[str, Meta]:
    """Every tensor's `Meta`; with `costs`, fill it with every op's `Cost` as well."""
    given = dict(inputs or {})
    check_input_names(graph, given, complete=False)
    for name, value in given.items():
        check_input_array(name, value, graph.inputs[name].dtype)
    bound = bind_dims(graph, dims, {k: np.shape(v) for k, v in given.items()})
    needed = _needed.get(graph, frozenset())
    while True:
        try:
            return _walk_once(graph, bound, given, costs, needed)
        except UnknownValueError as err:
            # a shape needs the value of a given input kept as a shape only (a float one): keep
            # it, from now on for this graph (`value_inputs`), and walk again
            more = _given_upstream(graph, err.tensor, given) - needed
            if not more:
                raise
            needed |= more
            _needed[graph] = needed
            if costs is not None:
                costs.clear()


def _walk_once(
    graph: Graph,
    bound: Mapping[str, int],
    given: Mapping[str, Any],
    costs: dict[str, Cost] | None,
    needed: frozenset[str],
) -> dict[str, Meta]:
    shared: dict[tuple[tuple[int, ...], np.dtype[Any]], Meta] = {}
    metas = _initial_metas(graph, bound, given, shared, needed)
    # A shape rule is a pure function of the op type, attributes, output arity and input metas.
    # Metas without a value are shared objects (`_shared`), so an op whose signature was seen
    # before reuses the earlier outputs (and cost): one tuple and one dict lookup instead of a
    # rule call and new Metas (a chain of 1e5 Relus runs the Relu rule once). Every keyed Meta
    # stays alive in `metas` or `shared` for the whole walk, so its `id` is not reused.
    seen: dict[tuple[Any, ...], tuple[list[Meta], Cost | None]] = {}
    opset = graph.opset
    # inlined for speed: a Graph is validated, so every named input is in `metas` by now and
    # `get` returns None exactly for an omitted ("") one
    get = metas.get
    for op in graph.ops:
        in_metas = list(map(get, op.inputs))
        outputs = op.outputs
        attrs = _attrs_key(op.attrs) if op.attrs else ()
        arity = len(outputs) if "" not in outputs else tuple(map(bool, outputs))
        key = (op.type, attrs, arity, *map(id, in_metas))
        found = seen.get(key)
        if found is None:
            try:
                out_metas = _infer(op, opset, in_metas, shared)
            except UnknownValueError as err:
                if err.tensor in graph.inputs and err.tensor not in given:
                    raise err.of_graph_input() from None
                raise  # a given input: `_walk` keeps its value and walks again
            cost = None if costs is None else _cost(op, in_metas, out_metas)
            if attrs is not None and _is_reusable(in_metas):
                seen[key] = (out_metas, cost)
        else:
            out_metas, cost = found
        if costs is not None:
            costs[op.name] = cost  # type: ignore[assignment]
        if len(outputs) == 1:  # nearly every op: no zip made
            if outputs[0]:
                metas[outputs[0]] = out_metas[0]
            continue
        # strict=False: an omitted trailing output ("") may have no meta (an op naming more
        # outputs than its rule gives is refused by the rule's wrapper, `register`)
        for name, meta in zip(outputs, out_metas, strict=False):
            if name:
                metas[name] = meta
    if graph.value_types or graph.value_dtypes:
        _check_declared(graph, metas)
    return metas


def _check_declared(graph: Graph, metas: Mapping[str, Meta]) -> None:
    """Refuse a tensor whose producer gives another dtype than the model declares for it (an
    ONNX ``value_info`` or graph output type, with a shape or without one: `Graph.value_dtypes`),
    as onnxruntime refuses such a model: run on, the tensor reached its consumers, and the
    outputs their caller, in a type the model says it never has."""
    declared_dtypes = {
        **graph.value_dtypes,
        **{name: declared.dtype for name, declared in graph.value_types.items()},
    }
    for name, dtype in declared_dtypes.items():
        meta = metas.get(name)
        if meta is None or meta.dtype == np.dtype(dtype):
            continue
        op = graph.producer(name)  # a walk over the ops: only for a mismatch
        if op is None:  # a graph input: checked against its array where one is given
            continue
        raise OpError(
            f"{op_label(op)}: expected output {name!r} of the dtype the model declares for it, "
            f"{np.dtype(dtype)}, got {meta.dtype}",
            op.name,
        )


MAX_SHAPE_NOTES = 3
"""Tensors `declared_shape_notes` names one by one; the rest it counts."""


def declared_shape_notes(graph: Graph, metas: Mapping[str, Meta]) -> list[str]:
    """A note where tensors' shapes differ from those the model declares for them (an ONNX
    ``value_info`` or graph output), dim by dim where the declared dim is a number: the run
    goes on, as onnxruntime's does (it warns, "Error merging shape info ... Falling back to
    lenient merge"), since the producer's rule is what computes; a model whose declared shapes
    went stale (its input's batch changed, its outputs' not) is common. Empty where they agree.

    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Relu", "r", ("x",), ("y",)),), {"x": TensorType((2, 3), "float32")},
    ...           ("y",), value_types={"y": TensorType(("n", 7), "float32")})
    >>> declared_shape_notes(g, propagate(g))
    ['tensor y: shape [2, 3], where the model declares [n, 7]']
    """
    differing = []
    for name, declared in graph.value_types.items():
        meta = metas.get(name)
        if meta is None or name in graph.inputs:  # an input: checked against its array
            continue
        shape = declared.shape
        if len(shape) != len(meta.shape) or any(
            d.__class__ is int and d != m for d, m in zip(shape, meta.shape, strict=True)
        ):
            dims = ", ".join(map(str, shape))  # a symbol unquoted, as the model names it
            differing.append(f"{name}: shape {list(meta.shape)}, where the model declares [{dims}]")
    if not differing:
        return []
    named = differing[:MAX_SHAPE_NOTES]
    more = len(differing) - len(named)
    tail = f"; and {more} more" if more else ""
    return [f"tensor {'; tensor '.join(named)}{tail}"]


def _cost(op: Op, in_metas: list[Meta | None], out_metas: list[Meta]) -> Cost:
    """`op`'s cost rule, given the metas of its named outputs (as `op_costs` gives them)."""
    if "" in op.outputs:
        out_metas = [m for name, m in zip(op.outputs, out_metas, strict=False) if name]
    return lookup(op).cost(op, in_metas, out_metas)


def _attrs_key(attrs: Mapping[str, Any]) -> Hashable | None:
    """The attributes as a hashable key that tells their types apart (`plain_key`: an ``axis``
    of 1.0 had reused the outputs of one of 1, never meeting the rule that refuses it), or None
    when one is not plain data (a tensor)."""
    try:
        return plain_key(attrs if attrs.__class__ is dict else dict(attrs))
    except TypeError:
        return None


def _is_reusable(in_metas: list[Meta | None]) -> bool:
    """False when every present input has a value: the outputs may be computed for real."""
    return any(m is not None and m.value is None for m in in_metas)


def infer_metas(op: Op, opset: int, in_metas: Sequence[Meta | None]) -> list[Meta]:
    """The output metas of `op`'s shape rule; what the rule raises other than a `HetsimError`
    (an `OverflowError` its checks missed) becomes an `OpError` naming the op.

    Examples
    --------
    >>> op = Op("Relu", "r0", ("x",), ("y",))
    >>> infer_metas(op, 17, [Meta((2, 3), np.dtype("float32"))])
    [<Meta float32[2, 3]>]
    """
    try:
        return lookup(op).infer(op, opset, in_metas)
    except Exception as err:  # a rule's own checks raise ModelErrors; this is what they missed
        raise_kernel_error(op, err, "expected attributes its shape rule can use")


def _infer(
    op: Op,
    opset: int,
    in_metas: list[Meta | None],
    shared: dict[tuple[tuple[int, ...], np.dtype[Any]], Meta],
) -> list[Meta]:
    """Run `op`'s shape rule; compute small outputs of known inputs for real."""
    out_metas = infer_metas(op, opset, in_metas)
    if _is_small_known(in_metas, out_metas):
        kernel = lookup(op).compile(op, opset)
        try:
            values = kernel([None if m is None else m.value for m in in_metas])
        except Exception as err:
            raise_kernel_error(op, err)
        return [
            Meta(m.shape, m.dtype, np.asarray(v)) for m, v in zip(out_metas, values, strict=False)
        ]
    return [_shared(m, shared) for m in out_metas]


def _is_small_known(inputs: list[Meta | None], outputs: list[Meta]) -> bool:
    """True when every input's value is known and the outputs are small and not yet computed."""
    return (
        all(m is None or m.value is not None for m in inputs)
        and all(m.value is None for m in outputs)
        and all(m.size <= SMALL_VALUE_SIZE for m in outputs)
    )
