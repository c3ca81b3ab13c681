"""`hetsim.simulate`: functional runs equal `hetsim.execute`, invariants hold, errors are clear."""

from __future__ import annotations

import importlib
import json
import math
import pickle
import re
from typing import Any

import numpy as np
import pytest

from hetsim.api import (
    clear_caches,
    fastest_plan,
    make_inputs,
    platform_of,
    set_cache_max_ops,
    simulate,
)
from hetsim.cli import main
from hetsim.compare import compare
from hetsim.errors import (
    HetsimError,
    ModelError,
    OpError,
    OutOfMemoryError,
    PartitionError,
    SimulationError,
    TargetError,
    TimeOverflowError,
    UnknownValueError,
)
from hetsim.ir import Graph, GraphBuilder, Op, TensorType
from hetsim.ir.cache import CACHE_MAX_OPS
from hetsim.kernels import execute, propagate, propagate_costs
from hetsim.models import load_model
from hetsim.models.inputs import MAX_NUMPY_DIMS
from hetsim.partition import partition as partition_plan
from hetsim.platform import build_platform
from hetsim.runtime import compile_plan
from hetsim.sim import bind, run_program
from hetsim.target import Target
from tests.sim.tiny import assert_run_invariants, device, graph, target

CPU_ONLY = "x86/xeon-8480c"
HOST_GPU = "x86-h100"
DIMS = {"transformer": {"seq": 8}}


def assert_same_outputs(result: object, model: object, *, fuse: bool = True) -> None:
    """Bit for bit `execute` with the same `fuse`; within float32 rounding the other one (BN
    folded into the Convs or not)."""
    expected = execute(model, result.inputs, fuse=fuse)  # type: ignore[attr-defined]
    other = execute(model, result.inputs, fuse=not fuse)  # type: ignore[attr-defined]
    assert sorted(result.outputs) == sorted(expected)  # type: ignore[attr-defined]
    for name, value in expected.items():
        np.testing.assert_array_equal(result.outputs[name], value)  # type: ignore[attr-defined]
        np.testing.assert_allclose(other[name], value, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("tgt", [CPU_ONLY, HOST_GPU])
@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer", "squeezenet"])
def test_functional_outputs_equal_execute(name: str, tgt: str, fuse: bool) -> None:
    model = load_model(name)
    result = simulate(model, tgt, dims=DIMS.get(name, {}), fuse=fuse)
    assert_same_outputs(result, model, fuse=fuse)
    assert_run_invariants(result, model, tgt, DIMS.get(name))


@pytest.mark.parametrize("name", ["resnet50", "inception_v1", "densenet121", "shufflenet"])
def test_functional_outputs_of_light_models_equal_execute(name: str) -> None:
    model = load_model(name)
    result = simulate(model, HOST_GPU)
    assert_same_outputs(result, model)
    assert_run_invariants(result, model, HOST_GPU)


def test_the_gpu_target_places_everything_on_the_gpu_and_moves_only_inputs_and_outputs() -> None:
    model = load_model("mlp")
    result = simulate(model, HOST_GPU)
    assert set(result.placement.values()) == {"gpu0"}
    (link,) = result.links.values()
    sizes = sum(a.nbytes for a in (*result.inputs.values(), *result.outputs.values()))
    assert link.bytes == sizes == (64 + 10) * 4


def test_timing_mode_gives_the_functional_times_without_values() -> None:
    functional = simulate("transformer", HOST_GPU, dims={"seq": 16})
    timing = simulate("transformer", HOST_GPU, mode="timing", dims={"seq": 16})
    assert timing.outputs == {}
    assert timing.spans == functional.spans
    assert timing.makespan_us == functional.makespan_us


def test_symbolic_dims_follow_the_inputs() -> None:
    x8 = np.zeros((1, 8, 64), np.float32)
    x32 = np.zeros((1, 32, 64), np.float32)
    short = simulate("transformer", HOST_GPU, inputs={"x": x8})
    long = simulate("transformer", HOST_GPU, inputs={"x": x32})
    assert short.outputs["residual2"].shape == (1, 8, 64)
    assert long.outputs["residual2"].shape == (1, 32, 64)
    assert long.peak_memory_bytes["gpu0.mem"] > short.peak_memory_bytes["gpu0.mem"]
    assert long.makespan_us > short.makespan_us


def test_the_same_run_twice_gives_the_same_trace() -> None:
    first = simulate("cnn", HOST_GPU, seed=3)
    second = simulate("cnn", HOST_GPU, seed=3)
    assert first.spans == second.spans
    assert first.to_dict() == second.to_dict()


def test_inputs_are_made_from_the_seed() -> None:
    model = load_model("mlp")
    made = simulate(model, CPU_ONLY, seed=5).inputs
    np.testing.assert_array_equal(made["x"], make_inputs(model, 5)["x"])
    expected = np.random.default_rng(5).standard_normal((1, 64)).astype(np.float32)
    np.testing.assert_array_equal(made["x"], expected)
    assert not np.array_equal(made["x"], simulate(model, CPU_ONLY, seed=6).inputs["x"])


def test_to_dict_holds_the_documented_figures() -> None:
    figures = simulate("mlp", HOST_GPU).to_dict()
    assert set(figures) >= {
        "makespan_us", "breakdown_us", "processors", "links", "peak_memory_bytes", "placement"
    }  # fmt: skip
    assert set(figures["breakdown_us"]) == {
        "dispatch", "launch", "compute", "transfer", "sync_wait", "capture", "idle"
    }  # fmt: skip
    assert set(figures["processors"]) == {"host", "gpu0"}
    assert figures["placement"] == {"fc1": "gpu0", "relu1": "gpu0", "fc2": "gpu0",
                                    "relu2": "gpu0", "fc3": "gpu0"}  # fmt: skip


def test_running_out_of_device_memory_names_the_memory_tensor_and_op() -> None:
    # 1e-6 GiB = 1073 bytes: x (1000 B) fits, r1's output does not.
    tgt = target(device("gpu0", ["*"], memory_gib=1e-6))
    model = graph(Op("Relu", "r1", ("x",), ("a",)), outputs=("a",))
    with pytest.raises(
        SimulationError,
        match=r"^sim at 6\.5 us, gpu0: out of memory in gpu0\.mem \(need 1000 B, 73 B free\) "
        r"for tensor a of op r1$",
    ):
        simulate(model, tgt, mode="timing")


def test_a_root_host_without_memory_says_why_it_holds_nothing() -> None:
    # vendor/npu-subsystem's X280 computes from its parent's memory (memory_gib 0): as a root,
    # its host.mem holds 0 B. The errors say so, and that the tag is meant as a device.
    why = (
        "; host.mem holds 0 B: its processor's memory_gib is 0 (or under a byte), and 0 means "
        "its level host's memory below the root and none at the root (a target whose host "
        "shares its parent's memory is meant as a device of another target)"
    )
    with pytest.raises(SimulationError) as caught:
        simulate("cnn", "vendor/npu-subsystem", mode="timing")
    assert str(caught.value) == (
        "sim at 0.0 us, host: out of memory in host.mem (need 12.0 KiB, 0 B free) for tensor x, "
        f"placed before the run starts{why}"  # it said "of op (load)", an op the model lacks
    )
    with pytest.raises(PartitionError) as refused:  # cnn_int8 keeps its scales on the host
        simulate("cnn_int8", "vendor/npu-subsystem", mode="timing")
    assert str(refused.value).endswith(
        f"(4 weight tensors: the largest const0, 4 B, read by op quant_x){why}"
    )
    attached = Target({"kind": "hetero", "host": "arm-cpu", "devices": ["vendor/npu-subsystem"]})
    assert simulate("cnn", attached, mode="timing").makespan_us > 0


def test_an_unknown_option_suggests_a_close_name() -> None:
    with pytest.raises(
        SimulationError, match=r"^simulate: unknown option 'dim' \(did you mean 'dims'\?\)$"
    ):
        simulate("mlp", CPU_ONLY, dim={"seq": 8})


def test_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(
        SimulationError, match=r"^simulate: expected mode 'functional' or 'timing', got 'fast'$"
    ):
        simulate("mlp", CPU_ONLY, mode="fast")


def test_an_unbound_symbolic_dim_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^input 'x': expected a size for symbolic dim 'seq'"):
        simulate("transformer", CPU_ONLY, mode="timing")


@pytest.mark.parametrize("partition", [None, 5, ["cost"]])
def test_a_partition_that_is_not_a_policy_name_is_an_error(partition: object) -> None:
    # None and 5 failed inside difflib, a list as unhashable in program_of
    message = f"partition: expected a policy in ['capability', 'cost', 'rules'], got {partition!r}"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        simulate("mlp", HOST_GPU, partition=partition)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (None, "target: expected a target name or a mapping, got None"),
        ("x86-h10", "target: unknown kind or tag 'x86-h10' (did you mean 'x86-h100'?)"),
        ({}, "target: expected a 'kind' or a 'tag', got neither"),
        # a problem with a path keeps it, without the argument before it
        ({"kind": "cdua"}, "kind: unknown kind 'cdua' (did you mean 'cuda'?)"),
    ],
)
@pytest.mark.parametrize("call", ["simulate", "compare"])
def test_a_bad_target_at_its_root_is_said_of_the_target_argument(
    call: str, target: object, message: str
) -> None:
    # "expected a target name or a mapping, got None" named no argument, where partition's did
    run = simulate if call == "simulate" else compare
    with pytest.raises(TargetError, match=f"^{re.escape(message)}$"):
        run("mlp", target)


def test_a_cuda_graph_that_is_not_a_name_is_an_error() -> None:
    # failed in SimOptions as unhashable
    message = "cuda_graph: expected one of buckets, none, regions, whole, got ['whole']"
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}"):
        simulate("mlp", HOST_GPU, cuda_graph=["whole"])


@pytest.mark.parametrize("dims", ["seq=4", 5, [4], {4: 8}])
def test_dims_that_are_not_a_mapping_of_names_are_an_error(dims: object) -> None:
    # "dictionary update sequence element ..." from dict()
    message = f"dims: expected a mapping of dim name -> size, got {dims!r}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate("transformer", HOST_GPU, dims=dims)


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_zero_dim_runs_as_a_zero_length_input_does(mode: str) -> None:
    # dims={"seq": 0} was refused while a zero-length input array ran: one rule for both
    model = load_model("transformer")
    empty = {"x": np.zeros((1, 0, 64), np.float32)}
    by_dims = simulate(model, HOST_GPU, mode=mode, dims={"seq": 0})
    by_input = simulate(model, HOST_GPU, mode=mode, inputs=empty)
    # timing mode makes no inputs from dims, and lists the given ones: all else is equal
    assert {**by_dims.to_dict(), "inputs": {}} == {**by_input.to_dict(), "inputs": {}}
    one = simulate(model, HOST_GPU, mode=mode, dims={"seq": 1})
    assert 0 < by_dims.makespan_us < one.makespan_us  # fixed latencies and dispatches remain
    if mode == "functional":
        assert by_dims.inputs["x"].shape == (1, 0, 64)
        assert by_dims.outputs["residual2"].shape == (1, 0, 64)
        assert by_dims.outputs.keys() == execute(model, empty).keys()


@pytest.mark.parametrize("size", [-1, 2.0, True, "8"])
def test_a_negative_or_not_an_integer_dim_size_is_an_error(size: object) -> None:
    message = f"dims.seq: expected an integer >= 0, got {size!r}"
    for mode in ("functional", "timing"):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            simulate("transformer", HOST_GPU, mode=mode, dims={"seq": size})
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        make_inputs(load_model("transformer"), dims={"seq": size})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("model", "dims", "message"),
    [
        ("mlp", {"batch": 4}, "model mlp: expected one of its symbolic dims (none), got 'batch'"),
        (
            "transformer",
            {"seq": 8, "sq": 8},
            "model transformer: expected one of its symbolic dims (seq), got 'sq' "
            "(did you mean 'seq'?)",
        ),
    ],
)
def test_a_dim_the_model_does_not_have_is_an_error(
    model: str, dims: dict[str, int], message: str
) -> None:
    # silently ignored, as `hetsim model show` does not
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(model, HOST_GPU, mode="timing", dims=dims)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        make_inputs(load_model(model), dims=dims)


def test_dims_given_and_dims_from_the_inputs_bind_together() -> None:
    x = np.zeros((1, 8, 64), np.float32)
    given = simulate("transformer", HOST_GPU, inputs={"x": x}, dims={"seq": 8})
    assert given.makespan_us == simulate("transformer", HOST_GPU, inputs={"x": x}).makespan_us
    with pytest.raises(
        ModelError, match=r"^input 'x': expected dim 'seq' = 4 \(from dims\), got 8$"
    ):
        simulate("transformer", HOST_GPU, inputs={"x": x}, dims={"seq": 4})


def test_made_inputs_too_big_for_the_root_host_memory_are_an_error() -> None:
    # numpy's _ArrayMemoryError came out of make_inputs; timing mode already said out of memory
    message = (
        "input 'x' (float32[1, 99999999999, 64]): out of memory in host.mem "
        "(need 23.3 TiB, 1.0 TiB free)"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        simulate("transformer", HOST_GPU, dims={"seq": 99_999_999_999})


def test_an_input_numpy_cannot_allocate_names_the_input_and_its_size() -> None:
    # past int64: numpy's "Maximum allowed dimension exceeded" came out as a ValueError
    message = (
        "input 'x' (float32[1, 1000000000000000000000, 64]): expected an array this machine "
        "can allocate, got 222044.6 EiB ("
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}"):
        make_inputs(load_model("transformer"), dims={"seq": 10**21})


def test_make_inputs_says_which_input_ran_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    class Full:
        """A generator on a machine without room for any array."""

        def standard_normal(self, size: Any) -> Any:
            raise MemoryError("no room")

    model = load_model("transformer")  # its weights are drawn from a generator too
    monkeypatch.setattr(np.random, "default_rng", lambda seed: Full())
    message = (
        "input 'x' (float32[1, 8, 64]): expected an array this machine can allocate, "
        "got 2.0 KiB (no room)"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        make_inputs(model, dims={"seq": 8})


def test_an_input_of_more_dims_than_numpy_makes_is_refused_by_its_rank() -> None:
    # "expected an array this machine can allocate, got 4 B": its 4 bytes fit anywhere
    b = GraphBuilder("deep")
    b.output(b.op("Relu", b.input("x", (1,) * (MAX_NUMPY_DIMS + 1))))
    graph = b.build()
    assert simulate(graph, "x86-h100", mode="timing").makespan_us > 0  # timing mode makes none
    message = (
        f"expected at most {MAX_NUMPY_DIMS} dims (numpy's limit), got {MAX_NUMPY_DIMS + 1} "
        "(maximum supported dimension"
    )
    with pytest.raises(SimulationError, match=re.escape(message)):
        make_inputs(graph)
    b = GraphBuilder("deepest")
    b.output(b.op("Relu", b.input("x", (1,) * MAX_NUMPY_DIMS)))
    assert make_inputs(b.build())["x"].ndim == MAX_NUMPY_DIMS  # numpy makes that many


def test_buckets_without_a_cuda_device_runs_unpadded_with_a_note() -> None:
    # seq=5 was padded to 8 though nothing was captured, and the graph executor compiled for
    # seq=5 refused it
    eager = simulate("transformer", "arm-riscv-soc", mode="timing", dims={"seq": 5})
    found = simulate(
        "transformer", "arm-riscv-soc", mode="timing", dims={"seq": 5}, cuda_graph="buckets"
    )
    assert found.makespan_us == eager.makespan_us
    assert found.record.extra["cuda_graph_notes"] == [
        "no CUDA kernels at the root level to capture: every kernel runs eagerly, without padding"
    ]


@pytest.mark.parametrize(
    ("target", "options", "strategy"),
    [
        ("x86-h100", {}, "none"),
        ("x86-h100", {"cuda_graph": "whole"}, "whole"),
        ({"tag": "x86-h100", "devices": {"gpu0": {"cuda_graph": True}}}, {}, "regions"),
    ],
)
def test_buckets_given_to_a_strategy_that_does_not_pad_are_noted_and_change_nothing(
    target: object, options: dict[str, str], strategy: str
) -> None:
    # buckets= went unused without a word: a run that meant to pad did not
    plain = simulate("transformer", target, mode="timing", dims={"seq": 5}, **options)
    found = simulate(
        "transformer", target, mode="timing", dims={"seq": 5}, buckets=(8, 16), **options
    )
    assert found.makespan_us == plain.makespan_us
    notes = found.record.extra["cuda_graph_notes"]
    assert notes[len(plain.record.extra.get("cuda_graph_notes", ())) :] == [
        f"buckets [8, 16] unused: only cuda_graph='buckets' pads dims to buckets, and this "
        f"run's is '{strategy}'"
    ]


def test_buckets_given_to_the_buckets_strategy_are_no_note() -> None:
    found = simulate(
        "transformer", "x86-h100", mode="timing", dims={"seq": 5}, cuda_graph="buckets",
        buckets=(8, 16),
    )  # fmt: skip
    assert found.record.extra["cuda_graph_notes"] == []
    assert found.record.extra["cuda_graph"]["padding_waste_us"] > 0  # seq 5 ran as 8


def test_buckets_with_a_graph_executor_compiled_for_other_dims_says_why() -> None:
    # one matmul on a graph executor compiled for seq=5; the rest captured on the GPU
    gpu, sub = (
        {"tag": "nvidia/h100", "name": "gpu0"},
        {"tag": "vendor/npu-subsystem", "name": "sub"},
    )
    mixed = {"kind": "hetero", "host": {"tag": "x86/xeon-8480c"}, "devices": [gpu, sub]}
    options: dict[str, Any] = {
        "mode": "timing", "dims": {"seq": 5}, "partition": "rules",
        "rules": [{"op": "q.matmul", "device": "sub"}],
    }  # fmt: skip
    regions = simulate("transformer", mixed, cuda_graph="regions", **options)
    assert set(regions.placement.values()) == {"gpu0", "sub/npu"}
    message = (
        "cuda_graph buckets: expected every level to run seq=8 (seq=5 padded up to its bucket), "
        "got graph executor sub compiled for seq=5; give seq a bucket size, or use cuda_graph "
        "'regions'"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        simulate("transformer", mixed, cuda_graph="buckets", **options)
    padded = simulate("transformer", mixed, cuda_graph="buckets", **{**options, "dims": {"seq": 8}})
    assert padded.record.extra["cuda_graph"]["captures"] > 0
    # seq=0: no bucket can be 0, so the message does not ask for one
    message = (
        "cuda_graph buckets: expected every level to run seq=1 (seq=0 padded up to its bucket), "
        "got graph executor sub compiled for seq=0; use cuda_graph 'regions'"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        simulate("transformer", mixed, cuda_graph="buckets", **{**options, "dims": {"seq": 0}})


def test_buckets_leave_a_graph_executor_whose_shapes_read_no_padded_dim() -> None:
    # the npu's Relu reads only the static z; binding seq at compile time had made its level
    # "compiled for seq=5", and padding seq to 8 refused a run its shapes do not depend on
    gpu, sub = (
        {"tag": "nvidia/h100", "name": "gpu0"},
        {"tag": "vendor/npu-subsystem", "name": "sub"},
    )
    mixed = {"kind": "hetero", "host": {"tag": "x86/xeon-8480c"}, "devices": [gpu, sub]}
    b = GraphBuilder("mix")
    z = b.op("Relu", b.input("z", (8, 8)), name="rz")
    b.output(b.op("Relu", b.op("MatMul", b.input("x", ("seq", 8)), z, name="mm"), name="ry"))
    graph = b.build()
    rules = [{"op": "rz", "device": "sub"}, {"op": "*", "device": "gpu0"}]
    options: dict[str, Any] = {"mode": "timing", "partition": "rules", "rules": rules}
    bound = simulate(graph, mixed, cuda_graph="buckets", dims={"seq": 5}, **options)
    assert bound.placement["rz"] == "sub/npu"
    assert bound.record.extra["cuda_graph"]["padding_waste_us"] > 0  # seq 5 ran as 8 on gpu0
    inputs = make_inputs(graph, 0, {"seq": 5})
    dynamic = simulate(graph, mixed, cuda_graph="buckets", inputs=inputs, **options)
    assert dynamic.placement == bound.placement
    assert bound.makespan_us == dynamic.makespan_us


def test_totals_mode_keeps_busy_time_per_category() -> None:
    result = simulate("mlp", HOST_GPU, mode="timing", trace=False)
    traced = simulate("mlp", HOST_GPU, mode="timing")
    assert result.spans == ()
    assert result.makespan_us == traced.makespan_us
    busy = result.record.extra["busy_us"]
    compute = sum(s.duration_us for s in traced.spans if s.category == "compute")
    assert sum(b.get("compute", 0.0) for b in busy.values()) == pytest.approx(compute, rel=1e-12)


@pytest.fixture
def placed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The policy of every partition `simulate` runs, in order (from empty caches)."""
    clear_caches()
    api = importlib.import_module("hetsim.api")
    policies: list[str] = []
    real = api.partition_graph

    def counting(model: Any, on: Any, policy: str, *args: Any, **kw: Any) -> Any:
        policies.append(policy)
        return real(model, on, policy, *args, **kw)

    monkeypatch.setattr(api, "partition_graph", counting)
    return policies


def test_repeated_runs_reuse_the_compiled_plan_and_give_the_same_result(
    placed: list[str],
) -> None:
    policies = placed
    model, platform = load_model("cnn"), platform_of(HOST_GPU)
    first = simulate(model, platform, seed=1)
    second = simulate(model, platform, seed=1)
    # kept from the second call on: a sweep's plans, one per platform, are never kept
    assert policies == ["capability", "capability"]
    assert first.to_dict() == second.to_dict()
    assert first.spans == second.spans
    third = simulate(model, HOST_GPU, seed=1)  # the same tree again: the same Platform object
    assert policies == ["capability", "capability"]
    assert third.to_dict() == first.to_dict()
    # another Platform, or one of other costs: the same layout (Platform.layout), not placed again
    simulate(model, build_platform(Target(HOST_GPU)), seed=1)
    slower = Target(HOST_GPU).override({"host": {"freq_ghz": 1.0}, "executor": {"dispatch_us": 2}})
    assert simulate(model, slower, seed=1).makespan_us > first.makespan_us
    assert policies == ["capability", "capability"]
    simulate(model, platform, seed=1, partition="cost")  # depends on the run: never cached
    assert policies == ["capability"] * 2 + ["cost", "capability", "rules"]  # and the host alone


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_plan_compiled_for_other_costs_gives_what_a_fresh_compile_gives(
    placed: list[str], mode: str
) -> None:
    # a sweep over cost parameters: one layout (Platform.layout), compiled once, kept from the
    # second call; every point's figures are those of a first call on its own platform
    model, soc = load_model("cnn"), Target("arm-riscv-soc")
    points = [
        soc.override({"executor": {"dispatch_us": us}, "devices": {"vdevice0": {"link": gbps}}})
        for us, gbps in [(0.5, {"bandwidth_gbps": 2.0}), (0.25, {}), (2.0, {"latency_us": 30.0})]
    ]
    shared = [simulate(model, point, mode=mode) for point in [points[0], *points]]
    assert placed == ["capability", "capability"]
    assert len({r.makespan_us for r in shared[1:]}) == 3
    for point, result in zip(points, shared[1:], strict=True):
        clear_caches()
        fresh = simulate(model, point, mode=mode)
        assert result.to_dict() == fresh.to_dict()
        assert result.spans == fresh.spans
        for name in fresh.outputs:
            np.testing.assert_array_equal(result.outputs[name], fresh.outputs[name])


@pytest.fixture
def budget() -> Any:
    """`set_cache_max_ops`, with the bound it found put back after the test."""
    previous = set_cache_max_ops(CACHE_MAX_OPS)
    yield set_cache_max_ops
    set_cache_max_ops(previous)


def test_a_model_over_the_cache_budget_is_placed_every_call_until_the_budget_grows(
    placed: list[str], budget: Any
) -> None:
    model, platform = load_model("cnn"), platform_of(HOST_GPU)  # 12 ops
    assert budget(11) == CACHE_MAX_OPS
    results = [simulate(model, platform, mode="timing") for _ in range(3)]
    assert placed == ["capability"] * 3  # over the budget: never kept
    assert budget(12) == 11
    results += [simulate(model, platform, mode="timing") for _ in range(3)]
    assert placed == ["capability"] * 5  # kept from the second call on
    assert len({r.makespan_us for r in results}) == 1
    budget(11)  # lowering it drops what the caches keep
    simulate(model, platform, mode="timing")
    assert placed == ["capability"] * 6


@pytest.mark.parametrize("ops", [-1, 2.5, True, "100"])
def test_a_cache_budget_that_is_not_a_count_is_an_error(ops: Any, budget: Any) -> None:
    with pytest.raises(
        SimulationError, match=rf"^set_cache_max_ops: expected an integer >= 0, got {ops!r}$"
    ):
        budget(ops)
    assert budget(CACHE_MAX_OPS) == CACHE_MAX_OPS  # unchanged


def test_an_equal_target_tree_gives_the_same_platform_until_the_caches_are_cleared() -> None:
    platform = platform_of(HOST_GPU)
    assert platform_of(Target(HOST_GPU)) is platform
    assert platform_of({"tag": HOST_GPU}) is platform
    assert platform_of(Target(HOST_GPU).override({"host": {"freq_ghz": 1.0}})) is not platform
    clear_caches()
    assert platform_of(HOST_GPU) is not platform


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The mode (functional or not) of every program binding `simulate` makes, in order (from
    empty caches)."""
    clear_caches()
    module = importlib.import_module("hetsim.sim.bind")
    modes: list[bool] = []
    real = module.bind

    def counting(*args: Any, **kw: Any) -> Any:
        modes.append(kw["is_functional"])
        return real(*args, **kw)

    monkeypatch.setattr(module, "bind", counting)
    return modes


def test_runs_at_the_same_shapes_reuse_the_bound_program(bound: list[bool]) -> None:
    model, platform = load_model("cnn"), platform_of(HOST_GPU)
    one, two = make_inputs(model, seed=1), make_inputs(model, seed=2)
    first = simulate(model, platform, inputs=one)  # its compiled plan is not kept
    second = simulate(model, platform, inputs=two)
    again = simulate(model, platform, inputs=one)
    timing = simulate(model, platform, mode="timing")
    assert bound == [True, True, False]  # bound once per mode for the kept plan
    # each run computes from its own inputs, never from an earlier run's values
    assert_same_outputs(first, model)
    assert_same_outputs(second, model)
    (name,) = model.outputs
    assert not np.array_equal(first.outputs[name], second.outputs[name])
    assert again.to_dict() == first.to_dict()
    assert again.spans == first.spans
    assert timing.makespan_us == first.makespan_us


def test_bindings_go_with_the_program_they_bind() -> None:
    kept = importlib.import_module("hetsim.sim.bind")._bound  # program -> its bindings
    clear_caches()
    model, platform = load_model("cnn"), platform_of(HOST_GPU)
    simulate(model, platform, mode="timing", partition="cost")  # compiled for this call only
    assert len(kept) == 0
    simulate(model, platform, mode="timing")  # the compiled plan is kept, and its binding
    simulate(model, platform, mode="timing", dims={})
    assert [len(list(bindings.graphs())) for bindings in kept.values()] == [1]
    importlib.import_module("hetsim.api")._plans.clear()  # the program goes, and its bindings
    assert len(kept) == 0


def test_a_constant_output_cannot_change_later_runs(bound: list[bool]) -> None:
    b = GraphBuilder("constant_output")
    minus = b.op("Neg", b.initializer(np.ones(3, np.float32)))  # folded: kept by the binding
    model = b.build(b.op("Add", b.input("x", (3,)), minus), minus)
    platform = platform_of(HOST_GPU)
    simulate(model, platform, inputs={"x": np.zeros(3, np.float32)})  # the plan is kept next call
    first = simulate(model, platform, inputs={"x": np.zeros(3, np.float32)})
    first.outputs[minus][0] = 100.0  # the caller's own copy (`owned_outputs`)
    again = simulate(model, platform, inputs={"x": np.zeros(3, np.float32)})
    assert bound == [True, True]  # `again` reuses `first`'s binding
    assert again.outputs[minus].tolist() == [-1.0, -1.0, -1.0]


def test_other_dims_bind_the_program_again(bound: list[bool]) -> None:
    model, platform = load_model("transformer"), platform_of(HOST_GPU)
    runs = [simulate(model, platform, mode="timing", dims={"seq": n}) for n in (8, 8, 16, 8)]
    assert bound == [False, False, False]  # seq 8 twice (kept from the second), then seq 16
    assert runs[3].to_dict() == runs[0].to_dict()
    assert runs[2].makespan_us > runs[0].makespan_us


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_a_seed_must_be_a_non_negative_integer(seed: object) -> None:
    with pytest.raises(ModelError) as error:
        simulate("mlp", HOST_GPU, seed=seed)
    assert str(error.value) == f"seed: expected a non-negative integer, got {seed!r}"


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_an_input_of_another_dtype_is_refused_as_execute_refuses_it(mode: str) -> None:
    # it used to run: int64 activations through float32 weights gave float64 outputs, and
    # the simulated bytes followed the given dtype instead of the model's
    model = load_model("mlp")
    inputs = {"x": np.ones((1, 64), np.int64)}
    with pytest.raises(ModelError) as from_execute:
        execute(model, inputs)
    with pytest.raises(ModelError) as from_simulate:
        simulate(model, platform_of(HOST_GPU), inputs=inputs, mode=mode)
    assert str(from_simulate.value) == str(from_execute.value)
    assert str(from_simulate.value) == "input 'x': expected float32 array, got int64"


def test_a_functional_run_needs_every_input() -> None:
    model, platform = load_model("cnn"), platform_of(HOST_GPU)
    program = compile_plan(model, platform, partition_plan(model, platform))
    bound_program = bind(program, platform, propagate(model, {}), is_functional=True)
    with pytest.raises(SimulationError) as error:
        bound_program.values_for({})
    assert str(error.value) == (
        f"functional run: expected a value for every graph input {sorted(model.inputs)}, "
        f"got none for {list(model.inputs)}"
    )
    assert bind(program, platform, propagate(model, {})).values_for({}) is None  # timing


def test_a_functional_simulate_given_some_inputs_names_the_missing_ones_as_execute_does() -> None:
    # it failed after placing, compiling and binding, with the binder's SimulationError
    # ("functional run: expected a value for every graph input"); timing mode needs no values
    model = Graph(
        "two",
        (Op("Add", "a", ("x", "z"), ("y",)),),
        {"x": TensorType((2,), "float32"), "z": TensorType((2,), "float32")},
        ("y",),
    )
    given = {"x": np.ones(2, np.float32)}
    with pytest.raises(ModelError) as from_execute:
        execute(model, given)
    message = "inputs: expected ['x', 'z'], got missing ['z']"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(model, HOST_GPU, inputs=given)
    assert str(from_execute.value) == message
    whole = {**given, "z": np.ones(2, np.float32)}  # timing mode needs no values: same time
    timed = simulate(model, HOST_GPU, inputs=given, mode="timing").makespan_us
    assert timed == simulate(model, HOST_GPU, inputs=whole, mode="timing").makespan_us


def test_propagation_is_reused_only_for_the_same_small_integer_values() -> None:
    api = importlib.import_module("hetsim.api")
    b = GraphBuilder("offsets")
    y = b.op("Add", b.input("i", (3,), "int64"), b.initializer(np.ones(3, np.int64)))
    model = b.build(y)
    first, _ = api._propagated(model, {}, {"i": np.array([1, 2, 3])})
    assert api._propagated(model, {}, {"i": np.array([1, 2, 3])})[0] is first
    other, _ = api._propagated(model, {}, {"i": np.array([4, 5, 6])})
    assert (first[y].value.tolist(), other[y].value.tolist()) == ([2, 3, 4], [5, 6, 7])
    floats = GraphBuilder("floats")
    z = floats.op("Relu", floats.input("x", (3,)))
    relu = floats.build(z)
    once = api._propagated(relu, {}, {"x": np.zeros(3, np.float32)})
    assert api._propagated(relu, {}, {"x": np.ones(3, np.float32)}) is once  # data: not read


def test_graphs_over_the_cache_limit_are_placed_anew_every_time(
    placed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    policies = placed
    monkeypatch.setattr(importlib.import_module("hetsim.api")._plans, "max_ops", 3)  # cnn: 12
    model, platform = load_model("cnn"), platform_of(HOST_GPU)
    first, second = simulate(model, platform, seed=1), simulate(model, platform, seed=1)
    assert policies == ["capability", "capability"]
    assert first.to_dict() == second.to_dict()


def _expand_by_input() -> Graph:
    """y = Expand(x, shape) with the target shape a graph input: a shape set by a value."""
    return Graph(
        "expand",
        (Op("Expand", "e", ("x", "shape"), ("y",)),),
        {"x": TensorType((1, 3, 1), "float32"), "shape": TensorType((3,), "int64")},
        ("y",),
    )


@pytest.mark.parametrize("tag", [HOST_GPU, "arm-riscv-soc"])
@pytest.mark.parametrize("policy", ["capability", "cost"])
def test_a_shape_given_as_an_input_value_is_planned_with_that_value(tag: str, policy: str) -> None:
    # it used to fail in the plan's estimate ("expected a known value ... 'shape'") although
    # the value was given, where execute ran it
    model, platform = _expand_by_input(), platform_of(tag)
    x = np.arange(3, dtype=np.float32).reshape(1, 3, 1)
    for shape in ([1, 3, 2], [2, 3, 4], [1, 3, 2]):  # other values, then the first again
        inputs = {"x": x, "shape": np.array(shape, np.int64)}
        run = simulate(model, platform, inputs=inputs, partition=policy)
        np.testing.assert_array_equal(run.outputs["y"], execute(model, inputs)["y"])
        assert run.outputs["y"].shape == tuple(shape)
        timing = simulate(model, platform, inputs=inputs, partition=policy, mode="timing")
        assert timing.makespan_us == run.makespan_us


def test_a_shape_input_without_its_array_is_named() -> None:
    with pytest.raises(UnknownValueError) as error:
        simulate(_expand_by_input(), HOST_GPU, mode="timing")
    assert str(error.value) == (
        "op e (Expand): expected a known value for input 1 (shape), got graph input 'shape' "
        "without its array (pass it in inputs)"
    )
    assert error.value.tensor == "shape"
    copied = pickle.loads(pickle.dumps(error.value))  # errors cross processes in sweeps
    assert (type(copied), str(copied), copied.tensor) == (
        UnknownValueError, str(error.value), "shape",
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_float_input_a_shape_needs_is_simulated_at_each_value(mode: str) -> None:
    # it was refused ("only integer and bool inputs ... feed shape arithmetic"), though execute
    # ran it; its value is now kept for this graph, and caches key on it
    b = GraphBuilder("range")
    limit = b.input("lim", (), "float32")
    model = b.build(b.op("Range", np.array(0, np.float32), limit, np.array(1, np.float32)))
    runs = {}
    for value in (37.0, 5.0, 37.0):
        inputs = {"lim": np.array(value, np.float32)}
        result = simulate(model, HOST_GPU, inputs=inputs, mode=mode)
        runs.setdefault(value, []).append(result.makespan_us)
        memory = result.to_dict()["peak_memory_bytes"]["gpu0.mem"]
        assert memory == 4 * int(value) + 3 * 4  # float32[value], and the three scalars read
        if mode == "functional":
            expected = execute(model, inputs)[model.outputs[0]]
            np.testing.assert_array_equal(result.outputs[model.outputs[0]], expected)
    assert runs[37.0][0] == runs[37.0][1]
    assert runs[5.0][0] != runs[37.0][0]


@pytest.mark.parametrize("trace", [True, False])
def test_a_finite_makespan_whose_breakdown_overflows_is_an_error(trace: bool) -> None:
    # one kernel of 1.5e308 µs: the makespan is finite, but two processors idle that long are not
    relu = Graph("relu", (Op("Relu", "r", ("x",), ("y",)),), {"x": TensorType((4,), "float32")},
                 ("y",))  # fmt: skip
    slow = {"kind": "hetero", "devices": [{"kind": "cuda", "kernel_latency_us": 1.5e308}, "npu"]}
    # one idle processor (npu) is fine; the microseconds around the kernel are lost at 1.5e308
    assert simulate(relu, slow, mode="timing", trace=trace).makespan_us == 1.5e308
    slow["devices"].append("arm-cpu")
    with pytest.raises(SimulationError) as error:
        simulate(relu, slow, mode="timing", trace=trace)
    assert str(error.value) == (
        "expected finite figures, got an infinite breakdown for idle: a makespan of 1.5e+308 µs "
        "summed over 4 processors overflows (a time parameter of the platform near 1e308 µs?)"
    )


def test_an_overflow_names_what_a_wait_waited_for() -> None:
    # it named the root host's sync_wait, the first endless span, not the nested level's answer
    x = TensorType(("n",), "float32")
    model = Graph("g", (Op("Relu", "r1", ("x",), ("y",)), Op("Neg", "n1", ("y",), ("z",))),
                  {"x": x}, ("z",))  # fmt: skip
    slow = {"tag": "arm-riscv-soc", "devices": {"vdevice0": {"control_latency_us": 1e308}}}
    with pytest.raises(SimulationError) as error:
        simulate(model, slow, mode="timing", dims={"n": 4})
    assert str(error.value) == (
        "sim at inf us: expected a finite makespan, got inf: the time of vdevice0/host's invoke "
        "('return s0') overflows (a time parameter of the platform near 1e308 µs?)"
    )


def test_times_that_overflow_are_an_error_not_an_infinite_makespan() -> None:
    # each parameter is a valid positive number; their sums and quotients are not finite
    huge_launch = {"kind": "cuda", "launch_us": 1e308}
    with pytest.raises(SimulationError) as traced:
        simulate("mlp", huge_launch, mode="timing")
    assert str(traced.value) == (
        "sim at inf us: expected a finite makespan, got inf: the time of host's launch "
        "('launch fc1') overflows (a time parameter of the platform near 1e308 µs?)"
    )
    with pytest.raises(SimulationError, match=r"got inf: the times of .*host's launch"):
        simulate("mlp", huge_launch, mode="timing", trace=False)
    slow = {"kind": "npu", "memory_gib": 1, "link": {"bandwidth_gbps": 5e-324}}
    with pytest.raises(SimulationError) as slow_link:
        simulate("cnn", slow, mode="timing")
    assert str(slow_link.value) == (
        "link host.mem--dev0.mem: expected a finite transfer time for 12288 bytes, got inf "
        "(bandwidth_gbps 5e-324, latency_us 0.5)"
    )


@pytest.mark.parametrize("tgt", [CPU_ONLY, HOST_GPU, "arm-riscv-soc"])
@pytest.mark.parametrize("fuse", [True, False])
def test_a_kernel_that_fails_in_a_run_names_its_op(tgt: str, fuse: bool) -> None:
    from tests.kernels.test_execute import DIVISION_FAILED, _division_by_zero

    pattern = f"^{re.escape(DIVISION_FAILED)}$"
    with pytest.raises(ModelError, match=pattern):  # raised inside a SimPy process
        simulate(_division_by_zero(folded=False), tgt, fuse=fuse)
    for mode in ("functional", "timing"):  # propagation computes the folded Div
        with pytest.raises(ModelError, match=pattern):
            simulate(_division_by_zero(folded=True), tgt, mode=mode, fuse=fuse)
    with pytest.raises(ModelError, match=pattern):  # too big for propagation: run's constants
        simulate(_division_by_zero(folded=True, rows=2048), tgt, fuse=fuse)


def test_an_attribute_the_shape_rule_cannot_read_names_its_op() -> None:
    from tests.kernels.test_execute import AXIS_LAST_FAILED, softmax_axis_last

    message = AXIS_LAST_FAILED
    for mode in ("functional", "timing"):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            simulate(softmax_axis_last(), CPU_ONLY, mode=mode)


def test_inputs_must_be_a_mapping() -> None:
    message = "inputs: expected a mapping of input name -> array, got list"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate("mlp", CPU_ONLY, inputs=[np.ones((1, 64), np.float32)])  # type: ignore[arg-type]


def test_an_accelerator_left_idle_is_noted_with_why(capsys: pytest.CaptureFixture[str]) -> None:
    # the float cnn on the int8 Ethos-U65 alone: every op on the default host, the NPU idle
    note = (
        "dev0 runs none of the 12 ops: no float32 in its dtypes (9), no BatchNormalization in its "
        "ops (2), no GlobalAveragePool in its ops (1)"
    )
    idle = simulate("cnn", "arm/ethos-u65", mode="timing")
    assert set(idle.placement.values()) == {"host"}
    assert idle.to_dict()["extra"]["placement_notes"] == [note]
    busy = simulate("cnn_int8", "arm/ethos-u65", mode="timing")
    assert "placement_notes" not in busy.to_dict()["extra"]
    assert main(["run", "cnn", "--target", "arm/ethos-u65", "--mode", "timing"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"note: {note}"]


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_bad_seed_is_refused_in_every_mode(mode: str) -> None:
    # timing mode made no inputs and never looked at it
    with pytest.raises(ModelError, match=r"^seed: expected a non-negative integer, got 'a'$"):
        simulate("mlp", CPU_ONLY, seed="a", mode=mode)  # type: ignore[arg-type]


def test_the_cost_policy_runs_when_the_capability_plan_it_is_checked_against_overflows() -> None:
    # a link latency near the largest float: the capability plan crosses that link twice and its
    # time overflows; the cost plan keeps the model on the host. fastest_plan raised the
    # capability plan's error, so partition="cost" failed though its own plan runs
    target = {"tag": "arm-riscv-soc", "devices": {"vdevice0": {"link": {"latency_us": 1.7e308}}}}
    with pytest.raises(TimeOverflowError, match="expected a finite makespan, got inf"):
        simulate("cnn", target, mode="timing")
    result = simulate("cnn", target, mode="timing", partition="cost")
    assert math.isfinite(result.makespan_us)
    assert set(result.placement.values()) == {"host"}


def test_the_cost_policy_compiles_each_candidate_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # the cost plan and its two baselines (capability, all on the root host) are compiled to be
    # timed; the winner's program is the one run (it was compiled a fourth time)
    api = importlib.import_module("hetsim.api")
    compiled: list[str] = []

    def counted(graph: Graph, platform: Any, plan: Any) -> Any:
        compiled.append(plan.policy)
        return compile_plan(graph, platform, plan)

    monkeypatch.setattr(api, "compile_plan", counted)
    model = load_model("cnn")
    result = simulate(model, "arm-riscv-soc", mode="timing", partition="cost")
    assert compiled == ["cost", "capability", "rules"]
    soc = build_platform(Target("arm-riscv-soc"))
    candidates = [
        partition_plan(model, soc, "cost"),
        partition_plan(model, soc, "capability"),
        partition_plan(model, soc, "rules", [{"op": "*", "device": "host"}]),
    ]
    metas = propagate(model, {})
    runs = [
        run_program(compile_plan(model, soc, plan), soc, metas, is_functional=False)
        for plan in candidates
    ]
    fastest = min(range(3), key=lambda i: runs[i].makespan_us)
    assert result.makespan_us == runs[fastest].makespan_us
    assert result.placement == candidates[fastest].placement


SMALL_NPU = 0.00004  # GiB, about 42 KiB: the cnn's weights fit, its activations do not
TINY_NPU = 0.00001  # about 10.5 KiB: not even its weights


@pytest.mark.parametrize(
    ("memory_gib", "error", "message"),
    [
        (
            SMALL_NPU,
            OutOfMemoryError,
            "sim at 3.04 us, small: out of memory in small.mem (need 64.0 KiB, 8.2 KiB free) "
            "for tensor conv1 of op conv1",
        ),
        (
            TINY_NPU,
            PartitionError,
            "memory small.mem: expected the weights of the ops placed on it to fit in 10.5 KiB, "
            "got 21.7 KiB (12 weight tensors: the largest conv2.weight, 18.0 KiB, read by op "
            "conv2)",
        ),
    ],
    ids=["capability-run-out-of-memory", "capability-weights-do-not-fit"],
)
def test_the_cost_policy_runs_when_the_capability_plan_cannot(
    memory_gib: float, error: type[Exception], message: str
) -> None:
    # partition="cost" failed with the capability plan's error, though its own plan fits
    target = {"kind": "hetero", "host": "x86-cpu", "devices": [
        {"kind": "npu", "name": "small", "memory_gib": memory_gib},
    ]}  # fmt: skip
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        simulate("cnn", target, mode="timing")
    result = simulate("cnn", target, mode="timing", partition="cost")
    assert set(result.placement.values()) == {"host"}
    on_host = simulate(
        "cnn", target, mode="timing", partition="rules", rules=[{"op": "*", "device": "host"}]
    )
    assert result.makespan_us == on_host.makespan_us


def test_a_shape_read_from_a_made_up_input_says_the_input_was_made() -> None:
    # a Reshape's shape given as an int64 graph input: with no inputs, simulate drew it from the
    # seed and failed with "expected a shape of 6 elements, got [2, 2]", naming no input
    model = Graph(
        "reshaped",
        (Op("Reshape", "y", ("x", "s"), ("out",)),),
        {"x": TensorType((2, 3), "float32"), "s": TensorType((2,), "int64")},
        ("out",),
    )
    message = _made_up(model, "s", "op y (Reshape): expected a shape of 6 elements")
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY)
    given = {"x": np.ones((2, 3), np.float32), "s": np.array([3, 2])}
    assert simulate(model, CPU_ONLY, inputs=given).outputs["out"].shape == (3, 2)


def _resized() -> Graph:
    """A Resize whose scales are a float graph input: its output's shape needs their values."""
    return Graph(
        "resized",
        (Op("Resize", "y", ("x", "", "scales"), ("out",)),),
        {"x": TensorType((1, 1, 2, 2), "float32"), "scales": TensorType((4,), "float32")},
        ("out",),
        opset=13,
    )


def test_a_shape_read_from_a_made_up_float_input_says_the_input_was_made() -> None:
    # a Resize's scales as a float graph input, made from the seed: "expected positive scales,
    # got [-0.159...]" named no input (the hint looked at the integer inputs only)
    model = _resized()
    message = _made_up(model, "scales", "op y (Resize): expected positive scales")
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY)


def _made_up(model: Graph, name: str, expected: str) -> str:
    """The error of an op that read input `name`, made from seed 0: `expected`, the value."""
    made = make_inputs(model, 0)[name].tolist()
    return (
        f"{expected}, got {made} (input {name!r} was made from seed 0, not given: a shape read "
        "from it is made up; pass it in inputs)"
    )


def test_the_made_up_input_hint_goes_only_to_an_op_that_reads_the_input() -> None:
    # any op's failure got the hint: a Transpose of the float input, with a bad perm, was said
    # to owe it to the made-up shape input that only a later Reshape reads
    model = Graph(
        "unrelated",
        (
            Op("Transpose", "t", ("x",), ("xt",), {"perm": [0, 5]}),
            Op("Reshape", "y", ("xt", "s"), ("out",)),
        ),
        {"x": TensorType((2, 3), "float32"), "s": TensorType((2,), "int64")},
        ("out",),
    )
    message = "op t (Transpose): expected a permutation of range(2), got [0, 5]"
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY)


@pytest.mark.parametrize(
    ("ops", "initializers", "message"),
    [
        # the op's dtype is wrong whatever the made-up values
        ((Op("Softmax", "sm", ("i",), ("out",)),), {},
         "op sm (Softmax): expected input 0 (input) of float16/32/64, got int64"),
        # its own constant is: the depth comes from an initializer, not from i
        ((Op("OneHot", "oh", ("i", "depth", "values"), ("out",)),),
         {"depth": np.array([-3]), "values": np.array([0.0, 1.0], np.float32)},
         "op oh (OneHot): expected one positive depth, got [-3]"),
    ],
    ids=["dtype", "constant"],
)  # fmt: skip
def test_no_made_up_input_hint_for_a_failure_that_any_values_give(
    ops: tuple[Op, ...], initializers: dict, message: str
) -> None:
    # both read the made-up integer input i, and had been told to pass it in inputs: the same
    # error came with it passed
    model = Graph("g", ops, {"i": TensorType((3,), "int64")}, ("out",), initializers)
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY)
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY, inputs={"i": np.zeros(3, np.int64)})


def test_the_made_up_input_hint_follows_a_relation_of_two_made_up_inputs() -> None:
    # a Range's delta of a - b: 0 where both were made up as 3 (seed 10); values shifted by one
    # kept the difference, failed alike, and the hint was dropped, though a=3, b=1 runs
    scalar = TensorType((), "int64")
    model = Graph(
        "delta",
        (
            Op("Sub", "d", ("a", "b"), ("delta",)),
            Op("Range", "r", ("start", "limit", "delta"), ("out",)),
        ),
        {"a": scalar, "b": scalar},
        ("out",),
        {"start": np.array(0), "limit": np.array(5)},
    )
    made = make_inputs(model, 10)
    assert made["a"] == made["b"]
    message = (
        "op r (Range): expected a non-zero delta, got 0 (inputs 'a', 'b' were made from seed 10, "
        "not given: a shape read from them is made up; pass them in inputs)"
    )
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY, seed=10)
    given = {"a": np.array(3), "b": np.array(1)}
    assert simulate(model, CPU_ONLY, inputs=given).outputs["out"].tolist() == [0, 2, 4]


def test_a_retry_that_fails_with_another_error_keeps_the_models_own() -> None:
    # a - b is 0: the Range fails; values drawn anew with a > b make a Range of thousands of
    # elements, whose sum is no longer computed: the retry's UnknownValueError had come out in
    # place of the model's own error
    scalar = TensorType((), "int64")
    ops = (
        Op("Sub", "d", ("a", "b"), ("delta",)),
        Op("Range", "r", ("start", "limit", "delta"), ("seq",)),
        Op("ReduceSum", "rs", ("seq",), ("total",), {"keepdims": 1}),
        Op("Reshape", "reshape", ("x", "total"), ("out",)),
    )
    inputs = {"a": scalar, "b": scalar, "x": TensorType((4,), "float32")}
    model = Graph("g", ops, inputs, ("out",), {"start": np.array(0), "limit": np.array(5000)})
    seed = next(
        seed
        for seed in range(100)
        if make_inputs(model, seed)["a"] == make_inputs(model, seed)["b"]
        and make_inputs(model, seed + 1)["a"] > make_inputs(model, seed + 1)["b"]
    )
    message = (
        f"op r (Range): expected a non-zero delta, got 0 (inputs 'a', 'b' were made from seed "
        f"{seed}, not given: a shape read from them is made up; pass them in inputs)"
    )
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        simulate(model, CPU_ONLY, seed=seed)


def test_the_made_up_input_hint_follows_a_shape_computed_from_the_input() -> None:
    # the Reshape reads s + one: both made from the seed
    model = Graph(
        "computed",
        (Op("Add", "a", ("s", "one"), ("s1",)), Op("Reshape", "y", ("x", "s1"), ("out",))),
        {
            "x": TensorType((2, 3), "float32"),
            "s": TensorType((2,), "int64"),
            "one": TensorType((2,), "int64"),
        },
        ("out",),
    )
    made = make_inputs(model, 0)
    shape = (made["s"] + made["one"]).tolist()
    message = (
        f"op y (Reshape): expected a shape of 6 elements, got {shape} (inputs 'one', 's' were "
        "made from seed 0, not given: a shape read from them is made up; pass them in inputs)"
    )
    with pytest.raises(OpError, match=f"^{re.escape(message)}$") as caught:
        simulate(model, CPU_ONLY)
    assert caught.value.op == "y"


def test_an_input_given_as_a_list_is_named_as_a_list() -> None:
    # read as a float64 array, it was refused as "got float64": the wrong problem for a list
    rows = [[1.0] * 784]
    with pytest.raises(ModelError, match=r"^input 'x': expected float32 array, got list$"):
        simulate("mlp", "x86-h100", inputs={"x": rows})
    with pytest.raises(ModelError, match=r"^input 'x': expected float32 array, got list$"):
        propagate(load_model("mlp"), {}, {"x": rows})


def test_the_cost_policy_keeps_every_op_on_the_host_where_offload_is_slower() -> None:
    # the estimate leaves out each launch's dispatch: the cost plan offloaded to the GPU and
    # took 81.7 us, where the host alone takes 68.2; simulate now runs the host alone as well
    on_host = simulate(
        "transformer", "x86-h100", mode="timing", dims={"seq": 16}, partition="rules",
        rules=[{"op": "*", "device": "host"}],
    )  # fmt: skip
    result = simulate("transformer", "x86-h100", mode="timing", dims={"seq": 16}, partition="cost")
    assert result.makespan_us == on_host.makespan_us
    assert set(result.placement.values()) == {"host"}
    assert result.to_dict()["extra"]["placement_notes"] == [
        "gpu0 runs none of the 33 ops: placed on host by the cost policy (33)",
        "partition cost: kept the root host plan; simulated us: cost 81.676, capability 167.645, "
        "root host 68.221",
    ]


def test_a_cost_plan_that_cannot_be_placed_leaves_its_baselines_to_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the cost plan's own PartitionError ended simulate, though the capability plan and the
    # host alone could run; with no baseline either, its error is the one raised
    api = importlib.import_module("hetsim.api")
    placed = api.partition_graph

    def refusing(graph: Graph, platform: Any, policy: str, *args: Any, **kwargs: Any) -> Any:
        if policy == "cost":
            raise PartitionError("cost: refused")
        return placed(graph, platform, policy, *args, **kwargs)

    monkeypatch.setattr(api, "partition_graph", refusing)
    model = load_model("cnn")
    found = simulate(model, "x86-h100", mode="timing", partition="cost")
    capability = simulate(model, "x86-h100", mode="timing")
    assert found.makespan_us <= capability.makespan_us
    monkeypatch.setattr(api, "_baseline_plans", lambda *args: ())
    with pytest.raises(PartitionError, match=r"^cost: refused$"):
        simulate(model, "x86-h100", mode="timing", partition="cost")


@pytest.mark.parametrize(
    ("make", "got"),
    [
        (np.asmatrix, "matrix, a subclass of numpy.ndarray (np.asarray(x) makes it a plain array)"),
        (
            lambda a: np.ma.array(a, mask=np.zeros_like(a, bool)),
            "MaskedArray, a subclass of numpy.ndarray (np.asarray(x) makes it a plain array)",
        ),
    ],
)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix's own
def test_an_array_subclass_input_is_refused(make: Any, got: str) -> None:
    # np.matrix stayed 2-D through a ReduceSum (shape (1, 2) for (2,)) and a masked array's
    # mask was honoured by some numpy calls and not others: both silently wrong
    graph = Graph(
        "g",
        (Op("ReduceSum", "sum", ("x", "axes"), ("y",), {"keepdims": 0}),),
        {"x": TensorType((2, 2), "float32")},
        ("y",),
        {"axes": np.array([1], np.int64)},
    )
    x = make(np.array([[1, 2], [3, 4]], np.float32))
    message = f"input 'x': expected float32 array, got {got}"
    for run in (
        lambda: simulate(graph, "x86-h100", inputs={"x": x}),
        lambda: execute(graph, {"x": x}),
    ):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_input_names_are_checked_as_execute_checks_them() -> None:
    model = load_model("mlp")
    x = make_inputs(model, 0)["x"]
    # a non-str key was a TypeError from sorting the names; a misspelt name was told as missing
    for mode in ("functional", "timing"):
        with pytest.raises(
            ModelError, match=r"^inputs: expected input names \(str\) as keys, got \[1\]$"
        ):
            simulate(model, "x86-h100", inputs={"x": x, 1: x}, mode=mode)
    with pytest.raises(
        ModelError, match=r"^inputs: expected \['x'\], got missing \['x'\] and unknown \['z'\]$"
    ):
        simulate(model, "x86-h100", inputs={"z": x})
    with pytest.raises(
        ModelError, match=r"^inputs: expected \['x'\], got missing \['x'\] and unknown \['z'\]$"
    ):
        execute(model, {"z": x})
    with pytest.raises(
        ModelError, match=r"^input 'x': expected float32 array, got a numpy scalar float32 "
    ):
        execute(model, {"x": np.float32(1.0)})


def test_buckets_may_be_numpy_integers() -> None:
    # refused as "expected increasing positive integers", where dims and seed take them
    found = simulate(
        "transformer", "x86-h100", mode="timing", dims={"seq": 8}, cuda_graph="buckets",
        buckets=np.array([16, 32]),
    )  # fmt: skip
    plain = simulate(
        "transformer", "x86-h100", mode="timing", dims={"seq": 8}, cuda_graph="buckets",
        buckets=[16, 32],
    )  # fmt: skip
    assert found.makespan_us == plain.makespan_us


def test_a_kernel_that_refuses_a_made_up_index_says_it_was_made_up() -> None:
    # an index made from the seed past data's 2 rows: the message named the op alone, as if
    # the model were at fault
    graph = Graph(
        "g",
        (Op("Gather", "pick", ("data", "i"), ("y",)),),
        {"i": TensorType((2000,), "int64")},  # past SMALL_VALUE_SIZE: computed in the run
        ("y",),
        {"data": np.zeros((2, 3), np.float32)},
    )
    with pytest.raises(OpError, match=r"\(input 'i' was made from seed 0, not given: if the value "
                       r"refused is read from it, pass it in inputs\)$"):  # fmt: skip
        simulate(graph, "x86-h100", seed=0)
    given = {"i": np.zeros(2000, np.int64)}
    assert simulate(graph, "x86-h100", inputs=given).outputs["y"].shape == (2000, 3)


def test_metas_cached_under_a_key_read_before_a_value_was_needed_are_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # threads interleaved: one read its key before another's propagation learned that the Resize
    # needs the scales' values, then found that other's metas under that value-less key (the
    # peak of a scale-8 run read 48 B, a scale-1 run's): here the interleaving is set by hand
    import hetsim.api as api
    from hetsim.kernels import input_signature

    model = _resized()
    x = np.ones((1, 1, 2, 2), np.float32)
    by_two = {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)}
    by_eight = {"x": x, "scales": np.array([1, 1, 8, 8], np.float32)}
    stale = input_signature(model, by_eight)  # read before anything learned the scales
    api._propagated(model, {}, by_two)  # the other thread: its metas under that same key
    reads = iter([stale])

    def first_stale(graph: Graph, arrays: dict) -> Any:
        return next(reads, None) or input_signature(graph, arrays)

    monkeypatch.setattr(api, "input_signature", first_stale)
    metas, _ = api._propagated(model, {}, by_eight)
    assert metas["out"].shape == (1, 1, 16, 16)


def test_a_first_propagation_that_learns_a_needed_value_runs_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # its key is read again after it learns the scales are needed: it had propagated again
    import hetsim.api as api

    calls: list[int] = []
    propagate_costs = api.propagate_costs

    def counted(*args: Any) -> Any:
        calls.append(1)
        return propagate_costs(*args)

    monkeypatch.setattr(api, "propagate_costs", counted)
    x = np.ones((1, 1, 2, 2), np.float32)
    inputs = {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)}
    metas, _ = api._propagated(_resized(), {}, inputs)
    assert metas["out"].shape == (1, 1, 4, 4)
    assert len(calls) == 1


# --- arguments of the lower-level calls, and the JSON of a cost run ---------------------------


UNUSABLE_LINK = {
    "kind": "hetero",
    "host": "x86-cpu",
    "devices": [{"kind": "cuda", "name": "gpu0", "link": {"bandwidth_gbps": 5e-324}}],
}


def test_a_cost_run_whose_candidate_cannot_run_is_strict_json() -> None:
    result = simulate("mlp", UNUSABLE_LINK, mode="timing", partition="cost")
    times = result.record.extra["cost_candidates_us"]
    assert times["capability"] is None  # it cannot run: no time, not inf
    assert result.record.extra["cost_kept"] != "capability"
    json.dumps(result.to_dict(), allow_nan=False)  # "Infinity" is no JSON
    assert "capability cannot run" in result.record.extra["placement_notes"][-1]


@pytest.mark.parametrize("field", ["metas", "costs"])
@pytest.mark.parametrize("value", [[1], "abc"])
def test_partition_refuses_metas_or_costs_that_are_not_mappings(field: str, value: object) -> None:
    graph, platform = load_model("mlp"), platform_of("x86-h100")
    metas, _ = propagate_costs(graph, {}, {})
    given = {"metas": metas, field: value}
    with pytest.raises(HetsimError, match=f"partition: expected {field} a mapping"):
        partition_plan(graph, platform, **given)  # type: ignore[arg-type]


@pytest.mark.parametrize("plans", [[], None, ()])
def test_fastest_plan_refuses_no_plans(plans: object) -> None:
    graph, platform = load_model("mlp"), platform_of("x86-h100")
    metas, _ = propagate_costs(graph, {}, {})
    with pytest.raises(HetsimError, match="fastest_plan: expected plans a non-empty sequence"):
        fastest_plan(plans, graph, platform, metas, {})  # type: ignore[arg-type]


def test_fastest_plan_checks_metas_and_dims() -> None:
    graph, platform = load_model("mlp"), platform_of("x86-h100")
    metas, _ = propagate_costs(graph, {}, {})
    plans = [partition_plan(graph, platform)]
    with pytest.raises(HetsimError, match="fastest_plan: expected metas a mapping"):
        fastest_plan(plans, graph, platform, None, {})  # type: ignore[arg-type]
    with pytest.raises(HetsimError, match=r"dims\.seq"):
        fastest_plan(plans, graph, platform, metas, {"seq": "x"})
