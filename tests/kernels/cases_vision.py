"""Cases of vision.py and unpool.py (see case.py): RoiAlign, MaxUnpool and Col2Im."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


_ROIS = np.array(
    [[0, 0, 9, 9], [1.2, 0.5, 7.3, 8.1], [3, 3, 3.2, 3.1], [-2, -3, 12, 14]], np.float32
)


def _roi_align_at_16(**attrs: Any) -> Any:
    """onnx's RoiAlign reference run at opset 16 with `attrs`: its own at opset 10 ignores
    that 10's coordinates are output_half_pixel (it takes 16's default, half_pixel)."""

    def reference(x: np.ndarray, rois: np.ndarray, batch: np.ndarray) -> list[np.ndarray]:
        from onnx.reference import ReferenceEvaluator

        from tests.kernels.case import case_model

        case = Case("RoiAlign", {"x": x, "rois": rois, "b": batch}, attrs, opset=16)
        return ReferenceEvaluator(case_model(case)).run(None, {"x": x, "rois": rois, "b": batch})

    return reference


def _roi_align() -> list[Case]:
    inputs = {"x": f32(2, 3, 10, 9), "rois": _ROIS, "b": i64(0, 1, 1, 0)}
    shape = {"output_height": 3, "output_width": 4, "spatial_scale": 0.8}
    cases = [
        Case("RoiAlign", inputs, {**shape, **extra}, opset=16, id=f"roialign-{name}", atol=1e-5)
        for name, extra in {
            "default": {},
            "ratio2": {"sampling_ratio": 2},
            "max": {"mode": "max"},
            "max-ratio2": {"mode": "max", "sampling_ratio": 2},
            "output-half-pixel": {"coordinate_transformation_mode": "output_half_pixel"},
        }.items()
    ]
    # a float32 roi whose bins are exactly 1 wide (5 * 0.8 / 4): the adaptive grid counted it
    # in float64, 1.0000000149, and took 2 samples a bin where the reference takes 1
    edge = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8) ** 1.5 / 10
    cases.append(
        Case(
            "RoiAlign",
            {"x": edge, "rois": np.array([[1, 1, 6, 6]], np.float32), "b": i64(0)},
            {"output_height": 4, "output_width": 4, "spatial_scale": 0.8},
            opset=16,
            id="roialign-bins-exactly-one-wide",
            atol=1e-5,
        )
    )
    old = {**shape, "mode": "max", "sampling_ratio": 0}
    cases.append(
        Case(
            "RoiAlign",
            inputs,
            old,
            opset=10,
            id="roialign-opset10",
            atol=1e-5,
            reference=_roi_align_at_16(**old, coordinate_transformation_mode="output_half_pixel"),
            why="onnx's reference at opset 10 uses half_pixel, not 10's output_half_pixel",
        )
    )
    return cases


def _max_unpool() -> list[Case]:
    x = f32(2, 3, 2, 2)
    # indices of a 2×2 stride-2 max pool over 4×4 images: one position per window, flat
    rows, cols = np.meshgrid(np.arange(2), np.arange(2), indexing="ij")
    pick = _rng.integers(0, 2, (2, 3, 2, 2, 2))
    flat = (rows * 2 + pick[..., 0]) * 4 + cols * 2 + pick[..., 1]
    base = (np.arange(6) * 16).reshape(2, 3, 1, 1)
    indices = (flat + base).astype(np.int64)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    return [
        Case("MaxUnpool", {"x": x, "i": indices}, attrs, opset=11, id="maxunpool-2d"),
        Case("MaxUnpool", {"x": x, "i": indices}, attrs, opset=9, id="maxunpool-opset9"),
        Case(
            "MaxUnpool",
            {"x": x, "i": indices, "shape": i64(2, 3, 5, 6)},
            attrs,
            opset=11,
            id="maxunpool-output-shape",
            constant=("shape",),
        ),
        Case(
            "MaxUnpool",
            {"x": f32(1, 2, 3), "i": np.array([[[0, 2, 4], [5, 7, 9]]], np.int64)},
            {"kernel_shape": [2], "strides": [2], "pads": [1, 0]},
            opset=11,
            id="maxunpool-1d-pads",
        ),
    ]


def _col2im() -> list[Case]:
    def case(
        name: str, shape: tuple[int, ...], image: np.ndarray, block: np.ndarray, **attrs: Any
    ) -> Case:
        inputs = {"x": f32(*shape), "image": image, "block": block}
        return Case(
            "Col2Im", inputs, attrs, opset=18, id=f"col2im-{name}", constant=("image", "block")
        )

    return [
        case("2d", (1, 4, 12), i64(4, 5), i64(2, 2)),
        case("batch-channels", (2, 6, 12), i64(4, 5), i64(1, 3)),
        case(
            "strided-padded-dilated",
            (1, 8, 12),
            i64(6, 7),
            i64(2, 2),
            strides=[2, 2],
            pads=[1, 0, 1, 1],
            dilations=[2, 1],
        ),
        case("3d", (1, 8, 18), i64(3, 4, 4), i64(2, 2, 2)),
    ]


CASES: list[Case] = [*_roi_align(), *_max_unpool(), *_col2im()]
