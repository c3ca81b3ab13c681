"""`hetsim compare`: traces of shapes, the multi-iteration driver, its table, JSON, plot, CLI."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.cli import compare as compare_cli
from hetsim.cli import main
from hetsim.compare import MAX_ITERATIONS, Comparison, compare, dims_trace, load_shapes
from hetsim.compare.comparison import SAME_AS_WHOLE
from hetsim.errors import (
    HetsimError,
    ModelError,
    OutOfMemoryError,
    PartitionError,
    SimulationError,
    UnknownValueError,
)
from hetsim.ir import Graph, GraphBuilder, Op, TensorType
from hetsim.runtime.cuda_graph import STRATEGIES

# -- traces -----------------------------------------------------------------------------------


def test_decode_trace_grows_by_its_step() -> None:
    assert dims_trace("decode:30", 3) == ({"seq": 30}, {"seq": 31}, {"seq": 32})
    assert dims_trace("decode:30:4", 2, dims=("seq", "kv")) == (
        {"seq": 30, "kv": 30},
        {"seq": 34, "kv": 34},
    )


def test_uniform_trace_draws_from_the_seed() -> None:
    expected = np.random.default_rng(7).integers(5, 9, 6).tolist()
    assert [d["seq"] for d in dims_trace("uniform:5:8", 6, seed=7)] == expected
    assert dims_trace("fixed:12", 2) == ({"seq": 12}, {"seq": 12})


@pytest.mark.parametrize("spec", ["normal:3", "decode", "uniform:4", "fixed:-1", "decode:a", "x"])
def test_a_bad_trace_spec_is_an_error(spec: str) -> None:
    message = (
        r"^--seq-dist: expected fixed:N, uniform:LO:HI or decode:START\[:STEP\], "
        rf"got '{spec}'$"
    )
    with pytest.raises(HetsimError, match=message):
        dims_trace(spec, 3)


def test_a_uniform_range_must_not_be_empty() -> None:
    # numpy's "low >= high" came out of the draw as a traceback
    with pytest.raises(HetsimError, match=r"^--seq-dist: expected uniform:LO:HI with LO <= HI, "
                       r"got 'uniform:10:2'$"):  # fmt: skip
        dims_trace("uniform:10:2", 3)
    assert dims_trace("uniform:4:4", 2) == ({"seq": 4}, {"seq": 4})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[3, 5]", ({"seq": 3}, {"seq": 5})),
        ('[{"seq": 3}, {"seq": 9}]', ({"seq": 3}, {"seq": 9})),
        ("3 5\n7\n", ({"seq": 3}, {"seq": 5}, {"seq": 7})),
    ],
)
def test_shapes_files(tmp_path: Path, text: str, expected: tuple[dict[str, int], ...]) -> None:
    path = tmp_path / "shapes.txt"
    path.write_text(text)
    assert load_shapes(path) == expected


def test_a_bad_shapes_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "shapes.json"
    path.write_text("[3, -1]")
    with pytest.raises(HetsimError, match=r"^--shapes .*shapes\.json: expected integer sizes "):
        load_shapes(path)
    with pytest.raises(HetsimError, match=r"sizes >= 0, got -1$"):
        load_shapes(path)


def test_a_zero_size_is_taken_as_dims_take_it(tmp_path: Path) -> None:
    # dims={"seq": 0} runs on empty tensors: a trace of it (decode from 0) was refused
    assert dims_trace("decode:0:2", 3) == ({"seq": 0}, {"seq": 2}, {"seq": 4})
    assert dims_trace("fixed:0", 1) == ({"seq": 0},)
    path = tmp_path / "shapes.json"
    path.write_text("[0, 3]")
    assert load_shapes(path) == ({"seq": 0}, {"seq": 3})


@pytest.mark.parametrize(
    ("text", "got"), [("[]", "an empty list"), ("", "no sizes"), (" \n", "no sizes")]
)
def test_a_shapes_file_without_an_iteration_names_the_file(
    tmp_path: Path, text: str, got: str
) -> None:
    # compare said "got an empty trace", the only --shapes error that did not name the file
    path = tmp_path / "shapes.json"
    path.write_text(text)
    with pytest.raises(HetsimError) as error:
        load_shapes(path)
    assert str(error.value) == f"--shapes {path}: expected at least one iteration, got {got}"


def test_a_shapes_file_that_starts_as_json_and_is_not_says_so(tmp_path: Path) -> None:
    # read as whitespace-separated ints: "expected integer sizes >= 0, got '[4'"
    path = tmp_path / "shapes.json"
    path.write_text("[4, 8\n")
    message = (
        f"--shapes {path}: expected a JSON list or whitespace-separated integers, got invalid "
        "JSON (Expecting ',' delimiter at line 2, column 1)"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        load_shapes(path)


@pytest.mark.parametrize(
    ("text", "got"),
    [
        # json keeps the last of a key given twice: the run took seq=8 without a word
        ('[{"seq": 4,\n "seq": 8}]', "found the key 'seq' twice at line 2"),
        # json's RecursionError came out as a traceback
        ("[" * 100_000 + "]" * 100_000, "nested deeper than it can be read"),
        # an int too long for int(): a bare ValueError
        (
            "[" + "9" * 5000 + "]",
            "an integer of 5000 digits, more than Python reads (4300)",
        ),
    ],
    ids=["key-twice", "nested-100000-deep", "int-of-5000-digits"],
)
def test_a_shapes_file_json_cannot_read_whole_is_refused(
    tmp_path: Path, text: str, got: str
) -> None:
    path = tmp_path / "shapes.json"
    path.write_text(text)
    message = (
        f"--shapes {path}: expected a JSON list or whitespace-separated integers, got invalid "
        f"JSON ({got})"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        load_shapes(path)


def test_ints_in_a_shapes_file_count_the_iterations_of_a_static_model(tmp_path: Path) -> None:
    path = tmp_path / "shapes.txt"
    path.write_text("4 8")
    assert load_shapes(path, dims=()) == ({}, {})


# -- the driver -------------------------------------------------------------------------------


def test_a_static_cnn_captures_once_and_replays() -> None:
    found = compare("cnn", "x86-h100", ("none", "regions"), iterations=5)
    none, regions = found.runs
    eager_us = simulate("cnn", "x86-h100", mode="timing").makespan_us
    first_us = simulate("cnn", "x86-h100", mode="timing", cuda_graph="regions").makespan_us
    assert none.iterations_us == (eager_us,) * 5
    assert regions.iterations_us[0] == first_us
    assert len(set(regions.iterations_us[1:])) == 1
    assert regions.iterations_us[1] < eager_us < first_us
    assert (regions.stats.captures, regions.stats.replays) == (1, 4)
    rows = found.rows()
    assert rows[0]["speedup"] == 1.0
    assert rows[1]["speedup"] == pytest.approx(none.total_us / regions.total_us)
    assert rows[1]["per_iteration_us"] == pytest.approx(regions.total_us / 5)


def test_a_varying_sequence_recaptures_unless_bucketed() -> None:
    trace = [{"seq": s} for s in (10, 12, 14, 20, 30)]
    found = compare("transformer", "x86-h100", trace=trace, buckets=(16, 32, 64))
    by_name = {run.strategy: run for run in found.runs}
    assert [r.strategy for r in found.runs] == ["none", "whole", "regions", "buckets"]
    assert (by_name["regions"].stats.captures, by_name["regions"].stats.replays) == (5, 0)
    # padded to 16, 16, 16, 32, 32: one graph per bucket
    assert (by_name["buckets"].stats.captures, by_name["buckets"].stats.replays) == (2, 3)
    assert by_name["buckets"].stats.padding_waste_us > 0
    assert by_name["regions"].stats.padding_waste_us == 0
    assert by_name["whole"].iterations_us == by_name["regions"].iterations_us
    assert by_name["buckets"].total_us < by_name["none"].total_us < by_name["regions"].total_us


def test_outputs_of_every_strategy_match_eager() -> None:
    trace = [{"seq": 5}, {"seq": 9}]
    found = compare("transformer", "x86-h100", trace=trace, buckets=(8, 16), mode="functional")
    eager = found.outputs["none"]
    for name in ("whole", "regions", "buckets"):
        for output, value in eager.items():
            np.testing.assert_array_equal(found.outputs[name][output], value)
            assert value.shape == (1, 9, 64)


def test_a_model_whose_shapes_hold_at_the_traced_sizes_only_runs() -> None:
    # the plan had been estimated at n=1, where a Reshape of [n] to [-1, 2] fails: compare
    # refused the model, asking for dims=, which it does not take
    reshape = Op("Reshape", "r", ("x", "s"), ("y",))
    model = Graph("pairs", (reshape,), {"x": TensorType(("n",), "float32")}, ("y",),
                  {"s": np.array([-1, 2], np.int64)})  # fmt: skip
    found = compare(model, "x86-h100", ["none"], trace=[{"n": 4}, {"n": 6}])
    alone = [simulate(model, "x86-h100", mode="timing", dims={"n": n}) for n in (4, 6)]
    assert found.runs[0].iterations_us == tuple(r.makespan_us for r in alone)


def test_an_op_that_fails_at_every_size_is_refused_as_its_own_error() -> None:
    # it had been said as the estimate's ("... set to 1 for the plan's estimate (n=1), got op
    # add (Add) ... (bind them with dims=, ...)"), which no dims would mend
    add = Op("Add", "add", ("x", "w"), ("y",))
    model = Graph("bad", (add,), {"x": TensorType(("n", 3), "float32")}, ("y",),
                  {"w": np.ones(4, np.float32)})  # fmt: skip
    message = "op add (Add): expected broadcastable shapes, got [4, 3] and [4]"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        compare(model, "x86-h100", ["none"], trace=[{"n": 4}])


def test_an_unknown_strategy_is_an_error_named_by_its_place_in_strategies() -> None:
    # named cuda_graph, an argument compare does not take
    message = "strategies[1]: expected one of buckets, none, regions, whole, got 'hole' "
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}"):
        compare("cnn", "x86-h100", ("none", "hole"), iterations=1)


def test_a_trace_of_numpy_sizes_gives_a_plain_json_comparison() -> None:
    # the np.int64 was kept: json.dumps(to_dict()) raised "Object of type int64 is not JSON
    # serializable"
    found = compare("transformer", "x86-h100", ("none",), trace=[{"seq": np.int64(8)}])
    assert type(found.trace[0]["seq"]) is int
    assert json.loads(json.dumps(found.to_dict()))["trace"] == [{"seq": 8}]


@pytest.mark.parametrize("strategies", [(), [], ""])
def test_no_strategy_is_an_error(strategies: object) -> None:
    # () failed in Comparison.baseline with an IndexError
    message = (
        f"strategies: expected one or more of none, whole, regions, buckets, got {strategies!r}"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        compare("cnn", "x86-h100", strategies, iterations=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("strategies", "names"), [("whole", "['whole']"), ("none, whole", "['none', 'whole']")]
)
def test_a_str_of_strategies_is_an_error_naming_the_list(strategies: str, names: str) -> None:
    # "whole" compared 'w', 'h', ..., then was refused as "expected one or more of none,
    # whole, regions, buckets, got 'whole'", which lists the very name it got
    message = (
        "strategies: expected a list or tuple of names from none, whole, regions, buckets, got "
        f"the str {strategies!r} (a list of names: {names})"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        compare("cnn", "x86-h100", strategies, iterations=1)  # type: ignore[arg-type]


def test_a_strategy_twice_is_an_error() -> None:
    # printed two identical rows
    message = "strategies: expected each strategy once, got 'whole' twice"
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        compare("cnn", "x86-h100", ("whole", "none", "whole"), iterations=1)


def test_a_strategy_that_is_not_a_name_is_an_error() -> None:
    # failed as unhashable
    message = "strategies[0]: expected one of buckets, none, regions, whole, got ['whole']"
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}"):
        compare("cnn", "x86-h100", (["whole"],), iterations=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        (
            [{"seq": 4}, {"sq": 4}],
            "trace[1]: model transformer: expected one of its symbolic dims (seq), got 'sq' "
            "(did you mean 'seq'?)",
        ),
        ([{"seq": -1}], "trace[0]: dims.seq: expected an integer >= 0, got -1"),
        ([4], "trace[0]: dims: expected a mapping of dim name -> size, got 4"),
    ],
)
def test_trace_dims_are_checked_against_the_model(trace: list[object], message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        compare("transformer", "x86-h100", ("none",), trace=trace)  # type: ignore[arg-type]


def test_an_empty_trace_is_an_error() -> None:
    with pytest.raises(HetsimError, match=r"^compare: expected at least one iteration, got an"):
        compare("cnn", "x86-h100", trace=[])


@pytest.mark.parametrize("iterations", [0, -3, 1.5, True, 1_000_001, 2**64])
def test_iterations_outside_one_to_a_million_are_an_error(iterations: object) -> None:
    # 0 used to run the default 20 iterations, -3 with a uniform trace failed inside numpy, and
    # 2**64 raised an OverflowError making the trace (a MemoryError for 10**12 in dims_trace)
    message = f"iterations: expected an integer from 1 to 1000000, got {iterations!r}"
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        compare("cnn", "x86-h100", ("none",), iterations=iterations)  # type: ignore[arg-type]
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        dims_trace("uniform:4:8", iterations)  # type: ignore[arg-type]


def test_table_and_json() -> None:
    found = compare("cnn", "x86-h100", ("none", "whole"), iterations=2)
    assert isinstance(found, Comparison)
    lines = found.format_table().splitlines()
    assert lines[0] == "cnn on x86-h100, 2 iterations"
    assert lines[1].split() == [
        "strategy", "total", "(us)", "per", "iter", "(us)", "speedup", "captures", "capture",
        "(us)", "replays", "past", "buckets", "graph", "mem", "(B)", "padding", "waste", "(us)",
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[3:]] == ["none", "whole"]
    data = json.loads(json.dumps(found.to_dict()))
    assert data["iterations"] == 2
    assert [row["strategy"] for row in data["strategies"]] == ["none", "whole"]
    assert data["strategies"][1]["captures"] == 1


def test_speedups_without_eager_name_their_baseline() -> None:
    # without none, the column was over the first strategy listed, and read as over eager
    trace = [{"seq": 4}, {"seq": 5}, {"seq": 4}]
    found = compare("transformer", "x86-h100", ("whole", "buckets"), trace=trace, buckets=(8,))
    whole_us, buckets_us = (sum(run.iterations_us) for run in found.runs)
    assert [row["speedup"] for row in found.rows()] == [1.0, whole_us / buckets_us]
    notes = [line for line in found.format_table().splitlines() if line.startswith("note:")]
    assert notes == [
        "note: speedup is over whole, the first strategy: eager (none) was not compared"
    ]
    data = json.loads(json.dumps(found.to_dict()))
    assert data["baseline"] == "whole"
    assert [row["speedup"] for row in data["strategies"]] == [1.0, whole_us / buckets_us]


def test_speedups_over_eager_add_no_note() -> None:
    found = compare("cnn", "x86-h100", ("whole", "none"), iterations=2)
    whole, none = found.runs
    assert [row["speedup"] for row in found.rows()] == [none.total_us / whole.total_us, 1.0]
    assert not [line for line in found.format_table().splitlines() if line.startswith("note:")]
    assert found.to_dict()["baseline"] == "none"


def test_a_strategy_that_falls_back_is_noted_once_by_name() -> None:
    # arm-riscv-soc has no CUDA device: whole finds nothing to capture and runs eagerly
    found = compare("cnn", "arm-riscv-soc", ("none", "whole"), iterations=1)
    notes = [line for line in found.format_table().splitlines() if line.startswith("note:")]
    assert notes == ["note: whole: no kernel launches at the root level to capture"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"trace": [{}]}, "trace[0]: expected a size for each symbolic dim of model transformer, "
         "got none for 'seq'"),
        ({"trace": {"seq": 4}}, "trace: expected a sequence of dims, one mapping per iteration, "
         "got {'seq': 4}"),
        ({"seed": "a"}, "seed: expected a non-negative integer, got 'a'"),
        ({"buckets": None}, "buckets: expected increasing positive integers, got None"),
    ],
)  # fmt: skip
def test_bad_arguments_are_named(options: dict[str, Any], message: str) -> None:
    # they failed with a TypeError, or a message that did not name the iteration
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        compare("transformer", "x86-h100", **options)


def test_a_trace_may_be_any_iterable_of_dims() -> None:
    lengths = (d for d in [{"seq": 8}, {"seq": 12}])
    found = compare("transformer", "x86-h100", ("none",), trace=lengths)
    assert found.trace == ({"seq": 8}, {"seq": 12})


# -- the command ------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hetsim")
    compare_cli.register(parser.add_subparsers())
    args = parser.parse_args(["compare", *argv])
    return int(args.func(args))


def test_cli_prints_json_and_writes_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shapes = tmp_path / "shapes.json"
    shapes.write_text("[8, 12, 8]")
    plot = tmp_path / "bars.png"
    argv = ["transformer", "--target", "x86-h100", "--cuda-graph", "none,buckets"]
    argv += ["--shapes", str(shapes), "--buckets", "16", "--json", "--plot", str(plot)]
    assert run_cli(argv) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["trace"] == [{"seq": 8}, {"seq": 12}, {"seq": 8}]
    assert data["buckets"] == [16]
    assert data["strategies"][1]["captures"] == 1
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.err == f"wrote plot to {plot}\n"


def test_cli_prints_the_table_for_a_seq_dist(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["transformer", "--target", "x86-h100", "--iterations", "3", "--seq-dist", "decode:8"]
    assert run_cli(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "transformer on x86-h100, 3 iterations"
    assert [line.split()[0] for line in lines[3:7]] == ["none", "whole", "regions", "buckets"]
    assert lines[7:] == [f"note: regions: {SAME_AS_WHOLE}"]


def test_cli_rejects_bad_buckets(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run_cli(["cnn", "--target", "x86-h100", "--buckets", "8,x"])
    # argparse names the option: it said "argument --buckets: --buckets: ..."
    assert capsys.readouterr().err.splitlines()[-1] == (
        "hetsim compare: error: argument --buckets: expected comma-separated positive integers, "
        "got 'x'"
    )


def test_run_takes_a_cuda_graph_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "cnn", "--target", "x86-h100", "--cuda-graph", "regions", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["extra"]["cuda_graph"]["captures"] == 1
    assert data["breakdown_us"]["capture"] == pytest.approx(60.88)
    with pytest.raises(SystemExit) as exit_info:  # a usage error (tests/cli/test_choices.py)
        main(["run", "cnn", "--target", "x86-h100", "--cuda-graph", "regons"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.endswith("got 'regons' (did you mean 'regions'?)\n")


def test_run_says_when_a_strategy_fell_back(capsys: pytest.CaptureFixture[str]) -> None:
    # compare printed the note; run ran eagerly without a word
    argv = ["run", "cnn", "--target", "arm-riscv-soc", "--cuda-graph", "whole", "--mode", "timing"]
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        "note: --cuda-graph whole: no kernel launches at the root level to capture"
    )
    assert main(["run", "cnn", "--target", "x86-h100", "--cuda-graph", "whole", "--json"]) == 0
    captured = capsys.readouterr()
    assert "note:" not in captured.err
    assert json.loads(captured.out)["extra"]["cuda_graph_notes"] == []


def test_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(
        SimulationError, match=r"^compare: expected mode 'functional' or 'timing', got 'fast'$"
    ):
        compare("cnn", "x86-h100", mode="fast")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "expected one or more of none,whole,regions,buckets, got ''"),
        (",", "expected one or more of none,whole,regions,buckets, got ','"),
        ("whole,whole", "expected each strategy once, got 'whole' twice"),
    ],
)
def test_cli_rejects_no_strategy_and_a_strategy_twice(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "" and "," failed with an IndexError in Comparison.baseline; whole,whole printed two rows
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "mlp", "--target", "x86-h100", "--cuda-graph", value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim compare: error: argument --cuda-graph: {message}"
    )


def test_cli_compares_every_strategy_by_default() -> None:
    assert tuple(STRATEGIES) == compare_cli.DEFAULT_STRATEGIES


def test_cli_shapes_of_a_static_model_count_iterations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("8 12")
    argv = ["mlp", "--target", "x86-h100", "--cuda-graph", "none", "--shapes", str(shapes)]
    assert run_cli([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trace"] == [{}, {}]


def test_a_shapes_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    # it raised UnicodeDecodeError
    path = tmp_path / "garbage.json"
    path.write_bytes(b"\x8d\xff")
    message = f"--shapes {path}: expected a shapes file, got bytes that are not UTF-8 (at byte 0)"
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        load_shapes(path)


def test_a_trace_drawn_from_a_negative_seed_is_refused() -> None:
    # numpy raised ValueError from the --seq-dist draw
    message = "seed: expected a non-negative integer, got -1"
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        dims_trace("fixed:4", 2, seed=-1)


def test_a_run_that_fails_names_its_strategy_and_iteration() -> None:
    # graph memory grows with each capture, so one iteration of one strategy fails (and the
    # whole comparison with it): the error named neither
    small_gpu = {"tag": "x86-h100", "devices": {"gpu0": {"memory_gib": 0.01}}}
    message = (
        "strategy whole, iteration 7 (seq=39): sim at 204.3 us, gpu0: out of memory in gpu0.mem "
        "(need 1.3 MiB, 1.0 MiB free) for the memory pool of graph g0"
    )
    with pytest.raises(OutOfMemoryError, match=f"^{re.escape(message)}$"):
        compare("transformer", small_gpu, iterations=20)


def test_iterations_past_every_bucket_are_a_column_of_the_table() -> None:
    # decode from 60 over 10 steps with buckets up to 64: seq 65..69 fit none and ran eagerly,
    # which the table did not show (only the JSON's eager_runs)
    found = compare(
        "transformer", "x86-h100", ["none", "buckets"], trace=dims_trace("decode:60", 10),
        buckets=(32, 64),
    )  # fmt: skip
    by_strategy = {row["strategy"]: row for row in found.rows()}
    assert by_strategy["buckets"]["eager_runs"] == 5
    assert by_strategy["none"]["eager_runs"] == 0
    header, _, none, buckets = found.format_table().splitlines()[1:5]
    assert "past buckets" in header.split("  ")
    column = header.index("past buckets") + len("past buckets")
    assert buckets[:column].split()[-1] == "5"
    assert none[:column].split()[-1] == "0"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        # a static model: the drawn sizes changed nothing, without a word
        (
            ["mlp", "--seq-dist", "fixed:8"],
            "--seq-dist: expected a model with symbolic dims to draw, got mlp (none; "
            "--iterations counts its runs)",
        ),
    ],
    ids=["seq-dist-of-a-static-model"],
)
def test_cli_options_that_would_change_nothing_are_refused(argv: list[str], error: str) -> None:
    with pytest.raises(HetsimError, match=f"^{re.escape(error)}$"):
        run_cli([*argv, "--target", "x86-h100", "--cuda-graph", "none"])


GRAPH_ROOT = {"kind": "hetero", "executor": "graph", "runtime": "crt", "devices": ["cuda"]}
"""A root level run by a graph executor: no VM program to capture from."""


def test_none_runs_where_the_root_level_has_no_vm() -> None:
    # 'none' captures nothing, yet it was refused with the capturing strategies
    found = compare("cnn", GRAPH_ROOT, strategies=["none"], iterations=2)
    alone = simulate("cnn", GRAPH_ROOT, mode="timing", cuda_graph="none")
    assert found.runs[0].iterations_us == (alone.makespan_us, alone.makespan_us)
    with pytest.raises(SimulationError, match=r"^cuda_graph whole: expected a root level run by"):
        compare("cnn", GRAPH_ROOT, strategies=["none", "whole"], iterations=2)


def test_a_dim_the_model_lacks_in_a_shapes_file_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "trace[0]: model transformer: ...", every other problem of the file naming it
    path = tmp_path / "shapes.json"
    path.write_text('[{"sq": 4}]')
    assert main(["compare", "transformer", "--target", "x86-h100", "--shapes", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"error: --shapes {path}: trace[0]: model transformer: expected one of its symbolic "
        "dims (seq), got 'sq' (did you mean 'seq'?)\n"
    )


def test_a_shape_read_from_an_input_value_is_said_in_compare_s_terms() -> None:
    # "pass it in inputs": compare has no inputs, and runs a model over its symbolic dims only
    model = Graph(
        "expanded",
        (Op("Expand", "y", ("x", "shape"), ("out",)),),
        {"x": TensorType((1, "seq"), "float32"), "shape": TensorType((2,), "int64")},
        ("out",),
    )
    message = (
        "op y (Expand): expected a known value for input 1 (shape), got graph input 'shape', "
        "whose value compare cannot take: it runs a model over its symbolic dims (simulate's "
        "inputs= or hetsim run --inputs FILE reads it)"
    )
    for mode in ("timing", "functional"):
        with pytest.raises(UnknownValueError, match=f"^{re.escape(message)}$"):
            compare(model, "x86-h100", ["none"], trace=[{"seq": 4}], mode=mode)


GRAPH_ROOT = {
    "kind": "hetero",
    "host": "x86-cpu",
    "executor": "graph",
    "runtime": "crt",
    "devices": [{"kind": "cuda", "name": "gpu0"}],
}
"""A root level run by a graph executor, which runs static shapes only."""


def test_a_graph_executor_root_is_refused_for_a_model_with_symbolic_dims() -> None:
    # compare keeps the dims dynamic; partitioning refused the root with "(bind them with
    # dims=)", an argument compare does not take (found by a random-target audit)
    message = (
        "compare: expected a root level run by a VM for model transformer, whose symbolic dims "
        "(seq) stay dynamic over the iterations (each one's come with its inputs), got a graph "
        "executor, which runs static shapes only (op ln1 (LayerNormalization) reads seq)"
    )
    with pytest.raises(PartitionError, match="^" + re.escape(message) + "$"):
        compare("transformer", GRAPH_ROOT, ["none"], iterations=2)
    static = compare("mlp", GRAPH_ROOT, ["none"], iterations=2)  # no symbolic dim: it runs
    assert static.runs[0].iterations_us[0] == simulate("mlp", GRAPH_ROOT, mode="timing").makespan_us
    unread = Graph(  # a symbolic dim no op reads: every op static, so it runs too
        "unread",
        (Op("Relu", "r", ("x",), ("y",)),),
        {"x": TensorType((4,), "float32"), "s": TensorType(("seq",), "float32")},
        ("y",),
    )
    assert compare(unread, GRAPH_ROOT, ["none"], iterations=1).runs[0].iterations_us[0] > 0


def test_a_trace_longer_than_the_iterations_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # its length is the count, and was not capped: a shapes file of 1 000 001 sizes ran them all
    def compiled(*args: object) -> None:
        raise AssertionError("compile_plan: the trace's length was taken")

    monkeypatch.setattr("hetsim.compare.comparison.compile_plan", compiled)
    message = (
        f"compare: expected a trace of at most {MAX_ITERATIONS} iterations (or iterations= to "
        f"take its first ones), got {MAX_ITERATIONS + 1}"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        compare("cnn", "x86-h100", ["none"], trace=[{}] * (MAX_ITERATIONS + 1))
    monkeypatch.undo()
    taken = compare("cnn", "x86-h100", ["none"], trace=[{}] * (MAX_ITERATIONS + 1), iterations=2)
    assert len(taken.trace) == 2


def test_the_json_trace_of_a_model_without_dims_reads_back_as_shapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # compare --json writes [{}, {}] for it, which --shapes refused: "expected integer sizes"
    assert main(["compare", "cnn", "--target", "x86-h100", "--cuda-graph", "none",
                 "--iterations", "2", "--json"]) == 0  # fmt: skip
    trace = json.loads(capsys.readouterr().out)["trace"]
    assert trace == [{}, {}]
    shapes = tmp_path / "shapes.json"
    shapes.write_text(json.dumps(trace))
    assert load_shapes(shapes, dims=()) == ({}, {})
    assert main(["compare", "cnn", "--target", "x86-h100", "--cuda-graph", "none",
                 "--shapes", str(shapes)]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("cnn on x86-h100, 2 iterations")
    shapes.write_text("[{}]")  # for a model with dims: the dim it lacks is named
    assert main(["compare", "transformer", "--target", "x86-h100", "--shapes", str(shapes)]) == 1
    assert capsys.readouterr().err == (
        f"error: --shapes {shapes}: trace[0]: expected a size for each symbolic dim of model "
        "transformer, got none for 'seq'\n"
    )


def test_a_table_of_one_iteration_says_iteration() -> None:
    # it read "cnn on x86-h100, 1 iterations"
    found = compare("cnn", "x86-h100", ["none"], iterations=1)
    assert found.format_table().splitlines()[0] == "cnn on x86-h100, 1 iteration"
    assert (
        compare("cnn", "x86-h100", ["none"], iterations=2)
        .format_table()
        .startswith("cnn on x86-h100, 2 iterations\n")
    )


def test_regions_that_are_whole_s_say_so_and_others_do_not() -> None:
    # the two rows alike with no word had read as a fault (a new user's walkthrough)
    same = compare("mlp", "x86-h100", ["whole", "regions"], iterations=2)
    whole, regions = same.runs
    assert regions.iterations_us == whole.iterations_us
    assert regions.notes == (SAME_AS_WHOLE,)
    assert "regions: captures what whole captures" in same.format_table()
    b = GraphBuilder("split")  # a host op between two GPU kernels: two regions, whole eager
    first = b.op("Relu", b.input("x", (64,)), name="r0")
    graph = b.build(b.op("Relu", b.op("Neg", first, name="n"), name="r1"))
    split = {"tag": "x86-h100", "devices": {"gpu0": {"ops": ["Relu"]}}}
    found = compare(graph, split, ["whole", "regions"], iterations=2)
    assert all(SAME_AS_WHOLE not in run.notes for run in found.runs)
    assert compare("mlp", "x86-h100", ["regions"], iterations=1).runs[0].notes == ()
