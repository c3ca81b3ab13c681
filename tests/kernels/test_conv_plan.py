"""Per-shape Conv plans: every form (pointwise, flat, window, none) against a tap-by-tap sum."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from hetsim.ir import Op
from hetsim.kernels import OPS
from hetsim.kernels.conv import _conv_spec
from hetsim.kernels.conv_plan import plan_conv


def reference_conv(x: np.ndarray, w: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """Conv by its definition: one strided slice of the padded input per kernel tap, float64."""
    rank = x.ndim - 2
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * 2 * rank)
    group = attrs.get("group", 1)
    padded = np.pad(
        x.astype(np.float64), [(0, 0), (0, 0), *zip(pads[:rank], pads[rank:], strict=True)]
    )
    kernel = w.shape[2:]
    out = [
        (padded.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1
        for i in range(rank)
    ]
    n, m, cg = x.shape[0], w.shape[0], w.shape[1]
    y = np.zeros((n, m, *out))
    per_group = m // group
    for tap in itertools.product(*(range(k) for k in kernel)):
        window = tuple(
            slice(t * d, t * d + (o - 1) * s + 1, s)
            for t, d, o, s in zip(tap, dilations, out, strides, strict=True)
        )
        for g in range(group):
            xs = padded[:, g * cg : (g + 1) * cg][(slice(None), slice(None), *window)]
            ws = w[g * per_group : (g + 1) * per_group][(slice(None), slice(None), *tap)]
            y[:, g * per_group : (g + 1) * per_group] += np.einsum("nc...,mc->nm...", xs, ws)
    return y


CASES = [
    # (form, x shape, w shape, attrs)
    ("pointwise", (1, 8, 5, 6), (4, 8, 1, 1), {}),
    ("flat", (1, 6, 7, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),
    ("flat", (2, 4, 6, 6), (8, 2, 3, 3), {"group": 2, "dilations": [2, 1]}),
    ("flat", (1, 3, 10), (3, 1, 5), {"group": 3, "pads": [2, 2]}),
    ("window", (1, 6, 9, 9), (16, 6, 3, 3), {"pads": [1, 0, 1, 2], "strides": [2, 2]}),
    ("window", (1, 4, 7, 7), (4, 1, 3, 3), {"group": 4, "strides": [2, 1]}),
    (
        "window",
        (1, 2, 4, 5, 6),
        (3, 2, 2, 2, 2),
        {"pads": [1, 0, 0, 0, 1, 1], "strides": [1, 2, 1]},
    ),
    ("none", (1, 64, 64, 64), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]}),  # 9.4 MB of columns
]


@pytest.mark.parametrize(("form", "x_shape", "w_shape", "attrs"), CASES)
def test_every_plan_form_computes_the_convolution(
    form: str,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    attrs: dict[str, Any],
    rng: np.random.Generator,
) -> None:
    op = Op("Conv", "conv", ("x", "w", "b"), ("y",), attrs)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    geometry = _conv_spec(op).geometry(x.shape, w.shape)
    run = plan_conv(geometry, x.shape, w.shape, attrs.get("group", 1), x.dtype)
    chosen = run.__qualname__.split(".")[0].lstrip("_") if run is not None else "none"
    assert chosen == form
    expected = reference_conv(x, w, attrs) + bias.reshape(-1, *(1,) * (x.ndim - 2))
    (got,) = OPS["Conv"].compile(op, 13)([x, w, bias])
    assert (got.shape, got.dtype) == (expected.shape, np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert (got.flags.c_contiguous, got.flags.writeable) == (True, True)  # epilogues write it


def test_a_plan_reads_a_non_contiguous_input(rng: np.random.Generator) -> None:
    op = Op("Conv", "conv", ("x", "w"), ("y",), {"group": 4})
    x = rng.standard_normal((1, 4, 6, 12)).astype(np.float32)[:, :, :, ::2]
    w = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
    (got,) = OPS["Conv"].compile(op, 13)([x, w])
    np.testing.assert_allclose(got, reference_conv(x, w, {"group": 4}), rtol=1e-4, atol=1e-4)
