"""Unary elementwise ops: math functions (Exp, Sqrt, the trigonometric ones...) and activations.

Each op is one entry of a table (`_UNARY`: a factory reading the op's attributes, and its flops
per element) and one numpy expression applied to whole arrays; attributes are read once, when
the op compiles; outputs keep their input's dtype. numpy has no erf: `erf` is a vectorized fit.
`sigmoid`, `relu`, `softsign` and `softplus` are public for the recurrent ops' activations.
Binary and variadic ops, comparisons, Where, Clip and Cast are in `elementwise.py`.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import zeros
from hetsim.kernels.checks import attr, float_attr, op_error, same_as_input
from hetsim.kernels.costs import Cost, CostRule, elementwise_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = [
    "ERF_TEMP_BYTES",
    "TRANSCENDENTAL_FLOPS",
    "erf",
    "relu",
    "sigmoid",
    "softplus",
    "softsign",
]

Unary = Callable[[np.ndarray], np.ndarray]

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Numerical Recipes' erfc Chebyshev fit: fractional error below 1.2e-7 everywhere.
_ERFC_COEFFS = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in `x`'s dtype (numpy has none; scipy is not a dep).

    A Taylor series below 0.5 keeps small values accurate relative to themselves; above it,
    ``1 - erfc`` with an absolute error below 6e-8.

    Examples
    --------
    >>> [round(float(v), 6) for v in erf(np.array([-1.0, 0.0, 0.1, 2.0], np.float32))]
    [-0.842701, 0.0, 0.112463, 0.995322]
    """
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(t, _ERFC_COEFFS[-1])
    for c in _ERFC_COEFFS[-2::-1]:
        poly = poly * t + c
    far = 1.0 - t * np.exp(-z * z + poly)
    z2 = z * z
    term, near = z.copy(), z.copy()
    for n in range(1, 9):  # terms of x^(2n+1) / (n! (2n+1)); 9 reach 1e-11 at z = 0.5
        term = term * -z2 / n
        near += term / (2 * n + 1)
    near *= _TWO_OVER_SQRT_PI
    result: np.ndarray = (np.sign(x) * np.where(z < 0.5, near, far)).astype(x.dtype, copy=False)
    return result


def sigmoid(x: np.ndarray) -> np.ndarray:
    # the tanh form cannot overflow, unlike 1 / (1 + exp(-x))
    return 0.5 * np.tanh(0.5 * x) + 0.5


def relu(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.maximum(x, zeros(x.shape, x.dtype))  # an array runs vectorized
    return result


def softsign(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = x / (1 + np.abs(x))
    return result


def softplus(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logaddexp(0, x)
    return result


def _hard_swish(x: np.ndarray) -> np.ndarray:
    # ONNX: x · max(0, min(1, x/6 + 1/2)), HardSigmoid's with alpha 1/6
    result: np.ndarray = (x * np.clip(x * (1 / 6) + 0.5, 0, 1)).astype(x.dtype, copy=False)
    return result


def _mish(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = (x * np.tanh(softplus(x))).astype(x.dtype, copy=False)
    return result


def _swish(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 1.0)

    def swish(x: np.ndarray) -> np.ndarray:
        wide = x.astype(np.float32) if x.dtype == np.float16 else x  # one rounding, at the end
        result: np.ndarray = (wide * sigmoid(alpha * wide)).astype(x.dtype, copy=False)
        return result

    return swish


def _celu(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 1.0)
    if alpha == 0:
        raise op_error(op, "expected a non-zero alpha", alpha)

    def celu(x: np.ndarray) -> np.ndarray:
        negative = alpha * np.expm1(np.minimum(x, 0) / alpha)
        result: np.ndarray = (np.maximum(x, 0) + negative).astype(x.dtype, copy=False)
        return result

    return celu


def _thresholded_relu(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 1.0)
    return lambda x: np.where(x > alpha, x, 0).astype(x.dtype, copy=False)


def _leaky_relu(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 0.01)
    return lambda x: np.where(x < 0, alpha * x, x)


def _elu(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 1.0)
    return lambda x: np.where(x < 0, alpha * np.expm1(np.minimum(x, 0)), x)


def _selu(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 1.67326319217681884765625)
    gamma = float_attr(op, "gamma", 1.05070102214813232421875)
    return lambda x: np.where(x <= 0, gamma * alpha * np.expm1(np.minimum(x, 0)), gamma * x)


def _hard_sigmoid(op: Op) -> Unary:
    alpha = float_attr(op, "alpha", 0.2)
    beta = float_attr(op, "beta", 0.5)
    return lambda x: np.clip(alpha * x + beta, 0, 1)


def _shrink(op: Op) -> Unary:
    bias = float_attr(op, "bias", 0.0)
    lambd = float_attr(op, "lambd", 0.5)

    def shrink(x: np.ndarray) -> np.ndarray:
        shrunk = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0))
        return shrunk.astype(x.dtype, copy=False)

    return shrink


def _gelu(op: Op) -> Unary:
    approximate = attr(op, "approximate", "none")
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        return lambda x: 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise op_error(op, "expected approximate 'none' or 'tanh'", repr(approximate))
    return lambda x: 0.5 * x * (1 + erf(x * _SQRT_HALF))


def _fixed(fn: Unary) -> Callable[[Op], Unary]:
    return lambda op: fn


TRANSCENDENTAL_FLOPS = 10
"""Flops per element of numpy's vectorized exp, log and tanh (float32), in streaming passes.

An elementwise flop is one streaming pass per element, the unit the calibration fits the
elementwise rate in (a Relu: one pass). Ten passes stand for a range reduction and a polynomial
evaluated in registers. On the development machine (numpy 2.4, AVX-512 CPU) at 2^14-2^20
elements, exp took 0.32 ns per element and tanh 0.17 where a Relu pass took 0.10: 2-3 passes,
so ten overstates them there (docs/cost-model.md).
"""

ERF_TEMP_BYTES = 1470
"""Scratch bytes per element that hetsim's `erf` moves through its float64 temporaries.

numpy has no erf, so `erf` is 79 numpy passes (both branches for every element: casts in and
out 2; abs 1; t 3; the 10-coefficient Horner chain 18 with its fill 1; the far branch's
exponent, exp and difference 6; z² 1; two copies 2; 8 Taylor terms of 5 each, 40; the scale 1;
sign, compare, select and product 4), each reading its operands and writing a new array: casts
12 + 12, abs 16, t 48, the Horner chain's fill 8 and 9 steps of 40, the far branch 120, z² 24,
copies 32, 8 Taylor terms of 96, the scale 16, sign 8, compare 9, select 25, product 20: 1478,
less the 4 of reading x and the 4 of writing the result, which every elementwise rule counts.
On a ``lowering: numpy`` processor they make Erf memory-bound, as it runs there; a native erf
is one polynomial in registers (`TRANSCENDENTAL_FLOPS`) and moves none of them.
"""


def _scratch_cost(flops: float, scratch_per_element: int) -> CostRule:
    """An elementwise op of `flops` per element whose numpy kernel also moves
    `scratch_per_element` bytes of temporaries per element (`Cost.scratch_bytes`)."""
    plain = elementwise_cost("elementwise", flops)

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        found = plain(op, inputs, outputs)
        return replace(found, scratch_bytes=scratch_per_element * sum(m.size for m in outputs))

    return cost


# op type -> (factory reading the attributes, flops per output element)
_UNARY: dict[str, tuple[Callable[[Op], Unary], float]] = {
    "Relu": (_fixed(relu), 1),
    "Neg": (_fixed(np.negative), 1),
    "Abs": (_fixed(np.abs), 1),
    "Sqrt": (_fixed(np.sqrt), 1),
    "Exp": (_fixed(np.exp), TRANSCENDENTAL_FLOPS),
    "Log": (_fixed(np.log), TRANSCENDENTAL_FLOPS),
    "Reciprocal": (_fixed(np.reciprocal), 1),
    "Floor": (_fixed(np.floor), 1),
    "Ceil": (_fixed(np.ceil), 1),
    "Erf": (_fixed(erf), TRANSCENDENTAL_FLOPS),  # and ERF_TEMP_BYTES of scratch
    "Tanh": (_fixed(np.tanh), TRANSCENDENTAL_FLOPS),
    "Sigmoid": (_fixed(sigmoid), 3 + TRANSCENDENTAL_FLOPS),  # 0.5·tanh(0.5·x) + 0.5
    "Softsign": (_fixed(softsign), 3),
    "Softplus": (_fixed(softplus), 2 + 2 * TRANSCENDENTAL_FLOPS),  # logaddexp: exp, log1p
    "Not": (_fixed(np.logical_not), 1),
    "LeakyRelu": (_leaky_relu, 2),
    "Elu": (_elu, 4 + TRANSCENDENTAL_FLOPS),  # minimum, expm1, scale, compare, select
    "Selu": (_selu, 5 + TRANSCENDENTAL_FLOPS),
    "HardSigmoid": (_hard_sigmoid, 3),
    "Gelu": (_gelu, TRANSCENDENTAL_FLOPS + 4),  # approximate='none' (_gelu_cost reads it)
    "Sign": (_fixed(np.sign), 1),
    "Shrink": (_shrink, 6),  # two compares, the add and the subtract, two selects
    "Round": (_fixed(np.round), 1),  # half to even, as ONNX says
    "Swish": (_swish, 4 + TRANSCENDENTAL_FLOPS),  # αx, Sigmoid's, product
    "Celu": (_celu, 6 + TRANSCENDENTAL_FLOPS),  # min, ÷α, expm1, ·α, max, add
    "ThresholdedRelu": (_thresholded_relu, 2),  # compare, select
    "BitwiseNot": (_fixed(np.invert), 1),
    "HardSwish": (_fixed(_hard_swish), 5),  # scale, add, two clamps, product
    "Mish": (_fixed(_mish), 3 + 3 * TRANSCENDENTAL_FLOPS),  # Softplus's, tanh, product
    **{
        name: (_fixed(fn), TRANSCENDENTAL_FLOPS)
        for name, fn in (
            ("Sin", np.sin),
            ("Cos", np.cos),
            ("Tan", np.tan),
            ("Asin", np.arcsin),
            ("Acos", np.arccos),
            ("Atan", np.arctan),
            ("Sinh", np.sinh),
            ("Cosh", np.cosh),
            ("Asinh", np.arcsinh),
            ("Acosh", np.arccosh),
            ("Atanh", np.arctanh),
        )
    },
}


_SCRATCH_PER_ELEMENT: dict[str, int] = {
    "Erf": ERF_TEMP_BYTES,
    # exact Gelu: erf's, plus x·√½, erf's own read and write, 1 +, 0.5·x and the product:
    # 8 + 8 + 8 + 8 + 12 B, less the 8 of reading x and writing the result
    "Gelu": ERF_TEMP_BYTES + 36,
}
"""Unary ops whose numpy kernel moves temporaries (`Cost.scratch_bytes`), per element."""


def _unary_cost(op_type: str, flops: float) -> CostRule:
    """`_UNARY`'s flops per element, reading the input and writing the output once, plus the
    op's `_SCRATCH_PER_ELEMENT`."""
    scratch = _SCRATCH_PER_ELEMENT.get(op_type)
    if scratch is None:
        return elementwise_cost("elementwise", flops)
    return _scratch_cost(flops, scratch)


_GELU_EXACT_COST = _unary_cost("Gelu", _UNARY["Gelu"][1])
_GELU_TANH_COST = elementwise_cost("elementwise", 7 + TRANSCENDENTAL_FLOPS)


def _gelu_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Exact: `erf` of x·√½, then 1 +, ·x, ·0.5; ``approximate='tanh'``: x³ (2), ·0.044715,
    + x, ·√(2/π), tanh, 1 +, ·x, ·0.5."""
    rule = _GELU_TANH_COST if attr(op, "approximate", "none") == "tanh" else _GELU_EXACT_COST
    return rule(op, inputs, outputs)


def _compile_unary(factory: Callable[[Op], Unary]) -> Callable[[Op, int], Kernel]:
    def compile(op: Op, opset: int) -> Kernel:
        fn = factory(op)
        return lambda inputs: [fn(inputs[0])]

    return compile


for _type, (_factory, _flops) in _UNARY.items():
    register(
        _type,
        "elementwise",
        compile=_compile_unary(_factory),
        infer=same_as_input,
        cost=_gelu_cost if _type == "Gelu" else _unary_cost(_type, _flops),
    )
