"""The names TVM and hetsim give the same things: the tables both directions of TVM interop share.

This module owns the vocabulary of the mapping between apache-tvm (0.27) targets and hetsim
target specs:

- CPU families: TVM's ``llvm`` is ``arm-cpu``, ``riscv-cpu`` or ``x86-cpu`` by its ``mtriple``
  (`CPU_FAMILIES`), and each family has the one triple hetsim writes.
- Devices hetsim ships: an LLVM ``mcpu`` (`LLVM_CPUS`), a CUDA ``arch`` (`CUDA_ARCHS`) or a TVM
  tag name (`TVM_TAGS`) that names one becomes that hetsim tag (``cortex-a72`` is
  ``arm/cortex-a72``, ``sm_90a`` is ``nvidia/h100``, ``nvidia/nvidia-h100`` is ``nvidia/h100``);
  a TVM tag's own options (`TVM_TAG_OPTIONS`) are no overrides of it.
- Origins: written targets say where each node came from in TVM's ``model`` annotation,
  ``"hetsim:<tag>"`` or ``"hetsim:"`` for a plain kind (`MODEL_PREFIX`), so that tags survive a
  trip through TVM and plain kinds do not turn into tags.

It holds data only: `tvm_reader` reads TVM targets with these tables and `tvm_writer` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "BOARD_CPUS",
    "CPU_FAMILIES",
    "CUDA_ARCHS",
    "CUDA_TAG_L2_BYTES",
    "LLVM_CPUS",
    "MODEL_PREFIX",
    "TVM_TAGS",
    "TVM_TAG_OPTIONS",
    "CpuFamily",
    "CpuTag",
]

MODEL_PREFIX = "hetsim:"


@dataclass(frozen=True, slots=True)
class CpuFamily:
    """A hetsim CPU kind and the LLVM triples that select it.

    `prefixes` are the architecture parts of a triple (``aarch64`` in ``aarch64-linux-gnu``) that
    belong to the family; `triple` is the one hetsim writes, so a written target never depends on
    the machine TVM runs on.
    """

    kind: str
    prefixes: tuple[str, ...]
    triple: str

    def matches(self, triple: str) -> bool:
        """Whether `triple` names this family's architecture.

        >>> CPU_FAMILIES["arm-cpu"].matches("armv8l-linux-gnueabihf")
        True
        """
        return triple.split("-", 1)[0].startswith(self.prefixes)


CPU_FAMILIES: dict[str, CpuFamily] = {
    "arm-cpu": CpuFamily("arm-cpu", ("aarch64", "arm", "thumb"), "aarch64-linux-gnu"),
    "riscv-cpu": CpuFamily("riscv-cpu", ("riscv64", "riscv32"), "riscv64-unknown-linux-gnu"),
    "x86-cpu": CpuFamily("x86-cpu", ("x86_64", "i386", "i686"), "x86_64-linux-gnu"),
}


@dataclass(frozen=True, slots=True)
class CpuTag:
    """The hetsim tag an LLVM ``mcpu`` names, and the CPU kind (family) that tag is."""

    kind: str
    tag: str


# LLVM -mcpu name -> the shipped CPU tag of that core.
LLVM_CPUS: dict[str, CpuTag] = {
    "cortex-a53": CpuTag("arm-cpu", "arm/cortex-a53"),
    "cortex-a55": CpuTag("arm-cpu", "arm/cortex-a55"),
    "cortex-a72": CpuTag("arm-cpu", "arm/cortex-a72"),
    "cortex-a76": CpuTag("arm-cpu", "arm/cortex-a76"),
    "cortex-a78ae": CpuTag("arm-cpu", "arm/cortex-a78"),
    "cortex-a78": CpuTag("arm-cpu", "arm/cortex-a78"),
    "sifive-u74": CpuTag("riscv-cpu", "riscv/sifive-u74"),
    "sifive-x280": CpuTag("riscv-cpu", "riscv/sifive-x280"),
    "spacemit-x60": CpuTag("riscv-cpu", "riscv/spacemit-x60"),
    "sapphirerapids": CpuTag("x86-cpu", "x86/xeon-8480c"),
}
# TVM ``model`` (a board's SoC) -> the ``mcpu`` it implies, for a TVM tag that names no mcpu:
# TVM 0.27's ``arm/rasp3b`` gives model bcm2837 (the Raspberry Pi 3's SoC, 4 x Cortex-A53) and an
# armv7l triple only, and a real TVM target's export names no tag, so it read as a plain ARM CPU.
BOARD_CPUS: dict[str, str] = {
    "bcm2837": "cortex-a53",
    "bcm2711": "cortex-a72",  # the Raspberry Pi 4's (TVM's rasp4b tags give the mcpu too)
}
# CUDA -arch -> hetsim tag; sm_90 is shared by H100 and H200 and reads as the H100.
CUDA_ARCHS: dict[str, str] = {
    "sm_90a": "nvidia/h100",
    "sm_90": "nvidia/h100",
    "sm_87": "nvidia/orin-gpu",
    "sm_80": "nvidia/a100",
}
# hetsim tag -> the ``l2_cache_size_bytes`` its TVM 0.27 tag states: what tells its export from
# that of another GPU of the same arch (an A30's, sm_80 too, states none; the A100's 40 MiB).
CUDA_TAG_L2_BYTES: dict[str, int] = {"nvidia/h100": 52_428_800, "nvidia/a100": 41_943_040}
# TVM tag name -> hetsim tag for every TVM 0.27 tag whose device hetsim ships.
TVM_TAGS: dict[str, str] = {
    "nvidia/nvidia-h100": "nvidia/h100",
    "nvidia/nvidia-a100": "nvidia/a100",
    "nvidia/jetson-agx-orin-64gb": "jetson-agx-orin",
    "arm/rasp3b": "arm/cortex-a53",
    "arm/rasp4b": "arm/cortex-a72",
    "arm/rasp4b64": "arm/cortex-a72",
    "raspberry-pi/4b-aarch64": "arm/cortex-a72",
    "riscv/sifive-u74": "riscv/sifive-u74",
    "riscv/licheepi3a": "riscv/spacemit-x60",
}
# TVM tag name -> the options TVM 0.27 gives that tag, but those that only steer code generation:
# ``tvm.target.Target({"tag": name}).export()`` keeps the tag and repeats them.
_RASPI4_AARCH64 = {"mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72", "mattr": ["+neon"]}
TVM_TAG_OPTIONS: dict[str, dict[str, Any]] = {
    "nvidia/nvidia-h100": {"arch": "sm_90a"},
    "nvidia/nvidia-a100": {"arch": "sm_80"},
    "nvidia/jetson-agx-orin-64gb": {
        "arch": "sm_87",
        "host": {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a78",
                 "num-cores": 12},
    },
    "arm/rasp3b": {"mtriple": "armv7l-linux-gnueabihf", "mattr": ["+neon"]},
    "arm/rasp4b": {"mtriple": "armv8l-linux-gnueabihf", "mcpu": "cortex-a72", "mattr": ["+neon"]},
    "arm/rasp4b64": _RASPI4_AARCH64,
    "raspberry-pi/4b-aarch64": {
        **_RASPI4_AARCH64,
        "num-cores": 4,
        "host": {"kind": "llvm", **_RASPI4_AARCH64, "num-cores": 4},
    },
    "riscv/sifive-u74": {"mtriple": "riscv64-unknown-linux-gnu", "mcpu": "sifive-u74"},
    "riscv/licheepi3a": {"mtriple": "riscv64-unknown-linux-gnu", "mcpu": "spacemit-x60",
                         "num-cores": 8},
}  # fmt: skip
