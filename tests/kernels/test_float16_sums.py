"""float16 kernels that sum accumulate in float32 (`hetsim.kernels.arrays.accumulating`): a sum
whose partial sums pass 65504, float16's largest, though the result fits, gave inf (or, through
a variance, 0). The reference is the same kernel on float64, cast to float16, as onnxruntime
computes these ops."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hetsim.ir import Op
from hetsim.kernels import OPS

BIG = np.array([[[[40000.0, -30000.0], [30000.0, 40000.0]]]])  # (1, 1, 2, 2): sums pass 65504
SQUARED = BIG * 0.75  # its squares pass 65504, its L2 norm (51 000) does not
CASES = [
    ("AveragePool", {"kernel_shape": [2, 2]}, [BIG]),
    ("AveragePool", {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, [BIG]),
    ("LpPool", {"kernel_shape": [2, 2], "p": 2}, [SQUARED]),
    ("GlobalLpPool", {"p": 2}, [SQUARED]),
    ("ReduceMean", {"keepdims": 0}, [BIG]),
    ("ReduceL2", {"keepdims": 0}, [SQUARED]),
    ("InstanceNormalization", {}, [BIG, np.ones(1), np.zeros(1)]),
    ("LRN", {"size": 1}, [BIG]),
    ("LpNormalization", {"p": 2}, [SQUARED]),
    ("MeanVarianceNormalization", {}, [BIG]),
    ("Softmax", {}, [np.zeros((1, 70_000))]),  # a vocabulary: 70 000 ones summed
    ("LogSoftmax", {}, [np.zeros((1, 70_000))]),
]


@pytest.mark.parametrize(("op_type", "attrs", "inputs"), CASES, ids=[c[0] for c in CASES])
def test_a_float16_kernel_sums_without_overflow(
    op_type: str, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> None:
    names = tuple(f"x{i}" for i in range(len(inputs)))
    kernel = OPS[op_type].compile(Op(op_type, "k", names, ("y",), attrs), 17)
    (half,) = kernel([x.astype(np.float16) for x in inputs])
    (wide,) = kernel([x.astype(np.float64) for x in inputs])
    assert half.dtype == np.float16
    # within float16's rounding of the float64 result: 2**-10 relative, and its smallest step
    # near 0 (a softmax of 70 000 keys gives 1.43e-5 each, which an absolute 1e-6 let err by 7%)
    tiny = float(np.finfo(np.float16).smallest_subnormal)
    np.testing.assert_allclose(half.astype(np.float64), wide, rtol=2**-10, atol=tiny)
