"""CUDA-graph offload: regions, strategies, capture and replay, hand-computed and published.

Tiny-target parameters (tests/sim/tiny.py) plus round CUDA-graph costs (`GRAPH`):

- host: VM ``dispatch_us = 1``; runtime ``alloc_us = 0.5``, ``free_us = 0.25``.
- gpu0: ``kernel_latency_us = 3``, 2 GB/s (2000 B/µs), ``launch_us = 4``, ``sync_us = 2``;
  link 1 GB/s, ``latency_us = 10``; ``graph_launch_us = 2``, ``graph_node_us = 1``,
  ``capture_node_us = 5``, ``instantiate_us = 10``, ``instantiate_node_us = 1``,
  ``graph_node_bytes = 100``.
- x is float32[250] (1000 B): a Relu on gpu0 takes 3 + 2000/2000 = 4 µs eagerly, of which 1 µs
  is work; replayed it takes 4 − 3 + 1 = 2 µs; a copy takes 10 + 1000/1000 = 11 µs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from hetsim.api import platform_of, simulate
from hetsim.errors import SimulationError
from hetsim.ir import Graph, GraphBuilder, Op, TensorType
from hetsim.kernels import execute, propagate
from hetsim.models import load_model
from hetsim.report import Result, check_invariants
from hetsim.runtime import MNEMONICS, BranchShape, Launch, compile_vm, place
from hetsim.runtime.capture_regions import find_regions
from hetsim.runtime.cuda_graph import capture_program
from hetsim.sim import run_program
from hetsim.sim.capture import run_graph_program
from hetsim.sim.graphs import GraphCache
from tests.sim.tiny import device, graph, target

GRAPH = {
    "graph_launch_us": 2.0,
    "graph_node_us": 1.0,
    "capture_node_us": 5.0,
    "instantiate_us": 10.0,
    "instantiate_node_us": 1.0,
    "graph_node_bytes": 100,
}
TINY = target(device("gpu0", ["Relu"], **GRAPH))


def chain(n: int, size: int | str = 250) -> Graph:
    """`n` dependent Relus on x: float32[size]; the last output is the graph's."""
    names = ["x", *(f"a{i}" for i in range(1, n + 1))]
    ops = [Op("Relu", f"r{i}", (names[i - 1],), (names[i],)) for i in range(1, n + 1)]
    return Graph("chain", tuple(ops), {"x": TensorType((size,), "float32")}, (f"a{n}",))


def runs(
    model: Graph, tgt: Any, strategy: str, dims_list: list[Mapping[str, int]], **options: Any
) -> tuple[list[Result], GraphCache]:
    """Run `model` once per dims in `dims_list` with one graph cache; functional, traced."""
    platform = platform_of(tgt)
    program = compile_vm(model, platform, place(model, platform))
    rewritten = capture_program(program, platform, strategy, **options)
    cache = GraphCache()
    results = []
    for seed, dims in enumerate(dims_list):
        shape = tuple(dims.get(d, d) if isinstance(d, str) else d for d in model.inputs["x"].shape)
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        metas = propagate(model, dims, {"x": x})
        record = run_graph_program(rewritten, platform, metas, cache, dims=dims, inputs={"x": x})
        result = Result.from_record(record)
        assert check_invariants(result) == []
        np.testing.assert_array_equal(
            result.outputs[model.outputs[0]], execute(model, {"x": x})[model.outputs[0]]
        )
        results.append(result)
    return results, cache


# -- regions and strategies ------------------------------------------------------------------


def test_a_host_sync_splits_a_region() -> None:
    ops = (
        Op("Relu", "r1", ("x",), ("a",)),
        Op("Neg", "neg", ("a",), ("b",)),  # gpu0 runs Relu alone: Neg runs on the host
        Op("Relu", "r2", ("b",), ("c",)),
        Op("Relu", "r3", ("c",), ("d",)),
    )
    model = graph(*ops, outputs=("d",))
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    regions = find_regions(program, platform)
    assert [(r.id, r.start, r.stop, r.nodes, r.deferred) for r in regions] == [
        ("g0", 2, 5, 1, ()),
        # FREE b in host.mem (17) is host bookkeeping: it runs after the graph, no split
        ("g1", 14, 21, 2, (17,)),
    ]
    rewritten = capture_program(program, platform, "regions")
    assert rewritten.notes == ("g0 and g1 split by 'sync gpu0', 'call neg(a@host.mem)'",)
    assert [line[6:18].strip() for line in rewritten.listing().splitlines()][11:15] == [
        "COPY", "CUDA_GRAPH", "FREE", "ALLOC",
    ]  # fmt: skip
    whole = capture_program(program, platform, "whole")
    assert whole.regions == ()
    assert whole.notes == (
        "expected one capturable region, got 2 regions hold 3 of 3 kernels; g0 and g1 "
        "split by 'sync gpu0', 'call neg(a@host.mem)': it runs eagerly",
    )
    none = simulate(model, TINY)
    assert simulate(model, TINY, cuda_graph="whole").makespan_us == none.makespan_us
    split = simulate(model, TINY, cuda_graph="regions")
    assert split.record.extra["cuda_graph"]["captures"] == 2
    np.testing.assert_array_equal(split.outputs["d"], none.outputs["d"])


@pytest.mark.parametrize("strategy", ["regions", "buckets"])
def test_a_taken_branch_lands_where_it_points_in_the_rewritten_code(strategy: str) -> None:
    # the bound BRANCH_SHAPE kept its target in the VM code's numbering, which the rewritten
    # code (regions folded into CUDA_GRAPHs) no longer has: it jumped to the RET, and the run
    # skipped the second graph and returned a buffer nothing had written
    model = chain(4, "n")
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    code = list(program.code)
    third = [i for i, ins in enumerate(code) if isinstance(ins, Launch)][2]
    code.insert(third - 1, BranchShape("n", ">=", 1, third))  # always taken: to the next one
    program = dataclasses.replace(program, code=tuple(code))
    metas = propagate(model, {"n": 40})
    eager = run_program(program, platform, metas, dims={"n": 40}, is_functional=False)
    rewritten = capture_program(program, platform, strategy, buckets=(64,))
    x = np.random.default_rng(0).standard_normal(40).astype(np.float32)
    metas = propagate(model, {"n": 40}, {"x": x})
    record = run_graph_program(
        rewritten, platform, metas, GraphCache(), dims={"n": 40}, inputs={"x": x}
    )
    assert record.extra["cuda_graph"]["captures"] == 2
    np.testing.assert_array_equal(record.outputs["a4"], execute(model, {"x": x})["a4"])
    assert {s.name for s in record.spans} >= {"graph g0", "graph g1"}
    # the first call captures on top of the eager work (the jump past a graph came in under it)
    assert record.makespan_us > eager.makespan_us


def test_a_note_names_the_cross_stream_work_that_split_two_regions() -> None:
    # it named the first instruction between them, 'alloc neg0@gpu0.mem', which a graph holds
    b = GraphBuilder("g")
    x = b.input("x", (64, 64))
    joined = b.op("Add", b.op("Relu", b.op("Relu", x)), b.op("Neg", x))
    model = b.build(b.op("Relu", b.op("Relu", joined)))
    two_gpus = {
        "kind": "hetero", "host": "x86-cpu",
        "devices": [{"name": "gpu0", "kind": "cuda"}, {"name": "gpu1", "kind": "cuda"}],
    }  # fmt: skip
    rules = [{"op": "neg0", "device": "gpu1"}, {"op": "*", "device": "gpu0"}]
    result = simulate(
        model, two_gpus, mode="timing", partition="rules", rules=rules, cuda_graph="regions"
    )
    assert result.record.extra["cuda_graph_notes"] == [
        "g1 and g2 split by 'copy neg0 -> neg0@gpu0.mem', 'launch add0 after neg0@gpu0.mem'"
    ]


def test_a_branch_target_alone_splitting_two_regions_is_noted() -> None:
    # nothing lies between the two regions: the note's fallback raised an IndexError
    model = chain(4, "n")
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    code = list(program.code)
    third = [i for i, ins in enumerate(code) if isinstance(ins, Launch)][2]
    code.insert(0, BranchShape("n", "<", 0, third))  # never taken: lands on third's ALLOC
    program = dataclasses.replace(program, code=tuple(code))
    rewritten = capture_program(program, platform, "regions")
    assert [(r.start, r.stop) for r in rewritten.regions] == [(3, 9), (9, 15)]
    assert rewritten.notes == ("g0 and g1 split by a branch target at 9",)


def test_a_branch_target_on_a_free_after_the_last_launch_ends_the_region() -> None:
    # the FREEs after a region's last LAUNCH joined it without a look for branch targets: one
    # there fell inside the region, and capture_program raised KeyError renumbering the branch
    model = chain(2, "n")
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    code = list(program.code)
    first = next(i for i, ins in enumerate(code) if isinstance(ins, Launch))
    assert MNEMONICS[type(code[first + 1])] == "FREE"  # x@gpu0.mem, after r1 read it
    code.insert(0, BranchShape("n", "<", 0, first + 2))  # never taken: lands on that FREE
    program = dataclasses.replace(program, code=tuple(code))
    regions = find_regions(program, platform)
    assert all(not r.start < first + 2 < r.stop for r in regions)
    rewritten = capture_program(program, platform, "regions")
    x = np.arange(-20, 20, dtype=np.float32)
    metas = propagate(model, {"n": 40}, {"x": x})
    record = run_graph_program(
        rewritten, platform, metas, GraphCache(), dims={"n": 40}, inputs={"x": x}
    )
    assert record.extra["cuda_graph"]["captures"] == len(rewritten.regions) == 2
    np.testing.assert_array_equal(record.outputs["a2"], np.maximum(x, 0))


def test_an_unknown_strategy_is_an_error() -> None:
    with pytest.raises(
        SimulationError,
        match=r"^cuda_graph: expected one of buckets, none, regions, whole, got 'region' "
        r"\(did you mean 'regions'\?\)$",
    ):
        simulate(chain(2), TINY, cuda_graph="region")


def test_bad_buckets_are_an_error() -> None:
    with pytest.raises(
        SimulationError, match=r"^buckets: expected increasing positive integers, got \(64, 32\)$"
    ):
        simulate(chain(2), TINY, cuda_graph="buckets", buckets=(64, 32))


# -- capture and replay, exactly -------------------------------------------------------------


@pytest.mark.parametrize("n", [4, 8, 80])
def test_n_tiny_kernels_eager_capture_and_replay(n: int) -> None:
    model = chain(n)
    (eager,), _ = runs(model, TINY, "none", [{}])
    (first, replay), cache = runs(model, TINY, "regions", [{}, {}])
    # eager: ALLOC x@gpu0 1.5, COPY 1 + 4 (the copy ends at 6.5 + 11 = 17.5); per op ALLOC 1.5,
    # LAUNCH 1 + 4, FREE 1.25 = 7.75 (host-bound: a kernel takes 4); then ALLOC 1.5 + COPY 5,
    # the copy back (11) after the last kernel, SYNC 2 after it, RET 1.
    assert eager.makespan_us == 6.5 + 7.75 * n + 6.5 + 11 + 2 + 1
    # capture: the CUDA_GRAPH instruction's dispatch 1 (paid however it runs); per op ALLOC
    # 1.5, dispatch 1 + capture 5, FREE 1.25 = 8.75; instantiate 10 + n; graph launch 2; nodes
    # of 2 µs each; the copy back waits for them; SYNC 2, RET 1.
    captured_at = 6.5 + 1 + 8.75 * n + 10 + n + 2
    assert first.makespan_us == captured_at + 2 * n + 11 + 2 + 1
    # replay: dispatch 1 + graph launch 2; the nodes start when the input copy ends (17.5).
    assert replay.makespan_us == 17.5 + 2 * n + 11 + 2 + 1
    assert (cache.captures, cache.replays, cache.capture_us) == (1, 1, 5 * n + 10 + n)
    assert cache.stats().graph_memory_bytes == 100 * n
    nodes = [s for s in replay.spans if s.resource == "gpu0" and s.category == "compute"]
    assert [(s.start_us, s.end_us) for s in nodes[:2]] == [(17.5, 19.5), (19.5, 21.5)]
    # capture takes no buffer (they become the graph's): the launch after it takes them as a
    # replay does, x@gpu0 and a1 at once next to the new graph's memory; on a replay that
    # memory is resident from time 0
    assert first.peak_memory_bytes["gpu0.mem"] == 2000 + 100 * n
    assert replay.peak_memory_bytes["gpu0.mem"] == 2000 + 100 * n


def test_capture_spans_and_breakdown() -> None:
    (first,), _ = runs(chain(2), TINY, "regions", [{}])
    host = [(s.name, s.category, s.start_us, s.end_us) for s in first.spans if s.resource == "host"]
    assert host[:13] == [
        ("alloc x@gpu0.mem", "dispatch", 0.0, 1.5),
        ("copy x@gpu0.mem", "dispatch", 1.5, 2.5),
        ("copy x@gpu0.mem", "launch", 2.5, 6.5),
        ("graph g0", "dispatch", 6.5, 7.5),  # the CUDA_GRAPH instruction, then its capture
        ("alloc a1", "dispatch", 7.5, 9.0),
        ("launch r1", "dispatch", 9.0, 10.0),
        ("capture launch r1", "capture", 10.0, 15.0),
        ("free x@gpu0.mem", "dispatch", 15.0, 16.25),
        ("alloc a2", "dispatch", 16.25, 17.75),
        ("launch r2", "dispatch", 17.75, 18.75),
        ("capture launch r2", "capture", 18.75, 23.75),
        ("free a1", "dispatch", 23.75, 25.0),
        ("instantiate graph g0", "capture", 25.0, 37.0),
    ]
    assert first.breakdown_us["capture"] == 5 + 5 + 12


def test_a_new_shape_is_a_new_capture() -> None:
    model = chain(4, "n")
    trace = [{"n": 250}, {"n": 250}, {"n": 500}, {"n": 250}]
    results, cache = runs(model, TINY, "regions", trace)
    # n = 500: 2000 B tensors, a kernel 3 + 4000/2000 = 5 µs (2 replayed... 5 − 3 + 1 = 3), a copy
    # 10 + 2 = 12 µs; captured at 6.5 + 1 + 4 × 8.75 + 14 + 2 = 58.5, + 4 × 3 + 12 + 2 + 1 =
    # 85.5 (the first capture likewise 80.5: its dispatch 1 is paid on capture as on replay).
    assert [r.makespan_us for r in results] == [80.5, 39.5, 85.5, 39.5]
    assert (cache.captures, cache.replays, len(cache.graphs)) == (2, 2, 2)
    # both graphs hold their memory in every later run, from time 0
    assert results[3].peak_memory_bytes["gpu0.mem"] == 800 + 2 * 1000


def test_padding_waste_for_a_bucket() -> None:
    model = chain(4, "n")
    results, cache = runs(model, TINY, "buckets", [{"n": 200}], buckets=(256,))
    # padded to 256: a Relu moves 2048 B instead of 1600 B: 4.024 µs instead of 3.8 µs
    assert cache.padding_waste_us == pytest.approx(4 * (2048 - 1600) / 2000)
    nodes = [s for s in results[0].spans if s.resource == "gpu0" and s.category == "compute"]
    assert [round(s.duration_us, 6) for s in nodes] == [2.024] * 4
    assert results[0].outputs["a4"].shape == (200,)  # the padding never reaches a result
    # two padded buffers live at once (a1 and a2) next to the graph's 4 nodes x 100 B; x@gpu0
    # came in unpadded (800 B) and left
    assert results[0].peak_memory_bytes["gpu0.mem"] == 2 * 1024 + 4 * 100
    # each FREE's span gives back the bytes its ALLOC's took: x@gpu0's, freed inside the
    # region, said the padded 1024 where 800 were taken (and given back)
    taken = {s.name.split()[1]: s.args["bytes"] for s in results[0].spans if s.name[:6] == "alloc "}
    freed = {s.name.split()[1]: s.args["bytes"] for s in results[0].spans if s.name[:5] == "free "}
    assert freed == {name: taken[name] for name in freed}
    assert freed["x@gpu0.mem"] == 800


def test_a_dim_past_every_bucket_runs_eagerly() -> None:
    model = chain(4, "n")
    (past,), cache = runs(model, TINY, "buckets", [{"n": 300}], buckets=(256,))
    (eager,), _ = runs(model, TINY, "none", [{"n": 300}])
    assert past.makespan_us == eager.makespan_us
    assert (cache.eager_runs, cache.captures) == (1, 0)


def test_a_dim_past_every_bucket_runs_the_free_a_graph_defers_where_the_program_has_it() -> None:
    # Neg runs on the host: its input a1's copy there is freed (host.mem) inside region g1,
    # and a graph defers that FREE past itself; an eager run had done the same, so every span
    # after it moved 1.25 µs (dispatch 1 + free 0.25) earlier than a run without graphs
    ops = (
        Op("Relu", "r1", ("x",), ("a1",)),
        Op("Neg", "n1", ("a1",), ("b",)),
        Op("Relu", "r2", ("b",), ("a2",)),
        Op("Relu", "r3", ("a2",), ("a3",)),
    )
    model = Graph("split", ops, {"x": TensorType(("n",), "float32")}, ("a3",))
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    assert any(r.deferred for r in find_regions(program, platform))
    (past,), cache = runs(model, TINY, "buckets", [{"n": 300}], buckets=(256,))
    (eager,), _ = runs(model, TINY, "none", [{"n": 300}])
    assert cache.eager_runs == 1
    assert list(past.spans) == list(eager.spans)


def shape_input_graph(op_type: str) -> Graph:
    """r1 (Relu, gpu0) -> `op_type` (Reshape or Expand, host) with the shape given as input s
    -> r2 (Relu, gpu0); x is float32[n]."""
    ops = (
        Op("Relu", "r1", ("x",), ("a",)),
        Op(op_type, "shape", ("a", "s"), ("b",)),
        Op("Relu", "r2", ("b",), ("c",)),
    )
    inputs = {"x": TensorType(("n",), "float32"), "s": TensorType((2,), "int64")}
    return Graph("shaped", ops, inputs, ("c",))


def test_a_shape_given_as_an_input_is_padded_with_its_value() -> None:
    # the padded run propagated shapes without the inputs: UnknownValueError, "pass it in
    # inputs", which the call had done
    model = shape_input_graph("Reshape")
    inputs = {"x": np.ones(200, np.float32), "s": np.array([-1, 2], np.int64)}
    result = simulate(
        model, TINY, inputs=inputs, dims={"n": 200}, cuda_graph="buckets", buckets=(256,)
    )  # [-1, 2] holds at n=200, not at the plan's estimate for an unbound n (1)
    # padded to 256: each Relu moves 2048 B instead of 1600 B, 0.224 µs more
    assert result.record.extra["cuda_graph"]["padding_waste_us"] == pytest.approx(2 * 0.224)
    np.testing.assert_array_equal(result.outputs["c"], execute(model, inputs)["c"])


def test_a_shape_given_as_an_input_that_padding_breaks_is_an_error() -> None:
    model = shape_input_graph("Expand")
    inputs = {"x": np.ones(200, np.float32), "s": np.array([1, 200], np.int64)}
    with pytest.raises(
        SimulationError,
        match=r"^cuda_graph buckets: expected shapes that follow the dims padded up to a bucket "
        r"\(n=200 to 256\), got op shape \(Expand\): expected broadcastable shapes, got \[256\] "
        r"and \[1, 200\]; use cuda_graph 'regions'$",
    ):
        simulate(model, TINY, inputs=inputs, cuda_graph="buckets", buckets=(256,))


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("strategy", ["none", "whole", "regions", "buckets"])
@pytest.mark.parametrize(("model", "dims"), [("cnn", {}), ("transformer", {"seq": 37})])
def test_outputs_are_the_same_under_every_strategy(
    model: str, dims: dict[str, int], strategy: str, fuse: bool
) -> None:
    result = simulate(
        model, "x86-h100", dims=dims, cuda_graph=strategy, buckets=(16, 64), fuse=fuse
    )
    expected = execute(load_model(model), dict(result.inputs), fuse=fuse)
    assert sorted(result.outputs) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(result.outputs[name], value)
    assert check_invariants(result) == []


# -- the published effects, with the default H100 parameters ----------------------------------


def end_to_end_us(result: Result) -> float:
    """From the end of the input copy's launch to the end of the last kernel on gpu0."""
    start = next(
        s.end_us for s in result.spans if s.name.startswith("copy x@") and s.category == "launch"
    )
    last = max(s.end_us for s in result.spans if s.resource == "gpu0" and s.category == "compute")
    return last - start


def eager_and_replayed(model: Graph) -> tuple[float, float]:
    (eager,), _ = runs_timing(model, "none")
    (_, replay), _ = runs_timing(model, "regions", twice=True)
    return end_to_end_us(eager), end_to_end_us(replay)


def runs_timing(model: Graph, strategy: str, *, twice: bool = False) -> tuple[list[Result], Any]:
    platform = platform_of("x86-h100")
    program = compile_vm(model, platform, place(model, platform))
    rewritten = capture_program(program, platform, strategy)
    cache = GraphCache()
    metas = propagate(model, {})
    results = [
        Result.from_record(
            run_graph_program(rewritten, platform, metas, cache, is_functional=False)
        )
        for _ in range(2 if twice else 1)
    ]
    return results, cache


def test_80_tiny_dependent_kernels() -> None:
    # CUDA.jl "Graphs": 80 tiny dependent kernels, 260 µs eager, ~70 µs replayed
    b = GraphBuilder("tiny80")
    h = b.input("x", (1, 64))
    for i in range(80):
        h = b.op("Relu", h, name=f"r{i}")
    eager, replay = eager_and_replayed(b.build(h))
    # eager: 80 × (ALLOC 0.27 + 0.5, LAUNCH 0.27 + 3.24, FREE 0.27 + 0.2) − the last FREE + 1.06
    assert eager == pytest.approx(80 * 4.75 - 0.47 + 1.06 + 512 / 3.35e6, abs=1e-6)
    # replay: dispatch 0.27 + graph launch 0.94 + 80 nodes of 0.86 and 512 B at 3.35 TB/s
    assert replay == pytest.approx(0.27 + 0.94 + 80 * (0.86 + 512 / 3.35e6), abs=1e-6)
    assert 0.5 < eager / 260 < 2
    assert 0.5 < replay / 70 < 2
    assert eager / replay == pytest.approx(260 / 70, rel=0.5)


def test_small_mlp_of_four_matmuls_at_batch_16() -> None:
    # CUDA.jl "Graphs": 4 matmuls + broadcasts at batch 16, 50 µs eager, 16 µs replayed
    rng = np.random.default_rng(0)
    b = GraphBuilder("mlp4")
    h = b.input("x", (16, 1024))
    for i in range(4):
        w = b.initializer(rng.standard_normal((1024, 1024)).astype(np.float32), f"w{i}")
        bias = b.initializer(rng.standard_normal(1024).astype(np.float32), f"b{i}")
        h = b.op("Add", b.op("MatMul", h, w, name=f"mm{i}"), bias, name=f"bias{i}")
    eager, replay = eager_and_replayed(b.build(h))
    assert 0.5 < eager / 50 < 2
    assert 0.5 < replay / 16 < 2
    assert eager / replay == pytest.approx(50 / 16, rel=0.5)


def test_one_24_us_kernel() -> None:
    # a B200 driver-API measurement: one 24 µs kernel, 28.3 µs launched, 25.8 µs replayed
    b = GraphBuilder("one")
    x = b.input("x", (1,))
    # Add reads 4n + 4 bytes and writes 4n: 8n + 4 = 24 µs × 3.35e6 B/µs
    w = b.initializer(np.zeros(10_049_999, np.float32), "w")
    eager, replay = eager_and_replayed(b.build(b.op("Add", w, x, name="add")))
    work = (8 * 10_049_999 + 4) / 3.35e6
    assert work == pytest.approx(24.0, abs=1e-3)
    assert eager == pytest.approx(0.27 + 0.5 + 0.27 + 3.24 + 1.06 + work)  # ALLOC, LAUNCH
    assert replay == pytest.approx(0.27 + 0.94 + 0.86 + work)
    assert eager == pytest.approx(28.3, rel=0.05)
    assert replay == pytest.approx(25.8, rel=0.05)


# -- the device attribute `cuda_graph` ----------------------------------------------------------


def _two_relus() -> Graph:
    b = GraphBuilder("two")
    x = b.input("x", (1, 64), "float32")
    return b.build(b.op("Relu", b.op("Relu", x)))


def test_a_device_with_cuda_graph_set_is_captured_without_the_option() -> None:
    # the attribute was validated and then never read: its kernels ran eagerly
    flagged = {"tag": "x86-h100", "devices": {"gpu0": {"cuda_graph": True}}}
    by_attribute = simulate(_two_relus(), flagged, mode="timing")
    by_option = simulate(_two_relus(), "x86-h100", mode="timing", cuda_graph="regions")
    assert by_attribute.spans == by_option.spans
    assert by_attribute.record.extra["cuda_graph"]["captures"] == 1
    eager = simulate(_two_relus(), flagged, mode="timing", cuda_graph="none")  # the option wins
    assert eager.spans == simulate(_two_relus(), "x86-h100", mode="timing").spans


def test_only_the_flagged_devices_kernels_are_captured() -> None:
    two_gpus = {
        "kind": "hetero", "host": "x86-cpu",
        "devices": [{"name": "gpu0", "kind": "cuda", "cuda_graph": True},
                    {"name": "gpu1", "kind": "cuda"}],
    }  # fmt: skip
    rules = [{"op": "relu0", "device": "gpu0"}, {"op": "relu1", "device": "gpu1"}]
    result = simulate(_two_relus(), two_gpus, mode="timing", partition="rules", rules=rules)
    assert result.placement == {"relu0": "gpu0", "relu1": "gpu1"}
    captured = [s.name for s in result.spans if s.category == "capture"]
    assert captured == ["capture launch relu0", "instantiate graph g0"]
    launched = [s.args["processor"] for s in result.spans if s.name == "graph g0"]
    assert launched == ["gpu0", "gpu0"]  # its dispatch and its launch
    eager = [s.category for s in result.spans if s.name == "launch relu1"]
    assert eager == ["dispatch", "launch"]  # gpu1's kernel is launched as ever


def test_a_split_note_names_the_host_op_whole() -> None:
    # the note re-read the listing's lines: a name with a space or a newline, or a second
    # input, was cut or shifted ('call my', 'call add(a@host.mem,'), and lower-cased
    ops = (
        Op("Relu", "r\n1", ("x",), ("a",)),
        Op("Add", "My -> Add", ("a", "x"), ("b",)),  # gpu0 runs Relu alone: the host adds
        Op("Relu", "r2", ("b",), ("c",)),
    )
    model = graph(*ops, outputs=("c",))
    platform = platform_of(TINY)
    program = compile_vm(model, platform, place(model, platform))
    rewritten = capture_program(program, platform, "regions")
    assert rewritten.notes == ("g0 and g1 split by 'sync gpu0', 'call My -> Add(a@host.mem, x)'",)
    # the VM listing's lines shift after r\n1's: each line is made from its instruction
    assert any(
        line.endswith("CALL         My -> Add(a@host.mem, x) -> b")
        for line in rewritten.listing().splitlines()
    )


def test_a_flagged_device_of_a_nested_level_is_noted_not_captured() -> None:
    nested = {"node1": {"devices": {"gpu0": {"cuda_graph": True}}}}
    target = {"tag": "two-node-h100", "devices": nested}
    result = simulate(_two_relus(), target, mode="timing")
    assert result.record.extra["cuda_graph_notes"] == [
        "node1/gpu0: cuda_graph is set, but only the root level's kernels are captured (it is at "
        "level node1)",
        "no CUDA kernels at the root level to capture: every kernel runs eagerly",
    ]


def test_a_flagged_device_under_a_graph_executor_root_is_noted_too() -> None:
    # a valid tree (the flagged GPU's own level runs a VM) whose root runs a graph executor:
    # the flag alone had asked for regions, which refuse a root with no VM program to capture
    target = {
        "kind": "hetero", "executor": "graph", "runtime": "cpp",
        "devices": [{"kind": "cuda", "name": "g", "cuda_graph": True, "host": "x86-cpu",
                     "executor": "vm", "runtime": "cpp"}],
    }  # fmt: skip
    result = simulate(_two_relus(), target, mode="timing")
    assert result.record.extra["cuda_graph_notes"] == [
        "g/g: cuda_graph is set, but only the root level's kernels are captured (it is at level g)"
    ]
    assert result.record.extra["cuda_graph"]["captures"] == 0  # the counters, as a VM root's
    eager = simulate(_two_relus(), target, mode="timing", cuda_graph="none")
    assert result.makespan_us == eager.makespan_us


NOTHING_TO_CAPTURE = [
    ("whole", "no kernel launches at the root level to capture"),
    ("regions", "no CUDA kernels at the root level to capture: every kernel runs eagerly"),
    (
        "buckets",
        "no CUDA kernels at the root level to capture: every kernel runs eagerly, without padding",
    ),
]
"""Each strategy and its note where the root level has no CUDA kernel to capture."""


@pytest.mark.parametrize(("strategy", "note"), NOTHING_TO_CAPTURE)
def test_every_strategy_says_when_it_finds_nothing_to_capture(strategy: str, note: str) -> None:
    """arm-riscv-soc's root VM launches no kernel (its NPU is behind a nested level): each
    strategy runs as ``none`` does, and says why."""
    eager = simulate(_two_relus(), "arm-riscv-soc", mode="timing")
    result = simulate(_two_relus(), "arm-riscv-soc", mode="timing", cuda_graph=strategy)
    assert result.record.extra["cuda_graph_notes"] == [note]
    assert result.makespan_us == eager.makespan_us


def test_a_run_past_every_bucket_notes_that_it_ran_eagerly() -> None:
    # it ran eagerly with no note: a user reading the run saw buckets asked for and no graph
    model = load_model("transformer")
    past = simulate(model, "x86-h100", mode="timing", dims={"seq": 300}, cuda_graph="buckets",
                    buckets=(64, 256))  # fmt: skip
    eager = simulate(model, "x86-h100", mode="timing", dims={"seq": 300}, cuda_graph="none")
    assert past.makespan_us == eager.makespan_us
    assert past.record.extra["cuda_graph_notes"] == [
        "seq=300: past the largest bucket (256), so every kernel runs eagerly, without padding"
    ]
    inside = simulate(model, "x86-h100", mode="timing", dims={"seq": 200}, cuda_graph="buckets",
                      buckets=(64, 256))  # fmt: skip
    assert inside.record.extra["cuda_graph_notes"] == []


@pytest.mark.parametrize("strategy", ["whole", "regions"])
def test_kernels_on_no_cuda_device_are_one_note_for_whole_and_regions(strategy: str) -> None:
    # whole said "expected one capturable region, got 0 regions hold 0 of 4 kernels" where
    # regions said there was nothing to capture (cnn_int8's convs run on rk3588's NPU)
    found = simulate("cnn_int8", "rk3588", mode="timing", cuda_graph=strategy)
    assert found.record.extra["cuda_graph_notes"] == [
        "no CUDA kernels at the root level to capture: every kernel runs eagerly"
    ]


def test_a_root_gpu_that_runs_nothing_is_not_called_nested() -> None:
    # x86-h100's gpu0 is at the root level: with every op ruled onto the host there is nothing
    # to capture, and the note says only that (a root GPU had been counted among nested ones)
    result = simulate(_two_relus(), "x86-h100", mode="timing", cuda_graph="regions",
                      partition="rules", rules=[{"op": "*", "device": "host"}])  # fmt: skip
    assert result.record.extra["cuda_graph_notes"] == [NOTHING_TO_CAPTURE[1][1]]


def test_regions_of_one_device_split_by_another_device_say_so() -> None:
    # two GPUs' chains interleaved in program order (r1, n1, r2, n2) make four regions; each
    # was compared with its neighbour in the program only, always on the other device, so no
    # note said why gpu0's two regions are two (found by a CUDA-graph audit)
    two = target(device("gpu0", ["Relu"], **GRAPH), device("gpu1", ["Neg"], **GRAPH))
    ops = (
        Op("Relu", "r1", ("x",), ("a1",)),
        Op("Neg", "n1", ("x",), ("b1",)),
        Op("Relu", "r2", ("a1",), ("a2",)),
        Op("Neg", "n2", ("b1",), ("b2",)),
        Op("Relu", "r3", ("a2",), ("a3",)),
    )
    model = Graph("t", ops, {"x": TensorType((250,), "float32")}, ("a3", "b2"))
    platform = platform_of(two)
    captured = capture_program(compile_vm(model, platform, place(model, platform)), platform)
    assert [(r.id, r.processor) for r in captured.regions] == [
        ("g0", "gpu0"), ("g1", "gpu1"), ("g2", "gpu0"), ("g3", "gpu1"), ("g4", "gpu0"),
    ]  # fmt: skip
    assert captured.notes == (  # each with the one before it on its device
        "g0 and g2 split by 'copy x -> x@gpu1.mem', 'launch n1 on gpu1'",
        "g1 and g3 split by 'launch r2 on gpu0'",
        "g2 and g4 split by 'launch n2 on gpu1'",
    )
