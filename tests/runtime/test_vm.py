"""The VM compiler: exact bytecode for small graphs, and the instructions it does not emit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hetsim.api import platform_of, simulate
from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute, propagate
from hetsim.runtime import BranchShape, Invoke, Launch, Ret, compile_vm, place
from hetsim.sim import run_program
from tests.sim.tiny import device, graph, target

TWO_GPUS = target(device("gpu0", ["Relu"]), device("gpu1", ["Neg", "Mul"]))


def two_device_graph() -> Graph:
    ops = (
        Op("Mul", "scale", ("w", "w"), ("w2",)),  # constants only: folded at load time
        Op("Relu", "relu", ("x",), ("a",)),
        Op("Neg", "neg", ("a",), ("b",)),
        Op("Add", "add", ("b", "w2"), ("c",)),
    )
    inputs = {"x": TensorType(("n",), "float32")}
    return Graph("g", ops, inputs, ("c", "a"), {"w": np.full(4, 3.0, np.float32)})


def test_listing_of_a_two_device_program() -> None:
    platform = platform_of(TWO_GPUS)
    model = two_device_graph()
    program = compile_vm(model, platform, place(model, platform))
    assert program.listing().splitlines() == [
        "   0  ALLOC        x@gpu0.mem in gpu0.mem on gpu0",
        "   1  COPY         x -> x@gpu0.mem on gpu0 via host.mem--gpu0.mem",
        "   2  ALLOC        a in gpu0.mem on gpu0",  # written by gpu0's work
        "   3  LAUNCH       relu@gpu0(x@gpu0.mem) -> a",
        "   4  FREE         x@gpu0.mem in gpu0.mem",
        "   5  ALLOC        a@gpu1.mem in gpu1.mem on gpu0",
        # the source memory's device carries the copy, over both hops of the route
        "   6  COPY         a -> a@gpu1.mem on gpu0 via host.mem--gpu0.mem, host.mem--gpu1.mem",
        "   7  ALLOC        b in gpu1.mem on gpu1",
        # made on gpu0's stream: gpu1 waits for it on the device, the host does not block
        "   8  LAUNCH       neg@gpu1(a@gpu1.mem) -> b after a@gpu1.mem",
        "   9  FREE         a@gpu1.mem in gpu1.mem",
        "  10  ALLOC        b@host.mem in host.mem on gpu1",
        "  11  COPY         b -> b@host.mem on gpu1 via host.mem--gpu1.mem",
        "  12  ALLOC        c in host.mem",  # the host writes it: no stream
        "  13  SYNC         gpu1",  # the host reads b@host.mem, made on gpu1's stream
        "  14  CALL         add(b@host.mem, w2) -> c",
        "  15  FREE         b@host.mem in host.mem",
        "  16  FREE         b in gpu1.mem",
        "  17  ALLOC        a@host.mem in host.mem on gpu0",  # outputs end in host memory
        "  18  COPY         a -> a@host.mem on gpu0 via host.mem--gpu0.mem",
        "  19  FREE         a in gpu0.mem",  # its last use was that copy (stream-ordered)
        "  20  SYNC         gpu0",
        "  21  RET          c=c, a=a@host.mem",
    ]
    assert [op.name for op in program.folded] == ["scale"]
    assert [program.slots[s].name for s in program.constants] == ["w2"]
    assert dict(program.inputs) == {"x": 0}


def test_the_final_syncs_come_in_the_documented_order() -> None:
    # docs/runtime.md rule 4: the stream that made an output's copy in host memory first (gpu1,
    # which copies b back), then every other stream with unsynchronized work, as first used
    platform = platform_of(TWO_GPUS)
    model = graph(Op("Relu", "r", ("x",), ("a",)), Op("Neg", "n", ("a",), ("b",)), outputs=("b",))
    tail = compile_vm(model, platform, place(model, platform)).listing().splitlines()[-6:]
    assert [line[6:].rstrip() for line in tail] == [
        "ALLOC        b@host.mem in host.mem on gpu1",
        "COPY         b -> b@host.mem on gpu1 via host.mem--gpu1.mem",
        "FREE         b in gpu1.mem",  # after every copy back, before any SYNC
        "SYNC         gpu1",
        "SYNC         gpu0",
        "RET          b=b@host.mem",
    ]


def test_the_program_computes_what_execute_does() -> None:
    model = two_device_graph()
    x = np.arange(-2.0, 2.0, dtype=np.float32)
    result = simulate(model, TWO_GPUS, inputs={"x": x})
    expected = execute(model, {"x": x})
    assert sorted(result.outputs) == ["a", "c"]
    for name in expected:
        np.testing.assert_array_equal(result.outputs[name], expected[name])
    np.testing.assert_array_equal(result.outputs["c"], [9.0, 9.0, 9.0, 8.0])


def test_a_host_only_program_has_no_copies_or_syncs() -> None:
    platform = platform_of(target(device("gpu0", ["Conv"])))
    model = graph(Op("Relu", "r1", ("x",), ("a",)), Op("Neg", "r2", ("a",), ("b",)), outputs=("b",))
    program = compile_vm(model, platform, place(model, platform))
    assert program.listing().splitlines() == [
        "   0  ALLOC        a in host.mem",
        "   1  CALL         r1(x) -> a",
        "   2  ALLOC        b in host.mem",
        "   3  CALL         r2(a) -> b",
        "   4  FREE         a in host.mem",
        "   5  RET          b=b",
    ]


def test_a_dead_output_is_freed_right_after_its_op() -> None:
    platform = platform_of(target(device("gpu0", ["Conv"])))
    ops = (Op("Relu", "r1", ("x",), ("a",)), Op("Neg", "r2", ("x",), ("b",)))
    program = compile_vm(
        graph(*ops, outputs=("b",)), platform, place(graph(*ops, outputs=("b",)), platform)
    )
    assert "   2  FREE         a in host.mem" in program.listing().splitlines()


def branching_program(threshold: int):
    """relu on gpu0, then: if n >= threshold jump over neg, else run neg too."""
    platform = platform_of(target(device("gpu0", ["*"])))
    model = two_device_graph()
    program = compile_vm(model, platform, place(model, platform))
    code = list(program.code)
    launch_neg = next(i for i, ins in enumerate(code) if isinstance(ins, Launch) and ins.op == 1)
    # skip neg (and everything up to RET) when the bound n is large
    ret = len(code) - 1
    code.insert(launch_neg, BranchShape("n", ">=", threshold, ret + 1))
    return dataclasses.replace(program, code=tuple(code)), platform, model


@pytest.mark.parametrize(("n", "runs_neg"), [(4, False), (1, True)])
def test_branch_shape_jumps_on_the_bound_dim(n: int, runs_neg: bool) -> None:
    program, platform, model = branching_program(threshold=4)
    metas = propagate(model, {"n": n})
    record = run_program(program, platform, metas, dims={"n": n}, is_functional=False)
    kernels = [s.name for s in record.spans if s.stream == "stream0" and s.category == "compute"]
    assert ("neg" in kernels) == runs_neg
    assert [s.name for s in record.spans if s.name.startswith("branch")][:1] == ["branch n >= 4"]


def test_invoke_without_a_nested_program_is_an_error() -> None:
    platform = platform_of(TWO_GPUS)
    model = two_device_graph()
    program = compile_vm(model, platform, place(model, platform))
    program = dataclasses.replace(program, code=(Invoke("vdevice0"), Ret(())))
    with pytest.raises(
        SimulationError,
        match=r"^INVOKE vdevice0: expected the number of a nested program \(0 compiled\), "
        r"got 0$",
    ):
        run_program(program, platform, propagate(model, {"n": 4}), is_functional=False)


def test_a_placement_on_a_nested_level_is_an_error() -> None:
    platform = platform_of("arm-riscv-soc")
    model = graph(Op("Relu", "r1", ("x",), ("a",)), outputs=("a",))
    with pytest.raises(
        SimulationError,
        match=r"^op r1 \(Relu\): expected a placement on the host of level \(root\) or one "
        r"of its devices \['vdevice0'\], got 'vdevice0/npu'$",
    ):
        compile_vm(model, platform, {"r1": "vdevice0/npu"})
