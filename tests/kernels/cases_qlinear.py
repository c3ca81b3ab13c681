"""Single-op cases for the quantized linear ops of `qlinear.py` and `qmatmul.py` (see `case.py`).

Each op gets int8 and uint8 operands in mixed pairs, per-tensor and per-channel (per-row,
per-column) zero points and scales, the Conv attributes (pads, strides, dilations, group,
auto_pad, 1-D and 3-D) and MatMul's broadcast batches and vector operands; values saturate.
Two kinds of case have a hand-written reference, `why` says which: exact ties of
``acc · multiplier`` with an odd zero point (ONNX rounds before adding the zero point, onnx's
reference after), and a 1-D per-row zero point of ``a`` (onnx's reference reads it along K).
"""

from __future__ import annotations

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(11)

I8, U8 = np.int8, np.uint8


def ints(dtype: type, *shape: int) -> np.ndarray:
    """Seeded integers over the whole range of `dtype`."""
    info = np.iinfo(dtype)
    return _rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def scales(*shape: int, low: float = 0.002, high: float = 0.02) -> np.ndarray:
    """Seeded positive float32 scales in [low, high)."""
    return _rng.uniform(low, high, shape).astype(np.float32)


def scalar(value: float, dtype: type = np.float32) -> np.ndarray:
    return np.array(value, dtype)


def bias(*shape: int) -> np.ndarray:
    return _rng.integers(-20000, 20000, shape).astype(np.int32)


def _requantize(acc: np.ndarray, multiplier: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """ONNX's formula: round half to even, then add the zero point, then saturate."""
    info = np.iinfo(zero_point.dtype)
    y = np.rint(acc * multiplier.astype(np.float64)) + zero_point
    return np.clip(y, info.min, info.max).astype(zero_point.dtype)


def _pointwise_reference(
    x: np.ndarray,
    x_scale: np.ndarray,
    x_zero_point: np.ndarray,
    w: np.ndarray,
    w_scale: np.ndarray,
    w_zero_point: np.ndarray,
    y_scale: np.ndarray,
    y_zero_point: np.ndarray,
) -> list[np.ndarray]:
    """QLinearConv of a 1x1 kernel (unpadded, stride 1), per-tensor, in int64."""
    centered_x = x.astype(np.int64) - x_zero_point
    centered_w = w.astype(np.int64)[:, :, 0, 0] - w_zero_point
    acc = np.einsum("nchw,mc->nmhw", centered_x, centered_w)
    return [_requantize(acc, x_scale * w_scale / y_scale, y_zero_point)]


def _matmul_reference(
    a: np.ndarray,
    a_scale: np.ndarray,
    a_zero_point: np.ndarray,
    b: np.ndarray,
    b_scale: np.ndarray,
    b_zero_point: np.ndarray,
    y_scale: np.ndarray,
    y_zero_point: np.ndarray,
) -> list[np.ndarray]:
    """QLinearMatMul of 2-D a and b, a's scale and zero point per tensor or one per row."""
    row = (-1, 1) if a_scale.size > 1 else ()
    acc = np.matmul(
        a.astype(np.int64) - a_zero_point.reshape(row), b - b_zero_point.astype(np.int64)
    )
    return [_requantize(acc, a_scale.reshape(row) * b_scale / y_scale, y_zero_point)]


def _qlinear_conv() -> list[Case]:
    def inputs(x: np.ndarray, w: np.ndarray, *, per_channel: bool, y: type) -> dict:
        m = w.shape[0]
        return {
            "x": x,
            "x_scale": scales(),
            "x_zero_point": ints(x.dtype.type, 1),
            "w": w,
            "w_scale": scales(m) if per_channel else scales(),
            "w_zero_point": ints(w.dtype.type, m) if per_channel else ints(w.dtype.type),
            "y_scale": scales(low=0.5, high=2.0),
            "y_zero_point": ints(y),
        }

    ties_x = np.arange(2 * 3 * 3, dtype=np.int16).reshape(1, 2, 3, 3).astype(U8)
    ties = {
        "x": ties_x,
        "x_scale": scalar(0.5),
        "x_zero_point": scalar(4, U8),
        "w": np.array([1, -1, 3, 2], I8).reshape(2, 2, 1, 1),
        "w_scale": scalar(1.0),
        "w_zero_point": scalar(0, I8),
        "y_scale": scalar(1.0),
        "y_zero_point": scalar(3, U8),
    }
    return [
        Case(
            "QLinearConv",
            inputs(ints(U8, 1, 3, 7, 7), ints(U8, 4, 3, 3, 3), per_channel=False, y=U8),
            {"pads": [1, 1, 1, 1]},
            opset=10,
            id="qlinearconv-uint8-per-tensor-padded",
        ),
        Case(
            "QLinearConv",
            {
                **inputs(ints(I8, 2, 4, 8, 6), ints(I8, 6, 2, 3, 2), per_channel=True, y=I8),
                "B": bias(6),
            },
            {"group": 2, "strides": [2, 1], "pads": [1, 0, 0, 1]},
            opset=10,
            id="qlinearconv-int8-per-channel-grouped-bias",
        ),
        Case(  # a one-element zero point with per-channel scales: each granularity alone
            "QLinearConv",
            {
                **inputs(ints(U8, 1, 3, 6, 6), ints(I8, 4, 3, 3, 3), per_channel=True, y=U8),
                "w_zero_point": ints(I8),
            },
            opset=13,
            id="qlinearconv-scalar-zero-point-per-channel-scale",
        ),
        Case(
            "QLinearConv",
            inputs(ints(U8, 1, 2, 9, 9), ints(I8, 3, 2, 3, 3), per_channel=True, y=I8),
            {"auto_pad": "SAME_UPPER", "dilations": [2, 2], "strides": [2, 2]},
            opset=21,
            id="qlinearconv-mixed-dtypes-same-upper-dilated",
        ),
        Case(
            "QLinearConv",
            {**inputs(ints(I8, 1, 4, 6, 6), ints(U8, 4, 1, 3, 3), per_channel=True, y=U8)},
            {"group": 4, "auto_pad": "SAME_LOWER"},
            opset=10,
            id="qlinearconv-depthwise-same-lower",
        ),
        Case(
            "QLinearConv",
            {
                **inputs(ints(U8, 2, 3, 10), ints(I8, 5, 3, 4), per_channel=False, y=U8),
                "B": bias(5),
            },
            {"strides": [3], "pads": [2, 1]},
            opset=10,
            id="qlinearconv-1d",
        ),
        Case(
            "QLinearConv",
            inputs(ints(I8, 1, 2, 4, 5, 4), ints(I8, 2, 2, 2, 3, 2), per_channel=False, y=I8),
            {"pads": [0, 1, 0, 1, 0, 1]},
            opset=10,
            id="qlinearconv-3d",
        ),
        Case(
            "QLinearConv",
            {
                **inputs(ints(U8, 1, 3, 5, 5), ints(U8, 2, 3, 3, 3), per_channel=False, y=I8),
                "y_scale": scalar(1e-4),
            },
            {"pads": [1, 1, 1, 1]},
            opset=10,
            id="qlinearconv-saturates",
        ),
        Case(
            "QLinearConv",
            ties,
            opset=10,
            id="qlinearconv-ties",
            reference=_pointwise_reference,
            why="onnx's reference adds y_zero_point before rounding; ONNX rounds, then adds it",
        ),
    ]


def _conv_integer() -> list[Case]:
    return [
        Case(
            "ConvInteger",
            {"x": ints(U8, 1, 1, 3, 3), "w": ints(U8, 1, 1, 2, 2), "x_zero_point": scalar(7, U8)},
            opset=10,
            id="convinteger-uint8-x-zero-point",
        ),
        Case(
            "ConvInteger",
            {
                "x": ints(I8, 2, 4, 7, 6),
                "w": ints(U8, 6, 2, 3, 3),
                "x_zero_point": ints(I8, 1),
                "w_zero_point": ints(U8, 6),
            },
            {"group": 2, "pads": [1, 1, 1, 1], "strides": [2, 1]},
            opset=10,
            id="convinteger-per-channel-grouped",
        ),
        Case(
            "ConvInteger",
            {"x": ints(I8, 1, 3, 8, 8), "w": ints(I8, 2, 3, 2, 2)},
            {"auto_pad": "VALID", "dilations": [3, 2]},
            opset=10,
            id="convinteger-no-zero-points-dilated",
        ),
        Case(
            "ConvInteger",
            {
                "x": ints(U8, 1, 2, 9),
                "w": ints(I8, 3, 2, 3),
                "x_zero_point": scalar(128, U8),
                "w_zero_point": scalar(-3, I8),
            },
            {"auto_pad": "SAME_UPPER", "strides": [2]},
            opset=10,
            id="convinteger-1d-same-upper",
        ),
    ]


def _qlinear_matmul() -> list[Case]:
    def inputs(a: np.ndarray, b: np.ndarray, *, y: type, scale: type = np.float32) -> dict:
        return {
            "a": a,
            "a_scale": scales().astype(scale),
            "a_zero_point": ints(a.dtype.type),
            "b": b,
            "b_scale": scales(1).astype(scale),
            "b_zero_point": ints(b.dtype.type, 1),
            "y_scale": scales(low=0.1, high=0.5).astype(scale),
            "y_zero_point": ints(y),
        }

    per_column = inputs(ints(I8, 3, 6), ints(U8, 6, 5), y=I8)
    per_column.update(b_scale=scales(5), b_zero_point=ints(U8, 5))
    per_row = inputs(ints(U8, 2, 4, 7), ints(U8, 7, 3), y=U8)
    per_row.update(a_scale=scales(2, 4, 1), a_zero_point=ints(U8, 2, 4, 1))
    per_column_nd = inputs(ints(I8, 2, 3, 4), ints(I8, 2, 4, 5), y=U8)
    per_column_nd.update(b_scale=scales(2, 1, 5), b_zero_point=ints(I8, 2, 1, 5))
    per_row_vector = inputs(ints(U8, 3, 5), ints(I8, 5, 2), y=I8)
    per_row_vector.update(a_scale=scales(3), a_zero_point=ints(U8, 3))
    ties = {
        "a": np.array([[1, 2, 3], [4, 5, 6]], U8),
        "a_scale": scalar(0.5),
        "a_zero_point": scalar(0, U8),
        "b": np.array([[1, 0], [0, 1], [1, 1]], I8),
        "b_scale": scalar(1.0),
        "b_zero_point": scalar(0, I8),
        "y_scale": scalar(1.0),
        "y_zero_point": scalar(-3, I8),
    }
    return [
        Case(
            "QLinearMatMul",
            inputs(ints(U8, 4, 6), ints(U8, 6, 3), y=U8),
            opset=10,
            id="qlinearmatmul-uint8-2d",
        ),
        Case(
            "QLinearMatMul",
            inputs(ints(I8, 2, 1, 3, 8), ints(I8, 4, 8, 2), y=I8),
            opset=10,
            id="qlinearmatmul-int8-broadcast-batch",
        ),
        Case("QLinearMatMul", per_column, opset=10, id="qlinearmatmul-per-column"),
        Case(
            "QLinearMatMul",
            {**per_column, "b_zero_point": ints(U8)},  # one zero point, per-column scales
            opset=10,
            id="qlinearmatmul-scalar-zero-point-per-column-scale",
        ),
        Case("QLinearMatMul", per_column_nd, opset=21, id="qlinearmatmul-per-column-nd"),
        Case("QLinearMatMul", per_row, opset=10, id="qlinearmatmul-per-row-nd"),
        Case(
            "QLinearMatMul",
            inputs(ints(U8, 3, 9), ints(I8, 9, 4), y=U8, scale=np.float16),
            opset=21,
            id="qlinearmatmul-float16-scales",
        ),
        Case(
            "QLinearMatMul",
            inputs(ints(U8, 6), ints(I8, 2, 6, 3), y=I8),
            opset=10,
            id="qlinearmatmul-vector-a",
        ),
        Case(
            "QLinearMatMul",
            inputs(ints(I8, 3, 6), ints(U8, 6), y=U8),
            opset=10,
            id="qlinearmatmul-vector-b",
        ),
        Case(
            "QLinearMatMul",
            {**inputs(ints(U8, 2, 8), ints(U8, 8, 2), y=U8), "y_scale": scalar(1e-4)},
            opset=10,
            id="qlinearmatmul-saturates",
        ),
        Case(
            "QLinearMatMul",
            per_row_vector,
            opset=10,
            id="qlinearmatmul-per-row-vector",
            reference=_matmul_reference,
            why="onnx's reference subtracts a 1-D a_zero_point along K, not per row of a",
        ),
        Case(
            "QLinearMatMul",
            ties,
            opset=10,
            id="qlinearmatmul-ties",
            reference=_matmul_reference,
            why="onnx's reference adds y_zero_point before rounding; ONNX rounds, then adds it",
        ),
    ]


def _matmul_integer() -> list[Case]:
    return [
        Case(
            "MatMulInteger",
            {
                "A": ints(U8, 4, 3),
                "B": ints(U8, 3, 2),
                "a_zero_point": scalar(12, U8),
                "b_zero_point": np.array([200], U8),
            },
            opset=10,
            id="matmulinteger-uint8",
        ),
        Case(
            "MatMulInteger",
            {
                "A": ints(I8, 2, 3, 5),
                "B": ints(U8, 5, 4),
                "a_zero_point": ints(I8, 2, 3, 1),
                "b_zero_point": ints(U8, 4),
            },
            opset=10,
            id="matmulinteger-per-row-and-column",
        ),
        Case(
            "MatMulInteger",
            {"A": ints(I8, 3, 1, 2, 4), "B": ints(I8, 2, 4, 3)},
            opset=10,
            id="matmulinteger-no-zero-points-broadcast",
        ),
        Case(
            "MatMulInteger",
            {"A": ints(U8, 5), "B": ints(I8, 5), "a_zero_point": scalar(1, U8)},
            opset=10,
            id="matmulinteger-vectors",
        ),
        Case(
            "MatMulInteger",
            {
                "A": np.zeros((1, 40000), U8),
                "B": np.full((40000, 1), 127, I8),
                "a_zero_point": scalar(255, U8),
                "b_zero_point": scalar(-128, I8),
            },
            opset=10,
            id="matmulinteger-wraps-past-int32",
        ),
    ]


CASES: list[Case] = [*_qlinear_conv(), *_conv_integer(), *_qlinear_matmul(), *_matmul_integer()]
