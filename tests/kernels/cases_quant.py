"""Single-op cases for the quantization ops of `quant.py` (see `case.py`).

Each granularity (per-tensor, per-axis, blocked), each quantized dtype, an omitted zero point,
the opset-21 and opset-23 attributes and the opset forms of the types each get a case; inputs
include exact ties (x / scale ending in .5), which round half to even, and values that
saturate.
"""

from __future__ import annotations

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(7)

# x / 0.5 is k + 0.5 for every k: ties all the way, on both sides of zero, and far enough out
# that int8 and uint8 saturate
TIES = (np.arange(-140, 140, dtype=np.float32) + 0.5) * np.float32(0.5)


def f32(*shape: int, spread: float = 40.0) -> np.ndarray:
    """Seeded normal float32 values with standard deviation `spread`."""
    return (spread * _rng.standard_normal(shape)).astype(np.float32)


def scales(*shape: int) -> np.ndarray:
    """Seeded positive float32 scales in [0.1, 1)."""
    return _rng.uniform(0.1, 1.0, shape).astype(np.float32)


def ints(dtype: type, *shape: int) -> np.ndarray:
    """Seeded integers over the whole range of `dtype`."""
    info = np.iinfo(dtype)
    return _rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _dequantize_axis_1(
    x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray
) -> list[np.ndarray]:
    """ONNX's formula for a rank-3 x, per axis 1."""
    column = (-1, 1)
    return [(x.astype(np.float32) - zero_point.reshape(column)) * scale.reshape(column)]


def _quantize() -> list[Case]:
    half = np.array(0.5, np.float32)
    return [
        Case(
            "QuantizeLinear",
            {"x": TIES, "y_scale": half, "y_zero_point": np.array(3, np.uint8)},
            opset=10,
            id="quantizelinear-uint8-ties",
        ),
        Case(
            "QuantizeLinear",
            {"x": TIES, "y_scale": half, "y_zero_point": np.array(-5, np.int8)},
            opset=13,
            id="quantizelinear-int8-ties",
        ),
        Case(
            "QuantizeLinear",
            {"x": TIES, "y_scale": half, "y_zero_point": None},
            opset=13,
            id="quantizelinear-no-zero-point",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(2, 3), "y_scale": np.array([0.3], np.float32), "y_zero_point": None},
            opset=13,
            id="quantizelinear-one-element-scale",
        ),
        Case(
            "QuantizeLinear",
            {
                "x": _rng.integers(-900, 900, 24).astype(np.int32),
                "y_scale": np.array(4.0, np.float32),
                "y_zero_point": np.array(10, np.int8),
            },
            opset=10,
            id="quantizelinear-int32-x",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(2, 3, 4), "y_scale": scales(3), "y_zero_point": ints(np.uint8, 3)},
            opset=13,
            constant=("y_scale", "y_zero_point"),
            id="quantizelinear-axis-default",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(2, 3, 4), "y_scale": scales(4), "y_zero_point": ints(np.int8, 4)},
            {"axis": -1},
            opset=13,
            id="quantizelinear-axis-negative",
        ),
        Case(
            "QuantizeLinear",
            {
                "x": TIES.astype(np.float16),
                "y_scale": np.array(0.5, np.float16),
                "y_zero_point": np.array(0, np.int8),
            },
            opset=19,
            id="quantizelinear-float16",
        ),
        Case(
            "QuantizeLinear",
            {"x": 1e3 * TIES, "y_scale": half, "y_zero_point": np.array(-7, np.int16)},
            opset=21,
            id="quantizelinear-int16",
        ),
        Case(
            "QuantizeLinear",
            {"x": 1e3 * TIES, "y_scale": half, "y_zero_point": np.array(3000, np.uint16)},
            opset=21,
            id="quantizelinear-uint16",
        ),
        Case(
            "QuantizeLinear",
            {"x": TIES, "y_scale": half, "y_zero_point": None},
            {"output_dtype": 3},  # int8
            opset=21,
            id="quantizelinear-output-dtype",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(3, 7), "y_scale": scales(3, 3), "y_zero_point": ints(np.uint8, 3, 3)},
            {"axis": 1, "block_size": 3},  # blocks of 3, 3 and 1
            opset=21,
            id="quantizelinear-blocked",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(4, 2, 3), "y_scale": scales(2, 2, 3), "y_zero_point": None},
            {"axis": 0, "block_size": 2, "output_dtype": 3},
            opset=21,
            id="quantizelinear-blocked-symmetric",
        ),
        Case(
            "QuantizeLinear",
            {
                "x": TIES.astype(np.float16),
                "y_scale": half,
                "y_zero_point": np.array(9, np.uint8),
            },
            opset=23,
            id="quantizelinear-mixed-types",
        ),
        Case(
            "QuantizeLinear",
            {"x": f32(2, 5), "y_scale": scales(5), "y_zero_point": ints(np.int8, 5)},
            {"precision": 10},  # float16
            opset=23,
            id="quantizelinear-precision",
        ),
    ]


def _dequantize() -> list[Case]:
    return [
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.uint8, 3, 4),
                "x_scale": np.array(0.05, np.float32),
                "x_zero_point": np.array(128, np.uint8),
            },
            opset=19,
            id="dequantizelinear-uint8",
        ),
        Case(
            "DequantizeLinear",
            {"x": ints(np.int8, 3, 4), "x_scale": np.array(0.05, np.float32)},
            opset=19,
            id="dequantizelinear-no-zero-point",
        ),
        Case(
            "DequantizeLinear",
            {"x": ints(np.int8, 2, 3, 4), "x_scale": scales(3), "x_zero_point": ints(np.int8, 3)},
            opset=13,
            id="dequantizelinear-axis-opset13",
            reference=_dequantize_axis_1,
            why="onnx's reference has no DequantizeLinear before opset 19",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.uint8, 2, 3, 4),
                "x_scale": scales(4).astype(np.float16),
                "x_zero_point": ints(np.uint8, 4),
            },
            {"axis": 2},
            opset=19,
            id="dequantizelinear-axis-float16",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.int32, 6),
                "x_scale": np.array(1e-3, np.float32),
                "x_zero_point": np.array(-70000, np.int32),
            },
            opset=19,
            id="dequantizelinear-int32",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.int16, 8),
                "x_scale": np.array(0.01, np.float32),
                "x_zero_point": np.array(-300, np.int16),
            },
            opset=21,
            id="dequantizelinear-int16",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.uint16, 8),
                "x_scale": np.array(0.01, np.float32),
                "x_zero_point": np.array(30000, np.uint16),
            },
            opset=21,
            id="dequantizelinear-uint16",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.uint8, 2, 5, 3),
                "x_scale": scales(2, 3, 3),
                "x_zero_point": ints(np.uint8, 2, 3, 3),
            },
            {"axis": 1, "block_size": 2},  # blocks of 2, 2 and 1
            opset=21,
            id="dequantizelinear-blocked",
        ),
        Case(
            "DequantizeLinear",
            {
                "x": ints(np.int8, 3, 4),
                "x_scale": np.array(0.05, np.float32),
                "x_zero_point": np.array(1, np.int8),
            },
            {"output_dtype": 10},  # float16
            opset=23,
            id="dequantizelinear-output-dtype",
        ),
    ]


def _dynamic() -> list[Case]:
    def case(x: np.ndarray, name: str) -> Case:
        return Case("DynamicQuantizeLinear", {"x": x}, opset=11, outputs=3, id=name)

    return [
        case(f32(3, 4, spread=3.0), "dynamicquantizelinear"),
        case(np.abs(f32(6)), "dynamicquantizelinear-positive"),
        case(-np.abs(f32(2, 3)), "dynamicquantizelinear-negative"),
        case(np.zeros(4, np.float32), "dynamicquantizelinear-zeros"),
        # scale (255 - 0) / 255 is 1: every x / scale is a tie
        case(np.arange(256, dtype=np.float32) - 0.5, "dynamicquantizelinear-ties"),
    ]


CASES: list[Case] = [*_quantize(), *_dequantize(), *_dynamic()]
