"""The only code that parses or converts units.

Conventions, used in every attribute name and every formula:

- time: microseconds (``_us``); simulated time under ``hetsim.sim`` is float µs.
- bandwidth: ``_gbps`` is gigabytes per second (GB/s, 1e9 bytes/s), never gigabits.
  1 GB/s moves exactly 1e3 bytes per µs.
- frequency: ``_ghz``; throughput: ``_gflops`` (1e9 flop/s, i.e. 1e3 flop per µs).
- capacity: ``_bytes``, ``_kib``, ``_mib``, ``_gib`` (powers of 1024).
"""

from __future__ import annotations

import math

__all__ = [
    "BYTES_PER_GIB",
    "BYTES_PER_KIB",
    "BYTES_PER_MIB",
    "counted",
    "format_bytes",
    "format_flops",
    "format_sizes",
    "gbps_to_bytes_per_us",
    "gflops_to_flops_per_us",
    "gib_to_bytes",
    "transfer_us",
]

BYTES_PER_KIB = 1024
BYTES_PER_MIB = 1024**2
BYTES_PER_GIB = 1024**3


def gbps_to_bytes_per_us(bandwidth_gbps: float) -> float:
    """Bytes moved per µs at `bandwidth_gbps` GB/s.

    >>> gbps_to_bytes_per_us(8)
    8000.0
    """
    return bandwidth_gbps * 1e3


def gflops_to_flops_per_us(gflops: float) -> float:
    """Flops per µs at `gflops` GFLOP/s.

    >>> gflops_to_flops_per_us(2.5)
    2500.0
    """
    return gflops * 1e3


def transfer_us(size_bytes: float, bandwidth_gbps: float, latency_us: float) -> float:
    """Time to move `size_bytes` over an idle link: latency plus size over bandwidth.

    >>> transfer_us(8000, 8, 2)
    3.0
    """
    return latency_us + size_bytes / gbps_to_bytes_per_us(bandwidth_gbps)


def gib_to_bytes(gib: float) -> int:
    """Bytes in the given count of binary units.

    >>> gib_to_bytes(0.5)
    536870912
    """
    return int(gib * BYTES_PER_GIB)


_BYTE_UNITS = tuple((unit, 1024**power) for power, unit in enumerate("KMGTPE", 1))[::-1]
_FLOP_UNITS = tuple((unit, 1000.0**power) for power, unit in enumerate("kMGTPE", 1))[::-1]


def format_bytes(size_bytes: float) -> str:
    """A size for people: the largest binary unit (up to EiB) that keeps the number at or above
    1 (a model at a huge symbolic dim read "44703496694.6 GiB", which ran its table's columns
    together).

    A negative size is placed by its magnitude, a fraction of a byte rounds (1023.999 B had
    read "1023 B"), and a size that is no number reads as it is.

    >>> format_bytes(64 * 1024**2), format_bytes(512), format_bytes(1536), format_bytes(3 * 2**50)
    ('64.0 MiB', '512 B', '1.5 KiB', '3.0 PiB')
    >>> format_bytes(1023.999), format_bytes(-1536), format_bytes(float("nan"))
    ('1024 B', '-1.5 KiB', 'nan B')
    """
    if not math.isfinite(size_bytes):  # NaN had raised from int()
        return f"{size_bytes} B"
    for unit, scale in _BYTE_UNITS:
        if abs(size_bytes) >= scale:
            return f"{size_bytes / scale:.1f} {unit}iB"
    return f"{round(size_bytes)} B"


def format_sizes(first: float, second: float) -> tuple[str, str]:
    """Two sizes compared in one message (what is needed, what is free), each `format_bytes`,
    and in exact bytes too where they differ but would read alike (1048575 and 1048576 B read
    "1024.0 KiB" and "1.0 MiB": the reader could not tell why one does not fit the other).

    >>> format_sizes(4096, 4095)
    ('4.0 KiB (4096 B)', '4.0 KiB (4095 B)')
    >>> format_sizes(2**20 - 1, 2**20), format_sizes(4096, 2048)
    (('1024.0 KiB (1048575 B)', '1.0 MiB (1048576 B)'), ('4.0 KiB', '2.0 KiB'))
    """
    shown = format_bytes(first), format_bytes(second)
    larger = max(abs(first), abs(second))
    scale = next((scale for _, scale in _BYTE_UNITS if larger >= scale), 1)
    if first != second and round(first / scale, 1) == round(second / scale, 1):
        return f"{shown[0]} ({int(first)} B)", f"{shown[1]} ({int(second)} B)"
    return shown


def format_flops(flops: float) -> str:
    """Work for people: the largest decimal unit (SI: k, M, G, T, P, E) that keeps the number at
    or above 1.

    A negative count is placed by its magnitude (-2.5e9 had read "-2500000000 FLOP"), and one
    that is no number reads as it is (inf had read "inf EFLOP").

    >>> format_flops(2.5e9), format_flops(1536), format_flops(20), format_flops(2.8e20)
    ('2.50 GFLOP', '1.54 kFLOP', '20 FLOP', '280.00 EFLOP')
    >>> format_flops(-2.5e9), format_flops(float("inf"))
    ('-2.50 GFLOP', 'inf FLOP')
    """
    if not math.isfinite(flops):
        return f"{flops} FLOP"
    for unit, scale in _FLOP_UNITS:
        if abs(flops) >= scale:
            return f"{flops / scale:.2f} {unit}FLOP"
    return f"{flops:.0f} FLOP"


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless `n` is 1.

    >>> counted(1, "op"), counted(3, "core"), counted(0, "point")
    ('1 op', '3 cores', '0 points')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"
