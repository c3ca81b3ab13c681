"""Ops that copy their input as it is or in another dtype: Cast, CastLike, Identity, and Dropout,
which at inference passes its input through (with a mask of ones when asked for one).

Their cost is data movement (`movement_cost`: bytes read and written) or, for a pass-through,
a view (`view_cost`: nothing moves).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_input_rank,
    dtype_of,
    op_error,
    present,
    same_as_input,
)
from hetsim.kernels.costs import Cost, movement_cost, view_cost
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__: list[str] = []


def _cast(x: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """`x` as `dtype`: NaN, inf or an out-of-range float cast to an integer is implementation
    defined in ONNX (numpy gives onnxruntime's values), so without numpy's RuntimeWarning,
    which ``hetsim run`` printed for a folded Cast of a NaN constant."""
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(dtype)


def _compile_cast(op: Op, opset: int) -> Kernel:
    dtype = dtype_of(op, attr(op, "to"))
    return lambda inputs: [_cast(inputs[0], dtype)]


def _infer_cast(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = present(op, inputs, 1)[0]
    return [Meta(x.shape, dtype_of(op, attr(op, "to")))]


register("Cast", "data_movement", compile=_compile_cast, infer=_infer_cast, cost=movement_cost)


def _compile_cast_like(op: Op, opset: int) -> Kernel:
    return lambda inputs: [_cast(inputs[0], inputs[1].dtype)]


def _infer_cast_like(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, like = present(op, inputs, 2)
    return [Meta(x.shape, like.dtype)]


def _cast_like_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Cast's: the data read and written; `target_type` is only read for its dtype."""
    return movement_cost(op, inputs[:1], outputs)


register(
    "CastLike",
    "data_movement",
    compile=_compile_cast_like,
    infer=_infer_cast_like,
    cost=_cast_like_cost,
    required=2,
)


def _compile_identity(op: Op, opset: int) -> Kernel:
    return lambda inputs: [inputs[0]]


register(
    "Identity", "data_movement", compile=_compile_identity, infer=same_as_input, cost=view_cost
)


def _mask_dtype(x: Meta | np.ndarray, opset: int) -> np.dtype[Any]:
    return np.dtype(bool) if opset >= 10 else x.dtype


def _compile_dropout(op: Op, opset: int) -> Kernel:
    # hetsim runs inference only: the opset-1..6 `is_test` flag is ignored, as onnxruntime does
    has_training_input = len(op.inputs) > 2 and op.inputs[2] != ""
    has_mask = len(op.outputs) > 1 and op.outputs[1] != ""

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, "Dropout: input missing"
        if has_training_input and bool(inputs[2]):
            raise op_error(op, "expected training_mode false (inference)", True)
        if has_mask:
            return [x, np.ones(x.shape, _mask_dtype(x, opset))]
        return [x]

    return kernel


def _infer_dropout(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = present(op, inputs, 1)[0]
    for index, name in ((1, "ratio"), (2, "training_mode")):  # onnxruntime's: scalars, not [1]
        check_input_rank(op, index, name, inputs[index] if len(inputs) > index else None, 0)
    training = inputs[2] if len(inputs) > 2 else None
    if training is not None and training.value is not None and bool(training.value):
        # a constant true: the kernel refuses it, and a timing run, which runs none, had not
        raise op_error(op, "expected training_mode false (inference)", True)
    out = [Meta(x.shape, x.dtype)]
    if len(op.outputs) > 1 and op.outputs[1] != "":
        out.append(Meta(x.shape, _mask_dtype(x, opset)))
    return out


register("Dropout", "data_movement", compile=_compile_dropout, infer=_infer_dropout, cost=view_cost)
