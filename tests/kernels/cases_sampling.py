"""Cases of sampling.py (see case.py): GridSample's modes, paddings and corners in 2-D and 3-D,
checked against onnx's ReferenceEvaluator."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from tests.kernels.case import Case, run_reference

__all__ = ["CASES"]

_rng = np.random.default_rng(7)


def f32(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def grid(*shape: int, reach: float = 1.2) -> np.ndarray:
    """Seeded points in ``[-reach, reach]``: past the borders too, for the padding modes."""
    return _rng.uniform(-reach, reach, shape).astype(np.float32)


def _as_opset_20(case: Case) -> Sequence[np.ndarray]:
    """onnx's reference knows only opset 20's mode names; opset 16's mean the same."""
    renamed = {"bilinear": "linear", "bicubic": "cubic"}
    attrs = dict(case.attrs)
    attrs["mode"] = renamed.get(attrs.get("mode", "bilinear"), attrs.get("mode", "linear"))
    return run_reference(dataclasses.replace(case, attrs=attrs, opset=20, id=case.id + "-20"))


def _opset_16(inputs: dict[str, np.ndarray], attrs: dict[str, object], id: str) -> Case:
    case = Case("GridSample", inputs, attrs, opset=16, id=id)
    return dataclasses.replace(
        case,
        reference=lambda *arrays: _as_opset_20(case),
        why="onnx's reference knows only the opset-20 mode names",
    )


def _grid_sample() -> list[Case]:
    cases = []
    for mode in ("linear", "nearest", "cubic"):
        for padding in ("zeros", "border", "reflection"):
            for corners in (0, 1):
                cases.append(
                    Case(
                        "GridSample",
                        {"x": f32(2, 3, 4, 5), "grid": grid(2, 3, 6, 2)},
                        {"mode": mode, "padding_mode": padding, "align_corners": corners},
                        opset=20,
                        id=f"gridsample-{mode}-{padding}-{corners}",
                        atol=1e-5,
                    )
                )
    for mode in ("linear", "nearest", "cubic"):
        for padding in ("zeros", "reflection"):
            cases.append(
                Case(
                    "GridSample",
                    {"x": f32(1, 2, 3, 4, 3), "grid": grid(1, 2, 3, 2, 3)},
                    {"mode": mode, "padding_mode": padding},
                    opset=20,
                    id=f"gridsample-3d-{mode}-{padding}",
                    atol=1e-5,
                )
            )
    halves = np.array([[[[-0.75, 0.0], [-0.25, 0.25], [0.25, -0.25], [0.75, 1.0]]]], np.float32)
    cases += [
        Case(
            "GridSample",
            {"x": f32(1, 1, 4, 4), "grid": halves},
            {"mode": "nearest"},
            opset=20,
            id="gridsample-nearest-half-to-even",
        ),
        Case(
            "GridSample",
            {"x": f32(1, 2, 3, 3), "grid": grid(1, 2, 2, 2)},
            opset=22,
            id="gridsample-default-22",
            atol=1e-5,
        ),
        Case(
            "GridSample",
            {"x": f32(1, 2, 3, 3).astype(np.float64), "grid": grid(1, 2, 2, 2, reach=3.0)},
            {"mode": "cubic", "padding_mode": "reflection"},
            opset=20,
            id="gridsample-float64-far-reflection",
        ),
        Case(
            "GridSample",
            {"x": np.arange(12, dtype=np.int64).reshape(1, 1, 3, 4), "grid": grid(1, 2, 3, 2)},
            {"mode": "nearest", "padding_mode": "border"},
            opset=20,
            id="gridsample-int64-nearest",
        ),
    ]
    for mode in ("bilinear", "nearest", "bicubic"):
        cases.append(
            _opset_16(
                {"x": f32(1, 2, 3, 4), "grid": grid(1, 3, 2, 2)},
                {"mode": mode, "padding_mode": "border", "align_corners": 1},
                f"gridsample-16-{mode}",
            )
        )
    return cases


CASES: list[Case] = _grid_sample()


def _affine_grid() -> list[Case]:
    def case(theta: np.ndarray, size: tuple[int, ...], corners: int, id: str) -> Case:
        inputs = {"theta": theta, "size": np.array(size, np.int64)}
        attrs = {"align_corners": corners}
        return Case("AffineGrid", inputs, attrs, opset=20, id=id, constant=("size",))

    return [
        case(f32(2, 2, 3), (2, 3, 4, 5), 0, "affinegrid-2d"),
        case(f32(2, 2, 3), (2, 3, 4, 5), 1, "affinegrid-2d-align-corners"),
        case(f32(1, 3, 4), (1, 2, 3, 4, 2), 0, "affinegrid-3d"),
        case(f32(1, 3, 4), (1, 2, 3, 4, 2), 1, "affinegrid-3d-align-corners"),
    ]


CASES += _affine_grid()
