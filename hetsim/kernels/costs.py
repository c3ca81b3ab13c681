"""The work of one op: `Cost`, and the cost rules that many ops share.

An op's own cost rule lives with its kernel in its op module; `register` (in `registry`) gives
`elementwise_cost` to an op registered without one. Turning a `Cost` into time on a processor is
left to `hetsim.cost`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hetsim.ir import Op
from hetsim.kernels.meta import Meta

__all__ = [
    "Cost",
    "CostRule",
    "elementwise_cost",
    "metadata_cost",
    "movement_cost",
    "nbytes",
    "view_cost",
]


@dataclass(frozen=True, slots=True)
class Cost:
    """The work of one op: flops, bytes read and written, and the op class its efficiency uses.

    `scratch_bytes` is what hetsim's own numpy lowering moves beyond the inputs and outputs (a
    Conv's im2col columns, written and read back; Erf's float64 temporaries). A vendor kernel
    (implicit-GEMM or direct conv, a fused erf) moves none of it, so only processors with
    ``lowering: numpy`` count it (`hetsim.cost.kernel_us`); the calibrated ``local`` target is
    one.

    `gemm_dim` is the smallest of M, N and K of a MatMul or Gemm (of one GEMM of a batched
    MatMul; a vector operand's M or N is 1) or of the GEMM a Conv lowers to (per group and
    image: output channels per group, output pixels, input channels per group × taps); 0 for
    an op that is not one. A BLAS GEMM with a small dimension reaches a smaller share of peak
    (`hetsim.cost.kernel_us`, ``gemm_half_dim``).

    `numpy_calls` and `numpy_bytes` are the rest of what the numpy lowering does apart from the
    op's own computation: further numpy calls (a quantized op centers its operands, then scales,
    rounds, shifts, saturates and casts its accumulator, one whole-array pass each, and forms
    its multiplier from the scales) and the bytes those passes read and write, which stream at
    the elementwise memory rate whatever the op's class. Like `scratch_bytes`, they count only
    on ``lowering: numpy`` processors, where each call costs ``kernel_latency_us``
    (`hetsim.cost.kernel_us`); a vendor kernel fuses them.
    """

    flops: float
    bytes_read: int
    bytes_written: int
    op_class: str
    scratch_bytes: int = 0
    gemm_dim: int = 0
    numpy_calls: int = 0
    numpy_bytes: int = 0

    @property
    def bytes_total(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def bytes_with_scratch(self) -> int:
        """What a ``lowering: numpy`` processor moves: `bytes_total` plus `scratch_bytes`."""
        return self.bytes_read + self.bytes_written + self.scratch_bytes

    def __repr__(self) -> str:
        scratch = f", scratch_bytes={self.scratch_bytes}" if self.scratch_bytes else ""
        gemm = f", gemm_dim={self.gemm_dim}" if self.gemm_dim else ""
        passes = (
            f", numpy_calls={self.numpy_calls}, numpy_bytes={self.numpy_bytes}"
            if self.numpy_calls or self.numpy_bytes
            else ""
        )
        return (
            f"Cost(flops={self.flops!r}, bytes_read={self.bytes_read!r}, "
            f"bytes_written={self.bytes_written!r}, op_class={self.op_class!r}{scratch}{gemm}"
            f"{passes})"
        )


CostRule = Callable[[Op, Sequence[Meta | None], Sequence[Meta]], Cost]
"""``cost(op, input_metas, output_metas) -> Cost``: an op's cost rule."""


def nbytes(metas: Sequence[Meta | None]) -> int:
    """Total bytes of the present tensors."""
    return sum(m.nbytes for m in metas if m is not None)


def elementwise_cost(op_class: str, flops_per_element: float = 1.0) -> CostRule:
    """A cost rule: `flops_per_element` per output element; inputs read, outputs written once."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        flops = flops_per_element * sum(m.size for m in outputs)
        return Cost(flops, nbytes(inputs), nbytes(outputs), op_class)

    return cost


def view_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The cost of an op that only relabels memory (Reshape, Identity): nothing moves."""
    return Cost(0.0, 0, 0, "data_movement")


def metadata_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The cost of an op that reads no data (Shape, Size, Constant: class ``other``): nothing
    moves, as for a view, but a calibrated ``op_latency_us`` is the class's own."""
    return Cost(0.0, 0, 0, "other")


def movement_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The cost of an op that copies data (Transpose, Concat, Pad): no flops, bytes both ways."""
    return Cost(0.0, nbytes(inputs), nbytes(outputs), "data_movement")
