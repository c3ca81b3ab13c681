"""Single-op cases for the elementwise, reduction, shape and tensor ops (see `case.py`).

Each case is checked by `test_every_op.py` against onnx's ReferenceEvaluator, or against the
hand-written `reference` where that one is wrong; `why` says so. Attribute corners (negative
axes, broadcasting, keepdims, clamped slices, opset forms) each get their own case.
"""

from __future__ import annotations

import math

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    """Seeded standard-normal float32 values."""
    return _rng.standard_normal(shape).astype(np.float32)


def pos(*shape: int) -> np.ndarray:
    """Seeded positive float32 values in [0.5, 2)."""
    return _rng.uniform(0.5, 2.0, shape).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _unary() -> list[Case]:
    plain = ["Relu", "Neg", "Abs", "Exp", "Floor", "Ceil", "Erf", "Tanh", "Sigmoid"]
    plain += ["Softsign", "Softplus"]
    cases = [Case(t, {"x": f32(3, 4)}, id=t.lower()) for t in plain]
    cases += [Case(t, {"x": pos(3, 4)}, id=t.lower()) for t in ("Sqrt", "Log", "Reciprocal")]
    cases += [
        Case("Sign", {"x": np.array([-2.5, -0.0, 0.0, 3.0], np.float32)}, id="sign"),
        Case("Sign", {"x": i64(-3, 0, 5)}, id="sign-int64"),
        Case("Shrink", {"x": np.linspace(-2, 2, 9, dtype=np.float32)}, id="shrink-default"),
        Case(
            "Shrink",
            {"x": np.linspace(-3, 3, 13, dtype=np.float32)},
            {"bias": 1.5, "lambd": 1.0},
            id="shrink-attrs",
        ),
        Case("Shrink", {"x": i64(-4, -1, 0, 1, 4)}, {"bias": 1.0, "lambd": 1.0}, id="shrink-int"),
        Case("Relu", {"x": i64(-3, 0, 5)}, id="relu-int64"),
        Case("Sigmoid", {"x": np.array([-100, -5, 0, 5, 100], np.float32)}, id="sigmoid-far"),
        Case("Softplus", {"x": np.array([-100, 0, 50], np.float32)}, id="softplus-far"),
        Case(
            "Erf",
            {"x": np.linspace(-4, 4, 41, dtype=np.float32)},
            id="erf-range",
            reference=lambda x: [np.array([math.erf(v) for v in x], np.float32)],
            why="onnx's Erf reference needs scipy; math.erf is exact",
        ),
        Case("Not", {"x": np.array([True, False, True])}, id="not"),
        Case("LeakyRelu", {"x": f32(3, 4)}, id="leakyrelu-default"),
        Case("LeakyRelu", {"x": f32(3, 4)}, {"alpha": 0.3}, id="leakyrelu-alpha"),
        Case("Elu", {"x": f32(3, 4)}, id="elu-default"),
        Case("Elu", {"x": f32(3, 4)}, {"alpha": 0.5}, id="elu-alpha"),
        Case("Selu", {"x": f32(3, 4)}, id="selu-default"),
        Case("Selu", {"x": f32(3, 4)}, {"alpha": 2.0, "gamma": 3.0}, id="selu-attrs"),
        Case("HardSigmoid", {"x": 4 * f32(3, 4)}, id="hardsigmoid-default"),
        Case("HardSigmoid", {"x": f32(3, 4)}, {"alpha": 0.5, "beta": 0.6}, id="hardsigmoid-attrs"),
        Case("Gelu", {"x": 3 * f32(3, 4)}, opset=20, id="gelu-exact"),
        Case("Gelu", {"x": 3 * f32(3, 4)}, {"approximate": "tanh"}, opset=20, id="gelu-tanh"),
    ]
    return cases


def _binary() -> list[Case]:
    arithmetic = ["Add", "Sub", "Mul", "Div"]
    cases = [
        Case(t, {"a": f32(2, 3, 4), "b": pos(3, 1)}, id=f"{t.lower()}-bcast") for t in arithmetic
    ]
    cases += [
        Case(t, {"a": f32(4), "b": f32(2, 3, 4)}, id=f"{t.lower()}-bcast-left") for t in arithmetic
    ]
    cases += [
        Case("Add", {"a": f32(2, 3), "b": np.array(1.5, np.float32)}, id="add-scalar"),
        Case("Mul", {"a": i64(1, -2, 3), "b": i64(4, 5, -6)}, id="mul-int64"),
        Case("Div", {"a": i64(7, -7, 7, -7), "b": i64(2, 2, -2, -2)}, id="div-int-truncates"),
        Case("Pow", {"a": pos(3, 4), "b": f32(4)}, id="pow-bcast"),
        Case("Pow", {"a": pos(3, 4), "b": i64(2)}, id="pow-int-exponent"),
    ]
    a, b = (
        _rng.integers(0, 3, (3, 4)).astype(np.float32),
        _rng.integers(0, 3, (4,)).astype(np.float32),
    )
    for t in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"):
        cases.append(Case(t, {"a": a, "b": b}, id=f"{t.lower()}-bcast"))
    cases.append(Case("Equal", {"a": i64(1, 2, 3), "b": i64(1, 0, 3)}, id="equal-int64"))
    p, q = _rng.random((3, 4)) > 0.5, _rng.random((4,)) > 0.5
    cases += [Case(t, {"a": p, "b": q}, id=t.lower()) for t in ("And", "Or", "Xor")]
    cases += [
        Case("PRelu", {"x": f32(2, 3, 4), "slope": pos(3, 1)}, id="prelu-channel"),
        Case("PRelu", {"x": f32(2, 3), "slope": pos(1)}, id="prelu-scalar-slope"),
    ]
    return cases


def _variadic() -> list[Case]:
    cases = []
    for t in ("Sum", "Max", "Min"):
        cases.append(Case(t, {"a": f32(2, 3), "b": f32(3), "c": f32(2, 1)}, id=f"{t.lower()}-3"))
        cases.append(Case(t, {"a": f32(2, 3)}, id=f"{t.lower()}-1"))
    cases.append(
        Case("Where", {"c": _rng.random((3, 1)) > 0.5, "x": f32(4), "y": f32(3, 4)}, id="where")
    )
    return cases


def _clip_cast_pass() -> list[Case]:
    x = 3 * f32(3, 4)
    lo, hi = np.array(-1.0, np.float32), np.array(0.5, np.float32)
    return [
        Case("Clip", {"x": x}, {"min": -1.0, "max": 0.5}, opset=6, id="clip-attr"),
        Case("Clip", {"x": x}, {"max": 0.5}, opset=6, id="clip-attr-max-only"),
        Case("Clip", {"x": x, "lo": lo, "hi": hi}, opset=13, id="clip-inputs"),
        Case("Clip", {"x": x, "lo": None, "hi": hi}, opset=13, id="clip-max-only"),
        Case("Clip", {"x": x, "lo": lo}, opset=13, id="clip-min-only"),
        Case("Clip", {"x": x}, opset=13, id="clip-none"),
        Case("Cast", {"x": 3 * f32(3, 4)}, {"to": 7}, id="cast-f32-int64"),
        Case("Cast", {"x": i64(0, 1, -3)}, {"to": 1}, id="cast-int64-f32"),
        Case("Cast", {"x": f32(5)}, {"to": 9}, id="cast-bool"),
        Case("Cast", {"x": f32(5)}, {"to": 10}, id="cast-f16"),
        Case("Identity", {"x": f32(2, 3)}, id="identity"),
        Case("Dropout", {"x": f32(2, 3)}, id="dropout"),
        Case("Dropout", {"x": f32(2, 3)}, outputs=2, id="dropout-mask"),
        Case("Dropout", {"x": f32(2, 3)}, {"ratio": 0.5}, opset=7, id="dropout-7-ratio"),
        Case(
            "Dropout",
            {"x": f32(2, 3), "ratio": np.array(0.3, np.float32)},
            outputs=2,
            opset=13,
            id="dropout-13-ratio-input",
        ),
    ]


def _reduce() -> list[Case]:
    cases = []
    x = f32(2, 3, 4)
    for t, since in (
        ("ReduceSum", 13),
        ("ReduceMean", 18),
        ("ReduceMax", 18),
        ("ReduceMin", 18),
        ("ReduceProd", 18),
    ):
        name = t.removeprefix("Reduce").lower()
        cases += [
            Case(t, {"x": x}, {"axes": [1]}, opset=since - 1, id=f"{name}-attr"),
            Case(
                t,
                {"x": x},
                {"axes": [-1, 0], "keepdims": 0},
                opset=since - 1,
                id=f"{name}-attr-neg",
            ),
            Case(t, {"x": x}, opset=since - 1, id=f"{name}-all"),
            Case(t, {"x": x, "axes": i64(-2)}, opset=since, constant=("axes",), id=f"{name}-input"),
            Case(
                t,
                {"x": x, "axes": i64(0, 2)},
                {"keepdims": 0},
                opset=since,
                constant=("axes",),
                id=f"{name}-input-nokeep",
            ),
            Case(t, {"x": x}, {"keepdims": 0}, opset=since, id=f"{name}-input-empty"),
            Case(t, {"x": x}, {"noop_with_empty_axes": 1}, opset=since, id=f"{name}-noop"),
        ]
    return cases


def _shape_ops() -> list[Case]:
    x = f32(2, 3, 4)
    return [
        Case("Constant", {}, {"value": f32(2, 3)}, id="constant-tensor"),
        Case("Constant", {}, {"value_float": 2.5}, id="constant-float"),
        Case("Constant", {}, {"value_ints": [1, 2, 3]}, id="constant-ints"),
        Case("ConstantOfShape", {"s": i64(2, 3)}, constant=("s",), id="constantofshape-default"),
        Case(
            "ConstantOfShape",
            {"s": i64(3)},
            {"value": np.array([7], np.int64)},
            constant=("s",),
            id="constantofshape-int",
        ),
        Case("Shape", {"x": x}, id="shape"),
        Case("Shape", {"x": x}, {"start": -2}, opset=15, id="shape-start"),
        Case("Shape", {"x": x}, {"start": 1, "end": 10}, opset=15, id="shape-clamped"),
        Case(
            "Range",
            {
                "start": np.array(1, np.int64),
                "limit": np.array(10, np.int64),
                "delta": np.array(3, np.int64),
            },
            constant=("start", "limit", "delta"),
            id="range-int",
        ),
        Case(
            "Range",
            {
                "start": np.array(1.0, np.float32),
                "limit": np.array(-1.0, np.float32),
                "delta": np.array(-0.5, np.float32),
            },
            constant=("start", "limit", "delta"),
            id="range-float-down",
        ),
        Case("Reshape", {"x": x, "s": i64(4, -1)}, constant=("s",), id="reshape-infer"),
        Case("Reshape", {"x": x, "s": i64(0, 0, 2, 2)}, constant=("s",), id="reshape-zero-copies"),
        Case(
            "Reshape",
            {"x": x},
            {"shape": [6, -1]},
            opset=4,
            id="reshape-attr",
            reference=lambda x: [x.reshape(6, 4)],
            why="onnx's ReferenceEvaluator has no Reshape before opset 5",
        ),
        Case(
            "Reshape",
            {"x": np.zeros((0, 3), np.float32), "s": i64(3, 0)},
            {"allowzero": 1},
            opset=14,
            constant=("s",),
            id="reshape-allowzero",
        ),
        Case("Flatten", {"x": x}, id="flatten-default"),
        Case("Flatten", {"x": x}, {"axis": 0}, id="flatten-0"),
        Case("Flatten", {"x": x}, {"axis": -1}, id="flatten-neg"),
        Case("Squeeze", {"x": f32(1, 3, 1)}, opset=11, id="squeeze-all"),
        Case("Squeeze", {"x": f32(1, 3, 1)}, {"axes": [-1]}, opset=11, id="squeeze-attr"),
        Case(
            "Squeeze",
            {"x": f32(1, 3, 1), "a": i64(0)},
            opset=13,
            constant=("a",),
            id="squeeze-input",
        ),
        Case("Squeeze", {"x": f32(1, 3, 1)}, opset=13, id="squeeze-input-none"),
        Case("Unsqueeze", {"x": f32(3, 4)}, {"axes": [0, -1]}, opset=11, id="unsqueeze-attr"),
        Case(
            "Unsqueeze",
            {"x": f32(3, 4), "a": i64(1, 3)},
            opset=13,
            constant=("a",),
            id="unsqueeze-input",
        ),
        Case(
            "Expand",
            {"x": f32(3, 1), "s": i64(2, 1, 4)},
            constant=("s",),
            id="expand-bidirectional",
        ),
        Case("Expand", {"x": f32(2, 3), "s": i64(3)}, constant=("s",), id="expand-same-rank"),
    ]


def _tensor_ops() -> list[Case]:
    x = f32(2, 3, 4)
    return [
        Case("Transpose", {"x": x}, id="transpose-default"),
        Case("Transpose", {"x": x}, {"perm": [1, 2, 0]}, id="transpose-perm"),
        Case("Concat", {"a": x, "b": f32(2, 1, 4)}, {"axis": 1}, id="concat"),
        Case(
            "Concat", {"a": x, "b": f32(2, 3, 2), "c": f32(2, 3, 1)}, {"axis": -1}, id="concat-neg"
        ),
        Case("Split", {"x": f32(6, 2)}, outputs=3, opset=11, id="split-equal"),
        Case(
            "Split",
            {"x": f32(2, 5)},
            {"axis": -1, "split": [2, 3]},
            outputs=2,
            opset=11,
            id="split-attr",
        ),
        Case(
            "Split",
            {"x": f32(2, 5), "s": i64(1, 4)},
            {"axis": 1},
            outputs=2,
            opset=13,
            constant=("s",),
            id="split-input",
        ),
        Case(
            "Split",
            {"x": f32(7, 2)},
            {"num_outputs": 3},
            outputs=3,
            opset=18,
            id="split-num-outputs",
        ),
        Case(
            "Slice",
            {"x": x},
            {"starts": [1, 0], "ends": [2, -1], "axes": [0, 2]},
            opset=9,
            id="slice-attr",
        ),
        Case("Slice", {"x": x}, {"starts": [0], "ends": [100]}, opset=9, id="slice-attr-no-axes"),
        _slice(x, [0, 1], [2, 3], None, None, "slice-inputs"),
        _slice(x, [-1], [-100], [2], [-1], "slice-reverse-clamped"),
        _slice(x, [3, 0], [0, 9], [-1, 1], [-2, 2], "slice-neg-step"),
        _slice(x, [10], [20], [0], None, "slice-empty"),
        _slice(x, [0], [np.iinfo(np.int64).max], [1], [2], "slice-int64-max"),
        Case("Gather", {"x": x, "i": i64(1, 0, -1)}, id="gather-axis0"),
        Case(
            "Gather",
            {"x": x, "i": np.array([[0, 3], [-1, 1]], np.int64)},
            {"axis": -1},
            id="gather-2d-neg",
        ),
        Case("Gather", {"x": x, "i": np.array(1, np.int64)}, {"axis": 1}, id="gather-scalar"),
        Case("Tile", {"x": f32(2, 3), "r": i64(2, 1)}, constant=("r",), id="tile"),
        Case("Pad", {"x": f32(2, 3)}, {"pads": [1, 0, 0, 2], "value": 1.5}, opset=2, id="pad-attr"),
        Case(
            "Pad",
            {"x": f32(3, 4)},
            {"pads": [1, 2, 1, 2], "mode": "reflect"},
            opset=2,
            id="pad-attr-reflect",
        ),
        _pad(f32(2, 3), [0, 1, 1, 0], None, "constant", "pad-input"),
        _pad(f32(2, 3), [1, 1, 0, 1], np.array(-2.0, np.float32), "constant", "pad-value"),
        _pad(f32(3, 4), [1, 2, 2, 1], None, "reflect", "pad-reflect"),
        _pad(f32(3, 4), [2, 0, 1, 3], None, "edge", "pad-edge"),
        Case(
            "Pad",
            {"x": f32(3, 4), "p": i64(-1, 1, 0, -2)},
            opset=13,
            constant=("p",),
            id="pad-negative-crops",
            reference=lambda x, p: [np.pad(x[1:, :2], ((0, 0), (1, 0)))],
            why="onnx's Pad reference passes negative pads to np.pad, which rejects them",
        ),
        Case(
            "Pad",
            {"x": f32(2, 3, 4), "p": i64(1, 2), "v": None, "a": i64(-1)},
            opset=18,
            constant=("p", "a"),
            id="pad-axes",
        ),
    ]


def _slice(
    x: np.ndarray, starts: list, ends: list, axes: list | None, steps: list | None, id: str
) -> Case:
    inputs: dict[str, np.ndarray | None] = {"x": x, "s": i64(*starts), "e": i64(*ends)}
    inputs["a"] = None if axes is None else i64(*axes)
    if steps is not None:
        inputs["t"] = i64(*steps)
    constant = tuple(k for k, v in inputs.items() if k != "x" and v is not None)
    return Case("Slice", inputs, opset=13, constant=constant, id=id)


def _pad(x: np.ndarray, pads: list, value: np.ndarray | None, mode: str, id: str) -> Case:
    return Case(
        "Pad",
        {"x": x, "p": i64(*pads), "v": value},
        {"mode": mode},
        opset=13,
        constant=("p",) if value is None else ("p", "v"),
        id=id,
    )


def _more_ops() -> list[Case]:
    """Ops added after the tables above: drawn last, so the earlier cases keep their values."""
    unit = np.linspace(-0.9, 0.9, 12, dtype=np.float32).reshape(3, 4)  # inside asin's domain
    cases = [Case(t, {"x": unit}, id=t.lower()) for t in ("Sin", "Cos", "Tan", "Asin", "Acos")]
    cases += [Case(t, {"x": unit}, id=t.lower()) for t in ("Atan", "Sinh", "Cosh", "Asinh")]
    cases += [
        Case("Atanh", {"x": unit}, id="atanh"),
        Case("Acosh", {"x": 1 + pos(3, 4)}, id="acosh"),
        Case("Round", {"x": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6], np.float32)},
             id="round-half-to-even"),
        Case("HardSwish", {"x": 4 * f32(3, 4)}, opset=14, id="hardswish"),
        Case("Mish", {"x": 3 * f32(3, 4)}, opset=18, id="mish"),
        Case("Mod", {"a": i64(-7, 7, -7, 7, 5), "b": i64(3, -3, -3, 3, 2)}, id="mod-int-floor"),
        Case("Mod", {"a": i64(-7, 7, -7, 7), "b": i64(3, -3, -3, 3)}, {"fmod": 1},
             id="mod-int-fmod"),
        Case("Mod", {"a": 4 * f32(2, 3), "b": pos(3)}, {"fmod": 1}, id="mod-float-fmod-bcast"),
        Case("IsNaN", {"x": np.array([np.nan, 1.0, np.inf, -0.0], np.float32)}, id="isnan"),
        Case("IsInf", {"x": np.array([np.inf, -np.inf, 1.0, np.nan], np.float32)}, id="isinf"),
        Case("IsInf", {"x": np.array([np.inf, -np.inf, 1.0], np.float32)},
             {"detect_positive": 0}, id="isinf-negative-only"),
        Case("CastLike", {"x": 3 * f32(3, 4), "like": i64(0)}, opset=15, id="castlike-int64"),
        Case("Size", {"x": f32(2, 3, 4)}, id="size"),
        Case("ArgMax", {"x": f32(3, 4)}, {"axis": 1}, id="argmax-axis1"),
        Case("ArgMax", {"x": np.array([[1, 3, 3], [2, 2, 0]], np.float32)},
             {"axis": -1, "keepdims": 0, "select_last_index": 1}, id="argmax-last-index"),
        Case("ArgMin", {"x": f32(3, 4)}, id="argmin-default"),
        Case("ArgMin", {"x": np.array([[1, 0, 0], [2, 2, 0]], np.int64)},
             {"axis": 1, "keepdims": 0}, id="argmin-first-of-ties"),
        Case("GatherElements", {"x": f32(3, 4), "i": np.array([[0, 2], [-1, 1], [1, 0]])},
             {"axis": 1}, id="gatherelements-axis1-negative"),
        Case("GatherElements", {"x": f32(3, 2), "i": np.array([[2, 0], [1, 1]])},
             id="gatherelements-axis0"),
        Case("Trilu", {"x": f32(2, 3, 4)}, opset=14, id="trilu-upper"),
        Case("Trilu", {"x": f32(4, 5), "k": np.array(-1, np.int64)}, {"upper": 0}, opset=14,
             id="trilu-lower-k"),
    ]  # fmt: skip
    return cases + _more_ops_2() + _norm_ops() + _einsum() + _late_ops()


def _late_ops() -> list[Case]:
    seqs = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    return [
        Case("CumProd", {"x": pos(2, 3), "axis": np.array(1, np.int64)}, opset=26, id="cumprod"),
        Case("CumProd", {"x": i64(1, 2, 3, 4).reshape(2, 2), "axis": np.array(0, np.int64)},
             {"exclusive": 1, "reverse": 1}, opset=26, id="cumprod-exclusive-reverse"),
        Case("LpPool", {"x": f32(1, 2, 5, 5)}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
             "strides": [2, 2]}, opset=18, id="lppool-p2-padded", rtol=1e-4),
        Case("LpPool", {"x": f32(1, 2, 6)}, {"kernel_shape": [2], "p": 1}, opset=18,
             id="lppool-p1-1d", rtol=1e-4),
        Case("GlobalLpPool", {"x": f32(2, 3, 4, 4)}, {"p": 3}, id="globallppool-p3", rtol=1e-4,
             reference=lambda x: [(np.abs(x) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)],
             why="onnx's reference has no GlobalLpPool"),
        Case("ReverseSequence", {"x": seqs, "n": i64(4, 1, 2)}, id="reversesequence-time0"),
        Case("ReverseSequence", {"x": seqs.transpose(1, 0, 2).copy(), "n": i64(3, 4, 0)},
             {"batch_axis": 0, "time_axis": 1}, id="reversesequence-batch0"),
        Case("CenterCropPad", {"x": f32(5, 4, 2), "s": i64(3, 7)}, {"axes": [0, 1]}, opset=18,
             constant=("s",), id="centercroppad-crop-and-pad"),
        Case("CenterCropPad", {"x": f32(4, 3), "s": i64(1, 6)}, opset=18, constant=("s",),
             id="centercroppad-odd"),
    ]  # fmt: skip


def _einsum() -> list[Case]:
    def case(equation: str, *shapes: tuple[int, ...], id: str) -> Case:
        inputs = {f"x{i}": f32(*shape) for i, shape in enumerate(shapes)}
        return Case("Einsum", inputs, {"equation": equation}, opset=12, id=id)

    return [
        case("bij,bjk->bik", (2, 3, 4), (2, 4, 5), id="einsum-batch-matmul"),
        case("ij->ji", (3, 4), id="einsum-transpose"),
        case("ii", (4, 4), id="einsum-trace-implicit"),
        case("...ij,...jk", (2, 1, 3, 4), (3, 4, 2), id="einsum-ellipsis-broadcast"),
        case("i,i->", (5,), (5,), id="einsum-dot"),
        case("ab,bc,cd->ad", (2, 3), (3, 4), (4, 2), id="einsum-three-operands"),
    ]


def _norm_ops() -> list[Case]:
    x = 2 * f32(2, 4, 3, 2) + 1
    return [
        Case("RMSNormalization", {"x": x, "s": pos(3, 2)}, {"axis": 2}, opset=23,
             id="rmsnormalization-axis2"),
        Case("RMSNormalization", {"x": x.astype(np.float16), "s": pos(2).astype(np.float16)},
             opset=23, id="rmsnormalization-float16", rtol=1e-3, atol=1e-3),
        Case("GroupNormalization", {"x": x, "s": pos(4), "b": f32(4)}, {"num_groups": 2},
             opset=21, id="groupnormalization-per-channel", rtol=1e-4, atol=1e-5),
        Case("GroupNormalization", {"x": x, "s": pos(2), "b": f32(2)}, {"num_groups": 2},
             opset=18, id="groupnormalization-per-group", rtol=1e-4, atol=1e-5),
        # (N, C): each group of channels alone, as onnxruntime runs it (hetsim refused rank 2)
        Case("GroupNormalization", {"x": x[:, :, 0, 0], "s": pos(4), "b": f32(4)},
             {"num_groups": 2}, opset=21, id="groupnormalization-rank-2", rtol=1e-4, atol=1e-5),
        Case("MeanVarianceNormalization", {"x": x}, id="meanvariancenormalization-default",
             rtol=1e-4, atol=1e-5),
        Case("MeanVarianceNormalization", {"x": x}, {"axes": [1, -1]},
             id="meanvariancenormalization-axes", rtol=1e-4, atol=1e-5),
        Case("LpNormalization", {"x": np.array([[3, 4], [0, 0]], np.float32)}, id="lpnorm-l2-zero"),
        Case("LpNormalization", {"x": f32(3, 4)}, {"axis": 0, "p": 1}, id="lpnorm-l1-axis0",
             reference=lambda x: [x / np.abs(x).sum(axis=0, keepdims=True)],
             why="onnx's reference sums x^p, not |x|^p: a wrong L1 norm of negative values"),
    ]  # fmt: skip


def _hardmax_rows(x: np.ndarray) -> np.ndarray:
    return (np.arange(x.shape[1]) == np.argmax(x, axis=1)[:, None]).astype(x.dtype)


def _more_ops_2() -> list[Case]:
    u8 = np.array([[1, 6, 255], [128, 3, 0]], np.uint8)
    i32 = np.array([[-8, 5, 1 << 30], [7, -1, 0]], np.int32)
    three = np.array(3, np.int64)  # a scalar depth: onnx's reference refuses [3]
    return [
        Case("Swish", {"x": 3 * f32(3, 4)}, {"alpha": 0.5}, opset=24, id="swish-alpha"),
        Case("Celu", {"x": 2 * f32(3, 4)}, {"alpha": 1.5}, opset=12, id="celu-alpha"),
        Case("ThresholdedRelu", {"x": 2 * f32(3, 4)}, {"alpha": 0.5}, opset=10,
             id="thresholdedrelu-alpha"),
        Case("Mean", {"a": f32(2, 3), "b": f32(3), "c": f32(2, 1)}, id="mean-3"),
        Case("BitwiseNot", {"x": u8}, opset=18, id="bitwisenot"),
        Case("BitwiseAnd", {"a": i32, "b": np.int32(6) + i32}, opset=18, id="bitwiseand"),
        Case("BitwiseOr", {"a": u8, "b": u8[:, ::-1].copy()}, opset=18, id="bitwiseor"),
        Case("BitwiseXor", {"a": i32, "b": i32[::-1].copy()}, opset=18, id="bitwisexor"),
        Case("BitShift", {"a": u8, "b": np.array([1, 2, 9], np.uint8)},
             {"direction": "LEFT"}, id="bitshift-left-uint8"),
        Case("BitShift", {"a": i32, "b": np.array([1, 40, -1], np.int32)},
             {"direction": "RIGHT"}, opset=28, id="bitshift-right-signed"),
        *[
            Case(t, {"x": pos(2, 3, 4)}, {"axes": [1], "keepdims": k}, opset=13,
                 id=f"{t.lower()}-axis1-keep{k}")
            for t in ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum")
            for k in (0, 1)
        ],
        Case("ReduceLogSumExp", {"x": 50 * f32(2, 3, 4), "a": i64(-1)}, opset=18,
             constant=("a",), id="reducelogsumexp-large"),
        Case("Hardmax", {"x": np.array([[1, 3, 3, 0], [2, 2, 1, 2]], np.float32)}, opset=13,
             id="hardmax-ties-first"),
        Case("Hardmax", {"x": f32(2, 3, 4)}, {"axis": 1}, opset=11, id="hardmax-flattened",
             reference=lambda x: [_hardmax_rows(x.reshape(2, 12)).reshape(2, 3, 4)],
             why="onnx's reference takes it along axis 1; before opset 13 the input is "
                 "flattened to [2, 12] at axis 1 (onnxruntime does)"),
        Case("GlobalMaxPool", {"x": f32(2, 3, 4, 5)}, id="globalmaxpool"),
        Case("CumSum", {"x": f32(2, 3), "axis": np.array(1, np.int64)}, id="cumsum"),
        Case("CumSum", {"x": i64(1, 2, 3, 4).reshape(2, 2), "axis": np.array(-2, np.int32)},
             {"exclusive": 1, "reverse": 1}, id="cumsum-exclusive-reverse"),
        Case("DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2}, opset=13,
             id="depthtospace-dcr"),
        Case("DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}, opset=13,
             id="depthtospace-crd"),
        Case("SpaceToDepth", {"x": f32(1, 2, 4, 6)}, {"blocksize": 2}, opset=13,
             id="spacetodepth"),
        Case("GatherND", {"x": f32(2, 3, 4), "i": np.array([[0, 2], [1, -1]], np.int64)},
             id="gathernd-pairs"),
        Case("GatherND", {"x": f32(2, 3, 4), "i": np.array([[1], [0]], np.int64)},
             {"batch_dims": 1}, id="gathernd-batch"),
        # one whole index tuple: a rank-0 output (its reshape was passed no sizes: TypeError)
        Case("GatherND", {"x": f32(2, 3), "i": np.array([1, -1], np.int64)},
             id="gathernd-scalar"),
        Case("ScatterND", {"x": f32(4, 3), "i": np.array([[1], [3]], np.int64), "u": f32(2, 3)},
             id="scatternd-rows"),
        Case("ScatterND", {"x": f32(4, 3), "i": np.array([[1], [1]], np.int64), "u": f32(2, 3)},
             {"reduction": "add"}, opset=16, id="scatternd-add-duplicates"),
        Case("ScatterElements",
             {"x": f32(3, 3), "i": np.array([[1, 0, 2], [0, 2, -1]], np.int64), "u": f32(2, 3)},
             id="scatterelements-axis0"),
        Case("ScatterElements",
             {"x": f32(2, 4), "i": np.array([[1, 1], [0, 3]], np.int64), "u": f32(2, 2)},
             {"axis": 1, "reduction": "max"}, opset=18, id="scatterelements-max"),
        Case("EyeLike", {"x": f32(3, 4)}, {"k": 1}, id="eyelike-k"),
        Case("EyeLike", {"x": f32(3, 2)}, {"dtype": 7}, id="eyelike-int64"),
        Case("OneHot",
             {"i": i64(0, 2, -1, 5), "d": three, "v": np.array([0.5, 2.0], np.float32)},
             constant=("d",), id="onehot-negative-and-out-of-range"),
        Case("OneHot",
             {"i": i64(1, 0, 2, 1).reshape(2, 2), "d": three, "v": i64(0, 9)},
             {"axis": 1}, constant=("d",), id="onehot-axis1"),
        Case("TopK", {"x": f32(3, 5), "k": i64(2)}, outputs=2, constant=("k",), id="topk"),
        Case("TopK", {"x": np.array([[3, 1, 3, 2, 1]], np.float32), "k": i64(3)},
             {"largest": 0, "axis": 1}, outputs=2, constant=("k",), id="topk-smallest-ties"),
        Case("TopK", {"x": np.array([[3, 1, 3, 2, 3]], np.int64), "k": i64(2)},
             outputs=2, constant=("k",), id="topk-largest-ties-first"),
    ]  # fmt: skip


CASES: list[Case] = [
    *_unary(),
    *_binary(),
    *_variadic(),
    *_clip_cast_pass(),
    *_reduce(),
    *_shape_ops(),
    *_tensor_ops(),
    *_more_ops(),
]
