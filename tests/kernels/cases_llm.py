"""Cases of llm.py (see case.py): RotaryEmbedding, TensorScatter and SwiGLU.

Each is checked by `test_every_op.py` against onnx's ReferenceEvaluator: the layouts of X (3-D
with ``num_heads``, 4-D), caches picked by ``position_ids`` or already picked, interleaved and
partial rotation; cache writes from the start, at per-batch indices and wrapping around.
"""

from __future__ import annotations

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(23)


def f32(*shape: int) -> np.ndarray:
    """Seeded standard-normal float32 values."""
    return _rng.standard_normal(shape).astype(np.float32)


def _caches(positions: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin tables, (positions, half), of RoPE's angles."""
    angles = np.arange(positions)[:, None] / 10000 ** (np.arange(half) / half)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def _rotary() -> list[Case]:
    cos, sin = _caches(8, 4)
    ids = np.array([[0, 1, 2], [5, 6, 7]], np.int64)
    cos_part, sin_part = cos[:, :2], sin[:, :2]
    picked = {"cos_cache": cos[ids], "sin_cache": sin[ids], "position_ids": None}
    return [
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 3, 3, 8), "cos_cache": cos, "sin_cache": sin, "position_ids": ids},
            opset=23,
            id="rotary-4d",
        ),
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 3, 3, 8), "cos_cache": cos, "sin_cache": sin, "position_ids": ids},
            {"interleaved": 1},
            opset=23,
            id="rotary-4d-interleaved",
        ),
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 3, 24), "cos_cache": cos, "sin_cache": sin, "position_ids": ids},
            {"num_heads": 3},
            opset=23,
            id="rotary-3d",
        ),
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 3, 24), **picked},
            {"num_heads": 3, "interleaved": 1},
            opset=23,
            id="rotary-3d-gathered-interleaved",
        ),
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 2, 3, 8), **picked},
            opset=23,
            id="rotary-4d-gathered",
        ),
        Case(
            "RotaryEmbedding",
            {
                "x": f32(2, 2, 3, 8),
                "cos_cache": cos_part,
                "sin_cache": sin_part,
                "position_ids": ids,
            },
            {"rotary_embedding_dim": 4},
            opset=23,
            id="rotary-partial",
        ),
        Case(
            "RotaryEmbedding",
            {"x": f32(2, 3, 16), "cos_cache": cos_part, "sin_cache": sin_part, "position_ids": ids},
            {"num_heads": 2, "rotary_embedding_dim": 4, "interleaved": 1},
            opset=23,
            id="rotary-partial-interleaved-3d",
        ),
        Case(
            "RotaryEmbedding",
            {
                "x": f32(1, 2, 3, 8).astype(np.float16),
                "cos_cache": cos.astype(np.float16),
                "sin_cache": sin.astype(np.float16),
                "position_ids": ids[:1],
            },
            opset=23,
            id="rotary-float16",
            rtol=1e-3,
            atol=1e-3,
        ),
    ]


def _tensor_scatter() -> list[Case]:
    past, update = f32(2, 3, 6, 4), f32(2, 3, 2, 4)
    return [
        Case(
            "TensorScatter",
            {"past_cache": past, "update": update, "write_indices": None},
            opset=24,
            id="tensorscatter-prefill",
        ),
        Case(
            "TensorScatter",
            {"past_cache": past, "update": update, "write_indices": np.array([1, 4], np.int64)},
            opset=24,
            id="tensorscatter-indices",
        ),
        Case(
            "TensorScatter",
            {"past_cache": past, "update": update, "write_indices": np.array([5, 3], np.int64)},
            {"mode": "circular"},
            opset=24,
            id="tensorscatter-circular",
        ),
        Case(
            "TensorScatter",
            {
                "past_cache": np.arange(2 * 5 * 3).reshape(2, 5, 3),
                "update": -np.arange(2 * 5 * 2).reshape(2, 5, 2),
                "write_indices": np.array([0, 1], np.int64),
            },
            {"axis": 2},
            opset=24,
            id="tensorscatter-last-axis-int64",
        ),
        Case(
            "TensorScatter",
            {"past_cache": f32(2, 4, 3), "update": f32(2, 4, 3), "write_indices": None},
            {"axis": 1, "mode": "circular"},
            opset=24,
            id="tensorscatter-whole",
        ),
    ]


def _swiglu() -> list[Case]:
    big = np.array([-200.0, -20.0, -1.0, 0.0, 1.0, 20.0, 200.0], np.float32)
    return [
        Case("SwiGLU", {"a": f32(3, 4), "b": f32(3, 4)}, opset=28, id="swiglu"),
        Case(
            "SwiGLU",
            {"a": f32(2, 5), "b": f32(2, 5)},
            {"alpha": 1.702},
            opset=28,
            id="swiglu-alpha",
        ),
        Case("SwiGLU", {"a": big, "b": np.ones_like(big)}, opset=28, id="swiglu-far"),
        Case(
            "SwiGLU",
            {"a": f32(4, 3).astype(np.float16), "b": f32(4, 3).astype(np.float16)},
            opset=28,
            id="swiglu-float16",
        ),
        Case(
            "SwiGLU",
            {"a": f32(6).astype(np.float64), "b": f32(6).astype(np.float64)},
            {"alpha": 0.5},
            opset=28,
            id="swiglu-float64",
        ),
    ]


CASES: list[Case] = [*_rotary(), *_tensor_scatter(), *_swiglu()]
