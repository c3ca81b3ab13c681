"""Plans: which probes a calibration times, and how many cold samples of each.

Owns the probe sets (the op types and sizes each op class is fitted on, the stream probes, the
tiny kernels and the eager chain) and the named plans built from them (`PLANS`: ``full``,
``quick``). A probe and its timer are `hetsim.calibrate.probe`; running a plan is
`hetsim.calibrate.run`, and fitting its samples `hetsim.calibrate.parameters`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hetsim.calibrate.probe import Probe, matmul_probe, op_probe

__all__ = [
    "BLAS_CLASSES",
    "CHAIN_LENGTH",
    "CHAIN_ROUNDS",
    "CHAIN_SIZE",
    "FULL_PROBES",
    "PLANS",
    "STREAM_PREFIX",
    "STREAM_PROBES",
    "TINY_PROBES",
    "Plan",
    "ProbeFactory",
]

CHAIN_LENGTH = 200
"""Ops in the chain whose eager run gives the cost of one step of the dispatch loop."""
CHAIN_SIZE = 4
"""Elements of the chain's tensors: the chain's Relu, timed alone, is subtracted from a step."""
CHAIN_ROUNDS = 5
"""Rounds per sample of the chain and its Relu, timed in turn so that both meet the same load."""
BLAS_CLASSES = ("matmul", "conv")
"""Op classes also measured at one thread when more are modelled, for the record."""
STREAM_PREFIX = "stream."
"""Sample group of a class's stream probes (`STREAM_PROBES`): ``stream.matmul``."""


ProbeFactory = Callable[[], Probe]


def _conv(channels: int, size: int, kernel: int, group: int = 1, out: int = 0) -> ProbeFactory:
    pad = kernel // 2
    return lambda: op_probe(
        "Conv",
        ((1, channels, size, size),),
        weights=((out or channels, channels // group, kernel, kernel),),
        kernel_shape=[kernel, kernel],
        pads=[pad] * 4,
        group=group,
    )


def _unary(op_type: str, shape: tuple[int, ...], **attrs: Any) -> ProbeFactory:
    return lambda: op_probe(op_type, (shape,), **attrs)


def _batchnorm(channels: int, size: int) -> ProbeFactory:
    shape = (1, channels, size, size)
    return lambda: op_probe("BatchNormalization", (shape,), weights=((channels,),) * 4)


def _add(size: int) -> ProbeFactory:
    return lambda: op_probe("Add", ((size,), (size,)))


# Op class -> the probes that fit its efficiency: the op types and the sizes models are made of
# (dense 3x3 and 1x1 convolutions on ImageNet-sized activations, Relu and Add up to tens of MB,
# pooling, batch norm and softmax). Sizes matter: activations of MBs stream from DRAM, not cache.
FULL_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    "matmul": tuple(partial(matmul_probe, n) for n in (64, 128, 256, 384, 512)),
    "conv": (
        _conv(64, 56, 3),
        _conv(128, 28, 3),
        _conv(256, 14, 3),
        _conv(64, 56, 1, out=256),
        _conv(256, 14, 1, out=1024),
        _conv(16, 32, 3),
        _conv(128, 28, 3, out=32),
    ),
    "elementwise": tuple(_unary("Relu", (1 << k,)) for k in (16, 18, 20, 22))
    + tuple(_add(1 << k) for k in (16, 18, 20, 22)),
    "reduction": (
        _unary("MaxPool", (1, 64, 112, 112), kernel_shape=[3, 3], strides=[2, 2]),
        _unary("MaxPool", (1, 32, 28, 28), kernel_shape=[2, 2], strides=[2, 2]),
        _unary("GlobalAveragePool", (1, 2048, 7, 7)),
        _unary("GlobalAveragePool", (1, 256, 14, 14)),
    ),
    "normalization": (
        _batchnorm(64, 112),
        _batchnorm(256, 56),
        _batchnorm(32, 14),
        _unary("Softmax", (64, 1000), axis=-1),
        _unary("Softmax", (1, 1000), axis=-1),
    ),
}


def _gemv(rows: int, columns: int) -> ProbeFactory:
    return lambda: op_probe("Gemm", ((1, columns),), weights=((rows, columns),), transB=1)


# Op class -> probes that stream more bytes than they compute: their rate over the Add-fitted
# bandwidth is the class's mem_efficiency. A matrix-vector product (a fully connected layer at
# batch 1) reads its weights once, through one BLAS stream.
STREAM_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    "matmul": (_gemv(4096, 4096), _gemv(2048, 8192), _gemv(1024, 4096)),
}
TINY_PROBES: tuple[ProbeFactory, ...] = (
    _unary("Relu", (4,)),
    _add(4),
    _unary("Sigmoid", (4,)),
    lambda: op_probe("Gemm", ((1, 4),), weights=((4, 4),), transB=1),
    lambda: op_probe("Concat", ((1, 2, 2, 2), (1, 2, 2, 2)), axis=1),
    _conv(2, 4, 3),
    _batchnorm(2, 4),
    _unary("MaxPool", (1, 2, 4, 4), kernel_shape=[2, 2], strides=[2, 2]),
    _unary("GlobalAveragePool", (1, 2, 4, 4)),
    _unary("Softmax", (1, 4), axis=-1),
)
"""The op types models are made of, each on a few elements: the per-call cost of a kernel whose
arithmetic is negligible (attribute handling, index set-up, allocation) varies by type."""
QUICK_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    group: probes[:: 2 if len(probes) > 4 else 1] for group, probes in FULL_PROBES.items()
}
QUICK_STREAMS = {group: probes[:1] for group, probes in STREAM_PROBES.items()}


@dataclass(frozen=True, slots=True)
class Plan:
    """Probes and cold samples per probe of one calibration (`PLANS`: ``full``, ``quick``)."""

    probes: Mapping[str, tuple[ProbeFactory, ...]]
    repeats: int
    streams: Mapping[str, tuple[ProbeFactory, ...]] = field(default_factory=dict)


PLANS: dict[str, Plan] = {
    "full": Plan(FULL_PROBES, 15, STREAM_PROBES),
    "quick": Plan(QUICK_PROBES, 5, QUICK_STREAMS),
}
