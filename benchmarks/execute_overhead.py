"""Per-op overhead of `hetsim.execute`: a long chain of tiny ops against the same numpy calls.

The tensors are 4 elements, so the time is dispatch, not arithmetic: the difference between the
two columns is what the compiled program (slot lookups, frees, memoized index arithmetic in
Reshape, Slice, Unsqueeze) adds per op. Run: ``python benchmarks/execute_overhead.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute

CHAIN = 2000
REPEATS = 15


def _chain() -> Graph:
    ops, prev = [], "x"
    for i in range(CHAIN):
        kind = ("Relu", "Add", "Reshape", "Slice", "Unsqueeze", "Squeeze")[i % 6]
        extra = {
            "Add": ("one",),
            "Reshape": ("shape",),
            "Slice": ("s", "e"),
            "Unsqueeze": ("axis",),
            "Squeeze": ("axis",),
        }
        ops.append(Op(kind, f"n{i}", (prev, *extra.get(kind, ())), (f"t{i}",)))
        prev = f"t{i}"
    inits = {
        "one": np.ones(1, np.float32),
        "shape": np.array([1, 4]),
        "s": np.array([0]),
        "e": np.array([4]),
        "axis": np.array([0]),
    }
    return Graph("chain", tuple(ops), {"x": TensorType((1, 4), "float32")}, (prev,), inits)


def _bare(x: np.ndarray) -> np.ndarray:
    one = np.ones(1, np.float32)
    for i in range(CHAIN):
        k = i % 6
        if k == 0:
            x = np.maximum(x, 0)
        elif k == 1:
            x = x + one
        elif k == 2:
            x = x.reshape(1, 4)
        elif k == 3:
            x = x[0:4]
        elif k == 4:
            x = x.reshape(1, *x.shape)
        else:
            x = x.reshape(x.shape[1:])
    return x


def _best_us_per_op(run: Callable[[], object]) -> float:
    run()
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / CHAIN * 1e6


def main() -> None:
    graph, x = _chain(), np.ones((1, 4), np.float32)
    hetsim_us = _best_us_per_op(lambda: execute(graph, {"x": x}))
    numpy_us = _best_us_per_op(lambda: _bare(x))
    print(f"{'path':<16}{'us/op':>8}")
    print(f"{'hetsim.execute':<16}{hetsim_us:>8.2f}")
    print(f"{'bare numpy':<16}{numpy_us:>8.2f}")
    print(f"{'overhead':<16}{hetsim_us - numpy_us:>8.2f}")


if __name__ == "__main__":
    main()
