"""The description of the machine a calibration ran on: CPU, threads, BLAS, numpy, load.

Owns reading ``/proc/cpuinfo``, `platform` and `threadpoolctl`; the values go into a
calibration's JSON and the comments of its tag file, and `cpu_kind` picks the target kind.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CPU_KINDS",
    "FALLBACK_L2_BYTES",
    "blas_info",
    "cpu_info",
    "cpu_kind",
    "describe_machine",
    "l2_bytes",
]

CPU_KINDS: dict[str, str] = {
    "x86_64": "x86-cpu",
    "amd64": "x86-cpu",
    "i686": "x86-cpu",
    "aarch64": "arm-cpu",
    "arm64": "arm-cpu",
    "riscv64": "riscv-cpu",
}
"""``platform.machine()`` (lower case) → the hetsim CPU kind that models it."""

FALLBACK_FREQ_GHZ = 2.0
"""The clock assumed where ``/proc/cpuinfo`` gives none (a guess, said so in the tag file)."""


def cpu_kind(machine: str) -> str:
    """The hetsim kind for a ``platform.machine()`` string; an unknown one is modelled as x86.

    >>> cpu_kind("x86_64"), cpu_kind("aarch64"), cpu_kind("AMD64")
    ('x86-cpu', 'arm-cpu', 'x86-cpu')
    """
    return CPU_KINDS.get(machine.lower(), "x86-cpu")


def cpu_info(text: str) -> dict[str, Any]:
    """Model name, clock (GHz, the highest core's) and flags from ``/proc/cpuinfo`` text.

    >>> cpu_info("model name : Chip X\\ncpu MHz : 2600.5\\nflags : sse2 avx fma\\n")
    {'model': 'Chip X', 'freq_ghz': 2.6005, 'flags': ['avx', 'fma', 'sse2']}
    """
    model, mhz, flags = "", [], set()
    for line in text.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key in ("model name", "Model", "uarch") and not model:
            model = value
        elif key == "cpu MHz":
            mhz.append(float(value))
        elif key in ("flags", "Features", "isa"):
            flags.update(value.split())
    freq_ghz = max(mhz) / 1000.0 if mhz else None
    return {"model": model, "freq_ghz": freq_ghz, "flags": sorted(flags)}


FALLBACK_L2_BYTES = 1 << 20
"""The per-core L2 size assumed where sysfs gives none (1 MiB, said so in the JSON)."""

SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def l2_bytes(caches: Path = SYSFS_CACHES) -> int | None:
    """The size of CPU 0's level-2 cache from sysfs (``index*/level`` and ``size``), or None.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for index, (level, size) in enumerate([("1", "48K"), ("2", "1024K"), ("3", "32M")]):
    ...     (root / f"index{index}").mkdir()
    ...     _ = (root / f"index{index}" / "level").write_text(level)
    ...     _ = (root / f"index{index}" / "size").write_text(size)
    >>> l2_bytes(root), l2_bytes(root / "missing")
    (1048576, None)
    """
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    for index in sorted(caches.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if level == "2" and size:
            return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
    return None


def blas_info() -> list[dict[str, Any]]:
    """Each BLAS library numpy loaded: its API, version, thread count and core type."""
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "version", "num_threads", "architecture", "filepath")
    return [{k: pool.get(k) for k in keep} for pool in threadpool_info()]


def describe_machine() -> dict[str, Any]:
    """What a calibration's numbers depend on, as plain JSON values."""
    cpuinfo = Path("/proc/cpuinfo")
    info = cpu_info(cpuinfo.read_text() if cpuinfo.exists() else "")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "machine": platform.machine(),
        "kind": cpu_kind(platform.machine()),
        "cpu": info["model"] or platform.processor(),
        "freq_ghz": info["freq_ghz"],
        "flags": info["flags"],
        "threads": os.cpu_count() or 1,
        "blas": blas_info(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "system": platform.platform(),
        "load_average": [round(x, 2) for x in load],
        "l2_bytes": l2_bytes(),
    }
