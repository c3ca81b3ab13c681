"""The op registry: one `OpDef` per ONNX op type, holding its kernel, shape rule and cost rule.

Op modules (`elementwise.py`, `nn.py`, ...) fill `OPS` with `register`; nothing else writes it.
This module owns the op classes, the signatures of an op's rules (`Kernel`, ...) and how
`register` wraps them: an op's attribute names and inputs (against its schema at the op's opset:
`schema_checks`) and its outputs are checked before and after each rule runs; `lookup` finds an
op's entry. What the rules speak in is
left to `meta` (`Meta`) and `costs` (`Cost` and the shared cost rules), the checks they share to
`checks`, and array helpers for kernels to `arrays`.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import ModelError, OpError, close_name, printable
from hetsim.ir import Op, op_label
from hetsim.ir.nodes import shown
from hetsim.kernels.arity import MAX_INPUTS
from hetsim.kernels.attributes import ATTRIBUTES
from hetsim.kernels.checks import (
    check_output_count,
    named_outputs,
    op_error,
    raise_kernel_error,
)
from hetsim.kernels.costs import Cost, CostRule, elementwise_cost
from hetsim.kernels.input_types import TypesCheck, types_check
from hetsim.kernels.meta import Meta
from hetsim.kernels.schema_checks import (
    AttributeCheck,
    InputCheck,
    at_opset,
    attribute_check,
    input_check,
)

__all__ = [
    "ALL_INPUTS",
    "OPS",
    "OP_CLASSES",
    "Kernel",
    "OpDef",
    "lookup",
    "register",
    "unsupported_op",
]

OP_CLASSES = (
    "matmul",
    "conv",
    "elementwise",
    "reduction",
    "normalization",
    "data_movement",
    "other",
)


Kernel = Callable[[Sequence[Any]], list[np.ndarray]]
"""A compiled op: input arrays (None for an omitted optional one) in, one array per output out."""
Compile = Callable[[Op, int], Kernel]
Infer = Callable[[Op, int, Sequence[Meta | None]], list[Meta]]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op type: how to compile its kernel, infer its output shapes and count its cost.

    Parameters
    ----------
    type
        The ONNX op type, e.g. ``"Conv"``.
    op_class
        One of `OP_CLASSES`; the cost model picks the device's efficiency by it (its cost
        rule's `Cost` carries it; Resize's and Upsample's follow their mode instead).
    compile
        ``compile(op, opset) -> kernel``; reads and checks the attributes once.
    infer
        ``infer(op, opset, input_metas) -> output_metas``; the shape rule.
    cost
        ``cost(op, input_metas, output_metas) -> Cost``.
    domain
        The ONNX domain that defines it: ``""``, the default one, or another (onnxruntime's
        ``"com.microsoft"``); the frontend reads the op in that domain only.
    required
        How many leading inputs ONNX requires, by the opset each count holds from (Reshape:
        ``{1: 1, 5: 2}``, its shape became an input at 5); `register` checks them.
    """

    type: str
    op_class: str
    compile: Compile
    infer: Infer
    cost: CostRule
    domain: str = ""
    required: Mapping[int, int] = field(default_factory=lambda: {1: 1})

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
    required: int | Mapping[int, int] = 1,
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

    `required`: how many leading inputs ONNX requires (1 unless given: every op but a Constant
    reads its first), or that count by the opset it holds from (Reshape: ``{1: 1, 5: 2}``). An
    op that omits one, or that names more inputs than `op_type` takes at the op's opset (its
    entry in `hetsim.kernels.arity.MAX_INPUTS`, which every registered type has; trailing
    omitted ones aside), is a ModelError before its compile or shape rule runs, and a shape rule
    that gives fewer outputs than the op names is one after it.

    An op with an attribute that `op_type` does not take at the op's opset (its entry in
    `hetsim.kernels.attributes.ATTRIBUTES`, which every registered type has) is a ModelError
    before its compile or shape rule runs, too.
    """
    assert op_class in OP_CLASSES, f"{op_type}: unknown op class {op_class!r}"
    assert op_type in ATTRIBUTES, f"{op_type}: expected an entry in ATTRIBUTES, got none"
    assert op_type in MAX_INPUTS, f"{op_type}: expected an entry in MAX_INPUTS, got none"
    existing = OPS.get(op_type)
    again = existing is not None and _source(existing.compile) == _source(compile) is not None
    assert existing is None or again, f"{op_type} registered twice"
    by_opset = required if isinstance(required, Mapping) else {1: required}
    check_inputs = input_check(op_type, at_opset(by_opset))
    check_attributes = attribute_check(op_type)
    if one_type:
        infer = _of_one_type(infer, one_type)
    definition = OpDef(
        op_type,
        op_class,
        _naming_the_op(compile, check_inputs, check_attributes),
        _with_inputs_and_outputs_checked(
            infer,
            check_inputs,
            check_attributes,
            types_check(op_type) if not domain else None,
            compile,
        ),
        _finite(cost or elementwise_cost(op_class)),
        domain,
        by_opset,
    )
    OPS[op_type] = definition
    return definition


def _finite(rule: CostRule) -> CostRule:
    """`rule`, refusing a cost that is no finite float64 with an error naming the op: sizes of
    dims near 1e154 made a MatMul's flops inf (``model show`` printed ``work: inf EFLOP``), and
    larger ones an OverflowError from inside the rule."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        expected = "expected flops and bytes that fit a float64 (dims too large?)"
        try:
            found = rule(op, inputs, outputs)
            parts = (found.flops, found.bytes_read, found.bytes_written, found.scratch_bytes,
                     found.numpy_bytes)  # fmt: skip
            total = math.fsum(float(part) for part in parts)
        except OverflowError as err:
            raise OpError(f"{op_label(op)}: {expected}, got OverflowError: {err}", op.name) from err
        if not math.isfinite(total):
            shown = f"{found.flops:g} flops and {found.bytes_read + found.bytes_written:g} bytes"
            raise OpError(f"{op_label(op)}: {expected}, got {shown}", op.name)
        return found

    return cost


def _with_inputs_and_outputs_checked(
    infer: Infer,
    check_inputs: InputCheck,
    check_attributes: AttributeCheck,
    check_types: TypesCheck | None,
    compile: Compile,
) -> Infer:
    """`infer`, run once the op's attribute names are found among those its type takes at the
    opset, its attribute values among those its kernel can use, its required inputs present and
    no more inputs named than it takes, and followed by the check that each input is of a type
    its schema takes (`hetsim.kernels.input_types`); an op naming more outputs than it gives (a
    Relu with two) is a ModelError rather than an output without a meta.

    The attribute values are checked by compiling the op's kernel (`compile` reads them, and
    nothing else: it sees no inputs) and dropping it: a timing-mode run, which compiles no
    kernel, had taken a LeakyRelu ``alpha`` of ``"x"`` that a functional one refused.
    """

    def checked(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        if op.attrs:  # the hot path: an op without attributes pays this test only
            check_attributes(op, opset)
        check_inputs(op, opset)
        outputs = infer(op, opset, inputs)
        if op.attrs:  # after the rule, whose messages say more of the inputs
            try:
                compile(op, opset)
            except Exception as err:
                raise_kernel_error(op, err, "expected attributes its kernel can use")
        if check_types is not None:  # after the rule: its own messages say more (one dtype)
            check_types(op, opset, inputs)
        if len(op.outputs) > len(outputs):
            check_output_count(op, len(outputs))
        return outputs

    return checked


def _of_one_type(infer: Infer, one_type: OneType) -> Infer:
    """`infer`, after checking that the inputs of each group of `one_type` (at the op's opset)
    are of one dtype."""
    by_opset = one_type if isinstance(one_type, Mapping) else {1: one_type}
    groups_at = at_opset({v: _groups(form) for v, form in by_opset.items()})

    def checked(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
        for group in groups_at(opset) or (range(len(inputs)),):
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


def _naming_the_op(
    compile: Compile, check_inputs: InputCheck, check_attributes: AttributeCheck
) -> Compile:
    """`compile`, run once the op's attribute names are found among those its type takes at the
    opset, its required inputs present and no more inputs named than it takes, whose failure
    on an op's attributes (a Softmax ``axis`` of ``"last"``) raises a ModelError naming the op
    rather than the bare ValueError, and whose kernel gives arrays (`_giving_arrays`), one per
    output the op names (`_giving_outputs`)."""

    @functools.wraps(compile)
    def checked(op: Op, opset: int) -> Kernel:
        if op.attrs:  # the hot path: an op without attributes pays this test only
            check_attributes(op, opset)
        check_inputs(op, opset)
        try:
            kernel = compile(op, opset)
        except Exception as err:
            raise_kernel_error(op, err, "expected attributes its kernel can use")
        return _giving_arrays(_giving_outputs(kernel, op))

    return checked


def _giving_outputs(kernel: Kernel, op: Op) -> Kernel:
    """`kernel`, whose giving fewer results than `op` names outputs (a Relu with two) is a
    ModelError rather than an output left None; a kernel of one named output is left as it
    is (every kernel gives at least one)."""
    named = named_outputs(op)
    if named <= 1:
        return kernel

    def giving_outputs(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        results = kernel(inputs)
        if len(results) < named:
            check_output_count(op, len(results))
        return results

    return giving_outputs


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


def lookup(op: Op) -> OpDef:
    """The `OpDef` of `op`'s type; an unregistered type is an `OpError` (`unsupported_op`).

    Examples
    --------
    >>> lookup(Op("Relu", "r0", ("x",), ("y",))) is OPS["Relu"]
    True
    >>> lookup("Relu")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: lookup: expected an Op (OPS[type] gives a type's OpDef), got str \
'Relu'
    """
    try:
        definition = OPS.get(op.type)
    except AttributeError:  # found on failure only: nothing per op
        if isinstance(op, Op):
            raise
        raise ModelError(
            f"lookup: expected an Op (OPS[type] gives a type's OpDef), got {shown(op)}"
        ) from None
    if definition is None:
        raise OpError(f"{op_label(op)}: {unsupported_op(op.type)}", op.name)
    return definition


SUPPORTED_OPS_LISTED = (
    "hetsim.kernels.OPS holds the supported op types (docs/architecture.md, Kernels, lists them)"
)
"""Where an unsupported-op message sends a user for the whole list, which it no longer holds
(some 160 names buried the op it was about)."""


def unsupported_op(
    op_type: str, why: str = "", domain: str | None = None, *, hinted: bool = True
) -> str:
    """What an error says of `op_type`, which hetsim has no kernel for (in `domain`, for a model
    that names one: ``""`` is ONNX's default): `why` (more on it: the domain it was read in), the
    closest registered type as a hint (unless not `hinted`: a function of the model's own), with
    its domain where that is another, and where the supported op types are listed.

    >>> print(unsupported_op("Relux"))  # doctest: +NORMALIZE_WHITESPACE
    unsupported op Relux (did you mean 'Relu'?); hetsim.kernels.OPS holds the supported op
    types (docs/architecture.md, Kernels, lists them)
    >>> unsupported_op("QLinearAd", domain="").partition(";")[0]
    "unsupported op QLinearAd (did you mean 'QLinearAdd', in domain 'com.microsoft'?)"
    >>> unsupported_op("Mystery").partition(";")[0]
    'unsupported op Mystery'
    """
    close = close_name(op_type, OPS) if hinted else None
    hint = ""
    if close is not None and close != op_type:
        other, there = OPS[close].domain, ""
        if domain is not None and other != domain:
            there = f", in domain {other!r}" if other else ", in the default domain"
        hint = f" (did you mean {close!r}{there}?)"
    return f"unsupported op {printable(op_type)}{why}{hint}; {SUPPORTED_OPS_LISTED}"
