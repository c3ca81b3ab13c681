"""``hetsim sweep``: the best-points table, --json, --plot, --resume, Ctrl-C (in-process runs)."""

from __future__ import annotations

import argparse
import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from hetsim import cli
from hetsim.api import simulate
from hetsim.cli import sweep as sweep_cli
from hetsim.errors import SweepError
from hetsim.sweep import (
    Point,
    SweepProgress,
    load_sweep,
    read_results,
    run_sweep,
    simulate_point,
)

SWEEP_YAML = """\
name: cli
target: arm-riscv-soc
models: [mlp]
vary:
  executor.dispatch_us: [1.0, 0.5]
"""


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hetsim")
    sweep_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP_YAML)
    return path


def test_json_names_the_best_point(sweep_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = sweep_file.with_name("results.jsonl")
    assert _run(["sweep", str(sweep_file), "--workers", "0", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    best = printed["best"]["mlp"]
    assert (printed["points"], printed["failed"], best["index"]) == (2, 0, 1)
    _, records = read_results(out)
    for record, dispatch_us in zip(records, (1.0, 0.5), strict=True):
        target = {"tag": "arm-riscv-soc", "executor": {"dispatch_us": dispatch_us}}
        expected = simulate("mlp", target, mode="timing", trace=False).makespan_us
        assert record["result"]["makespan_us"] == expected
    assert best["result"] == records[1]["result"]


def test_table_and_plot(sweep_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = sweep_file.with_name("plot.png")
    assert _run(["sweep", str(sweep_file), "--workers", "0", "--plot", str(png)]) == 0
    captured = capsys.readouterr()
    assert "executor.dispatch_us=0.5" in captured.out
    assert f"wrote plot to {png}" in captured.err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_counts_the_points_that_tie_with_the_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a root's link is read by nothing: its three values tie, and the first one's value alone
    # in the table had read as the best bandwidth
    path = tmp_path / "ties.yaml"
    path.write_text(
        "target: arm-riscv-soc\nmodels: [mlp]\nvary:\n  link.bandwidth_gbps: [1, 2, 4]\n"
    )
    spec = load_sweep(path)
    header, rows = sweep_cli.best_rows(run_sweep(spec, workers=0), spec)
    assert header == ["model", "makespan_us", "tied", "point", "parameters"]
    makespan = simulate("mlp", "arm-riscv-soc", mode="timing").makespan_us
    assert [row[:3] for row in rows] == [["mlp", f"{makespan:.3f}", "3"]]
    assert _run(["sweep", str(path), "--workers", "0"]) == 0
    assert "tied" in capsys.readouterr().out


NO_EFFECT = (
    "note: no result changed with {}: the points that differ in it alone are equal (a path no run "
    "reads, docs/sweeps.md, or a value no point is sensitive to)"
)


def test_a_varied_path_that_changed_no_result_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the root's link is read by no run; the dispatch cost is, and neither hides the other
    path = tmp_path / "unread.yaml"
    path.write_text(
        "target: arm-riscv-soc\nmodels: [mlp]\nvary:\n  executor.dispatch_us: [0.25, 0.5]\n"
        "  link.latency_us: [1, 2, 3]\n"
    )
    assert _run(["sweep", str(path), "--workers", "0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("note:")] == [
        NO_EFFECT.format("link.latency_us")
    ]
    assert _run(["sweep", str(path), "--workers", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["no_effect"] == ["link.latency_us"]


def test_a_varied_path_that_changed_a_result_is_not_noted(
    sweep_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["sweep", str(sweep_file), "--workers", "0", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["no_effect"] == []
    assert "note:" not in captured.err


def test_ctrl_c_says_how_to_resume(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = sweep_file.with_name("results.jsonl")

    def interrupted(*args: Any, **kwargs: Any) -> None:
        out.write_text("{}\n")  # run_sweep writes the file's header first
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_cli, "run_sweep", interrupted)
    assert _run(["sweep", str(sweep_file), "--out", str(out)]) == sweep_cli.INTERRUPTED
    assert capsys.readouterr().err.endswith(f"interrupted; rerun with --resume to complete {out}\n")
    out.write_text("")  # an empty file is begun anew, as a missing one: this run began it
    assert _run(["sweep", str(sweep_file), "--out", str(out)]) == sweep_cli.INTERRUPTED
    assert capsys.readouterr().err.endswith(f"interrupted; rerun with --resume to complete {out}\n")


def test_ctrl_c_while_the_sweep_is_checked_is_an_interruption_too(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # checking a big sweep's points takes minutes: a Ctrl-C then printed a traceback, and no
    # results file was begun to resume
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_cli, "load_sweep", interrupted)
    out = sweep_file.with_name("results.jsonl")
    assert _run(["sweep", str(sweep_file), "--out", str(out)]) == sweep_cli.INTERRUPTED
    assert capsys.readouterr().err == "interrupted\n"
    out.write_text("{}\n")  # another sweep's file, which --resume would refuse: no advice
    assert _run(["sweep", str(sweep_file), "--out", str(out)]) == sweep_cli.INTERRUPTED
    assert capsys.readouterr().err == "interrupted\n"


def test_plain_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    sweep_cli._plain_report(SweepProgress(10, 4, 1, 2, 3.0, 61.0))
    assert capsys.readouterr().err == "4/10 done, 1 failed, eta 0:01:01\n"


def test_a_bad_sweep_fails_before_the_progress_bar_is_drawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SWEEP_YAML.replace("arm-riscv-soc", "arm-riscv-sco"))
    with pytest.raises(SweepError, match=re.escape("bad.yaml:2: target: unknown kind or tag")):
        _run(["sweep", str(path), "--workers", "0"])
    assert capsys.readouterr().err == ""


def _failing(point: Point) -> dict[str, Any]:
    raise RuntimeError("boom")


def _failing_at_half(point: Point) -> dict[str, Any]:
    if dict(point.values)["executor.dispatch_us"] == 0.5:
        raise RuntimeError("0.5 us breaks")
    return simulate_point(point)


def _running_with(monkeypatch: pytest.MonkeyPatch, run_point: Any) -> None:
    monkeypatch.setattr(sweep_cli, "run_sweep", functools.partial(run_sweep, run_point=run_point))


def test_every_point_failing_exits_1_with_the_first_error(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _running_with(monkeypatch, _failing)
    png = sweep_file.with_name("plot.png")
    assert _run(["sweep", str(sweep_file), "--workers", "0", "--plot", str(png)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no empty best-points table
    assert captured.err.endswith(
        "error: all 2 points failed; the first, point 0 (model=mlp, executor.dispatch_us=1.0): "
        "RuntimeError: boom\n"
    )
    assert not png.exists()


def test_every_point_failing_still_prints_the_json_counts(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _running_with(monkeypatch, _failing)
    assert _run(["sweep", str(sweep_file), "--workers", "0", "--json"]) == 1
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert (printed["points"], printed["failed"], printed["best"]) == (2, 2, {})
    assert captured.err.endswith(
        "error: all 2 points failed; the first, point 0 "
        "(model=mlp, executor.dispatch_us=1.0): RuntimeError: boom\n"
    )


def test_some_points_failing_are_reported_with_the_first_error(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _running_with(monkeypatch, _failing_at_half)
    assert _run(["sweep", str(sweep_file), "--workers", "0"]) == 0
    captured = capsys.readouterr()
    assert "executor.dispatch_us=1.0" in captured.out  # the best of the points that ran
    assert captured.err.endswith(
        "2 points, 1 failed; the first, point 1 (model=mlp, executor.dispatch_us=0.5): "
        "RuntimeError: 0.5 us breaks\n"
    )


def test_a_missing_sweep_file_exits_1_saying_no_such_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nonexist.yaml"
    assert cli.main(["sweep", str(path), "--workers", "0"]) == 1
    assert capsys.readouterr().err == f"error: {path}: expected a sweep file, got no such file\n"


def test_a_bad_metric_fails_with_its_line_before_any_point_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _running_with(monkeypatch, _failing)  # a point that ran would say so
    path = tmp_path / "f.yaml"
    path.write_text("target: arm-riscv-soc\nmodels: [mlp]\nmetric: processors\n")
    out = tmp_path / "o.jsonl"
    assert cli.main(["sweep", str(path), "--workers", "0", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"error: {path}:3: metric: expected a number of the result: makespan_us, "
        "breakdown_us.<category>, processors.<path>.busy_us, processors.<path>.utilization, "
        "processors.<path>.breakdown_us.<category>, links.<link>.bytes, links.<link>.busy_us or "
        "peak_memory_bytes.<memory> (a category: dispatch, launch, compute, transfer, sync_wait, "
        "capture, idle), got 'processors'\n"
    )
    assert not out.exists()


def test_a_metric_naming_a_memory_ranks_by_it(
    sweep_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep_file.write_text(SWEEP_YAML + "metric: peak_memory_bytes.vdevice0/npu.mem\n")
    assert _run(["sweep", str(sweep_file), "--workers", "0"]) == 0
    result = simulate("mlp", "arm-riscv-soc", mode="timing", trace=False)
    peak = result.peak_memory_bytes["vdevice0/npu.mem"]  # a name holding a dot
    assert f"{peak:.3f}" in capsys.readouterr().out


def test_resume_without_out_is_refused_before_the_sweep_loads(
    sweep_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it re-ran every point and kept none
    assert cli.main(["sweep", str(sweep_file), "--resume", "--workers", "0"]) == 1
    assert capsys.readouterr().err == (
        "error: --resume: expected --out (the results file to complete), got none\n"
    )


def test_retry_failed_needs_resume(
    sweep_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "r.jsonl")
    assert cli.main(["sweep", str(sweep_file), "--out", out, "--retry-failed"]) == 1
    assert capsys.readouterr().err == (
        "error: --retry-failed: expected --resume (it retries the failed points of --out), got "
        "none\n"
    )
    assert not (tmp_path / "r.jsonl").exists()


def test_best_rows_ties_metrics_that_differ_by_rounding_alone() -> None:
    # metrics an ulp apart (cnn's breakdown_us.compute on arm-riscv-soc read 32.82687500000001
    # and 32.826875 as dispatch_us varied: the same spans summed in another order): the table
    # showed the lower as the best alone (tied 1), as if dispatch_us changed the compute time.
    spec = load_sweep({"target": "arm-riscv-soc", "models": ["cnn"]})
    runs = [
        {
            "index": i,
            "id": f"p{i}",
            "status": "ok",
            "params": {"model": "cnn"},
            "result": {"makespan_us": t},
        }
        for i, t in enumerate([32.826875, 32.826874999999996, 40.0])
    ]
    _, rows = sweep_cli.best_rows(runs, spec)
    assert rows[0][2] == "2"
