"""Fitting synthetic samples with known answers, and the tag file they become."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

import hetsim
from hetsim.calibrate import LOCAL_TAG, Calibration, Sample, tag_text, write_tag
from hetsim.calibrate.parameters import Fitted, fit_parameters, fraction
from hetsim.calibrate.plan import CHAIN_LENGTH
from hetsim.calibrate.tagfile import PLACEHOLDER
from hetsim.target import Target, add_tag_dir, remove_tag_dir

MACHINE = {
    "machine": "x86_64",
    "kind": "x86-cpu",
    "cpu": "Synthetic CPU",
    "freq_ghz": 2.5,
    "flags": ["sse2", "avx", "fma"],
    "threads": 2,
    "blas_threads_modelled": 2,
    "blas": [{"internal_api": "openblas", "version": "0.3", "num_threads": 2}],
    "numpy": "2",
    "load_average": [0.0, 0.0, 0.0],
}
LATENCY_US = 2.0  # every tiny kernel but conv's
CONV_EXTRA_US = 7.0  # a tiny conv: 9 µs
PEAK_FLOPS_PER_US = 2 * 2.5 * 32 * 1e3  # 2 threads × 2.5 GHz × 32 flop/cycle
RATES = {"matmul": 80e3, "conv": 40e3, "elementwise": 4e3, "reduction": 2e3, "normalization": 1e3}
BYTES_PER_US = 20e3  # 20 GB/s
GEMV_SHARE = 0.5  # matrix-vector products stream at half the Add bandwidth
STEP_US = 1.5  # one eager loop step, on top of the Relu kernel


def _sample(
    probe: str, group: str, flops: float, us: float, nbytes: float = 0.0, kernel_class: str = ""
) -> Sample:
    us_samples = (us, us * 1.5, us)  # median: us
    return Sample(probe, group, 2, flops, nbytes, us_samples, kernel_class or group)


def _samples() -> list[Sample]:
    samples = [
        _sample("Relu 4", "tiny", 4, LATENCY_US, kernel_class="elementwise"),
        _sample("Add 4", "tiny", 4, 1.0, kernel_class="elementwise"),
        _sample("Sigmoid 4", "tiny", 4, 3.0, kernel_class="elementwise"),
        _sample("Conv 1x2x4x4", "tiny", 4, LATENCY_US + CONV_EXTRA_US, kernel_class="conv"),
    ]
    for group, rate in RATES.items():
        fixed_us = LATENCY_US + (CONV_EXTRA_US if group == "conv" else 0.0)
        name = "Relu" if group == "elementwise" else group  # elementwise: Relu's rate only
        for flops in (1e5, 1e6, 1e7):
            samples.append(_sample(f"{name} {flops:g}", group, flops, fixed_us + flops / rate))
    for elements in (1 << 20, 1 << 21, 1 << 22):
        nbytes = 12.0 * elements
        samples.append(
            _sample(
                f"Add {elements}",
                "elementwise",
                elements,
                LATENCY_US + nbytes / BYTES_PER_US,
                nbytes,
            )
        )
    for rows in (1024, 4096):
        nbytes = 4.0 * rows * 4096
        us = LATENCY_US + nbytes / (BYTES_PER_US * GEMV_SHARE)
        samples.append(_sample(f"Gemm {rows}", "stream.matmul", 2 * rows * 4096, us, nbytes))
    loop_us = CHAIN_LENGTH * (LATENCY_US + STEP_US)
    samples.append(_sample(f"eager chain {CHAIN_LENGTH}", "loop", 0.0, loop_us))
    samples.append(_sample("Relu 4", "loop-kernel", 4, LATENCY_US, kernel_class="elementwise"))
    return samples


@pytest.fixture
def calibration() -> Calibration:
    return Calibration(MACHINE, "quick", tuple(_samples()), fit_parameters(MACHINE, _samples()))


@pytest.fixture
def local_dir(tmp_path: Path, calibration: Calibration) -> Iterator[Path]:
    write_tag(calibration, tmp_path / f"{LOCAL_TAG}.yaml")
    add_tag_dir(tmp_path)
    yield tmp_path
    remove_tag_dir(tmp_path)


def test_fit_recovers_the_synthetic_machine(calibration: Calibration) -> None:
    values = {name: f.value for name, f in calibration.fitted.items()}
    assert values["kernel_latency_us"] == LATENCY_US  # elementwise, the cheapest: median 2, 1, 3
    assert values["op_latency_us.conv"] == CONV_EXTRA_US
    assert values["op_latency_us.elementwise"] == 0.0
    assert values["op_latency_us.matmul"] == 0.0  # not probed
    assert values["cores"] == 2
    assert values["flops_per_cycle"] == 32.0
    assert values["mem_bandwidth_gbps"] == pytest.approx(20.0, rel=1e-3)
    for group, rate in RATES.items():  # elementwise: the Relu probes, not the Add ones
        assert values[f"efficiency.{group}"] == pytest.approx(rate / PEAK_FLOPS_PER_US, abs=1e-4)
    assert values["dispatch_us"] == pytest.approx(STEP_US / 3)
    assert values["mem_efficiency.matmul"] == pytest.approx(GEMV_SHARE, abs=1e-4)
    assert "mem_efficiency.conv" not in values  # not probed: the schema's 1


def test_every_fitted_value_says_how(calibration: Calibration) -> None:
    assert all(f.how for f in calibration.fitted.values())
    assert calibration.fitted["efficiency.conv"].how.startswith("median over 3 probes")


def test_tag_file_parses_as_the_local_tag(local_dir: Path, calibration: Calibration) -> None:
    target = Target(LOCAL_TAG)
    host = target.host.attrs
    fitted = calibration.fitted
    assert target.kind == "hetero"
    assert target.host.kind == "x86-cpu"
    assert host["kernel_latency_us"] == fitted["kernel_latency_us"].value
    assert host["mem_bandwidth_gbps"] == fitted["mem_bandwidth_gbps"].value
    assert host["efficiency"]["conv"] == fitted["efficiency.conv"].value
    assert host["efficiency"]["other"] == fitted["efficiency.elementwise"].value
    assert host["op_latency_us"]["conv"] == CONV_EXTRA_US
    assert host["op_latency_us"]["reduction"] == 0.0
    assert host["mem_efficiency"]["matmul"] == fitted["mem_efficiency.matmul"].value
    assert host["mem_efficiency"]["conv"] == 1.0
    assert host["gemm_half_dim"]["conv"] == 0.0  # the synthetic convs carry no GEMM dims
    assert host["lowering"] == "numpy"  # hetsim's own kernels: scratch bytes count
    assert target.executor.attrs["dispatch_us"] == fitted["dispatch_us"].value
    assert (target.runtime.attrs["alloc_us"], target.runtime.attrs["free_us"]) == (0.0, 0.0)


def test_tag_round_trips_through_export(local_dir: Path) -> None:
    target = Target(LOCAL_TAG)
    assert Target(target.export()) == target


def test_tag_file_comments_each_value(calibration: Calibration) -> None:
    text = tag_text(calibration)
    for line in text.splitlines():
        if line.strip().startswith(("cores:", "mem_bandwidth_gbps:", "dispatch_us:", "conv:")):
            assert "  # " in line, line
    assert "BLAS: openblas 0.3 (2 threads, 2 used)" in text


def test_the_header_says_how_many_blas_threads_the_calibration_used(
    calibration: Calibration,
) -> None:
    # --threads 1 on 2 cores wrote "(2 threads)", the library's default, beside "cores: 1"
    machine = {**MACHINE, "blas_threads_modelled": 1}
    text = tag_text(dataclasses.replace(calibration, machine=machine))
    assert "BLAS: openblas 0.3 (2 threads, 1 used)" in text


def test_local_target_runs_every_op_on_the_host(local_dir: Path) -> None:
    result = hetsim.simulate("mlp", LOCAL_TAG, mode="timing")
    assert set(result.placement.values()) == {"host"}


def test_a_tiny_efficiency_is_written_as_fitted_and_reads_back(
    calibration: Calibration, tmp_path: Path
) -> None:
    # 4 decimals and a 1e-4 floor wrote 6.9e-05 as 0.0001 (45% off the rate in its comment);
    # written as 7e-05, YAML would read a string, which the schema refuses
    fitted = dict(calibration.fitted)
    fitted["efficiency.elementwise"] = Fitted(fraction(6.9e-05), "tiny")
    fitted["efficiency.reduction"] = Fitted(fraction(7e-05), "tiny, one digit")
    write_tag(dataclasses.replace(calibration, fitted=fitted), tmp_path / "tiny.yaml")
    add_tag_dir(tmp_path)
    try:
        efficiency = Target("tiny").host.attrs["efficiency"]
    finally:
        remove_tag_dir(tmp_path)
    assert (efficiency["elementwise"], efficiency["reduction"]) == (6.9e-05, 7e-05)


def test_a_relu_slower_than_a_chain_step_floors_dispatch_and_says_so() -> None:
    # 0.0 had been written with the arithmetic of a positive step, the floor unsaid
    samples = [s for s in _samples() if s.op_class != "loop"]
    loop_us = CHAIN_LENGTH * (LATENCY_US - 0.25)  # a step 0.25 µs below the Relu alone
    samples.append(_sample(f"eager chain {CHAIN_LENGTH}", "loop", 0.0, loop_us))
    dispatch = fit_parameters(MACHINE, samples)["dispatch_us"]
    assert dispatch.value == 0.0
    assert dispatch.how == (
        f"one step of the eager loop (1.75 us per op of a {CHAIN_LENGTH}-Relu chain, less the "
        "Relu kernel's 2 us) spread over the 3 VM instructions of a host op (ALLOC, CALL, FREE);"
        " the difference is -0.25 us, below 0: floored at 0"
    )


def test_every_value_in_the_tag_carries_a_comment(calibration: Calibration) -> None:
    # the placeholder device's `memory_gib: 0` and `ops: []` had none
    for line in tag_text(calibration).splitlines():
        key, _, value = line.strip().removeprefix("- ").partition(":")
        if key.startswith("#") or key in {"description", "kind", "model", "name"}:
            continue  # the header, and names: not values
        if value.strip() and not value.strip().startswith("#"):  # not a heading (`efficiency:`)
            assert "  # " in value, line


def test_the_placeholder_device_runs_no_op_and_gets_no_idle_note(local_dir: Path) -> None:
    # named `idle`, it read as the breakdown's idle category, and every run on `local` said
    # "idle runs none of the 5 ops: no Gemm in its ops (3), ...", of a device that runs none
    result = hetsim.simulate("mlp", LOCAL_TAG, mode="timing")
    assert sorted(result.processors) == ["host", PLACEHOLDER]
    assert set(result.placement.values()) == {"host"}
    assert "placement_notes" not in result.to_dict()["extra"]
