"""Reading the machine description."""

from __future__ import annotations

import pytest

from hetsim.calibrate.machine import cpu_info, cpu_kind, describe_machine

CPUINFO = """processor : 0
model name : Example CPU 9000
cpu MHz : 2400.000
flags : fpu sse2 avx fma avx2

processor : 1
model name : Example CPU 9000
cpu MHz : 3100.500
flags : fpu sse2 avx fma avx2
"""


def test_cpu_info_takes_the_model_the_fastest_core_and_the_flags() -> None:
    assert cpu_info(CPUINFO) == {
        "model": "Example CPU 9000",
        "freq_ghz": 3.1005,
        "flags": ["avx", "avx2", "fma", "fpu", "sse2"],
    }


def test_cpu_info_without_a_clock() -> None:
    assert cpu_info("Features : fp asimd\n") == {
        "model": "",
        "freq_ghz": None,
        "flags": ["asimd", "fp"],
    }


@pytest.mark.parametrize(
    ("machine", "kind"),
    [
        ("x86_64", "x86-cpu"),
        ("aarch64", "arm-cpu"),
        ("arm64", "arm-cpu"),
        ("riscv64", "riscv-cpu"),
        ("sparc", "x86-cpu"),
    ],
)
def test_cpu_kind(machine: str, kind: str) -> None:
    assert cpu_kind(machine) == kind


def test_describe_machine_records_threads_and_blas() -> None:
    machine = describe_machine()
    assert machine["threads"] >= 1
    assert machine["kind"] in ("x86-cpu", "arm-cpu", "riscv-cpu")
    assert all({"internal_api", "num_threads", "version"} <= set(b) for b in machine["blas"])
