"""Compiling what a caller hands `compile_vm` and `compile_plan`: a placement that misses an op
or names a nested level, a plan made for another graph or platform, and a graph-executor root
with ops folded at load time.

Tiny-target parameters (tests/sim/tiny.py): a graph executor at the root pays ``node_us = 1``
per node; gpu0 ``kernel_latency_us = 3``, 2000 B/µs, ``launch_us = 4``, ``sync_us = 2``; its link
1000 B/µs with ``latency_us = 10``; x is float32[250] (1000 B).
"""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.api import platform_of, simulate
from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute
from hetsim.models import load_model
from hetsim.partition import partition
from hetsim.runtime import Launch, compile_plan, compile_vm, place
from tests.runtime.nested_tiny import nested
from tests.sim.tiny import N, device, graph, target

ONE_GPU = target(device("gpu0", ["Relu", "Add"]))
NESTED = target(nested("acc", device("npu", ["Relu"])))


def relu_graph() -> Graph:
    return graph(Op("Relu", "r1", ("x",), ("y",)), outputs=("y",))


def test_a_placement_without_an_op_names_it() -> None:
    platform = platform_of(ONE_GPU)
    with pytest.raises(
        SimulationError,
        match=r"^placement: expected a processor for every op of graph tiny, got none for op r1 "
        r"\(Relu\)$",
    ):
        compile_vm(relu_graph(), platform, {})


def test_an_op_placed_on_a_nested_level_by_hand_is_refused() -> None:
    # it compiled to a LAUNCH on a stream 'acc' that no processor has, and binding it failed
    # with KeyError: 'acc'
    platform = platform_of(NESTED)
    with pytest.raises(
        SimulationError,
        match=r"^op r1 \(Relu\): expected a placement on a processor of level \(root\) "
        r"\['host'\], got 'acc', a nested level \(hetsim.partition places ops there, and "
        r"compile_plan compiles them\)$",
    ):
        compile_vm(relu_graph(), platform, {"r1": "acc"})


def test_a_plan_of_another_platform_is_named() -> None:
    # it raised KeyError: 'vdevice0' from inside the compiler
    model = load_model("mlp")
    plan = partition(model, platform_of("arm-riscv-soc"))
    with pytest.raises(
        SimulationError,
        match=r"^compile_plan: expected a plan of graph mlp on platform x86-h100, got a plan "
        r"of mlp on arm-riscv-soc$",
    ):
        compile_plan(model, platform_of("x86-h100"), plan)


def test_a_plan_of_another_graph_is_named() -> None:
    soc = platform_of("arm-riscv-soc")
    plan = partition(load_model("mlp"), soc)
    with pytest.raises(
        SimulationError,
        match=r"^compile_plan: expected a plan of graph cnn on platform arm-riscv-soc, got a "
        r"plan of mlp on arm-riscv-soc$",
    ):
        compile_plan(load_model("cnn"), soc, plan)


def test_a_plan_of_a_graph_of_the_same_name_is_named() -> None:
    platform = platform_of(ONE_GPU)
    other = graph(Op("Relu", "other", ("x",), ("y",)), outputs=("y",))
    with pytest.raises(
        SimulationError,
        match=r"^compile_plan: expected a plan of graph tiny on platform hetero\[cuda\], got one "
        r"that names 'r1', which they lack \(a plan of another graph or platform of the same "
        r"name\?\)$",
    ):
        compile_plan(other, platform, partition(relu_graph(), platform))


def test_compile_plan_names_an_argument_of_the_wrong_type() -> None:
    model = relu_graph()
    platform = platform_of(ONE_GPU)
    with pytest.raises(SimulationError, match=r"^compile_plan: expected plan a Plan, got dict$"):
        compile_plan(model, platform, {})  # type: ignore[arg-type]
    with pytest.raises(SimulationError, match=r"^compile_plan: expected graph a Graph, got str$"):
        compile_plan("tiny", platform, partition(model, platform))  # type: ignore[arg-type]


def folded_graph() -> Graph:
    """neg is folded at load time (its input is a weight); add reads its result."""
    ops = (Op("Neg", "neg", ("w",), ("v",)), Op("Add", "add", ("x", "v"), ("y",)))
    inputs = {"x": TensorType((N,), "float32")}
    return Graph("folded", ops, inputs, ("y",), {"w": np.full(N, 2.0, np.float32)})


def test_a_graph_executor_root_computes_its_folded_constants() -> None:
    # functional mode raised KeyError: 'v' (the root's node list did not carry the folded ops)
    tgt = {**ONE_GPU, "executor": {"kind": "graph", "node_us": 1.0}}
    result = simulate(folded_graph(), tgt)
    np.testing.assert_array_equal(
        result.outputs["y"], execute(folded_graph(), dict(result.inputs))["y"]
    )
    # nodes: copy x, launch add, copy y (1 + 4 each), sync (1); x lands at 5 + 10 + 1 = 16,
    # add takes 3 + 3000 / 2000 = 4.5 (x, v, y), y lands at 20.5 + 11, sync_us 2, ret 1
    assert result.makespan_us == pytest.approx(16 + 4.5 + 11 + 2 + 1)
    assert simulate(folded_graph(), tgt, mode="timing").makespan_us == result.makespan_us


def test_place_then_compile_vm_still_compiles_a_root_with_devices() -> None:
    platform = platform_of(ONE_GPU)
    model = relu_graph()
    program = compile_vm(model, platform, place(model, platform))
    # the op stays on the root's device (the nested-level check refuses only nested levels)
    assert [ins.processor for ins in program.code if isinstance(ins, Launch)] == ["gpu0"]
    assert [type(ins).__name__ for ins in program.code][-1] == "Ret"


def test_each_program_places_its_units_and_runs_the_ops_its_segments_name() -> None:
    # ops are found by counting where a segment holds every op in order, else by name; a
    # program's placement is made from its units when first read
    model = load_model("cnn")
    soc = platform_of("arm-riscv-soc")
    plan = partition(model, soc)
    compiled = compile_plan(model, soc, plan)
    for program in compiled.programs:
        segments = plan.levels[program.level].segments
        if program.level:  # one program per invocation: the first one's segments
            parent = next(s for s in plan.segments if s.device == program.level)
            segments = tuple(plan.children(parent.id))
        expected = {}
        for segment in segments:
            expected.update({segment.id: segment.device} if segment.is_nested
                            else dict.fromkeys(segment.ops, segment.device))  # fmt: skip
        assert dict(program.placement) == expected
        assert len(program.placement) == len(expected)
        with pytest.raises(KeyError):  # a name no unit has, as the dict it replaced
            program.placement["(no such unit)"]
        launched = [program.ops[i.op].name for i in program.code if isinstance(i, Launch)]
        on_devices = [n for s in segments if not s.is_nested and s.device != program.host
                      for n in s.ops]  # fmt: skip
        assert sorted(launched) == sorted(on_devices)
    root = compiled.root
    assert root.placement == {"s0": "vdevice0", "softmax": "host"}  # as a mapping compares
    assert [len(program.placement) for program in compiled.programs] == [2, 11]
