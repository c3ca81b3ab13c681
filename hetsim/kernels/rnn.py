"""RNN, GRU and LSTM: ONNX's one-layer recurrent ops, forward, reverse or bidirectional.

The input projection ``X·Wᵀ + bias`` of every time step and direction is one matmul, before
the recurrence; the loop over time steps then adds ``H·Rᵀ`` (one matmul per step, batched over
the directions) and applies the gates to whole ``[directions, batch, hidden]`` arrays, in the
input's dtype. ``layout`` 1 (opset 14) reads X, initial_h and initial_c batch first and writes Y,
Y_h and Y_c so. An output may be omitted (an empty name); the kernel returns the outputs up to
the last named one, in their places, as `execute` expects (an omitted one before it is computed
anyway, and discarded).

``sequence_lens`` is computed as onnxruntime does (onnx's reference ignores it): at the steps
past its length a batch entry keeps its state and writes zeros to Y; a reverse direction reads
each sequence backwards from its own last step; Y_h and Y_c of an empty sequence are zeros
(initial_h and initial_c aside), also where X has no time steps at all. An empty batch gives
empty outputs.

The gates' activations, with ``activation_alpha``, ``activation_beta`` and ``clip`` (checked
positive here), are read as `rnn_activations.py` says.

Cost: op class ``matmul``. With S steps, B batch, D directions, G gates (RNN 1, GRU 3, LSTM 4),
I input and H hidden size, ``2·S·B·D·G·H·(I + H)`` flops for the input and recurrent
projections plus ``10·S·B·D·G·H`` for the activations and the state update; inputs read and
outputs written once; `Cost.gemm_dim` is the smallest dimension of the per-step recurrent GEMM
(B rows, G·H columns, H deep): ``min(B, H)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import flag_attr, float_attr, int_attr, op_error, str_attr
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.rnn_activations import Unary, read_activations

__all__: list[str] = []

Operand = TypeVar("Operand", np.ndarray, Meta)
State = np.ndarray | None
Step = Callable[[np.ndarray, np.ndarray, State], tuple[np.ndarray, State]]
"""``step(x_t, h, c) -> (h, c)``: one time step of every direction, x_t its projected input."""

DIRECTIONS = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}
"""Direction name -> whether each direction it runs reads the sequence backwards."""

ELEMENTWISE_FLOPS_PER_GATE = 10
"""Flops per gate element per step for its activation and the state update."""


@dataclass(frozen=True, slots=True)
class _Cell:
    """What sets one recurrent op apart: its gates, its default activations (one direction's)
    and how many of them clip bounds, its state outputs, and its `prepare`."""

    gates: int
    defaults: tuple[str, ...]
    clipped: int
    outputs: int
    prepare: Callable[[_Spec, np.ndarray, np.ndarray | None, np.ndarray | None], _Prepared]


@dataclass(frozen=True, slots=True)
class _Spec:
    """An op's attributes, read and checked once."""

    cell: _Cell
    reverse: tuple[bool, ...]
    hidden_size: int | None
    layout: int
    activations: tuple[Unary, ...]
    linear_before_reset: bool
    input_forget: bool


_Prepared = tuple[np.ndarray, Step]
"""A call's bias of the input projection ``[D, G·H]`` and its step, the weights bound."""


def _spec(op: Op) -> _Spec:
    cell = CELLS[op.type]
    direction = str_attr(op, "direction", "forward")
    if direction not in DIRECTIONS:
        expected = "expected direction 'forward', 'reverse' or 'bidirectional'"
        raise op_error(op, expected, repr(direction))
    reverse = DIRECTIONS[direction]
    hidden = int_attr(op, "hidden_size", None)
    if hidden is not None and hidden < 1:
        raise op_error(op, "expected hidden_size >= 1", hidden)
    layout = int(flag_attr(op, "layout", 0))
    clip = float_attr(op, "clip", None)
    if clip is not None and not clip > 0:
        raise op_error(op, "expected a positive clip", clip)
    if len(op.outputs) > cell.outputs:
        raise op_error(op, f"expected at most {cell.outputs} outputs", len(op.outputs))
    return _Spec(
        cell,
        reverse,
        hidden,
        layout,
        read_activations(op, cell.defaults, cell.clipped, len(reverse), clip),
        flag_attr(op, "linear_before_reset", 0),
        flag_attr(op, "input_forget", 0),
    )


def _biases(r: np.ndarray, b: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """B's two halves, Wb and Rb, each ``[D, G·H]`` (zeros without B)."""
    if b is None:
        none = np.zeros(r.shape[:2], r.dtype)
        return none, none
    width = r.shape[1]
    return b[:, :width], b[:, width:]


def _transposed(r: np.ndarray) -> np.ndarray:
    """Rᵀ of each direction, ``[D, H, G·H]``, made contiguous once for the per-step matmuls."""
    return np.ascontiguousarray(r.transpose(0, 2, 1))


def _prepare_rnn(
    spec: _Spec, r: np.ndarray, b: np.ndarray | None, p: np.ndarray | None
) -> _Prepared:
    r_t = _transposed(r)
    (f,) = spec.activations

    def step(x: np.ndarray, h: np.ndarray, c: State) -> tuple[np.ndarray, State]:
        return f(x + h @ r_t), None

    wb, rb = _biases(r, b)
    return wb + rb, step


def _prepare_gru(
    spec: _Spec, r: np.ndarray, b: np.ndarray | None, p: np.ndarray | None
) -> _Prepared:
    two = 2 * r.shape[2]  # the update and reset gates' columns come first
    f, g = spec.activations
    wb, rb = _biases(r, b)
    if not spec.linear_before_reset:
        r_t_zr, r_t_h = _transposed(r[:, :two]), _transposed(r[:, two:])

        def step(x: np.ndarray, h: np.ndarray, c: State) -> tuple[np.ndarray, State]:
            z, reset = np.split(f(x[..., :two] + h @ r_t_zr), 2, axis=-1)
            candidate = g(x[..., two:] + (reset * h) @ r_t_h)
            return (1 - z) * candidate + z * h, None

        return wb + rb, step
    r_t = _transposed(r)
    rb_h = rb[:, None, two:]

    def step_linear(x: np.ndarray, h: np.ndarray, c: State) -> tuple[np.ndarray, State]:
        recurrent = h @ r_t
        z, reset = np.split(f(x[..., :two] + recurrent[..., :two]), 2, axis=-1)
        candidate = g(x[..., two:] + reset * (recurrent[..., two:] + rb_h))
        return (1 - z) * candidate + z * h, None

    bias = wb.copy()
    bias[:, :two] += rb[:, :two]  # Rbh is added inside the reset gate's product
    return bias, step_linear


def _prepare_lstm(
    spec: _Spec, r: np.ndarray, b: np.ndarray | None, p: np.ndarray | None
) -> _Prepared:
    hidden = r.shape[2]
    r_t = _transposed(r)
    f, g, h_of = spec.activations
    peep = [None if p is None else p[:, None, k * hidden : (k + 1) * hidden] for k in range(3)]
    p_i, p_o, p_f = peep
    input_forget = spec.input_forget

    def step(x: np.ndarray, h: np.ndarray, c: State) -> tuple[np.ndarray, State]:
        assert c is not None, "LSTM: the cell state is required"
        i, o, forget, cell = np.split(x + h @ r_t, 4, axis=-1)
        i = f(i if p_i is None else i + p_i * c)
        # input_forget couples the gates: what enters replaces what is forgotten
        forget = 1 - i if input_forget else f(forget if p_f is None else forget + p_f * c)
        c = forget * c + i * g(cell)
        o = f(o if p_o is None else o + p_o * c)
        return o * h_of(c), c

    wb, rb = _biases(r, b)
    return wb + rb, step


CELLS = {
    "RNN": _Cell(1, ("Tanh",), 1, 2, _prepare_rnn),
    "GRU": _Cell(3, ("Sigmoid", "Tanh"), 2, 2, _prepare_gru),
    "LSTM": _Cell(4, ("Sigmoid", "Tanh", "Tanh"), 2, 3, _prepare_lstm),
}
"""The cell of each op type; LSTM's h (its third activation) is not clipped."""


def _output_count(op: Op) -> int:
    """How many outputs the kernel and shape rule give: up to the last one the op names."""
    return max((i + 1 for i, name in enumerate(op.outputs) if name), default=0)


def _backwards(lengths: np.ndarray | None, seq: int) -> tuple[np.ndarray, np.ndarray] | slice:
    """The index that reads ``[S, B, ...]`` with each sequence backwards over its own length
    (the steps past it in place): its own inverse."""
    if lengths is None:
        return slice(None, None, -1)
    steps = np.arange(seq)[:, None]
    return np.where(steps < lengths, lengths - 1 - steps, steps), np.arange(len(lengths))


def _lengths(op: Op, lengths: np.ndarray | None, seq: int) -> np.ndarray | None:
    """`sequence_lens` checked, as int64; None when every sequence is full."""
    if lengths is None:
        return None
    if lengths.size and (lengths.min() < 0 or lengths.max() > seq):
        raise op_error(op, f"expected sequence_lens from 0 to {seq}", lengths.tolist())
    return None if (lengths == seq).all() else lengths.astype(np.int64)


def _operands(
    op: Op, inputs: Sequence[Operand | None]
) -> tuple[Operand, Operand, Operand, list[Operand | None]]:
    """X, W and R, and the five optional inputs (None where omitted)."""
    x, w, r = inputs[:3]
    assert x is not None, f"{op!r}: X is required"
    assert w is not None, f"{op!r}: W is required"
    assert r is not None, f"{op!r}: R is required"
    optional = list(inputs[3:8])
    return x, w, r, optional + [None] * (5 - len(optional))


def _run(
    op: Op, spec: _Spec, inputs: Sequence[np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Y ``[S, D, B, H]``, Y_h and Y_c ``[D, B, H]`` (None but for LSTM), sequence-first."""
    x, w, r, (b, lengths, h, c, p) = _operands(op, inputs)
    if spec.layout:
        x = x.swapaxes(0, 1)
        h = None if h is None else h.swapaxes(0, 1)
        c = None if c is None else c.swapaxes(0, 1)
    seq, batch, size = x.shape
    dirs, width, _ = w.shape
    bias, step = spec.cell.prepare(spec, r, b, p)
    # every step's input projection at once, [S, D, B, G·H]; sizes spelt out, as an empty
    # sequence or batch leaves numpy no -1 to infer
    projected = (x.reshape(seq * batch, size) @ w.reshape(dirs * width, size).T).reshape(
        seq, batch, dirs, width
    ).transpose(0, 2, 1, 3) + bias[None, :, None, :]
    lengths = _lengths(op, lengths, seq)
    backwards = _backwards(lengths, seq)
    for d in _reversed(spec):
        projected[:, d] = projected[:, d][backwards]
    state = np.zeros((dirs, batch, r.shape[2]), x.dtype)
    c = state if c is None and spec.cell.outputs == 3 else c
    y, h, c = _recur(step, projected, lengths, state if h is None else h, c)
    for d in _reversed(spec):
        y[:, d] = y[:, d][backwards]
    return y, h, c


def _reversed(spec: _Spec) -> list[int]:
    return [d for d, is_reverse in enumerate(spec.reverse) if is_reverse]


def _recur(
    step: Step, projected: np.ndarray, lengths: np.ndarray | None, h: np.ndarray, c: State
) -> tuple[np.ndarray, np.ndarray, State]:
    """The loop over time steps, from the initial `h` and `c`: Y (in step order), Y_h, Y_c."""
    seq, dirs, batch, _ = projected.shape
    zero = h.dtype.type(0)
    y = np.zeros((seq, dirs, batch, h.shape[-1]), h.dtype)
    if not seq:  # every sequence is empty: Y_h and Y_c are zeros, as onnxruntime gives them
        return y, np.zeros_like(h), None if c is None else np.zeros_like(c)
    for t in range(seq if lengths is None else int(lengths.max(initial=0))):
        new_h, new_c = step(projected[t], h, c)
        if lengths is not None and t >= lengths.min():
            keep = (t < lengths)[:, None]  # a finished sequence keeps its state, writes zeros
            new_h = np.where(keep, new_h, h)
            new_c = None if new_c is None or c is None else np.where(keep, new_c, c)
            y[t] = np.where(keep, new_h, zero)
        else:
            y[t] = new_h
        h, c = new_h, new_c
    if lengths is not None and not lengths.all():  # an empty sequence's Y_h and Y_c: zeros
        empty = (lengths == 0)[:, None]
        h = np.where(empty, zero, h)
        c = None if c is None else np.where(empty, zero, c)
    return y, h, c


def _compile(op: Op, opset: int) -> Kernel:
    spec = _spec(op)
    count = _output_count(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        y, h, c = _run(op, spec, inputs)
        if spec.layout:
            y, h = y.transpose(2, 0, 1, 3), h.swapaxes(0, 1)
            c = None if c is None else c.swapaxes(0, 1)
        outputs = [y, h] if c is None else [y, h, c]
        return outputs[:count]

    return kernel


def _expect(op: Op, name: str, meta: Meta | None, shape: tuple[int, ...]) -> None:
    if meta is not None and meta.shape != shape:
        raise op_error(op, f"expected {name} of shape {list(shape)}", list(meta.shape))


def _infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    spec = _spec(op)
    x, w, r, (b, lengths, h, c, p) = _operands(op, inputs)
    if len(x.shape) != 3:
        raise op_error(op, "expected X of rank 3", list(x.shape))
    seq, batch, size = (x.shape[1], x.shape[0], x.shape[2]) if spec.layout else x.shape
    hidden = spec.hidden_size
    if hidden is None:
        if len(r.shape) != 3:
            raise op_error(op, "expected R of rank 3", list(r.shape))
        hidden = r.shape[2]
    dirs, width = len(spec.reverse), spec.cell.gates * hidden
    state = (batch, dirs, hidden) if spec.layout else (dirs, batch, hidden)
    for name, meta, shape in (
        ("W", w, (dirs, width, size)),
        ("R", r, (dirs, width, hidden)),
        ("B", b, (dirs, 2 * width)),
        ("sequence_lens", lengths, (batch,)),
        ("initial_h", h, state),
        ("initial_c", c, state),
        ("P", p, (dirs, 3 * hidden)),
    ):
        _expect(op, name, meta, shape)
    if lengths is not None and lengths.dtype.kind not in "iu":
        raise op_error(op, "expected sequence_lens of an integer dtype", lengths.dtype)
    y = (batch, seq, dirs, hidden) if spec.layout else (seq, dirs, batch, hidden)
    metas = [Meta(y, x.dtype), Meta(state, x.dtype), Meta(state, x.dtype)]
    return metas[: _output_count(op)]


def _cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The module docstring's formula: the projections' 2 flops per multiply-add and
    `ELEMENTWISE_FLOPS_PER_GATE` per gate element and step."""
    x, _, r, _ = _operands(op, inputs)
    seq, batch, size = x.shape
    if int_attr(op, "layout", 0):
        seq, batch = batch, seq
    dirs, width, hidden = r.shape  # width: G·H
    elements = seq * batch * dirs * width
    flops = 2 * elements * (size + hidden) + ELEMENTWISE_FLOPS_PER_GATE * elements
    return Cost(
        float(flops), nbytes(inputs), nbytes(outputs), "matmul", gemm_dim=min(batch, hidden)
    )


# ONNX's types: T for X, W, R, B, initial_h (and initial_c, P), T1 (int32) for sequence_lens
for _op_type, _one_type in (
    ("RNN", (0, 1, 2, 3, 5)),
    ("GRU", (0, 1, 2, 3, 5)),
    ("LSTM", (0, 1, 2, 3, 5, 6, 7)),
):
    register(
        _op_type,
        "matmul",
        compile=_compile,
        infer=_infer,
        cost=_cost,
        one_type=_one_type,
        required=3,
    )
