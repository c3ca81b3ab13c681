"""``hetsim sweep``: the best-points table, --json, --plot, --resume, Ctrl-C (in-process runs)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from hetsim.api import simulate
from hetsim.cli import sweep as sweep_cli
from hetsim.errors import SweepError
from hetsim.sweep import SweepProgress, read_results

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


def test_ctrl_c_says_how_to_resume(
    sweep_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_cli, "run_sweep", interrupted)
    out = sweep_file.with_name("results.jsonl")
    assert _run(["sweep", str(sweep_file), "--out", str(out)]) == sweep_cli.INTERRUPTED
    assert capsys.readouterr().err.endswith(f"interrupted; rerun with --resume to complete {out}\n")


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
