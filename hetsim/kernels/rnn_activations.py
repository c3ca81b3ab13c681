"""The activations ONNX's recurrent ops name (`ACTIVATIONS`), and how an RNN, GRU or LSTM's
activation attributes become its gates' functions (`read_activations`).

Activations (names case-insensitive, as onnxruntime reads them): Relu, Tanh, Sigmoid, Affine,
LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign and Softplus, one list for the
forward direction, then the reverse one. ``activation_alpha`` and ``activation_beta`` are consumed
in order by the activations that take one, as onnxruntime does; a missing value is the ONNX op's
default (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2 and 0.5, Elu 1), Affine's 1 and 0
and ScaledTanh's 1 and 1. ``clip`` bounds the input of each gate's activation, not the cell
state that LSTM's h reads (onnxruntime's reading of "the input of activations").

The ops' cells, their recurrence and their registration live in `rnn.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import attr, floats_attr, op_error
from hetsim.kernels.unary import relu, sigmoid, softplus, softsign

__all__ = ["ACTIVATIONS", "Activation", "Unary", "read_activations"]

Unary = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class Activation:
    """One activation an RNN gate may use: ``make(alpha, beta)`` builds it; `alpha` and `beta`
    are the defaults of the parameters it takes (None: it takes none).

    >>> leaky = ACTIVATIONS["LeakyRelu"]
    >>> leaky.alpha, leaky.make(0.5, 0.0)(np.array([-2.0, 3.0])).tolist()
    (0.01, [-1.0, 3.0])
    """

    make: Callable[[float, float], Unary]
    alpha: float | None = None
    beta: float | None = None


ACTIVATIONS: dict[str, Activation] = {
    "Relu": Activation(lambda a, b: relu),
    "Tanh": Activation(lambda a, b: np.tanh),
    "Sigmoid": Activation(lambda a, b: sigmoid),
    "Affine": Activation(lambda a, b: lambda x: a * x + b, 1.0, 0.0),
    "LeakyRelu": Activation(lambda a, b: lambda x: np.where(x < 0, a * x, x), 0.01),
    "ThresholdedRelu": Activation(lambda a, b: lambda x: np.where(x > a, x, x.dtype.type(0)), 1.0),
    "ScaledTanh": Activation(lambda a, b: lambda x: a * np.tanh(b * x), 1.0, 1.0),
    "HardSigmoid": Activation(lambda a, b: lambda x: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "Elu": Activation(
        lambda a, b: lambda x: np.where(x < 0, a * np.expm1(np.minimum(x, 0)), x), 1.0
    ),
    "Softsign": Activation(lambda a, b: softsign),
    "Softplus": Activation(lambda a, b: softplus),
}
"""The activations ONNX's recurrent ops name, by their ONNX names."""

_BY_LOWER = {name.lower(): name for name in ACTIVATIONS}


def read_activations(
    op: Op, defaults: tuple[str, ...], clipped: int, directions: int, clip: float | None
) -> tuple[Unary, ...]:
    """One function per activation of the cell, applying each direction's to its slice.

    `defaults` are the cell's activations for one direction; `clip` bounds the inputs of the
    first `clipped` of each direction's."""
    per_direction = len(defaults)
    # an empty list is none given, as onnxruntime and onnx's reference read it
    given = attr(op, "activations", ()) or defaults * directions
    names = [_known(op, str(n)) for n in given]
    if op.type == "RNN" and directions == 1 and len(names) == 2:
        names = names[:1]  # the schema's default lists two; onnxruntime takes the first
    if len(names) != per_direction * directions:
        expected = f"expected {per_direction * directions} activations"
        raise op_error(op, f"{expected} ({per_direction} per direction)", len(names))
    alphas = iter(floats_attr(op, "activation_alpha", ()))
    betas = iter(floats_attr(op, "activation_beta", ()))
    keyed = []  # (name, alpha, beta, clip) of each, in order: each takes the next alpha, beta
    for index, name in enumerate(names):
        found = ACTIVATIONS[name]
        alpha = 0.0 if found.alpha is None else next(alphas, found.alpha)
        beta = 0.0 if found.beta is None else next(betas, found.beta)
        keyed.append((name, alpha, beta, clip if index % per_direction < clipped else None))
    return tuple(
        _build(*keyed[slot])
        if len(set(keyed[slot::per_direction])) == 1
        else _per_direction([_build(*keyed[d * per_direction + slot]) for d in range(directions)])
        for slot in range(per_direction)
    )


def _known(op: Op, name: str) -> str:
    """The ONNX name of activation `name`, given in any case."""
    known = _BY_LOWER.get(name.lower())
    if known is None:
        close = difflib.get_close_matches(name.lower(), _BY_LOWER, n=1)
        hint = f" (did you mean {_BY_LOWER[close[0]]!r}?)" if close else ""
        expected = f"expected an activation of {', '.join(ACTIVATIONS)}"
        raise op_error(op, expected, f"{name!r}{hint}")
    return known


def _build(name: str, alpha: float, beta: float, clip: float | None) -> Unary:
    function = ACTIVATIONS[name].make(alpha, beta)
    if clip is None:
        return function
    return lambda x: function(np.clip(x, -clip, clip))


def _per_direction(functions: list[Unary]) -> Unary:
    """One function over ``[D, ...]`` arrays applying direction d's function to slice d."""
    return lambda x: np.stack([f(x[d]) for d, f in enumerate(functions)])
