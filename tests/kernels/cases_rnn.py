"""Single-op cases for RNN, GRU and LSTM (see `case.py`).

onnx's ReferenceEvaluator checks what it computes: the default activations, biases, initial
states, peepholes, reverse and bidirectional runs, GRU's linear_before_reset and the batch-first
layout. It ignores ``sequence_lens``, ``clip``, ``input_forget`` and (but for RNN's Tanh and
Affine) ``activations``: those cases carry a hand-written reference instead, `by_sequence`
(onnx's evaluator run on each batch entry alone, over its own length, as onnxruntime computes
sequence_lens) or `hand_reference` (ONNX's equations, direction by direction, step by step and
row by row, in float64). `test_rnn.py` checks `hand_reference` against the evaluator too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tests.kernels.case import Case, run_reference

__all__ = ["CASES", "GATES", "by_sequence", "hand_reference", "inputs_of"]

_rng = np.random.default_rng(11)

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def f32(*shape: int, scale: float = 0.5) -> np.ndarray:
    """Seeded normal float32 values, scaled so that the gates do not all saturate."""
    return (scale * _rng.standard_normal(shape)).astype(np.float32)


def inputs_of(
    op_type: str,
    seq: int,
    batch: int,
    size: int,
    hidden: int,
    dirs: int = 1,
    *,
    bias: bool = False,
    lengths: Sequence[int] | None = None,
    initial: bool = False,
    peepholes: bool = False,
    layout: int = 0,
) -> dict[str, np.ndarray | None]:
    """Seeded inputs of `op_type` in its input order: omitted ones None, trailing ones left out."""
    width = GATES[op_type] * hidden
    x_shape = (batch, seq, size) if layout else (seq, batch, size)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    inputs: dict[str, np.ndarray | None] = {
        "X": f32(*x_shape, scale=1.0),
        "W": f32(dirs, width, size),
        "R": f32(dirs, width, hidden),
        "B": f32(dirs, 2 * width) if bias else None,
        "sequence_lens": None if lengths is None else np.array(lengths, np.int32),
        "initial_h": f32(*state) if initial else None,
    }
    if op_type == "LSTM":
        inputs["initial_c"] = f32(*state) if initial else None
        inputs["P"] = f32(dirs, 3 * hidden) if peepholes else None
    while inputs and next(reversed(inputs.values())) is None:
        inputs.popitem()
    return inputs


def _outputs(op_type: str) -> int:
    return 3 if op_type == "LSTM" else 2


Activation = tuple[str, float, float]
"""An activation with its alpha and beta, as the hand reference applies it."""

_ACTIVATIONS: dict[str, Callable[[np.ndarray, float, float], np.ndarray]] = {
    "relu": lambda x, a, b: np.maximum(x, 0),
    "tanh": lambda x, a, b: np.tanh(x),
    "sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "affine": lambda x, a, b: a * x + b,
    "leakyrelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "thresholdedrelu": lambda x, a, b: np.where(x > a, x, 0),
    "scaledtanh": lambda x, a, b: a * np.tanh(b * x),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
    "softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "softplus": lambda x, a, b: np.log1p(np.exp(x)),
}

_DEFAULTS: dict[str, list[Activation]] = {
    "RNN": [("tanh", 0, 0)],
    "GRU": [("sigmoid", 0, 0), ("tanh", 0, 0)],
    "LSTM": [("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)],
}


def hand_reference(
    op_type: str,
    *,
    direction: str = "forward",
    activations: Sequence[Activation] | None = None,
    clip: float | None = None,
    linear_before_reset: int = 0,
    input_forget: int = 0,
) -> Callable[..., list[np.ndarray]]:
    """ONNX's equations for `op_type` (sequence-first layout), with every activation's alpha
    and beta written out (`activations`: each direction's in turn); Y, Y_h (and Y_c) in float32.

    A batch entry runs over its own ``sequence_lens`` (backwards from its last step in a
    reverse direction); Y is zero past it, and Y_h and Y_c of an empty sequence are zero, as
    onnxruntime computes them.
    """

    def reference(*arrays: np.ndarray | None) -> list[np.ndarray]:
        x, w, r, b, lengths, h0, c0, p = (*arrays, *(None,) * (8 - len(arrays)))
        assert x is not None, "X is required"
        assert w is not None, "W is required"
        assert r is not None, "R is required"
        x, w, r = (a.astype(np.float64) for a in (x, w, r))
        seq, batch, _ = x.shape
        dirs, hidden = w.shape[0], r.shape[2]
        acts = list(activations or _DEFAULTS[op_type] * dirs)
        per = len(acts) // dirs
        bias = np.zeros((dirs, 2 * w.shape[1])) if b is None else b.astype(np.float64)
        y = np.zeros((seq, dirs, batch, hidden))
        y_h, y_c = np.zeros((dirs, batch, hidden)), np.zeros((dirs, batch, hidden))
        for d in range(dirs):
            funcs = [_activation(*a) for a in acts[d * per : (d + 1) * per]]
            cell = _Cell(op_type, w[d], r[d], bias[d], p, d, funcs, clip, linear_before_reset)
            cell.input_forget = bool(input_forget)
            backwards = direction == "reverse" or d == 1
            for n in range(batch):
                length = seq if lengths is None else int(lengths[n])
                h = np.zeros(hidden) if h0 is None else h0[d, n].astype(np.float64)
                c = np.zeros(hidden) if c0 is None else c0[d, n].astype(np.float64)
                for t in reversed(range(length)) if backwards else range(length):
                    h, c = cell.step(x[t, n], h, c)
                    y[t, d, n] = h
                if length:
                    y_h[d, n], y_c[d, n] = h, c
        outputs = [y, y_h, y_c] if op_type == "LSTM" else [y, y_h]
        return [o.astype(np.float32) for o in outputs]

    return reference


def _activation(name: str, alpha: float, beta: float) -> Callable[[np.ndarray], np.ndarray]:
    function = _ACTIVATIONS[name.lower()]
    return lambda x: function(x, alpha, beta)


class _Cell:
    """One direction's weights and its step, for one batch row."""

    def __init__(
        self,
        op_type: str,
        w: np.ndarray,
        r: np.ndarray,
        bias: np.ndarray,
        p: np.ndarray | None,
        d: int,
        funcs: list[Callable[[np.ndarray], np.ndarray]],
        clip: float | None,
        linear_before_reset: int,
    ) -> None:
        self.op_type, self.funcs, self.clip = op_type, funcs, clip
        self.linear_before_reset = linear_before_reset
        self.input_forget = False
        hidden = r.shape[1]
        gates = GATES[op_type]
        self.w = [w[k * hidden : (k + 1) * hidden] for k in range(gates)]
        self.r = [r[k * hidden : (k + 1) * hidden] for k in range(gates)]
        wb, rb = bias[: gates * hidden], bias[gates * hidden :]
        self.wb = [wb[k * hidden : (k + 1) * hidden] for k in range(gates)]
        self.rb = [rb[k * hidden : (k + 1) * hidden] for k in range(gates)]
        peep = np.zeros(3 * hidden) if p is None else p[d].astype(np.float64)
        self.p = [peep[k * hidden : (k + 1) * hidden] for k in range(3)]

    def bounded(self, v: np.ndarray) -> np.ndarray:
        return v if self.clip is None else np.clip(v, -self.clip, self.clip)

    def gate(self, k: int, x: np.ndarray, h: np.ndarray) -> np.ndarray:
        return x @ self.w[k].T + h @ self.r[k].T + self.wb[k] + self.rb[k]

    def step(self, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.funcs
        if self.op_type == "RNN":
            return f[0](self.bounded(self.gate(0, x, h))), c
        if self.op_type == "GRU":
            z = f[0](self.bounded(self.gate(0, x, h)))
            reset = f[0](self.bounded(self.gate(1, x, h)))
            wx = x @ self.w[2].T + self.wb[2]
            if self.linear_before_reset:
                candidate = wx + reset * (h @ self.r[2].T + self.rb[2])
            else:
                candidate = wx + (reset * h) @ self.r[2].T + self.rb[2]
            return (1 - z) * f[1](self.bounded(candidate)) + z * h, c
        p_i, p_o, p_f = self.p  # LSTM: gates i, o, f, c
        i = f[0](self.bounded(self.gate(0, x, h) + p_i * c))
        forget = 1 - i if self.input_forget else f[0](self.bounded(self.gate(2, x, h) + p_f * c))
        c = forget * c + i * f[1](self.bounded(self.gate(3, x, h)))
        o = f[0](self.bounded(self.gate(1, x, h) + p_o * c))
        return o * f[2](c), c


def by_sequence(op_type: str, attrs: dict[str, Any]) -> Callable[..., list[np.ndarray]]:
    """onnx's evaluator on each batch entry alone, over its own length (sequence-first
    layout): Y zero past it, Y_h and Y_c zero for an empty sequence, as onnxruntime computes
    ``sequence_lens``."""

    def reference(*arrays: np.ndarray | None) -> list[np.ndarray]:
        x, lengths = arrays[0], arrays[4]
        assert x is not None, "X is required"
        assert lengths is not None, "sequence_lens is required"
        seq, batch = x.shape[:2]
        count = _outputs(op_type)
        dirs = 2 if attrs.get("direction") == "bidirectional" else 1
        hidden = int(attrs["hidden_size"])
        y = np.zeros((seq, dirs, batch, hidden), np.float32)
        states = [np.zeros((dirs, batch, hidden), np.float32) for _ in range(count - 1)]
        for n, length in enumerate(lengths):
            if length == 0:
                continue
            row = _row(arrays, n, int(length))
            outputs = run_reference(Case(op_type, row, attrs, outputs=count))
            y[:length, :, n] = outputs[0][:, :, 0]
            for state, out in zip(states, outputs[1:], strict=True):
                state[:, n] = out[:, 0]
        return [y, *states]

    return reference


def _row(arrays: Sequence[np.ndarray | None], n: int, length: int) -> dict[str, Any]:
    """Batch entry `n`'s inputs, its first `length` steps, without sequence_lens."""
    names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    row: dict[str, Any] = dict(zip(names, arrays, strict=False))
    row["X"] = arrays[0][:length, n : n + 1]  # type: ignore[index]
    row["sequence_lens"] = None
    for name in ("initial_h", "initial_c"):
        if row.get(name) is not None:
            row[name] = row[name][:, n : n + 1]
    return row


def _evaluated() -> list[Case]:
    """What onnx's ReferenceEvaluator computes right."""
    cases = []
    for op_type in GATES:
        low, count = op_type.lower(), _outputs(op_type)
        cases += [
            Case(
                op_type,
                inputs_of(op_type, 4, 2, 3, 5),
                {"hidden_size": 5},
                outputs=count,
                id=f"{low}-default",
            ),
            Case(
                op_type,
                inputs_of(op_type, 3, 2, 3, 4, 2, bias=True, initial=True, peepholes=True),
                {"hidden_size": 4, "direction": "bidirectional"},
                outputs=count,
                id=f"{low}-bidirectional-bias-initial",
            ),
            Case(
                op_type,
                inputs_of(op_type, 5, 3, 2, 4, bias=True),
                {"hidden_size": 4, "direction": "reverse"},
                outputs=count,
                id=f"{low}-reverse",
            ),
            Case(
                op_type,
                inputs_of(op_type, 4, 3, 2, 3, 2, initial=True, layout=1),
                {"hidden_size": 3, "direction": "bidirectional", "layout": 1},
                outputs=count,
                id=f"{low}-batch-first",
            ),
            Case(
                op_type,
                inputs_of(op_type, 3, 2, 3, 4, bias=True),
                {"hidden_size": 4},
                opset=7,
                outputs=count,
                id=f"{low}-opset7",
            ),
            Case(
                op_type,
                inputs_of(op_type, 3, 2, 3, 4),
                {"hidden_size": 4},
                outputs=1,
                id=f"{low}-y-only",
            ),
        ]
    cases += [
        Case(
            "GRU",
            inputs_of("GRU", 4, 2, 3, 5, 2, bias=True, initial=True),
            {"hidden_size": 5, "direction": "bidirectional", "linear_before_reset": 1},
            outputs=2,
            id="gru-linear-before-reset",
        ),
        Case(
            "LSTM",
            inputs_of("LSTM", 4, 3, 2, 3, bias=True, initial=True, peepholes=True),
            {"hidden_size": 3},
            outputs=3,
            id="lstm-peepholes",
        ),
    ]
    return cases


_SEQUENCES_WHY = "onnx's reference ignores sequence_lens: each entry run alone over its length"
_HAND_WHY = "onnx's reference ignores {}: ONNX's equations written out (hand_reference)"


def _sequences() -> list[Case]:
    cases = []
    for op_type in GATES:
        for direction in ("forward", "bidirectional"):
            attrs = {"hidden_size": 3, "direction": direction}
            dirs = 2 if direction == "bidirectional" else 1
            inputs = inputs_of(
                op_type, 5, 4, 2, 3, dirs, bias=True, lengths=[5, 2, 0, 3], initial=True
            )
            cases.append(
                Case(
                    op_type,
                    inputs,
                    attrs,
                    outputs=_outputs(op_type),
                    id=f"{op_type.lower()}-sequence-lens-{direction}",
                    reference=by_sequence(op_type, attrs),
                    why=_SEQUENCES_WHY,
                )
            )
    attrs = {"hidden_size": 3, "direction": "reverse"}
    cases.append(
        Case(
            "GRU",
            inputs_of("GRU", 4, 3, 2, 3, lengths=[1, 4, 2]),
            attrs,
            outputs=2,
            id="gru-sequence-lens-reverse",
            reference=by_sequence("GRU", attrs),
            why=_SEQUENCES_WHY,
        )
    )
    return cases


def _hand(
    op_type: str, inputs: dict[str, np.ndarray | None], attrs: dict[str, Any], id: str, **ref: Any
) -> Case:
    ignored = ", ".join(k for k in ("activations", "clip", "input_forget") if k in attrs)
    direction = attrs.get("direction", "forward")
    return Case(
        op_type,
        inputs,
        attrs,
        outputs=_outputs(op_type),
        id=id,
        reference=hand_reference(op_type, direction=direction, **ref),
        why=_HAND_WHY.format(ignored),
        rtol=1e-4,
        atol=1e-5,
    )


def _written_out() -> list[Case]:
    big = inputs_of("RNN", 4, 2, 3, 4, bias=True)
    big["X"] = 4 * big["X"]  # type: ignore[operator]
    return [
        _hand(
            "RNN",
            big,
            {"hidden_size": 4, "activations": ["Relu"]},
            "rnn-relu",
            activations=[("relu", 0, 0)],
        ),
        _hand(
            "RNN",
            inputs_of("RNN", 3, 2, 3, 4, 2, bias=True),
            {
                "hidden_size": 4,
                "direction": "bidirectional",
                "activations": ["LeakyRelu", "ThresholdedRelu"],
                "activation_alpha": [0.2, 0.1],
            },
            "rnn-activations-per-direction",
            activations=[("leakyrelu", 0.2, 0), ("thresholdedrelu", 0.1, 0)],
        ),
        _hand(
            "RNN",
            big,
            {"hidden_size": 4, "clip": 0.5},
            "rnn-clip",
            clip=0.5,
        ),
        _hand(
            "GRU",
            inputs_of("GRU", 4, 2, 3, 4, bias=True, initial=True),
            {
                "hidden_size": 4,
                "activations": ["HardSigmoid", "ScaledTanh"],
                "activation_alpha": [0.3, 1.5],
                "activation_beta": [0.45, 0.8],
            },
            "gru-hardsigmoid-scaledtanh",
            activations=[("hardsigmoid", 0.3, 0.45), ("scaledtanh", 1.5, 0.8)],
        ),
        _hand(
            "GRU",
            inputs_of("GRU", 4, 2, 3, 4, 2, bias=True),
            {
                "hidden_size": 4,
                "direction": "bidirectional",
                "clip": 0.3,
                "linear_before_reset": 1,
                "activations": ["Sigmoid", "Softsign", "sigmoid", "elu"],
                "activation_alpha": [0.7],
            },
            "gru-clip-softsign-elu",
            activations=[
                ("sigmoid", 0, 0),
                ("softsign", 0, 0),
                ("sigmoid", 0, 0),
                ("elu", 0.7, 0),
            ],
            clip=0.3,
            linear_before_reset=1,
        ),
        _hand(
            "LSTM",
            inputs_of("LSTM", 4, 2, 3, 4, bias=True, initial=True, peepholes=True),
            {
                "hidden_size": 4,
                # alphas and betas go, in order, to the activations that take them
                "activations": ["HardSigmoid", "Softplus", "Affine"],
                "activation_alpha": [0.25, 0.5],
                "activation_beta": [0.4, 0.1],
            },
            "lstm-activations-consume-alphas-in-order",
            activations=[("hardsigmoid", 0.25, 0.4), ("softplus", 0, 0), ("affine", 0.5, 0.1)],
        ),
        _hand(
            "LSTM",
            inputs_of("LSTM", 4, 3, 2, 3, 2, bias=True, initial=True, peepholes=True),
            {"hidden_size": 3, "direction": "bidirectional", "input_forget": 1, "clip": 0.4},
            "lstm-input-forget-clip",
            input_forget=1,
            clip=0.4,
        ),
    ]


CASES: list[Case] = [*_evaluated(), *_sequences(), *_written_out()]
