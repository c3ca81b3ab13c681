"""`hetsim.compare`: the notes under a comparison's table (iterations past every bucket, CUDA
devices a capture cannot reach) and what its capture column counts."""

from __future__ import annotations

import pytest

from hetsim.api import simulate
from hetsim.compare import compare, dims_trace
from hetsim.cost import capture_us, instantiate_us
from hetsim.platform import build_platform
from hetsim.target import Target
from tests.runtime.test_cuda_graph import NOTHING_TO_CAPTURE

NESTED = (
    "the CUDA devices node0/gpu0, node1/gpu0 are in nested levels, whose programs are not "
    "captured (docs/cuda-graphs.md, Limits)"
)


def test_iterations_past_every_bucket_are_one_note_with_their_count() -> None:
    # only the "past buckets" column said so: the notes were empty, where a run notes it
    found = compare(
        "transformer", "x86-h100", ["none", "buckets"], trace=dims_trace("decode:60", 10),
        buckets=(32, 64),
    )  # fmt: skip
    none, buckets = found.runs
    assert none.notes == ()
    assert buckets.notes == (
        "5 of 10 iterations past the largest bucket (64), so their kernels run eagerly, without "
        "padding (the first: iteration 5, seq=65)",
    )
    assert found.to_dict()["strategies"][1]["notes"] == list(buckets.notes)


def test_iterations_inside_the_buckets_add_no_note() -> None:
    found = compare("transformer", "x86-h100", ["buckets"], trace=dims_trace("decode:60", 5),
                    buckets=(32, 64))  # fmt: skip
    assert found.runs[0].notes == ()


@pytest.mark.parametrize(("strategy", "note"), NOTHING_TO_CAPTURE)
def test_cuda_devices_of_nested_levels_are_named_as_why_nothing_is_captured(
    strategy: str, note: str
) -> None:
    # two-node-h100's GPUs sit in its nodes' levels: the notes said only that the root level
    # had nothing to capture, as for a target without a GPU
    found = compare("transformer", "two-node-h100", [strategy], iterations=2)
    assert found.runs[0].notes == (f"{note}; {NESTED}",)
    result = simulate("transformer", "two-node-h100", mode="timing", dims={"seq": 8},
                      cuda_graph=strategy)  # fmt: skip
    assert result.record.extra["cuda_graph_notes"] == [f"{note}; {NESTED}"]


def test_one_nested_cuda_device_is_named_in_the_singular() -> None:
    # one x86-h100 machine under an orchestrating host, as each node of two-node-h100
    target = {
        "kind": "hetero", "host": "x86/xeon-8480c", "executor": "tvm/relax-vm", "runtime": "cpp",
        "devices": [{"tag": "x86-h100", "name": "node0"}],
    }  # fmt: skip
    found = compare("cnn", target, ["regions"], iterations=1)
    assert found.runs[0].notes == (
        "no CUDA kernels at the root level to capture: every kernel runs eagerly; the CUDA "
        "device node0/gpu0 is in a nested level, whose program is not captured "
        "(docs/cuda-graphs.md, Limits)",
    )


def test_the_capture_column_counts_instantiation_too() -> None:
    # docs/cost-model.md's capture_us is the capture alone; the column and GraphStats.capture_us
    # add cudaGraphInstantiate, as docs/cuda-graphs.md ("Cost formulas") says
    found = compare("transformer", "x86-h100", ["regions"], trace=[{"seq": 32}])
    header = found.format_table().splitlines()[1]
    assert "capture (us)" in header.split("  ")
    gpu = build_platform(Target("x86-h100")).processors["gpu0"]
    nodes = 33
    assert (round(capture_us(gpu, nodes), 2), instantiate_us(gpu, nodes)) == (106.92, 43.0)
    assert found.rows()[0]["captures"] == 1
    expected = capture_us(gpu, nodes) + instantiate_us(gpu, nodes)
    assert found.runs[0].stats.capture_us == pytest.approx(expected)
    assert round(found.rows()[0]["capture_us"], 2) == 149.92
