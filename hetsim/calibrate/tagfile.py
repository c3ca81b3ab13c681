"""The ``local`` tag file: a calibration written as a hetero target, one comment per value.

Owns the file's layout: a ``hetero`` level whose host is this machine's CPU kind with the fitted
parameters, whose VM pays the fitted per-instruction cost, and whose one device, the
`PLACEHOLDER`, runs no op (a ``hetero`` level needs a device; `hetsim.execute` runs every op on
the calling CPU, so the model runs every op on the host, as ``CALL``: the CPU as the device
would have the VM launch each op and overlap its dispatch with the kernel, which the eager loop
never does). Where the file goes by default is the CLI's choice.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from pathlib import Path

import yaml

from hetsim.calibrate.parameters import Fitted
from hetsim.calibrate.run import Calibration
from hetsim.kernels import OP_CLASSES

__all__ = ["LOCAL_TAG", "PLACEHOLDER", "tag_text", "write_tag"]

LOCAL_TAG = "local"
"""The tag name of a calibration (the file ``local.yaml`` in a tag folder)."""
PLACEHOLDER = "placeholder"
"""The name of the tag's one device, which runs no op: a run's note that it runs none and its
idle time in the breakdown name it so (it was ``idle``, the name of the breakdown's category)."""

HOST_ATTRIBUTES = (
    "cores",
    "freq_ghz",
    "flops_per_cycle",
    "mem_bandwidth_gbps",
    "kernel_latency_us",
)


def _scalar(text: str) -> str:
    """`text` as one line of YAML that reads back as the same string (yaml quotes what it must)."""
    dumped = str(yaml.safe_dump(text, width=math.inf, allow_unicode=True)).removesuffix("...\n")
    if dumped.count("\n") > 1:  # a line break, folded over lines: double quotes escape it
        dumped = str(yaml.safe_dump(text, default_style='"', width=math.inf, allow_unicode=True))
    return dumped.rstrip("\n")


def _line(indent: int, key: str, value: object, how: str) -> str:
    return f"{' ' * indent}{key}: {_number(value)}  # {how}"


def _number(value: object) -> str:
    """`value` as YAML reads it back: a float in exponent form gets a point (YAML reads ``7e-05``
    as a string, ``7.0e-05`` as a number).

    >>> _number(7e-05), _number(0.000138), _number(1.5), _number(3)
    ('7.0e-05', '0.000138', '1.5', '3')
    """
    text = str(value)
    if isinstance(value, float) and "e" in text and "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def _table(fitted: Mapping[str, Fitted], name: str, note: str) -> list[str]:
    """The host's `name` mapping: one line per op class fitted as ``<name>.<class>``, or none."""
    rows = [
        _line(4, c, fitted[f"{name}.{c}"].value, fitted[f"{name}.{c}"].how)
        for c in OP_CLASSES
        if f"{name}.{c}" in fitted
    ]
    if not rows:
        return []
    return [f"  {name}:" + (f"  # {note}" if note else ""), *rows]


def tag_text(calibration: Calibration) -> str:
    """The YAML text of the ``local`` tag for `calibration`.

    Examples
    --------
    >>> from hetsim.calibrate.parameters import Fitted
    >>> names = ("cores", "freq_ghz", "flops_per_cycle", "mem_bandwidth_gbps",
    ...          "kernel_latency_us", "dispatch_us", "efficiency.matmul", "efficiency.conv",
    ...          "efficiency.elementwise")
    >>> cal = Calibration({"kind": "x86-cpu", "cpu": "Chip", "blas": []}, "quick",
    ...     (), {n: Fitted(1, "given") for n in names})
    >>> text = tag_text(cal)
    >>> "kind: hetero" in text, "  kind: x86-cpu" in text, "    matmul: 1  # given" in text
    (True, True, True)
    """
    fitted = calibration.fitted
    machine = calibration.machine
    # a CPU model name is free text (": ", "#", a leading "*", "yes"): quoted where YAML needs it
    cpu = _scalar(str(machine.get("cpu", "")))
    about = _scalar(
        f"this machine ({machine.get('cpu', '')}), calibrated with hetsim's own kernels"
    )
    # its own thread count is the library's default; the calibration ran with `modelled`
    modelled = machine.get("blas_threads_modelled")
    ran = f", {modelled} used" if modelled is not None else ""
    blas = ", ".join(
        f"{b.get('internal_api')} {b.get('version')} ({b.get('num_threads')} threads{ran})"
        for b in machine.get("blas", [])
    )
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# This machine, calibrated by `hetsim calibrate` ({calibration.plan}) on {when}.",
        f"# CPU: {cpu} ({machine.get('machine')}), {machine.get('threads')} "
        f"threads; BLAS: {blas or 'none found'}; numpy {machine.get('numpy')}.",
        f"# Load average while measuring: {machine.get('load_average')}.",
        "# Each value says how it was measured and fitted; the raw samples are in the JSON",
        "# that `hetsim calibrate --json` writes. Models `hetsim.execute` on this machine.",
        f"description: {about}",
        "kind: hetero",
        "executor:",
        "  kind: vm",
        _line(2, "dispatch_us", fitted["dispatch_us"].value, fitted["dispatch_us"].how),
        "runtime:",
        "  kind: cpp",
        "  alloc_us: 0.0  # numpy allocates inside each kernel: measured as kernel time",
        "  free_us: 0.0  # freeing is dropping a reference: part of the dispatch step",
        "host:",
        f"  kind: {machine.get('kind', 'x86-cpu')}",
        f"  model: {cpu}",
        "  lowering: numpy  # hetsim's own kernels: their scratch and further numpy calls count",
    ]
    lines += [_line(2, n, fitted[n].value, fitted[n].how) for n in HOST_ATTRIBUTES]
    lines.append("  efficiency:")
    elementwise = fitted["efficiency.elementwise"].value
    for op_class in OP_CLASSES:
        entry = fitted.get(f"efficiency.{op_class}")
        if entry is None:
            lines.append(_line(4, op_class, elementwise, "not probed: elementwise's"))
        else:
            lines.append(_line(4, op_class, entry.value, entry.how))
    lines += _table(fitted, "mem_efficiency", "classes not listed: 1, the full bandwidth")
    lines += _table(fitted, "op_latency_us", "")
    lines += _table(fitted, "gemm_half_dim", "classes not listed: 0, no loss on thin GEMMs")
    lines += [
        "devices:",
        f"  - name: {PLACEHOLDER}  # a hetero level needs a device: this one runs no op, so "
        "every op runs on the host, as in the eager loop; its 'runs none of the ops' note and "
        "its idle time are expected",
        f"    kind: {machine.get('kind', 'x86-cpu')}",
        "    ops: []  # none: hetsim.execute runs every op on the calling CPU, synchronously",
        "    memory_gib: 0  # it holds no tensor: none of the model's data is placed here",
        "",
    ]
    return "\n".join(lines)


def write_tag(calibration: Calibration, path: str | Path) -> Path:
    """Write `calibration`'s tag text to `path` (folders made as needed); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tag_text(calibration))
    return path
