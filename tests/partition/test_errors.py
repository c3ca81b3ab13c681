"""Every PartitionError, with its message in full."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.compare import compare
from hetsim.errors import ModelError, PartitionError, Problem, TargetError
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import propagate_costs
from hetsim.models import load_model
from hetsim.partition import core, partition
from hetsim.platform import Platform
from tests.partition.tiny import LINK, level, nested, platform_of, proc, tag_platform


def _neg() -> Graph:
    b = GraphBuilder("g")
    return b.build(b.op("Neg", b.input("x", (4,))))


def test_op_no_device_can_run_names_each_processor_tried() -> None:
    sub = nested("sub", [proc("npu", name="acc", ops=["Add"], link=LINK)])
    npu = proc("npu", name="npu", ops=["Relu"], link=LINK)
    platform = platform_of(level(proc("arm-cpu", ops=["Relu", "Add"]), [npu, sub]))
    message = (
        "op neg0 (Neg): no device can run it; tried npu (no Neg in its ops), "
        "sub/acc (no Neg in its ops), host (no Neg in its ops)"
    )
    for policy in ("capability", "cost"):
        with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
            partition(_neg(), platform, policy)


def test_unmatched_op_under_rules_no_device_can_run(host_npu: Platform) -> None:
    adder = proc("npu", name="npu", ops=["Add"], link=LINK)
    platform = platform_of(level(proc("arm-cpu", ops=["Relu"]), [adder]))
    message = (
        "op neg0 (Neg): no device can run it; tried npu (no Neg in its ops), "
        "host (no Neg in its ops)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), platform, "rules", [{"op": "Relu", "device": "host"}])


def test_rule_naming_a_missing_device_suggests_a_close_one() -> None:
    message = (
        "rules[1].device: expected a processor or level of platform arm-riscv-soc, "
        "got 'vdevice0/nup' (did you mean 'vdevice0/npu'?)"
    )
    rules = [{"op": "Relu", "device": "host"}, {"op": "Conv", "device": "vdevice0/nup"}]
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$") as caught:
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", rules)
    # where it is, apart from the message: a sweep file names the same place in its own rules
    assert caught.value.problems == (
        Problem(
            "rules[1].device",
            "expected a processor or level of platform arm-riscv-soc",
            "'vdevice0/nup'",
            "vdevice0/npu",
        ),
    )


def test_rule_naming_a_far_missing_device_has_no_suggestion(host_npu: Platform) -> None:
    message = "rules[0].device: expected a processor or level of platform hetero[npu], got 'gpu7'"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", [{"op": "Neg", "device": "gpu7"}])


def test_rule_naming_a_device_in_another_case_suggests_it() -> None:
    # difflib, case-sensitive, found 'VDEVICE0' too far from 'vdevice0' to suggest anything
    message = (
        "rules[0].device: expected a processor or level of platform arm-riscv-soc, got "
        "'VDEVICE0' (did you mean 'vdevice0'?)"
    )
    soc = tag_platform("arm-riscv-soc")
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), soc, "rules", [{"op": "Neg", "device": "VDEVICE0"}])


def test_rule_sending_op_to_device_without_it(host_npu: Platform) -> None:
    message = (
        "op neg0 (Neg): rules[0] places it on npu, which cannot run it; npu (no Neg in its ops)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", [{"op": "Neg", "device": "npu"}])


def test_rule_sending_op_to_a_level_names_its_devices_and_its_host() -> None:
    sub = nested("sub", [proc("npu", name="acc", ops=["Add"], link=LINK)])
    sub["host"]["ops"] = ["Relu"]
    platform = platform_of(level(proc("arm-cpu"), [sub]))
    message = (
        "op neg0 (Neg): rules[0] places it on sub, which cannot run it; "
        "sub/acc (no Neg in its ops), sub/host (no Neg in its ops)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), platform, "rules", [{"op": "Neg", "device": "sub"}])


def test_a_static_level_names_the_dims_the_op_reads_of_those_unbound() -> None:
    # it had named every unbound dim of the graph, ['batch', 'seq'] for an op reading batch only
    adder = proc("npu", name="npu", ops=["Add"], link=LINK)
    graph_root = level(proc("arm-cpu"), [adder], executor={"kind": "graph", "node_us": 0.1})
    b = GraphBuilder("g")
    first = b.op("Neg", b.input("x", ("batch", 4)), name="nb")
    graph = b.build(first, b.op("Neg", b.input("y", ("seq", 4)), name="ns"))
    message = (
        "op nb (Neg): expected static shapes at level (root) (graph executor), "
        "got dynamic dims ['batch'] (bind them with dims=)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, platform_of(graph_root))
    with pytest.raises(PartitionError, match=r"got dynamic dims \['seq'\]"):
        partition(graph, platform_of(graph_root), dims={"batch": 2})
    message = (  # compare's own refusal of such a root names them so too
        "compare: expected a root level run by a VM for model g, whose symbolic dims (batch, seq) "
        "stay dynamic over the iterations (each one's come with its inputs), got a graph "
        "executor, which runs static shapes only (op nb (Neg) reads batch)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        compare(graph, graph_root, ["none"], iterations=1)


def test_dynamic_segment_sent_to_a_graph_executor_by_rule() -> None:
    message = (
        "op q.matmul (MatMul): rules[0] places it on vdevice0/npu, which cannot run it; "
        "vdevice0 (dynamic shapes; its graph executor is static)"
    )
    rules = [{"op": "MatMul", "device": "vdevice0/npu"}]
    graph = load_model("transformer")
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, tag_platform("arm-riscv-soc"), "rules", rules)


def test_dynamic_graph_on_a_static_root_executor() -> None:
    adder = proc("npu", name="npu", ops=["Add"], link=LINK)
    graph_root = level(proc("arm-cpu"), [adder], executor={"kind": "graph", "node_us": 0.1})
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.input("x", ("seq", 4))))
    message = (
        "op relu0 (Relu): expected static shapes at level (root) (graph executor), "
        "got dynamic dims ['seq'] (bind them with dims=)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, platform_of(graph_root))
    assert partition(graph, platform_of(graph_root), dims={"seq": 2}).placement["relu0"] == "host"


def test_weights_that_do_not_fit_the_accelerator_memory() -> None:
    npu = proc("npu", name="npu", ops=["MatMul"], memory_gib=2**-20, link=LINK)  # 1 KiB
    b = GraphBuilder("g")
    weight = np.ones((64, 64), np.float32)  # 16 KiB
    graph = b.build(b.op("MatMul", b.input("x", (1, 64)), weight))
    message = (
        "memory npu.mem: expected the weights of the ops placed on it to fit in 1.0 KiB, "
        "got 16.0 KiB (1 weight tensor: const0, read by op matmul0)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, platform_of(level(proc("arm-cpu"), [npu])))


def test_unknown_policy_suggests_a_close_name(host_npu: Platform) -> None:
    message = (
        "partition: expected a policy in ['capability', 'cost', 'rules'], got 'costs' "
        "(did you mean 'cost'?)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "costs")


@pytest.mark.parametrize("policy", [None, ["cost"], 3])
def test_a_policy_that_is_not_a_name_is_named(policy: object, host_npu: Platform) -> None:
    # None and 3 failed in difflib, a list as unhashable: TypeError from inside
    message = f"partition: expected a policy in ['capability', 'cost', 'rules'], got {policy!r}"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, policy)  # type: ignore[arg-type]


def test_rules_policy_without_rules(host_npu: Platform) -> None:
    message = "rules: expected a list of rules or a YAML file for policy 'rules', got None"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules")


def test_rules_given_to_another_policy(host_npu: Platform) -> None:
    message = (
        "rules: expected no rules for policy 'cost' (use policy 'rules'), "
        "got [{'op': 'Neg', 'device': 'host'}]"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "cost", [{"op": "Neg", "device": "host"}])


@pytest.mark.parametrize("policy", ["capability", "cost"])
def test_simulate_refuses_rules_for_another_policy_as_partition_does(policy: str) -> None:
    # the cost policy's fallback to its baselines swallowed the refusal: the rules were ignored
    rules = [{"op": "*", "device": "gpu0"}]
    message = f"rules: expected no rules for policy {policy!r} (use policy 'rules'), got {rules}"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        simulate("mlp", "x86-h100", mode="timing", partition=policy, rules=rules)


def test_a_rules_file_given_to_another_policy_is_named_by_its_path(
    tmp_path: Path, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    message = f"rules: expected no rules for policy 'cost' (use policy 'rules'), got '{path}'"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "cost", path)


def test_rules_file_that_does_not_exist(tmp_path: Path, host_npu: Platform) -> None:
    missing = str(tmp_path / "missing.yaml")
    message = f"rules: expected a YAML file or a list of rules, got {missing!r} (no such file)"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", missing)


def test_a_rules_file_that_is_a_folder_or_not_text_is_named(
    tmp_path: Path, host_npu: Platform
) -> None:
    # a folder read as "no such file"; bytes that are not UTF-8 raised UnicodeDecodeError
    expected = "rules: expected a YAML file or a list of rules, got"
    with pytest.raises(
        PartitionError, match=f"^{re.escape(f'{expected} {str(tmp_path)!r} (a directory)')}$"
    ):
        partition(_neg(), host_npu, "rules", str(tmp_path))
    garbage = tmp_path / "garbage.yaml"
    garbage.write_bytes(b"\x8d\xff")
    message = f"{expected} {str(garbage)!r} (bytes that are not UTF-8 (at byte 0))"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", str(garbage))


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (["Neg"], "rules[0]: expected a mapping with keys 'op' and 'device', got 'Neg'"),
        (
            [{"op": "Neg", "dev": "host"}],
            "rules[0].dev: unknown key (did you mean 'device'?)\n"
            "rules[0].device: expected a value (required)",
        ),
        ([{"device": "host"}], "rules[0].op: expected a value (required)"),
        (
            [{"op": "Neg", "device": "host", 3: "x"}],
            "rules[0].3: unknown key",
        ),
        ([{"op": "", "device": "host"}], "rules[0].op: expected a non-empty string, got ''"),
        ([{"op": "Neg", "device": 3}], "rules[0].device: expected a non-empty string, got 3"),
        ({"op": "Neg"}, "rules: expected a list of rules, got {'op': 'Neg'}"),
    ],
)
def test_malformed_rules(rules: object, message: str, host_npu: Platform) -> None:
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", rules)  # type: ignore[arg-type]


def test_yaml_rules_file_with_a_key_twice(tmp_path: Path, host_npu: Platform) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - op: Neg\n    op: Relu\n    device: npu\n")
    message = f"{path}:3: expected YAML, got found the key 'op' twice"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", path)


def test_yaml_rules_file_with_a_parse_error(tmp_path: Path, host_npu: Platform) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("- {op: Neg, device: host\n")
    message = f"{path}:2: expected YAML, got expected ',' or '}}', but got '<stream end>'"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", path)


def test_a_rules_file_nested_deeper_than_python_recurses(
    tmp_path: Path, host_npu: Platform
) -> None:
    # PyYAML's RecursionError came out as a traceback; a target file said the same words
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 900 + "]" * 900)
    message = f"{path}: expected YAML, got maximum recursion depth exceeded"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", path)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("- {op: Neg, device: host}\n- op: Neg\n  device: nup\n", 3),
        ("rules:\n  - {op: Neg, device: host}\n  - op: Neg\n    device: nup\n", 4),
    ],
    ids=["a list", "under rules:"],
)
def test_a_bad_rule_in_a_file_names_the_file_and_line(
    text: str, line: int, tmp_path: Path, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    message = (
        f"{path}:{line}: rules[1].device: expected a processor or level of platform hetero[npu], "
        "got 'nup' (did you mean 'npu'?)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(_neg(), host_npu, "rules", path)


@pytest.mark.parametrize(
    ("entry", "hint"),
    [("Matmul", " (did you mean 'MatMul'?)"), ("relu", " (did you mean 'Relu'?)"), ("Zzz", "")],
)
def test_an_op_list_entry_hetsim_does_not_run_is_refused_by_the_target_schema(
    entry: str, hint: str, chain: Graph
) -> None:
    # matched exactly, a misspelt entry would leave its ops to the host, silently: the target
    # schema refuses it (partition did, one entry at a time, without the entry's path)
    npu = proc("npu", name="npu", ops=["Add", entry], link=LINK)
    message = f"devices[npu].ops[1]: expected an op type hetsim runs, or '*', got {entry!r}{hint}"
    with pytest.raises(TargetError, match=f"^{re.escape(message)}$"):
        platform_of(level(proc("arm-cpu"), [npu]))


def test_a_rule_that_matches_only_in_another_case_is_an_error(
    tmp_path: Path, chain: Graph, host_npu: Platform
) -> None:
    message = (
        "rules[1].op: expected an op type or a glob over op names, got 'relu', which matches no "
        "op; rules match case-sensitively (did you mean 'Relu'?)"
    )
    rules = [{"op": "Add", "device": "host"}, {"op": "relu", "device": "npu"}]
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(chain, host_npu, "rules", rules)
    path = tmp_path / "rules.yaml"
    path.write_text("- {op: Add, device: host}\n- {op: relu, device: npu}\n")
    with pytest.raises(PartitionError, match=f"^{re.escape(f'{path}:2: {message}')}$"):
        partition(chain, host_npu, "rules", path)
    by_name = [{"op": "NEG*", "device": "host"}]  # a name glob in another case: neg*
    with pytest.raises(PartitionError, match=r"got 'NEG\*', .*\(did you mean 'neg\*'\?\)$"):
        partition(chain, host_npu, "rules", by_name)


def test_a_rule_for_ops_the_model_does_not_have_is_allowed(
    chain: Graph, host_npu: Platform
) -> None:
    # one rules file may serve several models: a rule for Conv does nothing to this chain
    rules = [{"op": "Conv", "device": "npu"}, {"op": "Relu", "device": "host"}]
    assert partition(chain, host_npu, "rules", rules).placement["relu0"] == "host"


def test_arguments_of_the_wrong_type_are_named(host_npu: Platform, chain: Graph) -> None:
    with pytest.raises(
        PartitionError,
        match=r"^partition: expected graph a hetsim Graph \(hetsim.load_model gives one\), "
        r"got str$",
    ):
        partition("chain", host_npu)  # type: ignore[arg-type]
    with pytest.raises(
        PartitionError,
        match=r"^partition: expected platform a Platform \(hetsim.platform.build_platform "
        r"gives one\), got str$",
    ):
        partition(chain, "arm-riscv-soc")  # type: ignore[arg-type]
    with pytest.raises(
        PartitionError, match=r"^partition: expected inputs a mapping of input name -> array"
    ):
        partition(chain, host_npu, inputs=[np.ones(1000)])  # type: ignore[arg-type]


def test_dims_are_checked_as_simulate_checks_them(host_npu: Platform) -> None:
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.input("x", ("seq", 4))))
    with pytest.raises(ModelError, match=r"^dims.seq: expected an integer >= 0, got -1$"):
        partition(graph, host_npu, dims={"seq": -1})
    with pytest.raises(
        ModelError,
        match=r"^model g: expected one of its symbolic dims \(seq\), got 'sq' "
        r"\(did you mean 'seq'\?\)$",
    ):
        partition(graph, host_npu, dims={"sq": 8})
    assert partition(graph, host_npu, dims={"seq": 8}).dims == {"seq": 8}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "rule:\n  - {op: Neg, device: host}\n",
            "{path}:1: rule: expected only the key 'rules' (or a list of rules) in a rules file "
            "(did you mean 'rules'?)",
        ),
        (
            "rules:\n  - {op: Neg, device: host}\nextra: 1\n",
            "{path}:3: extra: expected only the key 'rules' (or a list of rules) in a rules file",
        ),
        ("rules:\n", "{path}:1: rules: expected a list of rules, got None"),
        ("", "{path}:1: rules: expected a list of rules, got None"),  # the root's line
        ("# a comment\n42\n", "{path}:2: rules: expected a list of rules, got 42"),
    ],
)
def test_a_rules_file_holds_a_list_or_the_one_key_rules(
    text: str, message: str, tmp_path: Path, host_npu: Platform
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)  # a misspelt key read as "no rules", an extra one was ignored
    with pytest.raises(PartitionError, match=f"^{re.escape(message.format(path=path))}$"):
        partition(_neg(), host_npu, "rules", path)


def test_every_problem_of_a_rules_file_is_named_with_its_line(tmp_path: Path) -> None:
    # only the first was: a file with three bad rules took three runs to mend
    path = tmp_path / "place.yaml"
    path.write_text(
        "- {op: Conv, device: vdevice0/nup}\n"
        "- {op: Relu, device: host}\n"
        "- {op: 3, device: host}\n"
        "- {op: Gemm, device: hots}\n"
    )
    expected = "expected a processor or level of platform arm-riscv-soc"
    lines = [
        f"{path}:1: rules[0].device: {expected}, got 'vdevice0/nup' (did you mean 'vdevice0/npu'?)",
        f"{path}:3: rules[2].op: expected a non-empty string, got 3",
        f"{path}:4: rules[3].device: {expected}, got 'hots' (did you mean 'host'?)",
    ]
    with pytest.raises(PartitionError) as caught:
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", path)
    assert str(caught.value).splitlines() == lines
    given = [
        {"op": "Conv", "device": "vdevice0/nup"},
        {"op": "", "device": "host"},
        {"op": "Gemm", "device": "hots"},
    ]
    with pytest.raises(PartitionError) as caught:  # a list: each problem by its rule alone
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", given)
    assert [p.path for p in caught.value.problems] == [
        "rules[0].device", "rules[1].op", "rules[2].device",
    ]  # fmt: skip


def test_a_rule_written_with_a_yaml_boolean_word_says_how_it_was_read(tmp_path: Path) -> None:
    # YAML 1.1 reads an unquoted off or no as false: target files said so, rules files did not
    path = tmp_path / "place.yaml"
    path.write_text("rules:\n  - {op: Conv, device: off}\n  - op: Relu\n    device: No\n")
    lines = [
        f"{path}:2: rules[0].device: expected a non-empty string, got False (an unquoted off, "
        "which YAML reads as false; quoted, 'off' is text)",
        f"{path}:4: rules[1].device: expected a non-empty string, got False (an unquoted No, "
        "which YAML reads as false; quoted, 'No' is text)",
    ]
    with pytest.raises(PartitionError) as caught:
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", path)
    assert str(caught.value).splitlines() == lines
    path.write_text("- {op: Conv, device: false}\n")  # written as a boolean: no excuse to give
    message = f"{path}:1: rules[0].device: expected a non-empty string, got False"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", path)


def test_every_rule_in_another_case_is_named_at_once() -> None:
    # check_case stopped at the first, where the rest of a rules file's problems come together
    rules = [{"op": "conv", "device": "host"}, {"op": "relu", "device": "host"}]
    with pytest.raises(PartitionError) as caught:
        partition(load_model("cnn"), tag_platform("x86-h100"), "rules", rules)
    assert [(p.path, p.hint) for p in caught.value.problems] == [
        ("rules[0].op", "Conv"), ("rules[1].op", "Relu"),
    ]  # fmt: skip


def test_metas_or_costs_without_an_entry_are_named() -> None:
    # metas= lacking a tensor escaped as a bare KeyError('conv1') (found by a partition audit)
    model, soc = load_model("cnn"), tag_platform("arm-riscv-soc")
    metas, costs = propagate_costs(model, {})
    message = (
        "partition: expected a Meta for every tensor of graph cnn (as hetsim.kernels.propagate "
        "gives them), got none for 'conv1'"
    )
    lacking = {name: meta for name, meta in metas.items() if name != "conv1"}
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(model, soc, metas=lacking)
    weightless = {name: meta for name, meta in metas.items() if name != "bn1.bias"}
    with pytest.raises(PartitionError, match=r"got none for 'bn1\.bias'$"):  # read by the
        partition(model, soc, metas=weightless, costs=costs)  # weights' check, after the cut
    message = (
        "partition: expected a Cost for every op of graph cnn (as "
        "hetsim.partition.costs.op_costs gives them), got none for op 'conv1'"
    )
    without = {name: cost for name, cost in costs.items() if name != "conv1"}
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(model, soc, metas=metas, costs=without)


def test_an_empty_rules_path_is_named_so() -> None:
    # Path("") is the current folder: the rules were said to be "a directory" none named
    message = "rules: expected a YAML file or a list of rules, got '' (an empty path)"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(load_model("cnn"), tag_platform("arm-riscv-soc"), "rules", "")


def test_a_glob_in_another_case_is_hinted_as_a_glob() -> None:
    # the hint named one op ('conv1') for a glob of several: following it narrowed the rule
    model, soc = load_model("cnn"), tag_platform("arm-riscv-soc")
    message = (
        "rules[0].op: expected an op type or a glob over op names, got 'CONV*', which matches no "
        "op; rules match case-sensitively (did you mean 'conv*'?)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(model, soc, "rules", [{"op": "CONV*", "device": "host"}])


def test_an_internal_key_error_is_not_blamed_on_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    # a KeyError of partition's own, where the caller gave no metas, or of a name that is no
    # tensor of the graph, had read as a missing Meta (found by a review)
    model, soc = load_model("cnn"), tag_platform("arm-riscv-soc")

    def broken(*args: object) -> None:
        raise KeyError("vdevice0/npu")

    monkeypatch.setattr(core._Builder, "cut", broken)
    with pytest.raises(KeyError, match="vdevice0/npu"):
        partition(model, soc)
    with pytest.raises(KeyError, match="vdevice0/npu"):
        partition(model, soc, metas=propagate_costs(model, {})[0])


def test_a_rule_close_to_an_op_type_and_an_op_name_is_hinted_the_type() -> None:
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.input("x", (4,)), name="relu"))
    message = (
        "rules[0].op: expected an op type or a glob over op names, got 'RELU', which matches no "
        "op; rules match case-sensitively (did you mean 'Relu'?)"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(graph, tag_platform("arm-riscv-soc"), "rules", [{"op": "RELU", "device": "host"}])
