"""The op registry: one `OpDef` per ONNX op type, holding its kernel, shape rule and cost rule.

Op modules (`elementwise.py`, `nn.py`, ...) fill `OPS` with `register`; nothing else writes it.
This module owns the shared vocabulary (`Meta`, `Cost`, op classes) and the helpers every op
module uses to read attributes and to describe a default cost.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import numpy as np

from hetsim.errors import HetsimError, ModelError, UnknownValueError
from hetsim.ir import Op, op_label

__all__ = [
    "ALL_INPUTS",
    "ONNX_DTYPES",
    "OPS",
    "OP_CLASSES",
    "Cost",
    "Kernel",
    "Meta",
    "OpDef",
    "attr",
    "broadcast_shape",
    "choice",
    "constant_input",
    "dtype_of",
    "elementwise_cost",
    "lookup",
    "memoize",
    "movement_cost",
    "nbytes",
    "normalize_axes",
    "normalize_axis",
    "op_error",
    "present",
    "raise_kernel_error",
    "register",
    "same_as_input",
    "view_cost",
    "zeros",
]

T = TypeVar("T")

OP_CLASSES = (
    "matmul",
    "conv",
    "elementwise",
    "reduction",
    "normalization",
    "data_movement",
    "other",
)


@dataclass(frozen=True, slots=True)
class Meta:
    """What is known of one tensor while shapes propagate: shape, dtype and maybe its value.

    `value` is set for constants and for small tensors computed during propagation (shape
    arithmetic), so that rules such as Reshape's can read them.
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    value: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes the tensor occupies."""
        return self.size * self.dtype.itemsize

    @classmethod
    def of(cls, array: np.ndarray, *, keep_value: bool = True) -> Meta:
        """The Meta of a concrete array, keeping its value when asked."""
        return cls(tuple(array.shape), array.dtype, array if keep_value else None)

    def __repr__(self) -> str:
        known = " value" if self.value is not None else ""
        return f"<Meta {self.dtype}{list(self.shape)}{known}>"


@dataclass(frozen=True, slots=True)
class Cost:
    """The work of one op: flops, bytes read and written, and the op class its efficiency uses.

    `scratch_bytes` is what hetsim's own numpy lowering moves beyond the inputs and outputs (a
    Conv's im2col columns, written and read back; Erf's float64 temporaries). A vendor kernel
    (implicit-GEMM or direct conv, a fused erf) moves none of it, so only processors with
    ``lowering: numpy`` count it (`hetsim.cost.kernel_us`); the calibrated ``local`` target is
    one.

    `gemm_dim` is the smallest of M, N and K of a MatMul or Gemm (of one GEMM of a batched
    MatMul; a vector operand's M or N is 1) or of the GEMM a Conv lowers to (per group and
    image: output channels per group, output pixels, input channels per group × taps); 0 for
    an op that is not one. A BLAS GEMM with a small dimension reaches a smaller share of peak
    (`hetsim.cost.kernel_us`, ``gemm_half_dim``).

    `numpy_calls` and `numpy_flops` are the rest of what the numpy lowering does apart from the
    op's own computation: further numpy calls (a quantized op centers its operands, then scales,
    rounds, shifts, saturates and casts its accumulator, one whole-array pass each) and the
    flops of those passes, which run at the elementwise rate whatever the op's class. Like
    `scratch_bytes`, they count only on ``lowering: numpy`` processors, where each call costs
    ``kernel_latency_us`` (`hetsim.cost.kernel_us`); a vendor kernel fuses them.
    """

    flops: float
    bytes_read: int
    bytes_written: int
    op_class: str
    scratch_bytes: int = 0
    gemm_dim: int = 0
    numpy_calls: int = 0
    numpy_flops: float = 0.0

    @property
    def bytes_total(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def bytes_with_scratch(self) -> int:
        """What a ``lowering: numpy`` processor moves: `bytes_total` plus `scratch_bytes`."""
        return self.bytes_read + self.bytes_written + self.scratch_bytes

    def __repr__(self) -> str:
        scratch = f", scratch_bytes={self.scratch_bytes}" if self.scratch_bytes else ""
        gemm = f", gemm_dim={self.gemm_dim}" if self.gemm_dim else ""
        passes = (
            f", numpy_calls={self.numpy_calls}, numpy_flops={self.numpy_flops!r}"
            if self.numpy_calls
            else ""
        )
        return (
            f"Cost(flops={self.flops!r}, bytes_read={self.bytes_read!r}, "
            f"bytes_written={self.bytes_written!r}, op_class={self.op_class!r}{scratch}{gemm}"
            f"{passes})"
        )


Kernel = Callable[[Sequence[Any]], list[np.ndarray]]
"""A compiled op: input arrays (None for an omitted optional one) in, one array per output out."""
Compile = Callable[[Op, int], Kernel]
Infer = Callable[[Op, int, Sequence[Meta | None]], list[Meta]]
CostRule = Callable[[Op, Sequence[Meta | None], Sequence[Meta]], Cost]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op type: how to compile its kernel, infer its output shapes and count its cost.

    Parameters
    ----------
    type
        The ONNX op type, e.g. ``"Conv"``.
    op_class
        One of `OP_CLASSES`; the cost model picks the device's efficiency by it.
    compile
        ``compile(op, opset) -> kernel``; reads and checks the attributes once.
    infer
        ``infer(op, opset, input_metas) -> output_metas``; the shape rule.
    cost
        ``cost(op, input_metas, output_metas) -> Cost``.
    domain
        The ONNX domain that defines it: ``""``, the default one, or another (onnxruntime's
        ``"com.microsoft"``); the frontend reads the op in that domain only.
    """

    type: str
    op_class: str
    compile: Compile
    infer: Infer
    cost: CostRule
    domain: str = ""

    def __repr__(self) -> str:
        return f"<OpDef {self.type} class={self.op_class}>"


OPS: dict[str, OpDef] = {}


ALL_INPUTS = "all"
"""`register`'s ``one_type`` for an op whose inputs are all of ONNX's one type T (Concat, Sum)."""

Grouping = tuple[int, ...] | tuple[tuple[int, ...], ...] | str
"""Input positions of one type, groups of them, or `ALL_INPUTS`."""

OneType = Grouping | Mapping[int, Grouping]
"""`register`'s ``one_type``: a `Grouping`; or, for an op whose schema regrouped its types, a
mapping from the opset each grouping holds from."""


def register(
    op_type: str,
    op_class: str,
    *,
    compile: Compile,
    infer: Infer,
    cost: CostRule | None = None,
    one_type: OneType = (),
    domain: str = "",
) -> OpDef:
    """Add `op_type` (of ONNX `domain`, the default one unless given) to `OPS`; the default
    cost is `elementwise_cost` (one flop per output).

    `one_type`: the input positions ONNX gives one type T (or `ALL_INPUTS`), or several such
    groups (Slice: ``(1, 2, 3, 4)``, its Tind), or, where the schema changed them, each grouping
    by the opset it holds from (BatchNormalization: ``{1: ALL_INPUTS, 14: ((0, 1, 2), (3, 4)),
    15: ((1, 2), (3, 4))}``: one T, then T and U, then X's T apart from T1 and T2). The present
    inputs of a group must be of one dtype, checked before the shape rule: numpy would promote a
    float32 and a float64 to float64 in the kernel, where the rule (and so every size and cost)
    kept float32.
    """
    assert op_class in OP_CLASSES, f"{op_type}: unknown op class {op_class!r}"
    existing = OPS.get(op_type)
    again = existing is not None and _source(existing.compile) == _source(compile) is not None
    assert existing is None or again, f"{op_type} registered twice"
    if one_type:
        infer = _of_one_type(infer, one_type)
    compile = _naming_the_op(compile)
    definition = OpDef(
        op_type, op_class, compile, infer, cost or elementwise_cost(op_class), domain
    )
    OPS[op_type] = definition
    return definition


def _of_one_type(infer: Infer, one_type: OneType) -> Infer:
    """`infer`, after checking that the inputs of each group of `one_type` (at the op's opset)
    are of one dtype."""
    by_opset = one_type if isinstance(one_type, Mapping) else {1: one_type}
    since = sorted(by_opset, reverse=True)
    assert since[-1:] == [1], f"one_type {one_type!r}: expected a grouping from opset 1"
    at_opset: dict[int, tuple[tuple[int, ...], ...]] = {}  # opset -> its grouping, once found

    def checked(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        groups = at_opset.get(opset)
        if groups is None:
            version = next((v for v in since if v <= opset), 1)
            groups = at_opset[opset] = _groups(by_opset[version])
        for group in groups or (range(len(inputs)),):
            present = [inputs[i] for i in group if i < len(inputs)]
            dtypes = list(dict.fromkeys(m.dtype for m in present if m is not None))
            if len(dtypes) > 1:
                raise op_error(op, "expected inputs of one dtype", " and ".join(map(str, dtypes)))
        return infer(op, opset, inputs)

    return checked


def _groups(form: Grouping) -> tuple[tuple[int, ...], ...]:
    """One grouping of `one_type` as groups of positions; ``()`` for `ALL_INPUTS`."""
    if form == ALL_INPUTS:
        return ()
    assert isinstance(form, tuple), f"one_type: expected positions, got {form!r}"
    assert form, "one_type: expected positions, got none"
    return form if isinstance(form[0], tuple) else (form,)


def _naming_the_op(compile: Compile) -> Compile:
    """`compile`, whose failure on an op's attributes (a Softmax ``axis`` of ``"last"``: int()
    fails) raises a ModelError naming the op rather than the bare ValueError, and whose kernel
    gives arrays (`_giving_arrays`)."""

    @functools.wraps(compile)
    def checked(op: Op, opset: int) -> Kernel:
        try:
            kernel = compile(op, opset)
        except Exception as err:
            raise_kernel_error(op, err, "expected attributes its kernel can use")
        return _giving_arrays(kernel)

    return checked


def _giving_arrays(kernel: Kernel) -> Kernel:
    """`kernel`, with any 0-d result made an array: a numpy ufunc on 0-d arrays gives a numpy
    scalar (``np.sqrt(np.array(4.0))`` is ``np.float64(2.0)``), which `execute` would hand out
    as an output and constant folding would refuse as an initializer."""

    def giving_arrays(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        results = kernel(inputs)
        for result in results:
            if result.__class__ is not np.ndarray and result is not None:
                return [r if r is None else np.asarray(r) for r in results]
        return results

    return giving_arrays


def _source(function: Callable[..., Any]) -> tuple[str, int] | None:
    """Where `function` is defined: the same module imported twice (doctests) registers again."""
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno)


_MISSING = object()


def attr(op: Op, name: str, default: Any = _MISSING) -> Any:
    """Attribute `name` of `op`, or `default`; a missing required attribute is a ModelError."""
    value = op.attrs.get(name, default)
    if value is _MISSING:
        raise ModelError(f"{op_label(op)}: missing required attribute {name!r}")
    return value


def nbytes(metas: Sequence[Meta | None]) -> int:
    """Total bytes of the present tensors."""
    return sum(m.nbytes for m in metas if m is not None)


def elementwise_cost(op_class: str, flops_per_element: float = 1.0) -> CostRule:
    """A cost rule: `flops_per_element` per output element; inputs read, outputs written once."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        flops = flops_per_element * sum(m.size for m in outputs)
        return Cost(flops, nbytes(inputs), nbytes(outputs), op_class)

    return cost


def view_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The cost of an op that only relabels memory (Reshape, Identity, Shape): nothing moves."""
    return Cost(0.0, 0, 0, "data_movement")


def movement_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The cost of an op that copies data (Transpose, Concat, Pad): no flops, bytes both ways."""
    return Cost(0.0, nbytes(inputs), nbytes(outputs), "data_movement")


ONNX_DTYPES: dict[int, np.dtype[Any]] = {
    code: np.dtype(name)
    for code, name in {
        1: "float32",
        2: "uint8",
        3: "int8",
        4: "uint16",
        5: "int16",
        6: "int32",
        7: "int64",
        9: "bool",
        10: "float16",
        11: "float64",
        12: "uint32",
        13: "uint64",
    }.items()
}
"""ONNX `TensorProto.DataType` codes of the dtypes hetsim supports, to numpy dtypes."""


def present(op: Op, values: Sequence[T | None], count: int) -> list[T]:
    """The first `count` of an op's inputs (metas or arrays), each given; a missing one is a
    ModelError naming the op."""
    found = [value for value in values[:count] if value is not None]
    if len(found) != count:
        raise op_error(op, f"expected {count} inputs", len(found))
    return found


def choice(op: Op, name: str, value: object, allowed: Sequence[str]) -> str:
    """`value` of attribute `name`, one of `allowed`; anything else is a ModelError listing
    them, with the closest as a hint."""
    if value in allowed:
        return str(value)
    shown = ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
    close = difflib.get_close_matches(str(value), allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise op_error(op, f"expected {name} {shown}", f"{value!r}{hint}")


def op_error(op: Op, expected: str, got: object) -> ModelError:
    """A ModelError in the shared shape: ``op <name> (<type>): <expected>, got <got>``.

    Examples
    --------
    >>> str(op_error(Op("Reshape", "r0", ("x",), ("y",)), "expected 2 inputs", 1))
    'op r0 (Reshape): expected 2 inputs, got 1'
    """
    return ModelError(f"{op_label(op)}: {expected}, got {got}")


def raise_kernel_error(
    op: Op, err: Exception, expected: str = "expected its kernel to compute"
) -> NoReturn:
    """Raise what a failure of `op`'s kernel (or of its compile or shape rule: `expected` says
    which) is: `err` itself when it is already a `HetsimError` (it says what and where) or a
    `MemoryError`, else a ModelError naming the op (an out-of-range Gather index, a reduction
    over an empty axis: numpy's message alone would not say which of thousands of ops it was),
    chained to `err` for whoever debugs a kernel. Call it in an ``except`` block.

    Examples
    --------
    >>> op = Op("Gather", "g0", ("x", "i"), ("y",))
    >>> raise_kernel_error(op, IndexError("index 10 is out of bounds for axis 1 with size 4"))
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: op g0 (Gather): expected its kernel to compute, got IndexError: \
index 10 is out of bounds for axis 1 with size 4
    """
    if isinstance(err, HetsimError | MemoryError):
        raise err
    raise op_error(op, expected, f"{type(err).__name__}: {err}") from err


def dtype_of(op: Op, code: int | str) -> np.dtype[Any]:
    """The numpy dtype of an ONNX dtype code (or a numpy dtype name), checked.

    Examples
    --------
    >>> dtype_of(Op("Cast", "c", ("x",), ("y",)), 7)
    dtype('int64')
    """
    if isinstance(code, str):
        return np.dtype(code)
    if code not in ONNX_DTYPES:
        raise op_error(op, f"expected a supported dtype code {sorted(ONNX_DTYPES)}", code)
    return ONNX_DTYPES[code]


def normalize_axis(op: Op, axis: int, rank: int) -> int:
    """`axis` in ``[0, rank)``; a negative axis counts from the end.

    Examples
    --------
    >>> normalize_axis(Op("Concat", "c", ("a",), ("y",)), -1, 3)
    2
    """
    if not -rank <= axis < rank:
        raise op_error(op, f"expected an axis in [{-rank}, {rank})", axis)
    return axis + rank if axis < 0 else axis


def normalize_axes(op: Op, axes: Sequence[int] | np.ndarray, rank: int) -> tuple[int, ...]:
    """Each axis of `axes` normalized; a repeated axis is a ModelError."""
    result = tuple(normalize_axis(op, int(a), rank) for a in axes)
    if len(set(result)) != len(result):
        raise op_error(op, "expected distinct axes", list(result))
    return result


def broadcast_shape(op: Op, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The numpy (multidirectional ONNX) broadcast of `shapes`.

    Examples
    --------
    >>> broadcast_shape(Op("Add", "a", ("x", "y"), ("z",)), (2, 1, 3), (4, 1))
    (2, 4, 3)
    """
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-rank, 0):  # numpy's rule, on Python ints: no size is too large for it
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            shown = " and ".join(str(list(s)) for s in shapes)
            raise op_error(op, "expected broadcastable shapes", shown)
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def same_as_input(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """The shape rule of an op whose single output has its first input's shape and dtype."""
    first = inputs[0]
    assert first is not None, f"{op!r}: first input missing"
    return [Meta(first.shape, first.dtype)]


def constant_input(op: Op, inputs: Sequence[Meta | None], index: int, what: str) -> np.ndarray:
    """The value of input `index`, which a shape rule needs to know (a Reshape's shape).

    Propagation computes small integer tensors for real; an input whose value is still unknown
    was computed from data (or is a graph input given without its array), and the output shape
    cannot be known without running the model: `UnknownValueError`.
    """
    meta = inputs[index] if index < len(inputs) else None
    if meta is None:
        raise op_error(op, f"expected a known value for input {index} ({what})", "no input")
    if meta.value is None:
        expected = f"{op_label(op)}: expected a known value for input {index} ({what})"
        raise UnknownValueError(expected, op.inputs[index])
    return meta.value


def lookup(op: Op) -> OpDef:
    """The `OpDef` of `op`'s type; an unregistered type is a ModelError listing what is supported.

    Examples
    --------
    >>> lookup(Op("Relu", "r0", ("x",), ("y",))) is OPS["Relu"]
    True
    """
    definition = OPS.get(op.type)
    if definition is None:
        close = difflib.get_close_matches(op.type, OPS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ModelError(
            f"op {op.name}: unsupported op {op.type}{hint}; supported ops: {', '.join(sorted(OPS))}"
        )
    return definition


_MEMO_SIZE = 64


def memoize(compute: Callable[..., Any]) -> Callable[..., Any]:
    """``cached(key, *args)``: `compute(*args)`, remembered under `key` (shapes, parameter bytes).

    Kernels use it for index arithmetic (a Reshape's target, a Slice's index) that depends only
    on shapes and small parameter tensors, which stay the same from one run to the next.

    Examples
    --------
    >>> calls = []
    >>> double = memoize(lambda v: calls.append(v) or 2 * v)
    >>> double("k", 21), double("k", 21), calls
    (42, 42, [21])
    """
    cache: dict[Any, Any] = {}

    def cached(key: Any, *args: Any) -> Any:
        value = cache.get(key, _MISSING)
        if value is _MISSING:
            if len(cache) >= _MEMO_SIZE:
                cache.clear()
            value = cache[key] = compute(*args)
        return value

    return cached


SHARED_ZEROS_BYTES = 1 << 20
"""Largest zeros array `zeros` keeps for reuse; larger ones are made on each call."""


def read_only(value: Any) -> Any:
    """`value` as a read-only view when it is an array (its own flags untouched), else as is.

    A compiled program keeps its constants (initializers and folded results) for every later
    run; a graph output that is a constant hands the kept array to the caller, whose in-place
    write would otherwise change every later run's result. Kernels never write into their inputs.

    Examples
    --------
    >>> weights = np.ones(2, np.float32)
    >>> kept = read_only(weights)
    >>> kept.flags.writeable, weights.flags.writeable, kept.tolist()
    (False, True, [1.0, 1.0])
    """
    if not isinstance(value, np.ndarray):
        return value
    view = value.view()
    view.flags.writeable = False
    return view


def zeros(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """A read-only array of zeros, shared between calls when small.

    A ufunc against an array runs vectorized where numpy's scalar operand may not: with numpy
    2.4 on the development machine, ``np.maximum(x, 0)`` took 16.5 µs against 3.7 µs for
    ``np.maximum(x, zeros(x.shape, x.dtype))`` on a (1, 272, 14, 14) float32 input
    (``benchmarks/kernels.py``); both give the same values, NaN included.

    Examples
    --------
    >>> z = zeros((2,), np.dtype("float32"))
    >>> z.tolist(), z.flags.writeable, z is zeros((2,), np.dtype("float32"))
    ([0.0, 0.0], False, True)
    """
    if math.prod(shape) * dtype.itemsize > SHARED_ZEROS_BYTES:
        return np.zeros(shape, dtype)
    return _shared_zeros(shape, dtype)


@functools.lru_cache(maxsize=32)
def _shared_zeros(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    array = np.zeros(shape, dtype)
    array.flags.writeable = False
    return array
