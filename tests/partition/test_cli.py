"""``hetsim plan``: parsed by its own argparse parser (the lead wires it into ``hetsim``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hetsim.cli import plan as plan_command


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hetsim")
    plan_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_plan_prints_levels_segments_and_transfer_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["plan", "cnn", "--target", "arm-riscv-soc"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan of cnn on arm-riscv-soc (policy capability)\n")
    assert "level vdevice0: host vdevice0/host, executor graph, 1 segment, 12328 B on links" in out
    assert "    x: host.mem -> vdevice0/host.mem 12288 B (12.0 KiB) for s0\n" in out


def test_plan_json_with_dims_and_policy(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "transformer", "--target", "two-node-h100", "--partition", "cost"]
    assert _run([*argv, "--dims", "seq=4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["policy"], data["dims"], data["dynamic"]) == ("cost", {"seq": 4}, [])
    assert list(data["levels"]) == ["", "node0", "node1"]


def test_plan_with_a_rules_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {op: 'fc*', device: node1/gpu0}\n- {op: '*', device: node0}\n")
    argv = ["plan", "mlp", "--target", "two-node-h100", "--partition", "rules"]
    assert _run([*argv, "--rules", str(rules), "--json"]) == 0
    placement = json.loads(capsys.readouterr().out)["placement"]
    assert {op: path for op, path in placement.items() if path == "node1/gpu0"} == {
        op: "node1/gpu0" for op in placement if op.startswith("fc")
    }
    assert set(placement.values()) == {"node0/gpu0", "node1/gpu0"}


def test_plan_says_why_an_accelerator_gets_no_op(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["plan", "cnn", "--target", "arm/ethos-u65"]) == 0
    assert capsys.readouterr().err == (
        "note: dev0 runs none of the 12 ops: no float32 in its dtypes (9), no BatchNormalization "
        "in its ops (2), no GlobalAveragePool in its ops (1)\n"
    )
    assert _run(["plan", "cnn_int8", "--target", "arm/ethos-u65"]) == 0
    assert capsys.readouterr().err == ""
