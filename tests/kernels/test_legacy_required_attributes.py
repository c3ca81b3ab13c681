"""Attributes that Pad (to opset 10) and Slice (to opset 9) require, before they became inputs:
one missing is named, by the shape rule and by the kernel, as any op's missing attribute is."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta

X = Meta((2, 3), np.dtype("float32"))
MISSING = [
    (Op("Pad", "p", ("x",), ("y",)), 2, "pads"),
    (Op("Pad", "p", ("x",), ("y",), {"mode": "edge"}), 10, "pads"),
    (Op("Pad", "p", ("x",), ("y",)), 1, "paddings"),
    (Op("Slice", "s", ("x",), ("y",)), 1, "starts"),
    (Op("Slice", "s", ("x",), ("y",), {"starts": [0], "axes": [1]}), 9, "ends"),
]
IDS = ["pad-2", "pad-10-edge", "pad-1-paddings", "slice-1-starts", "slice-9-ends"]


@pytest.mark.parametrize(("op", "opset", "name"), MISSING, ids=IDS)
def test_the_shape_rule_names_a_missing_required_attribute(op: Op, opset: int, name: str) -> None:
    # TypeError: 'NoneType' object is not iterable (Slice: object of type 'NoneType' has no len())
    message = f"op {op.name} ({op.type}): missing required attribute {name!r}"
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        OPS[op.type].infer(op, opset, [X])


@pytest.mark.parametrize(("op", "opset", "name"), MISSING, ids=IDS)
def test_the_kernel_names_a_missing_required_attribute(op: Op, opset: int, name: str) -> None:
    # Pad said "expected a pads attribute, got none"; Slice's kernel raised the TypeError
    message = f"op {op.name} ({op.type}): missing required attribute {name!r}"
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        OPS[op.type].compile(op, opset)([np.zeros((2, 3), np.float32)])


@pytest.mark.parametrize(
    ("op", "opset", "shape"),
    [
        (Op("Pad", "p", ("x",), ("y",), {"pads": [0, 1, 0, 1]}), 2, (2, 5)),
        (Op("Pad", "p", ("x",), ("y",), {"paddings": [1, 0, 1, 0]}), 1, (4, 3)),
        (Op("Slice", "s", ("x",), ("y",), {"starts": [1], "ends": [3], "axes": [1]}), 1, (2, 2)),
        (Op("Slice", "s", ("x",), ("y",), {"starts": [1], "ends": [2]}), 9, (1, 3)),
    ],
    ids=["pad-2", "pad-1-paddings", "slice-1-axes", "slice-9-no-axes"],
)
def test_the_required_attributes_given_are_read(op: Op, opset: int, shape: tuple[int, ...]) -> None:
    assert OPS[op.type].infer(op, opset, [X]) == [Meta(shape, X.dtype)]
    y = OPS[op.type].compile(op, opset)([np.zeros((2, 3), np.float32)])[0]
    assert y.shape == shape
