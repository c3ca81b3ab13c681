"""A calibration made without measuring, for tests of what is done with one (the tag file, the
command that writes it)."""

from __future__ import annotations

from hetsim.calibrate import Calibration
from hetsim.calibrate.parameters import Fitted

FITTED = (
    "cores",
    "freq_ghz",
    "flops_per_cycle",
    "mem_bandwidth_gbps",
    "kernel_latency_us",
    "dispatch_us",
    "efficiency.elementwise",
)
"""The parameters a tag file needs fitted."""


def synthetic(plan: str, cpu: str = "Synthetic CPU") -> Calibration:
    """A calibration of `plan` on an x86 CPU named `cpu`: every fitted value 1."""
    machine = {"kind": "x86-cpu", "cpu": cpu, "machine": "x86_64", "blas": []}
    return Calibration(machine, plan, (), {name: Fitted(1, "given") for name in FITTED})
