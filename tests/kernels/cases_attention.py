"""Single-op cases of Attention (`hetsim/kernels/attention.py`; see `case.py`).

Each is checked by `test_every_op.py` against onnx's ReferenceEvaluator: 4-D and 3-D inputs,
grouped- and multi-query heads, head sizes of V apart from Q's, float, bool and short masks of
each rank, the causal limit with a past cache (bottom-right), fully masked rows, softcap, every
``qk_matmul_output_mode``, ``softmax_precision``, ``nonpad_kv_seqlen`` (opset 24) and the
sliding window (opset 25), in float32, float16 and float64.
"""

from __future__ import annotations

import numpy as np

from tests.kernels.case import Case

__all__ = ["CASES"]

_rng = np.random.default_rng(23)


def f32(*shape: int) -> np.ndarray:
    """Seeded standard-normal float32 values."""
    return _rng.standard_normal(shape).astype(np.float32)


def flags(*shape: int) -> np.ndarray:
    """Seeded booleans, mostly True."""
    return _rng.uniform(size=shape) < 0.8


def qkv(
    batch: int, q_heads: int, kv_heads: int, q_len: int, kv_len: int, size: int, v_size: int
) -> dict[str, np.ndarray | None]:
    """4-D Q, K and V."""
    return {
        "q": f32(batch, q_heads, q_len, size),
        "k": f32(batch, kv_heads, kv_len, size),
        "v": f32(batch, kv_heads, kv_len, v_size),
    }


def _with(inputs: dict[str, np.ndarray | None], **more: np.ndarray | None) -> dict:
    """`inputs` followed by the optional inputs up to the last of `more`, None where omitted."""
    names = ("attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
    last = max(names.index(name) for name in more)
    return {**inputs, **{name: more.get(name) for name in names[: last + 1]}}


def _plain() -> list[Case]:
    return [
        Case("Attention", qkv(2, 3, 3, 4, 6, 8, 8), opset=23, id="attention-4d"),
        Case("Attention", qkv(2, 4, 2, 3, 5, 8, 6), opset=23, id="attention-gqa-diff-v-size"),
        Case("Attention", qkv(1, 4, 1, 3, 5, 4, 4), opset=23, id="attention-mqa"),
        Case(
            "Attention",
            qkv(1, 2, 2, 3, 3, 4, 4),
            {"scale": 0.3},
            opset=23,
            id="attention-scale",
        ),
        Case(
            "Attention",
            qkv(2, 2, 2, 4, 6, 4, 4),
            {"is_causal": 1},
            opset=23,
            id="attention-causal-cross",
        ),
        Case(
            "Attention",
            qkv(1, 2, 2, 4, 6, 4, 4),
            {"q_num_heads": 2, "kv_num_heads": 2},
            opset=23,
            id="attention-4d-heads-given-opset23",
        ),
        Case(
            "Attention",
            {k: v.astype(np.float16) for k, v in qkv(1, 4, 2, 3, 5, 8, 8).items()},
            {"is_causal": 1},
            opset=23,
            id="attention-float16",
            rtol=1e-3,
            atol=1e-3,
        ),
        Case(
            "Attention",
            {k: v.astype(np.float64) for k, v in qkv(1, 2, 2, 3, 5, 8, 8).items()},
            opset=23,
            id="attention-float64",
        ),
    ]


def _masks() -> list[Case]:
    return [
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 5, 4, 4), attn_mask=f32(3, 5)),
            opset=23,
            id="attention-mask-float-2d",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 5, 4, 4), attn_mask=f32(2, 1, 3, 3)),
            opset=24,
            id="attention-mask-float-4d-short",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 5, 4, 4), attn_mask=flags(2, 3, 5)),
            opset=23,
            id="attention-mask-bool-3d",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 5, 4, 4), attn_mask=flags(5)),
            opset=23,
            id="attention-mask-bool-1d",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 5, 4, 4), attn_mask=flags(5)),
            {"is_causal": 1, "left_window_size": 1},
            opset=25,
            id="attention-mask-bool-1d-causal-window",
        ),
        Case(
            "Attention",
            _with(qkv(1, 2, 2, 3, 5, 4, 4), attn_mask=f32(1, 2, 3, 5).astype(np.float16)),
            {"is_causal": 1},
            opset=23,
            id="attention-mask-float16-causal",
        ),
        Case(
            "Attention",
            _with(qkv(1, 2, 2, 3, 4, 4, 4), attn_mask=np.array([[1, 0, -2, 0]] * 3, np.int64)),
            opset=23,
            id="attention-mask-int64",
            rtol=1e-5,
        ),
        Case(
            "Attention",
            _with(qkv(1, 2, 2, 3, 4, 4, 4), attn_mask=np.array([[True] * 4, [False] * 4] * 2)[1:]),
            {"qk_matmul_output_mode": 3},
            opset=23,
            outputs=4,
            id="attention-fully-masked-row-mode3",
        ),
    ]


def _cache() -> list[Case]:
    past = {"past_key": f32(2, 2, 3, 4), "past_value": f32(2, 2, 3, 6)}
    return [
        Case(
            "Attention",
            _with(qkv(2, 4, 2, 2, 2, 4, 6), **past),
            {"is_causal": 1},
            opset=23,
            outputs=3,
            id="attention-past-causal",
        ),
        Case(
            "Attention",
            _with(qkv(2, 4, 2, 2, 2, 4, 6), attn_mask=flags(2, 1, 2, 4), **past),
            {"is_causal": 1, "qk_matmul_output_mode": 2},
            opset=24,
            outputs=4,
            id="attention-past-short-mask-mode2",
        ),
        Case(
            "Attention",
            _with(
                {"q": f32(2, 2, 16), "k": f32(2, 2, 8), "v": f32(2, 2, 12)},
                attn_mask=f32(2, 5),
                **past,
            ),
            {"q_num_heads": 4, "kv_num_heads": 2},
            opset=23,
            outputs=3,
            id="attention-3d-gqa-past",
        ),
        Case(
            "Attention",
            {"q": f32(2, 3, 12), "k": f32(2, 5, 12), "v": f32(2, 5, 6)},
            {"q_num_heads": 3, "kv_num_heads": 3, "is_causal": 1},
            opset=25,
            id="attention-3d-causal",
        ),
    ]


def _raw_scores(case: Case) -> Case:
    """`case` (mode 0, softcapped) against onnx's reference, but for its qk_matmul_output: the
    spec's "output of qk matmul", before the softcap, as onnxruntime gives it (the reference
    gives the softcapped scores, as for mode 1)."""
    from dataclasses import replace

    from tests.kernels.case import run_reference

    def reference(q: np.ndarray, k: np.ndarray, *_: np.ndarray) -> list[np.ndarray]:
        outputs = run_reference(case)
        root = q.dtype.type(np.sqrt(1 / np.sqrt(q.shape[-1])))  # the scale, split as the
        raw = (q * root) @ (k * root).swapaxes(-1, -2)  # reference splits it over Q and K
        return [*outputs[:-1], raw.astype(q.dtype)]

    return replace(case, reference=reference, why="onnx's reference softcaps mode 0's scores")


def _scores() -> list[Case]:
    mask = {"attn_mask": f32(3, 5)}
    cases = [
        Case(
            "Attention",
            _with(qkv(1, 2, 2, 3, 5, 4, 4), **mask),
            {"softcap": 0.5, "qk_matmul_output_mode": mode},
            opset=23,
            outputs=4,
            id=f"attention-softcap-mode{mode}",
        )
        for mode in (0, 1, 2, 3)
    ]
    return [
        _raw_scores(cases[0]),
        *cases[1:],
        Case(
            "Attention",
            _with(qkv(1, 2, 2, 3, 5, 4, 4), **mask),
            {"softmax_precision": 11, "qk_matmul_output_mode": 3},
            opset=23,
            outputs=4,
            id="attention-softmax-float64",
        ),
        Case(
            "Attention",
            {k: v.astype(np.float16) for k, v in qkv(1, 2, 2, 3, 5, 4, 4).items()},
            {"softmax_precision": 1, "is_causal": 1},
            opset=24,
            id="attention-float16-softmax-float32",
            rtol=1e-3,
            atol=1e-3,
        ),
    ]


def _nonpad_and_window() -> list[Case]:
    nonpad = {"nonpad_kv_seqlen": np.array([6, 3], np.int64)}
    return [
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 3, 7, 4, 4), **nonpad),
            opset=24,
            id="attention-nonpad",
        ),
        Case(
            "Attention",
            _with(qkv(2, 4, 2, 3, 7, 4, 4), attn_mask=flags(2, 1, 3, 6), **nonpad),
            {"is_causal": 1},
            opset=24,
            id="attention-nonpad-causal-mask",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 2, 4, 2, 4, 4), nonpad_kv_seqlen=np.array([1, 2], np.int64)),
            {"is_causal": 1, "qk_matmul_output_mode": 3},
            opset=24,
            outputs=4,
            id="attention-nonpad-negative-offset",
        ),
        Case(
            "Attention",
            qkv(1, 2, 2, 6, 6, 4, 4),
            {"left_window_size": 1, "right_window_size": 2},
            opset=25,
            id="attention-window-both-sides",
        ),
        Case(
            "Attention",
            _with(
                qkv(1, 2, 2, 2, 2, 4, 4),
                attn_mask=f32(2, 5),
                past_key=f32(1, 2, 3, 4),
                past_value=f32(1, 2, 3, 4),
            ),
            {"is_causal": 1, "left_window_size": 2},
            opset=25,
            outputs=3,
            id="attention-window-past",
        ),
        Case(
            "Attention",
            _with(qkv(2, 2, 1, 3, 7, 4, 4), attn_mask=flags(2, 3, 7), **nonpad),
            {"is_causal": 1, "right_window_size": 0, "left_window_size": 1},
            opset=25,
            id="attention-window-nonpad",
        ),
    ]


CASES: list[Case] = [*_plain(), *_masks(), *_cache(), *_scores(), *_nonpad_and_window()]
