"""RNN, GRU and LSTM beyond the single-op table: the hand reference checked against onnx's
evaluator, omitted outputs, layouts, sequence lengths, activation defaults, the cost formula
and every ModelError in full."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute
from tests.kernels.case import Case, run_reference
from tests.kernels.cases_rnn import CASES, GATES, hand_reference, inputs_of


def _op(op_type: str, names: tuple[str, ...], outputs: tuple[str, ...], **attrs: Any) -> Op:
    return Op(op_type, f"{op_type.lower()}0", names, outputs, attrs)


def _run(
    op_type: str,
    inputs: dict[str, np.ndarray | None],
    outputs: tuple[str, ...] = ("y", "y_h"),
    **attrs: Any,
) -> list[np.ndarray]:
    names = tuple("" if v is None else k for k, v in inputs.items())
    op = _op(op_type, names, outputs, **attrs)
    return OPS[op_type].compile(op, 17)(list(inputs.values()))


def _infer(
    op_type: str,
    shapes: list[tuple[int, ...] | None],
    outputs: tuple[str, ...] = ("y", "y_h"),
    dtypes: dict[int, str] | None = None,
    **attrs: Any,
) -> list[Meta]:
    names = tuple("" if s is None else f"i{i}" for i, s in enumerate(shapes))
    metas: list[Meta | None] = [
        None if s is None else Meta(s, np.dtype((dtypes or {}).get(i, "float32")))
        for i, s in enumerate(shapes)
    ]
    return OPS[op_type].infer(_op(op_type, names, outputs, **attrs), 17, metas)


EVALUATED = [
    c
    for c in CASES
    if c.reference is None and c.outputs > 1 and not c.attrs.get("layout") and c.opset >= 14
]


@pytest.mark.parametrize("case", EVALUATED, ids=lambda c: c.id)
def test_hand_reference_matches_onnx_evaluator(case: Case) -> None:
    attrs = dict(case.attrs)
    reference = hand_reference(
        case.op_type,
        direction=attrs.get("direction", "forward"),
        linear_before_reset=attrs.get("linear_before_reset", 0),
    )
    for got, want in zip(reference(*case.arrays), run_reference(case), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SEQUENCES = [c for c in CASES if c.why.startswith("onnx's reference ignores sequence_lens")]


@pytest.mark.parametrize("case", SEQUENCES, ids=lambda c: c.id)
def test_hand_reference_runs_sequence_lengths_as_each_sequence_alone(case: Case) -> None:
    reference = hand_reference(case.op_type, direction=case.attrs.get("direction", "forward"))
    for got, want in zip(reference(*case.arrays), run_reference(case), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", list(GATES))
def test_omitted_outputs_keep_their_places(op_type: str) -> None:
    inputs = inputs_of(op_type, 3, 2, 3, 4, bias=True)
    full = _run(
        op_type, inputs, ("y", "y_h", "y_c")[: 3 if op_type == "LSTM" else 2], hidden_size=4
    )
    only_h = _run(op_type, inputs, ("", "y_h"), hidden_size=4)
    assert len(only_h) == 2
    np.testing.assert_array_equal(only_h[1], full[1])
    metas = _infer(op_type, [(3, 2, 3), (1, 4 * GATES[op_type], 3), (1, 4 * GATES[op_type], 4)],
                   ("", "y_h"), hidden_size=4)  # fmt: skip
    assert [m.shape for m in metas] == [(3, 1, 2, 4), (1, 2, 4)]


def test_trailing_omitted_outputs_are_not_returned() -> None:
    inputs = inputs_of("LSTM", 3, 2, 3, 4)
    assert [a.shape for a in _run("LSTM", inputs, ("y", "", ""), hidden_size=4)] == [(3, 1, 2, 4)]
    metas = _infer("LSTM", [(3, 2, 3), (1, 16, 3), (1, 16, 4)], ("y", "", ""), hidden_size=4)
    assert [m.shape for m in metas] == [(3, 1, 2, 4)]


def test_execute_gives_y_h_when_y_is_omitted() -> None:
    inputs = inputs_of("GRU", 4, 2, 3, 5, bias=True)
    op = _op("GRU", tuple(inputs), ("", "y_h"), hidden_size=5)
    types = {k: TensorType(v.shape, "float32") for k, v in inputs.items() if v is not None}
    graph = Graph("gru", (op,), types, ("y_h",), {}, 17)
    got = execute(graph, {k: v for k, v in inputs.items() if v is not None})
    np.testing.assert_array_equal(got["y_h"], _run("GRU", inputs, hidden_size=5)[1])


@pytest.mark.parametrize("op_type", list(GATES))
def test_batch_first_is_the_transposed_sequence_first(op_type: str) -> None:
    inputs = inputs_of(op_type, 4, 3, 2, 3, 2, bias=True, initial=True, peepholes=True)
    outputs = ("y", "y_h", "y_c")[: 3 if op_type == "LSTM" else 2]
    attrs = {"hidden_size": 3, "direction": "bidirectional"}
    first = _run(op_type, inputs, outputs, **attrs)
    swapped = {k: None if v is None else v for k, v in inputs.items()}
    for name in ("X", "initial_h", "initial_c"):
        if swapped.get(name) is not None:
            swapped[name] = np.ascontiguousarray(inputs[name].swapaxes(0, 1))  # type: ignore[union-attr]
    batch_first = _run(op_type, swapped, outputs, layout=1, **attrs)
    np.testing.assert_allclose(batch_first[0], first[0].transpose(2, 0, 1, 3), rtol=1e-6)
    for got, want in zip(batch_first[1:], first[1:], strict=True):
        np.testing.assert_allclose(got, want.swapaxes(0, 1), rtol=1e-6)


@pytest.mark.parametrize("op_type", list(GATES))
def test_full_sequence_lengths_change_nothing(op_type: str) -> None:
    inputs = inputs_of(op_type, 4, 2, 3, 3, 2, bias=True, lengths=[4, 4], initial=True)
    without = {**inputs, "sequence_lens": None}
    attrs = {"hidden_size": 3, "direction": "bidirectional"}
    for got, want in zip(
        _run(op_type, inputs, **attrs), _run(op_type, without, **attrs), strict=True
    ):
        np.testing.assert_array_equal(got, want)


def test_finished_sequences_keep_state_and_write_zeros() -> None:
    inputs = inputs_of("RNN", 3, 2, 2, 3, bias=True, lengths=[1, 0], initial=True)
    y, y_h = _run("RNN", inputs, hidden_size=3)
    assert not y[1:, :, 0].any()
    assert not y[:, :, 1].any()
    np.testing.assert_array_equal(y_h[0, 0], y[0, 0, 0])
    assert not y_h[0, 1].any()  # an empty sequence's Y_h is zeros, as onnxruntime gives


@pytest.mark.parametrize(
    ("activation", "explicit"),
    [
        ({"activations": ["LeakyRelu"]}, {"activation_alpha": [0.01]}),
        ({"activations": ["ThresholdedRelu"]}, {"activation_alpha": [1.0]}),
        ({"activations": ["HardSigmoid"]}, {"activation_alpha": [0.2], "activation_beta": [0.5]}),
        ({"activations": ["Elu"]}, {"activation_alpha": [1.0]}),
        ({"activations": ["Affine"]}, {"activation_alpha": [1.0], "activation_beta": [0.0]}),
        ({"activations": ["ScaledTanh"]}, {"activation_alpha": [1.0], "activation_beta": [1.0]}),
        ({"activations": ["tanh"]}, {"activations": ["Tanh"]}),  # names in any case
        ({"activations": ["Tanh", "Relu"]}, {}),  # the schema's default two: the first, forward
    ],
    ids=lambda v: "-".join(map(str, v.get("activations", ["defaults"]))),
)
def test_activation_defaults(activation: dict[str, Any], explicit: dict[str, Any]) -> None:
    inputs = inputs_of("RNN", 3, 2, 3, 4, bias=True)
    implicit = _run("RNN", inputs, hidden_size=4, **activation)
    spelled = _run("RNN", inputs, hidden_size=4, **{**activation, **explicit})
    for got, want in zip(implicit, spelled, strict=True):
        np.testing.assert_array_equal(got, want)


def test_hidden_size_defaults_to_rs() -> None:
    metas = _infer("GRU", [(3, 2, 4), (1, 15, 4), (1, 15, 5)])
    assert [m.shape for m in metas] == [(3, 1, 2, 5), (1, 2, 5)]


def test_cost_follows_the_formula() -> None:
    # LSTM, seq 5, batch 2, input 3, hidden 4, both directions, batch first
    shapes = [(2, 5, 3), (2, 16, 3), (2, 16, 4)]
    op = _op("LSTM", ("x", "w", "r"), ("y", "y_h", "y_c"), hidden_size=4,
             direction="bidirectional", layout=1)  # fmt: skip
    metas = [Meta(s, np.dtype("float32")) for s in shapes]
    outputs = OPS["LSTM"].infer(op, 17, metas)
    cost = OPS["LSTM"].cost(op, metas, outputs)
    elements = 5 * 2 * 2 * 4 * 4  # steps · batch · directions · gates · hidden
    assert cost.flops == 2 * elements * (3 + 4) + 10 * elements == 7680
    assert (cost.op_class, cost.gemm_dim) == ("matmul", 2)
    assert cost.bytes_read == 4 * (30 + 96 + 128)
    assert cost.bytes_written == 4 * (2 * 5 * 2 * 4 + 2 * 2 * 2 * 4)


RNN = [(3, 2, 4), (1, 5, 4), (1, 5, 5)]
LSTM = [(3, 2, 4), (1, 20, 4), (1, 20, 5)]
ERRORS = [
    ("RNN", RNN, {"direction": "sideways"}, {},
     "expected direction 'forward', 'reverse' or 'bidirectional', got 'sideways'"),
    ("RNN", RNN, {"layout": 2}, {}, "expected layout 0 or 1, got 2"),
    ("RNN", RNN, {"hidden_size": 0}, {}, "expected hidden_size >= 1, got 0"),
    ("RNN", RNN, {"clip": -1.0}, {}, "expected a positive clip, got -1.0"),
    ("LSTM", LSTM, {"direction": "bidirectional", "activations": ["Sigmoid", "Tanh", "Tanh"]},
     {}, "expected 6 activations (3 per direction), got 3"),
    ("GRU", [(3, 2, 4), (1, 15, 4), (1, 15, 5)], {"activations": ["Sigmoid", "Tahn"]}, {},
     "expected an activation of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
     "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus, got 'Tahn' (did you mean 'Tanh'?)"),
    ("RNN", RNN, {}, {"outputs": ("y", "y_h", "y_c")}, "expected at most 2 outputs, got 3"),
    ("RNN", [(3, 4), (1, 5, 4), (1, 5, 5)], {}, {}, "expected X of rank 3, got [3, 4]"),
    ("LSTM", [(3, 2, 4), (1, 16, 4), (1, 20, 5)], {}, {},
     "expected W of shape [1, 20, 4], got [1, 16, 4]"),
    ("LSTM", [(3, 2, 4), (1, 20, 4), (1, 20, 4)], {"hidden_size": 5}, {},
     "expected R of shape [1, 20, 5], got [1, 20, 4]"),
    ("RNN", [(3, 2, 4), (1, 5, 4), (5, 5)], {"hidden_size": None}, {},
     "expected R of rank 3, got [5, 5]"),
    ("RNN", [(3, 2, 4), (2, 5, 4), (2, 5, 5), (1, 10)], {"direction": "bidirectional"}, {},
     "expected B of shape [2, 10], got [1, 10]"),
    ("RNN", [*RNN, None, (3,)], {}, {"dtypes": {4: "int32"}},
     "expected sequence_lens of shape [2], got [3]"),
    ("RNN", [*RNN, None, (2,)], {}, {}, "expected sequence_lens of an integer dtype, got float32"),
    ("RNN", [(2, 3, 4), (1, 5, 4), (1, 5, 5), None, None, (1, 2, 5)], {"layout": 1}, {},
     "expected initial_h of shape [2, 1, 5], got [1, 2, 5]"),
    ("LSTM", [*LSTM, None, None, None, (1, 3, 5)], {}, {},
     "expected initial_c of shape [1, 2, 5], got [1, 3, 5]"),
    ("LSTM", [*LSTM, None, None, None, None, (1, 20)], {}, {},
     "expected P of shape [1, 15], got [1, 20]"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op_type", "shapes", "attrs", "extra", "message"), ERRORS, ids=[e[4][:40] for e in ERRORS]
)
def test_shape_rule_errors(
    op_type: str,
    shapes: list[tuple[int, ...] | None],
    attrs: dict[str, Any],
    extra: dict[str, Any],
    message: str,
) -> None:
    attrs = {"hidden_size": 5, **attrs}
    if attrs["hidden_size"] is None:
        del attrs["hidden_size"]
    full = f"op {op_type.lower()}0 ({op_type}): {message}"
    with pytest.raises(ModelError, match=f"^{re.escape(full)}$"):
        _infer(op_type, shapes, **extra, **attrs)


def test_compile_checks_the_attributes() -> None:
    op = _op("GRU", ("x", "w", "r"), ("y",), hidden_size=3, activations=["Sigmoid", "Foo"])
    message = "op gru0 (GRU): expected an activation of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
    message += "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus, got 'Foo'"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["GRU"].compile(op, 17)


def test_sequence_lengths_past_the_sequence_are_refused() -> None:
    inputs = inputs_of("RNN", 4, 2, 3, 5, lengths=[5, 1])
    message = "op rnn0 (RNN): expected sequence_lens from 0 to 4, got [5, 1]"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        _run("RNN", inputs, hidden_size=5)
