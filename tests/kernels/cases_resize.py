"""Single-op cases for Resize and Upsample (see `case.py`).

Every mode, nearest rounding, coordinate transformation, ``scales`` against ``sizes``, ``axes``,
``keep_aspect_ratio_policy``, antialias, integer and float16 inputs and each opset form gets a
case. ``scales``, ``sizes`` and ``roi`` are constants, as the shape rule needs their values.
onnx's ReferenceEvaluator runs no Resize before opset 11 and no Upsample but nearest by whole
factors; those cases give the outputs of ONNX's own original Resize-10 tests instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(11)


def f32(*shape: int) -> np.ndarray:
    """Seeded standard-normal float32 values."""
    return _rng.standard_normal(shape).astype(np.float32)


def floats(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _tolerance(attrs: dict[str, Any]) -> dict[str, float]:
    # cubic sums four taps of both signs in float32 (as onnxruntime does), the reference in
    # float64: a few float32 ulps of the inputs apart
    return {"atol": 1e-5} if attrs.get("mode") == "cubic" else {}


def by_scales(x: np.ndarray, scales: np.ndarray, attrs: dict[str, Any], **kw: Any) -> Case:
    """A Resize of `x` by constant `scales` (no roi, no sizes)."""
    inputs = {"x": x, "roi": None, "scales": scales}
    kw = {"opset": 19, **_tolerance(attrs), **kw}
    return Case("Resize", inputs, attrs, constant=("scales",), **kw)


def to_sizes(x: np.ndarray, sizes: np.ndarray, attrs: dict[str, Any], **kw: Any) -> Case:
    """A Resize of `x` to constant `sizes` (no roi, no scales)."""
    inputs = {"x": x, "roi": None, "scales": None, "sizes": sizes}
    kw = {"opset": 19, **_tolerance(attrs), **kw}
    return Case("Resize", inputs, attrs, constant=("sizes",), **kw)


UP = floats(1, 1, 2, 1.5)
DOWN = floats(1, 1, 0.6, 0.8)


def _nearest() -> list[Case]:
    x = f32(2, 3, 4, 5)
    cases = [
        by_scales(x, UP, {}, id="resize-nearest-up"),
        by_scales(x, DOWN, {}, id="resize-nearest-down"),
        to_sizes(x, i64(2, 3, 7, 3), {}, id="resize-nearest-sizes"),
        by_scales(x, UP, {}, opset=11, id="resize-nearest-11"),
        by_scales(x, UP, {}, opset=13, id="resize-nearest-13"),
    ]
    # asymmetric and align_corners at these sizes land on halves: each rounding shows
    ties = f32(1, 1, 3, 4)
    for rounding in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        for transform in ("asymmetric", "align_corners", "half_pixel"):
            attrs = {"nearest_mode": rounding, "coordinate_transformation_mode": transform}
            cases.append(
                to_sizes(ties, i64(1, 1, 5, 7), attrs, id=f"resize-nearest-{rounding}-{transform}")
            )
    cases += [
        by_scales(
            f32(1, 2, 3, 4),
            floats(2, 3),
            {"axes": [2, 3]},
            opset=18,
            id="resize-nearest-axes",
        ),
        to_sizes(f32(1, 2, 3, 4), i64(9, 2), {"axes": [3, 2]}, id="resize-nearest-axes-sizes"),
        by_scales(
            np.arange(24, dtype=np.int64).reshape(2, 3, 4),
            floats(1, 2, 0.5),
            {},
            id="resize-nearest-int64",
        ),
        by_scales(f32(2, 3, 4), floats(1, 1, 1), {}, id="resize-identity"),
    ]
    for policy in ("not_larger", "not_smaller"):
        for sizes in (i64(7, 8), i64(2, 3)):
            cases.append(
                to_sizes(
                    f32(1, 1, 4, 5),
                    sizes,
                    {"axes": [2, 3], "keep_aspect_ratio_policy": policy},
                    id=f"resize-{policy}-{sizes[0]}",
                )
            )
    return cases


TRANSFORMS = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
)


def _at_origin(case: Case) -> Case:
    """A pytorch_half_pixel resize to one pixel: the spec's ``x_original`` is 0 at an output
    length of 1, where each tap's weight is 1 on the first pixel (linear and cubic alike), as
    onnxruntime gives it; onnx's reference places it at -0.5 (onnx/onnx#4275)."""
    from dataclasses import replace

    def reference(x: np.ndarray, *_: Any) -> list[np.ndarray]:
        return [x[:, :, :1, :1]]

    return replace(case, reference=reference, why="onnx's reference puts the pixel at -0.5")


def _linear_cubic() -> list[Case]:
    x = f32(2, 3, 4, 5)
    cases = []
    for mode in ("linear", "cubic"):
        for transform in TRANSFORMS:
            attrs = {"mode": mode, "coordinate_transformation_mode": transform}
            cases.append(by_scales(x, UP, attrs, id=f"resize-{mode}-{transform}-up"))
            cases.append(to_sizes(x, i64(2, 3, 3, 2), attrs, id=f"resize-{mode}-{transform}-sizes"))
        cases += [
            by_scales(x, DOWN, {"mode": mode}, id=f"resize-{mode}-down"),
            _at_origin(
                to_sizes(
                    x,
                    i64(2, 3, 1, 1),
                    {"mode": mode, "coordinate_transformation_mode": "pytorch_half_pixel"},
                    id=f"resize-{mode}-pytorch-to-one",
                )
            ),
            by_scales(x, DOWN, {"mode": mode, "antialias": 1}, id=f"resize-{mode}-antialias"),
            to_sizes(
                x,
                i64(2, 3, 7, 2),
                {"mode": mode, "antialias": 1},
                id=f"resize-{mode}-antialias-sizes",
            ),
            by_scales(x, UP, {"mode": mode}, opset=11, id=f"resize-{mode}-11"),
            by_scales(
                f32(2, 7),
                floats(1, 1.7),
                {"mode": mode, "exclude_outside": 1},
                id=f"resize-{mode}-exclude-outside",
            ),
        ]
    cases += [
        by_scales(
            x,
            floats(1, 1, 0.5, 2.5),
            {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
            id="resize-cubic-a-exclude-outside",
        ),
        by_scales(
            f32(1, 2, 3, 2, 4), floats(1, 1, 2, 1.5, 0.5), {"mode": "linear"}, id="resize-5d"
        ),
        by_scales(f32(2, 6), floats(1, 1.5), {"mode": "linear"}, id="resize-2d-linear"),
        by_scales(f32(3, 4, 2), floats(1, 2, 3), {"mode": "cubic"}, opset=13, id="resize-3d-cubic"),
        by_scales(
            (100 * _rng.random((1, 2, 4, 4))).astype(np.uint8),
            floats(1, 1, 1.5, 0.75),
            {"mode": "linear"},
            id="resize-linear-uint8",
        ),
        by_scales(  # cubic overshoots: saturates at 0 and 255
            np.array([[0, 255, 0, 255, 0]], np.uint8),
            floats(1, 2.2),
            {"mode": "cubic"},
            id="resize-cubic-uint8-saturates",
        ),
        by_scales(
            np.arange(-10, 14, dtype=np.int32).reshape(2, 3, 4),
            floats(1, 1.5, 1.25),
            {"mode": "cubic"},
            id="resize-cubic-int32",
        ),
        by_scales(
            f32(1, 2, 3, 4).astype(np.float16),
            UP,
            {"mode": "linear"},
            id="resize-linear-float16",
            rtol=1e-3,
            atol=1e-3,
        ),
        by_scales(
            f32(1, 2, 3, 4).astype(np.float64),
            DOWN,
            {"mode": "cubic", "antialias": 1},
            id="resize-cubic-antialias-float64",
        ),
    ]
    return cases


def _crop_and_resize() -> list[Case]:
    x = f32(1, 2, 4, 5)
    roi = floats(0, 0, 0.4, 0.6, 1, 1, 1.2, 0.9)
    cases = []
    for mode in ("nearest", "linear", "cubic"):
        cases.append(
            Case(
                "Resize",
                {"x": x, "roi": roi, "scales": None, "sizes": i64(1, 2, 3, 4)},
                {
                    "mode": mode,
                    "coordinate_transformation_mode": "tf_crop_and_resize",
                    "extrapolation_value": 7.5,
                },
                opset=13,
                constant=("roi", "sizes"),
                id=f"resize-{mode}-crop",
            )
        )
    cases += [
        Case(
            "Resize",
            {"x": x, "roi": floats(0.2, 0.1, 0.8, 0.7), "scales": floats(2, 0.8), "sizes": None},
            {
                "mode": "linear",
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "axes": [3, 2],
            },
            opset=18,
            constant=("roi", "scales"),
            id="resize-linear-crop-axes",
        ),
        Case(
            "Resize",
            {"x": x, "roi": floats(0.1, 0.5), "scales": None, "sizes": i64(1)},
            {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "axes": [2]},
            opset=18,
            constant=("roi", "sizes"),
            id="resize-linear-crop-to-one",
        ),
        Case(  # opset 11 models pass empty roi and scales beside sizes
            "Resize",
            {
                "x": x,
                "roi": floats(),
                "scales": floats(),
                "sizes": i64(1, 2, 6, 3),
            },
            {"mode": "linear"},
            opset=11,
            constant=("roi", "scales", "sizes"),
            id="resize-11-empty-scales",
        ),
    ]
    return cases


# The outputs of ONNX 1.5's Resize-10 tests (test_resize_{up,down}sample_{nearest,linear})
TWO_BY_TWO = floats(1, 2, 3, 4).reshape(1, 1, 2, 2)
TWO_BY_FOUR = floats(1, 2, 3, 4, 5, 6, 7, 8).reshape(1, 1, 2, 4)
UP_NEAREST = np.repeat(np.repeat(TWO_BY_TWO, 2, axis=2), 3, axis=3)
UP_LINEAR = floats(1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4).reshape(1, 1, 4, 4)
WHY = "onnx's ReferenceEvaluator has no Resize-10 or linear Upsample: ONNX 1.5's test outputs"


def _legacy() -> list[Case]:
    return [
        Case(
            "Resize",
            {"x": TWO_BY_TWO, "scales": floats(1, 1, 2, 3)},
            opset=10,
            constant=("scales",),
            id="resize-10-nearest-up",
            reference=lambda x, s: [UP_NEAREST],
            why=WHY,
        ),
        Case(
            "Resize",
            {"x": TWO_BY_FOUR, "scales": floats(1, 1, 0.6, 0.6)},
            opset=10,
            constant=("scales",),
            id="resize-10-nearest-down",
            reference=lambda x, s: [floats(1, 3).reshape(1, 1, 1, 2)],
            why=WHY + " (nearest rounds up when downscaling)",
        ),
        Case(
            "Resize",
            {"x": TWO_BY_TWO, "scales": floats(1, 1, 2, 2)},
            {"mode": "linear"},
            opset=10,
            constant=("scales",),
            id="resize-10-linear-up",
            reference=lambda x, s: [UP_LINEAR],
            why=WHY,
        ),
        Case(
            "Resize",
            {"x": TWO_BY_FOUR, "scales": floats(1, 1, 0.6, 0.6)},
            {"mode": "linear"},
            opset=10,
            constant=("scales",),
            id="resize-10-linear-down",
            reference=lambda x, s: [floats(1, 2.66666651).reshape(1, 1, 1, 2)],
            why=WHY,
        ),
        Case(
            "Upsample",
            {"x": TWO_BY_TWO, "scales": floats(1, 1, 2, 3)},
            opset=9,
            constant=("scales",),
            id="upsample-9-nearest",
        ),
        Case(
            "Upsample",
            {"x": TWO_BY_TWO, "scales": floats(1, 1, 2, 2)},
            {"mode": "linear"},
            opset=9,
            constant=("scales",),
            id="upsample-9-linear",
            reference=lambda x, s: [UP_LINEAR],
            why=WHY,
        ),
        Case(
            "Upsample",
            {"x": TWO_BY_TWO},
            {"scales": [1.0, 1.0, 2.0, 3.0]},
            opset=7,
            id="upsample-7-nearest",
            reference=lambda x: [UP_NEAREST],
            why="onnx's ReferenceEvaluator has no Upsample-7 (scales as an attribute)",
        ),
    ]


CASES: list[Case] = [*_nearest(), *_linear_cubic(), *_crop_and_resize(), *_legacy()]
