"""The dispatch benchmark's levels: the root executor each one runs, and the device it chooses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsim.calibrate import VARIANTS, bench_dispatch
from hetsim.calibrate.bench import BenchRow, Variant, bench_row

# A host that runs every op itself, its root level run by a graph executor; the nested level
# makes the tag a platform with a `nested` row.
GRAPH_ROOT = """kind: hetero
host: {kind: x86-cpu, kernel_latency_us: 2.0, mem_bandwidth_gbps: 1000000, flops_per_cycle: 1000000}
executor: {kind: graph, node_us: 0.5}
runtime: {kind: cpp, alloc_us: 0.5, free_us: 0.25}
devices:
  - {name: co, kind: hetero, host: riscv-cpu, executor: vm, runtime: cpp, devices: [{kind: npu}]}
"""
# The VM's default dispatch (0.27 µs) three times a chain op (ALLOC, CALL, FREE), the runtime's
# alloc and free (the CALL's kernel, 2.0 µs, is the op's own time): `test_bench.py`'s PER_OP_US
# at the default dispatch.
VM_PER_OP_US = 3 * 0.27 + 0.5 + 0.25
AS_WRITTEN = Variant("as-written", "the target unchanged", lambda t: True, lambda t: (t, {}))

NO_RELU_GPU = """kind: hetero
host: arm/cortex-a72
devices:
  - {tag: vendor/npu-subsystem, name: a}
  - {kind: cuda, name: gpu0, ops: [Gemm, Softmax]}
"""


def target_file(tmp_path: Path, text: str, name: str = "target.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def numbers(row: BenchRow) -> tuple[object, ...]:
    return (row.makespan_us, row.per_op_us, row.fixed_us, row.processor, row.note)


def test_vm_level_of_a_graph_root_runs_a_vm(tmp_path: Path) -> None:
    graph_root = target_file(tmp_path, GRAPH_ROOT)
    vm_root = target_file(
        tmp_path, GRAPH_ROOT.replace("{kind: graph, node_us: 0.5}", "vm"), "vm.yaml"
    )
    row = bench_row(graph_root, VARIANTS["vm"], "chain", (1, 10))
    assert row.per_op_us == pytest.approx(VM_PER_OP_US, rel=1e-6)
    assert numbers(row) == numbers(bench_row(vm_root, AS_WRITTEN, "chain", (1, 10)))
    assert row.per_op_us != bench_row(graph_root, VARIANTS["graph"], "chain", (1, 10)).per_op_us


@pytest.mark.parametrize("variant", ["vm", "graph"])
def test_a_root_already_run_by_the_level_keeps_its_own_settings(
    tmp_path: Path, variant: str
) -> None:
    written = (
        GRAPH_ROOT
        if variant == "graph"
        else GRAPH_ROOT.replace("graph, node_us", "vm, dispatch_us")
    )
    tag = target_file(tmp_path, written)
    for shape in ("chain", "fanout"):
        row = bench_row(tag, VARIANTS[variant], shape, (1, 10))
        assert numbers(row) == numbers(bench_row(tag, AS_WRITTEN, shape, (1, 10)))


def test_vm_level_of_a_root_whose_runtime_runs_no_vm_is_not_available(tmp_path: Path) -> None:
    tag = target_file(
        tmp_path, GRAPH_ROOT.replace("{kind: cpp, alloc_us: 0.5, free_us: 0.25}", "crt")
    )
    row = bench_row(tag, VARIANTS["vm"], "chain", (1, 10))
    assert (
        row.note
        == "not available: the root runtime 'crt' cannot run the 'vm' executor (it runs 'graph')"
    )
    assert row.makespan_us == ()


def test_devices_that_lack_the_benchmark_ops_are_passed_over(tmp_path: Path) -> None:
    tag = target_file(tmp_path, NO_RELU_GPU)
    rows = {(r.variant, r.shape): r for r in bench_dispatch([tag], (1, 10))}
    assert [rows[("vm", s)].processor for s in ("chain", "fanout")] == ["host", "host"]
    assert [rows[("graph", s)].processor for s in ("chain", "fanout")] == ["host", "host"]
    assert rows[("nested", "chain")].processor == "a/npu"
    assert not any("rules[" in r.note for r in rows.values())


def test_a_fanout_goes_to_the_first_device_that_also_runs_its_sum(tmp_path: Path) -> None:
    tag = target_file(
        tmp_path,
        """kind: hetero
host: arm/cortex-a72
devices:
  - {kind: cuda, name: gemm, ops: [Gemm]}
  - {kind: cuda, name: relu, ops: [Relu]}
  - {kind: cuda, name: both, ops: [Relu, Sum]}
""",
    )
    chain = bench_row(tag, VARIANTS["vm"], "chain", (1, 10))
    fanout = bench_row(tag, VARIANTS["vm"], "fanout", (1, 10))
    assert (chain.processor, fanout.processor) == ("relu", "both")


def test_no_root_device_running_the_ops_is_said_in_the_benchmarks_terms(tmp_path: Path) -> None:
    tag = target_file(
        tmp_path, NO_RELU_GPU.replace("arm/cortex-a72", "{tag: arm/cortex-a72, ops: [Gemm]}")
    )
    notes = {(r.variant, r.shape): r.note for r in bench_dispatch([tag], (1, 10))}
    tried = "tried gpu0 (no Relu in its ops), host (no Relu in its ops)"
    assert (
        notes[("vm", "chain")] == f"not available: no device of the root level runs Relu; {tried}"
    )
    assert notes[("graph", "fanout")] == (
        f"not available: no device of the root level runs Relu and Sum; {tried}"
    )
    assert notes[("cuda-graph", "fanout")] == (
        "not available: no GPU of the root level runs Relu and Sum; tried gpu0 (no Relu in its ops)"
    )


def nested_tag(tmp_path: Path, *ops: str) -> str:
    """A root with a nested level per entry of `ops` (co, co2, ...): each an NPU running those."""
    levels = "".join(
        f"""  - kind: hetero
    name: {f"co{index + 1}" if index else "co"}
    host: riscv/sifive-x280
    executor: graph
    runtime: crt
    devices: [{{tag: vendor/npu, name: npu, ops: [{npu_ops}]}}]
"""
        for index, npu_ops in enumerate(ops)
    )
    return target_file(tmp_path, f"kind: hetero\nhost: arm/cortex-a72\ndevices:\n{levels}")


@pytest.mark.parametrize("shape", ["chain", "fanout"])
def test_no_nested_level_running_relu_is_said_in_the_benchmarks_terms(
    tmp_path: Path, shape: str
) -> None:
    row = bench_row(nested_tag(tmp_path, "MatMul, Gemm, Conv"), VARIANTS["nested"], shape, (1, 10))
    assert row.note == "not available: no nested level runs Relu; tried co/npu (no Relu in its ops)"


def test_nested_level_is_the_first_that_runs_relu(tmp_path: Path) -> None:
    tag = nested_tag(tmp_path, "Conv", "Relu")
    assert bench_row(tag, VARIANTS["nested"], "chain", (1, 10)).processor == "co2/npu"


def test_a_nested_fanouts_sum_on_the_root_host_is_its_kernel_time() -> None:
    # arm-riscv-soc: the Relus run in vdevice0's NPU, the Sum on the root's A72, which reads one
    # more 16 B input per branch at 12.8 GB/s; the chain's kernels all run in the nested level
    chain, fanout = (
        bench_row("arm-riscv-soc", VARIANTS["nested"], shape, (1, 10, 100))
        for shape in ("chain", "fanout")
    )
    assert (chain.processor, fanout.processor) == ("vdevice0/npu", "vdevice0/npu")
    assert chain.kernel_per_op_us == 0.0
    assert fanout.kernel_per_op_us == pytest.approx(16 / 12800, rel=1e-9)
