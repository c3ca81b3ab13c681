"""The dispatch benchmark: slopes against the cost model by hand, rows, table, CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import hetsim.calibrate.benchreport as benchreport
from hetsim.calibrate import VARIANTS, bench_dispatch, platform_tags
from hetsim.calibrate.bench import bench_row, fanout_graph
from hetsim.calibrate.benchreport import bench_table, plot_bench
from hetsim.calibrate.fit import fit_line
from hetsim.cli import bench as bench_cli
from hetsim.target import add_tag_dir, remove_tag_dir
from tests.figures import keep_figures

# A host that runs every op itself: per chain op the VM pays ALLOC, CALL and FREE (3 × 1.0 µs of
# dispatch), 0.5 µs to allocate, 0.25 µs to free: its per-op overhead; each CALL then runs the
# kernel, its 2.0 µs fixed latency (its compute and memory terms are ~1e-8 µs at these rates).
HOST_ONLY = """kind: hetero
host: {kind: x86-cpu, kernel_latency_us: 2.0, mem_bandwidth_gbps: 1000000, flops_per_cycle: 1000000}
executor: {kind: vm, dispatch_us: 1.0}
runtime: {kind: cpp, alloc_us: 0.5, free_us: 0.25}
devices: [{name: idle, kind: x86-cpu, ops: [], memory_gib: 0}]
"""
PER_OP_US = 3 * 1.0 + 0.5 + 0.25
KERNEL_US = 2.0


@pytest.fixture
def host_only(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "host-only.yaml").write_text(HOST_ONLY)
    add_tag_dir(tmp_path)
    yield "bench/host-only"
    remove_tag_dir(tmp_path)


def test_vm_per_op_slope_matches_the_cost_model(host_only: str) -> None:
    row = bench_row(host_only, VARIANTS["vm"], "chain", (1, 10, 100))
    assert row.ops == (1, 10, 100)
    assert row.per_op_us == pytest.approx(PER_OP_US, rel=1e-6)
    assert row.kernel_per_op_us == pytest.approx(KERNEL_US, rel=1e-6)
    slope = fit_line(row.ops, row.later_us).slope
    assert row.per_op_us + row.kernel_per_op_us == pytest.approx(slope, rel=1e-12)
    # beyond N ops: the RET (1.0), less the FREE the last op's output never gets (1.0 + 0.25)
    assert row.fixed_us == pytest.approx(1.0 - 1.25, abs=1e-6)
    assert row.processor == "host"
    assert row.capture_per_op_us == 0.0


def test_fanout_counts_the_final_sum_and_fits_over_its_branches(host_only: str) -> None:
    row = bench_row(host_only, VARIANTS["vm"], "fanout", (1, 10))
    assert row.ops == (2, 11)
    assert [op.type for op in fanout_graph(2).ops] == ["Relu", "Relu", "Sum"]
    # each branch costs what a chain op does; the Sum is paid once, in the fixed cost: its
    # ALLOC (1.0 + 0.5) and CALL (1.0 + 2.0), and the RET (1.0)
    assert row.per_op_us == pytest.approx(PER_OP_US, rel=1e-6)
    assert row.fixed_us == pytest.approx(1.5 + 3.0 + 1.0, rel=1e-6)


# A host whose Relu takes time by its memory: e float32 elements take LATENCY + 8e B / 8000 B/µs
# (the compute term is ~1e-6 of that).
HOST_CPU = """kind: hetero
host: {{kind: x86-cpu, kernel_latency_us: {latency}, mem_bandwidth_gbps: 8,
       flops_per_cycle: 1000000}}
executor: {executor}
runtime: {{kind: cpp, alloc_us: 0.5, free_us: 0.25}}
devices: [{{name: idle, kind: x86-cpu, ops: [], memory_gib: 0}}]
"""


def host_cpu(
    tmp_path: Path, latency_us: float = 1.0, executor: str = "{kind: vm, dispatch_us: 1.0}"
) -> str:
    """HOST_CPU with `latency_us` and `executor`, as a target file."""
    path = tmp_path / f"host-cpu-{latency_us}.yaml"
    path.write_text(HOST_CPU.format(latency=latency_us, executor=executor))
    return str(path)


@pytest.mark.parametrize("latency_us", [1.0, 5.0])
def test_a_hosts_own_kernel_time_is_not_dispatch_overhead(
    tmp_path: Path, latency_us: float
) -> None:
    # each CALL runs its Relu (the latency and 32 B at 8 GB/s) between two dispatches: the slope
    # grows with it, the overhead does not (arm-riscv-soc's vm read 3.2 µs, 7.2 with a 5 µs host
    # kernel latency)
    row = bench_row(host_cpu(tmp_path, latency_us), VARIANTS["vm"], "chain", (1, 10, 100))
    assert row.per_op_us == pytest.approx(PER_OP_US, rel=1e-9)
    assert row.kernel_per_op_us == pytest.approx(latency_us + 32 / 8000, rel=1e-9)


def test_a_hosts_crossover_is_where_its_kernel_reaches_the_overhead(tmp_path: Path) -> None:
    # 1.0 + 8e / 8000 = 3.75 µs at e = 2750 elements (the slope with the kernel, 4.754, gave 3754)
    row = bench_row(host_cpu(tmp_path), VARIANTS["vm"], "chain", (1, 10, 100))
    assert row.crossover_elements == 2750


def test_a_fanouts_sum_reading_one_more_input_is_not_overhead(tmp_path: Path) -> None:
    # each branch adds one 16 B input to the Sum's reads, 0.002 µs at 8 GB/s: the Sum's time
    tag = host_cpu(tmp_path)
    chain, fanout = (bench_row(tag, VARIANTS["vm"], s, (1, 10, 100)) for s in ("chain", "fanout"))
    assert fanout.per_op_us == pytest.approx(PER_OP_US, rel=1e-9)
    assert fanout.kernel_per_op_us == pytest.approx(chain.kernel_per_op_us + 16 / 8000, rel=1e-9)
    assert fanout.crossover_elements == chain.crossover_elements == 2750


def test_dispatch_shorter_than_any_kernel_never_dominates(tmp_path: Path) -> None:
    # a graph executor's node (0.5 µs) is less than the host kernel's latency alone (1.0 µs);
    # the crossover had been the kernel's own time, 1.504 µs, reached at 504 elements
    tag = host_cpu(tmp_path, executor="{kind: graph, node_us: 0.5}")
    row = bench_row(tag, VARIANTS["graph"], "chain", (1, 10))
    assert row.per_op_us == pytest.approx(0.5, rel=1e-9)
    assert row.crossover_elements == 0
    assert bench_table([row]).splitlines()[1].split()[-1] == "never"


def test_device_kernels_behind_the_hosts_dispatch_stay_out_of_the_kernel_time(gpu: str) -> None:
    # ALLOC (1.0 + 0.5), LAUNCH (1.0 + 3.0), FREE (1.0 + 0.25) per op on the host: the GPU runs
    # each 2.0 µs kernel on its stream meanwhile, so the slope is the host's alone
    row = bench_row(gpu, VARIANTS["vm"], "chain", (1, 10, 100))
    assert row.per_op_us == pytest.approx(1.5 + 4.0 + 1.25, rel=1e-9)
    assert row.kernel_per_op_us == 0.0


def test_a_crossover_at_an_exact_tie_is_the_tie() -> None:
    # x86-h100's graph executor: (3.34 − 1.06) µs × 3.35e6 B/µs / 8 B = 954 750 elements; the
    # slope fitted here, 3.340000000000008, had given 954 751
    row = bench_row("x86-h100", VARIANTS["graph"], "chain", (1, 10, 100))
    assert row.crossover_elements == 954750


def test_levels_the_tag_lacks_are_not_applicable(host_only: str) -> None:
    rows = bench_dispatch([host_only], (1, 10))
    notes = {(r.variant, r.shape): r.note for r in rows}
    assert notes[("nested", "chain")] == "n/a for this tag"
    assert notes[("cuda-graph", "fanout")] == "n/a for this tag"
    assert len(rows) == len(VARIANTS) * 2


def test_platform_tags_are_the_shipped_platforms() -> None:
    tags = platform_tags()
    assert {"arm-riscv-soc", "x86-h100"} <= set(tags)
    assert "nvidia/h100" not in tags  # a device, not a platform


def test_cli_prints_json_with_machine_and_raw_makespans(
    host_only: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    bench_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["bench", "dispatch", "--target", host_only, "--ops", "1,10", "--json"]
    )
    assert args.func(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ops"] == [1, 10]
    assert "blas" in data["machine"]
    vm = next(r for r in data["rows"] if r["variant"] == "vm" and r["shape"] == "chain")
    assert vm["makespan_us"][1] - vm["makespan_us"][0] == pytest.approx(9 * (PER_OP_US + KERNEL_US))
    assert vm["kernel_per_op_us"] == pytest.approx(KERNEL_US)


def test_cli_says_never_in_the_table_and_0_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    bench_cli.register(parser.add_subparsers(dest="command"))
    tag = host_cpu(tmp_path, executor="{kind: graph, node_us: 0.5}")
    argv = ["bench", "dispatch", "--target", tag, "--ops", "1,10"]
    for extra in ([], ["--json"]):
        args = parser.parse_args(argv + extra)
        assert args.func(args) == 0
    table, json_text = capsys.readouterr().out.split("\n{", 1)
    line = next(line for line in table.splitlines() if line.split()[1:3] == ["graph", "chain"])
    assert line.split()[-1] == "never"
    data = json.loads("{" + json_text)
    graph = next(r for r in data["rows"] if r["variant"] == "graph" and r["shape"] == "chain")
    assert graph["crossover_elements"] == 0


def test_ops_option_rejects_a_single_count() -> None:
    import argparse

    with pytest.raises(
        argparse.ArgumentTypeError,
        match=r"^expected comma-separated positive integers, got '0' in '0,5'$",
    ):
        bench_cli.parse_ops("0,5")


def test_ops_option_rejects_counts_that_are_all_one() -> None:
    # the benchmark fits a line through the counts: one distinct count has no slope
    import argparse

    message = r"^expected two or more distinct op counts \(1,10,100\), got '5,05'$"
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        bench_cli.parse_ops("5,05")


# A GPU whose kernels do no measurable work: a replayed node costs graph_node_us (0.75), its
# capture capture_node_us (3.0) and instantiate_node_us (1.0).
GPU = """kind: hetero
host: {kind: x86-cpu}
executor: {kind: vm, dispatch_us: 1.0}
runtime: {kind: cpp, alloc_us: 0.5, free_us: 0.25}
devices:
  - {name: gpu0, kind: cuda, kernel_latency_us: 2.0, launch_us: 3.0, graph_node_us: 0.75,
     capture_node_us: 3.0, instantiate_node_us: 1.0, mem_bandwidth_gbps: 1000000,
     flops_per_cycle: 1000000}
"""


@pytest.fixture
def gpu(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "gpu.yaml").write_text(GPU)
    add_tag_dir(tmp_path)
    yield "bench/gpu"
    remove_tag_dir(tmp_path)


def test_cuda_graph_per_op_is_what_a_replay_pays(gpu: str) -> None:
    # a first run less its capture still paid the host's ALLOC, LAUNCH and FREE of every op
    # (1.5 + 1.0 + 1.25) beside the node: 4.5 µs, where a replay pays the node's 0.75
    # from 10 ops on, the nodes outlast the host's work before them (at 1 they hide behind it)
    row = bench_row(gpu, VARIANTS["cuda-graph"], "chain", (10, 100, 1000))
    assert row.processor == "gpu0"
    assert row.per_op_us == pytest.approx(0.75, rel=1e-6)
    assert row.capture_per_op_us == pytest.approx(3.0 + 1.0, rel=1e-6)
    assert row.crossover_elements == 0  # a node's 0.75 µs, under any kernel's 2.0 µs latency


def test_a_fitted_figure_of_float_rounding_alone_is_zero() -> None:
    # cuda's replays of 1 and 2 ops take the same time: the slope read -6.28e-16 µs per op,
    # which the table printed as a negative overhead
    row = bench_row("cuda", VARIANTS["cuda-graph"], "chain", (1, 2))
    assert row.later_us[0] == row.later_us[1]
    assert row.per_op_us == 0.0
    assert row.fixed_us == pytest.approx(row.later_us[0], rel=1e-12)
    table = bench_table([row])
    assert "e-1" not in table, table


def test_cuda_graph_row_keeps_the_replays_it_fits(gpu: str) -> None:
    # the row kept only first runs: per_op_us could not be found from its own makespans, and
    # the plot drew first runs less capture (slope 4.5 here, 2.37 on x86-h100)
    row = bench_row(gpu, VARIANTS["cuda-graph"], "chain", (10, 100, 1000))
    # the replays: each op's node, 0.75 µs (a fit of later_us against per_op_us could not fail:
    # bench_row fits per_op_us from later_us)
    assert np.diff(row.later_us) == pytest.approx(0.75 * np.diff(row.ops), rel=1e-6)
    first_slope = fit_line(row.ops, np.subtract(row.makespan_us, row.capture_us)).slope
    assert first_slope == pytest.approx(1.5 + 1.0 + 1.25 + 0.75, rel=1e-6)
    data = json.loads(json.dumps(row.to_dict()))
    assert data["later_us"] == list(row.later_us)
    assert data["makespan_us"] == list(row.makespan_us)


def test_plot_draws_what_the_table_fits(
    gpu: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = keep_figures(monkeypatch, benchreport)
    rows = [bench_row(gpu, VARIANTS[v], "chain", (10, 100, 1000)) for v in ("vm", "cuda-graph")]
    plot_bench(rows, tmp_path / "bench.png")
    (axes,) = figures[0].axes
    drawn = {line.get_label(): list(line.get_ydata()) for line in axes.get_lines()}
    assert drawn == {
        f"{gpu} vm": list(rows[0].later_us),
        f"{gpu} cuda-graph": list(rows[1].later_us),
    }
    assert rows[0].later_us == rows[0].makespan_us  # nothing captured: later runs are the first
