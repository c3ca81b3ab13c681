"""Single-op cases for onnxruntime's quantized ops of `qoperator.py` (see `case.py`).

onnx's reference does not define these (they are ``com.microsoft`` ops): the reference is
onnxruntime itself, running the one-node model. Its kernels fold the scales into ratios first,
so a value within float rounding of a tie may come out one step apart: ``atol=1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from hetsim.kernels.qoperator import SPECS
from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(11)


def _q(dtype: type, *shape: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return _rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _scale(value: float) -> np.ndarray:
    return np.array(value, np.float32)


def _onnxruntime(op_type: str, attrs: Mapping[str, Any]) -> Any:
    """A reference running `op_type` (domain com.microsoft) on onnxruntime's CPU provider."""

    def run(*arrays: np.ndarray | None) -> Sequence[np.ndarray]:
        ort = pytest.importorskip("onnxruntime")
        from onnx import helper, numpy_helper

        names = [f"in{i}" if a is not None else "" for i, a in enumerate(arrays)]
        node = helper.make_node(op_type, names, ["y"], domain="com.microsoft", **attrs)
        # the quantized operands are inputs; scales and zero points initializers
        operands = set(SPECS[op_type].operands_of(len(arrays))) if op_type in SPECS else {0}
        inputs = [
            helper.make_tensor_value_info(
                names[i], helper.np_dtype_to_tensor_dtype(arrays[i].dtype), list(arrays[i].shape)
            )
            for i in sorted(operands)
        ]
        initializers = [
            numpy_helper.from_array(a, names[i])
            for i, a in enumerate(arrays)
            if a is not None and i not in operands
        ]
        graph = helper.make_graph(
            [node], op_type, inputs, [helper.make_empty_tensor_value_info("y")], initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        )
        model.ir_version = 8
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        feeds = {names[i]: arrays[i] for i in operands}
        return session.run(None, feeds)

    return run


def _case(op_type: str, inputs: dict[str, Any], *, id: str, **attrs: Any) -> Case:
    return Case(
        op_type,
        inputs,
        attrs,
        id=id,
        reference=_onnxruntime(op_type, attrs),
        why="a com.microsoft op: onnxruntime defines it",
        rtol=0,
        atol=1,
    )


def _binary(op_type: str, dtype: type, zero: int) -> Case:
    z = np.array(zero, dtype)
    return _case(
        op_type,
        {
            "a": _q(dtype, 2, 3, 4),
            "a_scale": _scale(0.07),
            "a_zero_point": z,
            "b": _q(dtype, 4),
            "b_scale": _scale(0.03),
            "b_zero_point": np.array(zero // 2, dtype),
            "c_scale": _scale(0.11 if op_type == "QLinearAdd" else 0.9),
            "c_zero_point": z,
        },
        id=f"{op_type.lower()}-{np.dtype(dtype).name}",
    )


def _unary(op_type: str, dtype: type, zero: int, shape: tuple[int, ...], **attrs: Any) -> Case:
    z = np.array(zero, dtype)
    return _case(
        op_type,
        {
            "x": _q(dtype, *shape),
            "x_scale": _scale(0.05),
            "x_zero_point": z,
            "y_scale": _scale(0.04 if "Pool" in op_type else 0.005),
            "y_zero_point": z,
        },
        id=f"{op_type.lower()}-{np.dtype(dtype).name}{'-' if attrs else ''}"
        + "-".join(f"{k}{v}" for k, v in attrs.items() if k != "kernel_shape"),
        **attrs,
    )


def _gemm(
    a: type,
    b: type,
    *,
    per_column: bool = False,
    bias: bool = True,
    output: bool = True,
    **attrs: Any,
) -> Case:
    """QGemm of a [3, 5] A' and a [5, 4] B' (each stored transposed where its flag says)."""
    m, k, n = 3, 5, 4
    inputs: dict[str, Any] = {
        "A": _q(a, *((k, m) if attrs.get("transA") else (m, k))),
        "a_scale": _scale(0.05),
        "a_zero_point": np.array(5 if a is np.int8 else 131, a),
        "B": _q(b, *((n, k) if attrs.get("transB") else (k, n))),
        "b_scale": _rng.uniform(0.01, 0.05, n).astype(np.float32) if per_column else _scale(0.02),
        "b_zero_point": _q(b, n) if per_column else np.array(-3 if b is np.int8 else 120, b),
        "C": _rng.integers(-500, 500, (n,)).astype(np.int32) if bias else None,
    }
    if output:
        inputs |= {"y_scale": _scale(0.3), "y_zero_point": np.array(7, a)}
    named = "-".join(
        [np.dtype(a).name, np.dtype(b).name]
        + (["per-column"] if per_column else [])
        + ([] if bias else ["no-bias"])
        + ([] if output else ["float"])
        + [f"{key}{value}" for key, value in attrs.items()]
    )
    return _case("QGemm", inputs, id=f"qgemm-{named}", **attrs)


def _concat(dtype: type, *, axis: int) -> Case:
    """Three operands of one dtype, each with its own scale and zero point, concatenated."""
    shapes = [(1, 2, 3), (1, 4, 3), (1, 1, 3)] if axis == 1 else [(2, 3), (2, 1), (2, 5)]
    signed = dtype is np.int8
    inputs: dict[str, Any] = {
        "y_scale": _scale(0.08),
        "y_zero_point": np.array(-3 if signed else 125, dtype),
    }
    for i, (shape, scale) in enumerate(zip(shapes, (0.05, 0.11, 0.08), strict=True)):
        inputs |= {
            f"x{i}": _q(dtype, *shape),
            f"x{i}_scale": _scale(scale),
            f"x{i}_zero_point": np.array((i - 1) * 4 + (0 if signed else 128), dtype),
        }
    return _case("QLinearConcat", inputs, id=f"qlinearconcat-{np.dtype(dtype).name}-axis{axis}",
                 axis=axis)  # fmt: skip


def _softmax(dtype: type, shape: tuple[int, ...], *, axis: int, opset: int) -> Case:
    """QLinearSoftmax with the output onnxruntime's quantizer gives it: scale 1/256, from 0."""
    signed = dtype is np.int8
    inputs = {
        "x": _q(dtype, *shape),
        "x_scale": _scale(0.06),
        "x_zero_point": np.array(3 if signed else 130, dtype),
        "y_scale": _scale(1 / 256),
        "y_zero_point": np.array(-128 if signed else 0, dtype),
    }
    name = f"qlinearsoftmax-{np.dtype(dtype).name}-axis{axis}-opset{opset}"
    return _case("QLinearSoftmax", inputs, id=name, axis=axis, opset=opset)


CASES = [
    _softmax(np.int8, (2, 7), axis=-1, opset=13),
    _softmax(np.uint8, (2, 3, 5), axis=1, opset=13),
    _softmax(np.int8, (2, 3, 5), axis=1, opset=11),  # before 13: softmax over 3 x 5 as one row
    _concat(np.int8, axis=1),
    _concat(np.uint8, axis=-1),
    _gemm(np.int8, np.int8),
    _gemm(np.uint8, np.uint8, per_column=True, transB=1),
    _gemm(np.uint8, np.int8, bias=False, transA=1, alpha=0.5),
    _gemm(np.int8, np.int8, per_column=True, output=False, transB=1),
    _gemm(np.uint8, np.uint8, bias=False, output=False, alpha=2.0),
    _binary("QLinearAdd", np.int8, -6),
    _binary("QLinearAdd", np.uint8, 128),
    _binary("QLinearMul", np.int8, 4),
    _binary("QLinearMul", np.uint8, 120),
    _unary("QLinearGlobalAveragePool", np.int8, -3, (2, 3, 5, 4)),
    _unary("QLinearGlobalAveragePool", np.uint8, 130, (1, 4, 3, 3)),
    _unary("QLinearAveragePool", np.int8, 2, (1, 2, 6, 6), kernel_shape=[2, 2], strides=[2, 2]),
    _unary(
        "QLinearAveragePool",
        np.uint8,
        128,
        (1, 2, 5, 5),
        kernel_shape=[3, 3],
        pads=[1, 1, 1, 1],
        count_include_pad=1,
    ),
    _unary("QLinearSigmoid", np.int8, 0, (3, 7)),
    _unary("QLinearSigmoid", np.uint8, 128, (3, 7)),
    _unary("QLinearLeakyRelu", np.int8, -10, (3, 7), alpha=0.1),
    _unary("QLinearLeakyRelu", np.uint8, 100, (3, 7), alpha=0.2),
]
