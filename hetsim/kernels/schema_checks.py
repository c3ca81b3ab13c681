"""An op's inputs and attributes against its ONNX schema, at the op's opset: the checks `register`
wraps around every op's compile and shape rule (`hetsim.kernels.registry`), built once per op
type from the tables `hetsim.kernels.attributes.ATTRIBUTES` and `hetsim.kernels.arity.MAX_INPUTS`.

`input_check` refuses an op that omits a required input or names more than its type takes
(trailing omitted ones aside); `attribute_check` one with an attribute its type does not take,
naming the closest name or the opsets that take it. `at_opset` reads any table of values by the
opset they hold from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from hetsim.errors import close_name
from hetsim.ir import Op
from hetsim.kernels.arity import MAX_INPUTS
from hetsim.kernels.attributes import ATTRIBUTES, STRICT_BY_OPSET
from hetsim.kernels.checks import check_at_most, check_required_inputs, op_error

__all__ = [
    "AttributeCheck",
    "InputCheck",
    "at_opset",
    "attribute_check",
    "check_input_count",
    "from_opset_1",
    "input_check",
]

T = TypeVar("T")


def at_opset(by_opset: Mapping[int, T]) -> Callable[[int], T]:
    """The value of `by_opset` (opset -> the value from that opset on) at an opset, cached."""
    since = sorted(by_opset, reverse=True)
    assert since[-1:] == [1], f"{dict(by_opset)!r}: expected a value from opset 1"
    found: dict[int, T] = {}

    def at(opset: int) -> T:
        if opset not in found:
            found[opset] = by_opset[next((v for v in since if v <= opset), 1)]
        return found[opset]

    return at


def from_opset_1(by_opset: Mapping[int, T]) -> dict[int, T]:
    """`by_opset` (opset -> the value from that opset on) with its first value held from opset 1
    as well: an op used below its first version, which hetsim does not refuse, takes that one."""
    first = min(by_opset)
    return {1 if v == first else v: value for v, value in by_opset.items()}


InputCheck = Callable[[Op, int], None]
"""``check(op, opset)``: a ModelError unless `op` names its required inputs and no more inputs
than its type takes."""


def input_check(op_type: str, required_at: Callable[[int], int]) -> InputCheck:
    """The check of an op's inputs at the op's opset: the leading `required_at` ones named
    (`check_required_inputs`), and no more than `op_type` takes (`MAX_INPUTS`); the error of
    a type whose count changes across versions says the opset."""
    by_opset = MAX_INPUTS[op_type]
    most_at = at_opset(from_opset_1(by_opset))
    varies = len(set(by_opset.values())) > 1

    def check(op: Op, opset: int) -> None:
        check_required_inputs(op, required_at(opset))
        most = most_at(opset)
        if len(op.inputs) > most:
            check_input_count(op, most, f" at opset {opset}" if varies else "")

    return check


def check_input_count(op: Op, most: int, at: str = "") -> None:
    """`op` names no more than `most` inputs (its type's, `at` an opset), trailing omitted ones
    aside: ONNX reads those as absent, so no value is ignored (onnx's checker and onnxruntime
    count them, and refuse).

    >>> check_input_count(Op("Add", "a", ("x", "y", "z"), ("s",)), 2)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op a (Add): expected at most 2 inputs, got 3
    >>> check_input_count(Op("Add", "a", ("x", "y", "", ""), ("s",)), 2)
    """
    check_at_most(op, op.inputs, most, "input", at)


AttributeCheck = Callable[[Op, int], None]
"""``check(op, opset)``: a ModelError unless every attribute of `op` is one its type takes."""


def attribute_check(op_type: str) -> AttributeCheck:
    """The check of an op's attribute names against those `op_type` takes at the op's opset:
    those of its version at that opset and, but for `STRICT_BY_OPSET`, of every later version
    (`hetsim.kernels.attributes`); below its first version, which hetsim does not refuse, those
    of the first."""
    by_opset = ATTRIBUTES[op_type]
    since = sorted(by_opset)
    takes_from = {
        v: by_opset[v]
        if op_type in STRICT_BY_OPSET
        else frozenset().union(*(by_opset[w] for w in since if w >= v))
        for v in since
    }
    takes_at = at_opset(from_opset_1(takes_from))
    varies = len(set(takes_from.values())) > 1

    def check(op: Op, opset: int) -> None:
        takes = takes_at(opset)
        if not takes.issuperset(op.attrs):
            at = f" at opset {opset}" if varies else ""
            unknown = [_hinted(name, op_type, takes) for name in op.attrs if name not in takes]
            listed = ", ".join(sorted(takes))
            expected = (
                f"expected attributes of {op_type}{at} ({listed})"
                if takes
                else f"expected no attributes ({op_type} takes none{at})"
            )
            raise op_error(op, expected, ", ".join(unknown))

    return check


def _hinted(name: str, op_type: str, takes: frozenset[str]) -> str:
    """Attribute `name` as an error shows it: with the opsets at which `op_type` takes it, else
    with the name it may misspell."""
    opsets = _opsets_taking(name, ATTRIBUTES[op_type])
    if opsets:
        return f"{name!r} (an attribute of {op_type} at {opsets})"
    close = close_name(str(name), takes)
    return f"{name!r} (did you mean {close!r}?)" if close else repr(name)


def _opsets_taking(name: str, by_opset: Mapping[int, frozenset[str]]) -> str:
    """The opsets whose names in `by_opset` include `name`, in words; ``""`` for none.

    >>> _opsets_taking("axes", ATTRIBUTES["ReduceSum"])
    'opsets 1-12'
    >>> _opsets_taking("start", ATTRIBUTES["Shape"]), _opsets_taking("axis", ATTRIBUTES["Add"])
    ('opsets 15 and later', 'opsets 1-6')
    """
    since = sorted(by_opset)
    spans: list[tuple[int, int | None]] = []  # (first, until): until None is open-ended
    for first, until in zip(since, [*since[1:], None], strict=True):
        if name not in by_opset[first]:
            continue
        if spans and spans[-1][1] == first:  # the name stays while others change
            spans[-1] = (spans[-1][0], until)
        else:
            spans.append((first, until))
    if not spans:
        return ""
    shown = [
        f"{a} and later" if b is None else str(a) if b == a + 1 else f"{a}-{b - 1}"
        for a, b in spans
    ]
    word = "opset" if shown == [str(spans[0][0])] else "opsets"
    return f"{word} {', '.join(shown)}"
