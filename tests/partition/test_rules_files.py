"""Rules read from a file: every problem names the file and the rule's line, all at once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hetsim import simulate
from hetsim.errors import PartitionError
from hetsim.ir import Graph
from hetsim.models import load_model
from hetsim.partition import load_rules, partition
from hetsim.platform import Platform
from tests.partition.tiny import tag_platform

NEG_ON_NPU = (
    "op neg0 (Neg): rules[{index}] places it on npu, which cannot run it; npu (no Neg in its ops)"
)


def _raises(message: str) -> Any:
    return pytest.raises(PartitionError, match=f"^{re.escape(message)}$")


@pytest.mark.parametrize(
    ("text", "index", "line"),
    [
        ("- {op: Neg, device: npu}\n", 0, 1),
        ("rules:\n  - {op: Add, device: host}\n\n  - op: Neg\n    device: npu\n", 1, 4),
    ],
    ids=["a list", "under rules:"],
)
def test_a_rule_in_a_file_sending_an_op_where_it_cannot_run_names_its_line(
    text: str, index: int, line: int, tmp_path: Path, chain: Graph, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with _raises(f"{path}:{line}: {NEG_ON_NPU.format(index=index)}"):
        partition(chain, host_npu, "rules", path)


def test_a_rule_in_a_list_sending_an_op_where_it_cannot_run_names_no_file(
    chain: Graph, host_npu: Platform
) -> None:
    with _raises(NEG_ON_NPU.format(index=0)):
        partition(chain, host_npu, "rules", [{"op": "Neg", "device": "npu"}])


def test_simulate_names_the_rules_file_of_a_rule_its_device_cannot_run(tmp_path: Path) -> None:
    path = tmp_path / "r5.yaml"
    path.write_text("- {op: Softmax, device: vdevice0/npu}\n")
    message = (
        f"{path}:1: op softmax (Softmax): rules[0] places it on vdevice0/npu, which cannot run "
        "it; vdevice0/npu (no Softmax in its ops)"
    )
    with _raises(message):
        simulate("cnn", "arm-riscv-soc", partition="rules", rules=str(path))


def test_a_dynamic_op_sent_to_a_static_level_from_a_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "rules:\n  - {op: Softmax, device: host}\n  - {op: MatMul, device: vdevice0/npu}\n"
    )
    message = (
        f"{path}:3: op q.matmul (MatMul): rules[1] places it on vdevice0/npu, which cannot run "
        "it; vdevice0 (dynamic shapes; its graph executor is static)"
    )
    with _raises(message):
        partition(load_model("transformer"), tag_platform("arm-riscv-soc"), "rules", path)


def test_a_case_problem_and_an_unknown_device_are_reported_together_in_rule_order(
    tmp_path: Path,
) -> None:
    # r11.yaml of the report: the case problem came only once the device was fixed
    path = tmp_path / "r11.yaml"
    path.write_text(
        "rules:\n"
        "  - {op: Softmax, device: host}\n"
        "\n"
        "  - {op: GEMM, device: host}\n"
        "  - {op: relu*, device: gpu9}\n"
    )
    message = (
        f"{path}:4: rules[1].op: expected an op type or a glob over op names, got 'GEMM', which "
        "matches no op; rules match case-sensitively (did you mean 'Gemm'?)\n"
        f"{path}:5: rules[2].device: expected a processor or level of platform x86-h100, got "
        "'gpu9' (did you mean 'gpu0'?)"
    )
    with _raises(message):
        partition(load_model("cnn"), tag_platform("x86-h100"), "rules", path)


def test_an_unknown_device_before_a_case_problem_comes_first(
    tmp_path: Path, chain: Graph, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("- {op: Add, device: gpu9}\n- {op: NEG, device: host}\n")
    message = (
        f"{path}:1: rules[0].device: expected a processor or level of platform hetero[npu], got "
        "'gpu9'\n"
        f"{path}:2: rules[1].op: expected an op type or a glob over op names, got 'NEG', which "
        "matches no op; rules match case-sensitively (did you mean 'Neg'?)"
    )
    with _raises(message):
        partition(chain, host_npu, "rules", path)


def test_one_rule_with_a_case_problem_and_an_unknown_device_gives_both_op_first(
    chain: Graph, host_npu: Platform
) -> None:
    message = (
        "rules[0].op: expected an op type or a glob over op names, got 'NEG', which matches no "
        "op; rules match case-sensitively (did you mean 'Neg'?)\n"
        "rules[0].device: expected a processor or level of platform hetero[npu], got 'gpu9'"
    )
    with _raises(message):
        partition(chain, host_npu, "rules", [{"op": "NEG", "device": "gpu9"}])


def test_load_rules_checks_the_case_only_given_the_ops(
    tmp_path: Path, chain: Graph, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("- {op: NEG, device: host}\n")
    assert [(r.op, r.device, r.file) for r in load_rules(path, host_npu)] == [("NEG", "host", path)]
    message = (
        f"{path}:1: rules[0].op: expected an op type or a glob over op names, got 'NEG', which "
        "matches no op; rules match case-sensitively (did you mean 'Neg'?)"
    )
    with _raises(message):
        load_rules(path, host_npu, chain.ops)


def test_an_unknown_key_in_a_rule_is_named_at_its_own_line(
    tmp_path: Path, host_npu: Platform
) -> None:
    # it was the whole rule, at its first line: "expected a mapping with keys 'op' and 'device'"
    path = tmp_path / "r_key.yaml"
    path.write_text("rules:\n  - op: Neg\n    device: npu\n    extra: 1\n")
    with _raises(f"{path}:4: rules[0].extra: unknown key"):
        load_rules(path, host_npu)


def test_a_misspelt_key_suggests_the_known_one_and_the_missing_key_is_named(
    tmp_path: Path, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("- {op: Add, device: host}\n- op: Neg\n  devic: npu\n")
    message = (
        f"{path}:3: rules[1].devic: unknown key (did you mean 'device'?)\n"
        f"{path}:2: rules[1].device: expected a value (required)"
    )
    with _raises(message):
        load_rules(path, host_npu)


def test_a_yaml_syntax_error_names_the_file_and_line_as_a_sweep_file_does(
    tmp_path: Path, host_npu: Platform
) -> None:
    # it was "rules r_syn.yaml: expected YAML, got ... at line 4, column 1"
    path = tmp_path / "r_syn.yaml"
    path.write_text("rules:\n  - op: Neg\n    device: [npu\n")
    with _raises(f"{path}:4: expected YAML, got expected ',' or ']', but got '<stream end>'"):
        load_rules(path, host_npu)


def test_a_binary_rules_file_says_what_is_not_yaml_in_it(
    tmp_path: Path, host_npu: Platform
) -> None:
    # UTF-8 bytes, but with a NUL: it was "expected YAML, got a parse error", with no detail
    path = tmp_path / "corrupt.onnx"
    path.write_bytes(b"garbage\x00\x01\x02notonnx")
    message = (
        f"{path}: expected YAML, got unacceptable character #x0000: special characters are not "
        "allowed"
    )
    with _raises(message):
        load_rules(path, host_npu)
