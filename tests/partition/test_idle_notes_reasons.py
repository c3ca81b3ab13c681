"""The reasons an idle accelerator's note gives (`idle_notes`): the refusal that really kept the
ops off it, at its own level, or where the plan's policy put them instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsim.api import platform_of, simulate
from hetsim.cli import main
from hetsim.errors import PartitionError
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import propagate
from hetsim.models import load_model
from hetsim.partition import Plan, idle_notes, partition
from hetsim.platform import Platform
from tests.partition.tiny import tag_platform

DYNAMIC_ON_SOC = (
    "vdevice0/npu runs none of the 33 ops: dynamic shapes; its graph executor is static (33)"
)
ALL_ON_HOST_BY_RULES = "gpu0 runs none of the 12 ops: placed on host by the rules (12)"
NODE1_AFTER_NODE0 = "node1/gpu0 runs none of the 12 ops: placed on an earlier choice (12)"


def _notes(graph: Graph, platform: Platform, plan: Plan) -> tuple[str, ...]:
    """The plan's notes, as `hetsim plan` and `simulate` find them."""
    return idle_notes(
        platform, graph.ops, propagate(graph, dict(plan.dims)), plan.placement,
        dynamic=plan.dynamic, folded=plan.folded, policy=plan.policy,
    )  # fmt: skip


def _plan_notes(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["plan", *argv]) == 0
    return capsys.readouterr().err.splitlines()


def test_plan_blames_the_static_level_for_dynamic_ops(capsys: pytest.CaptureFixture[str]) -> None:
    # seq unbound: every op is dynamic, kept off vdevice0's graph executor; the note blamed
    # "placed on an earlier choice (23)" and the npu's op list
    notes = _plan_notes(["transformer", "--target", "arm-riscv-soc"], capsys)
    assert notes == [f"note: {DYNAMIC_ON_SOC}"]


def test_simulate_blames_the_static_level_for_dynamic_ops() -> None:
    x = np.zeros((1, 7, 64), np.float32)
    result = simulate("transformer", "arm-riscv-soc", inputs={"x": x})
    assert result.to_dict()["extra"]["placement_notes"] == [DYNAMIC_ON_SOC]


def test_ops_the_rules_put_on_the_host_are_noted_as_placed_there_by_the_rules() -> None:
    rules = [{"op": "*", "device": "host"}]
    result = simulate("cnn", "x86-h100", partition="rules", rules=rules, mode="timing")
    assert result.to_dict()["extra"]["placement_notes"] == [ALL_ON_HOST_BY_RULES]


def test_plan_notes_ops_the_rules_put_on_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {op: '*', device: host}\n")
    argv = ["cnn", "--target", "x86-h100", "--partition", "rules", "--rules", str(rules)]
    assert _plan_notes(argv, capsys) == [f"note: {ALL_ON_HOST_BY_RULES}"]


def test_ops_the_cost_policy_put_on_the_host_are_noted_as_placed_there_by_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    notes = _plan_notes(["cnn", "--target", "x86-h100", "--partition", "cost"], capsys)
    assert notes == ["note: gpu0 runs none of the 12 ops: placed on host by the cost policy (12)"]


def test_an_earlier_choice_is_still_named_where_it_took_the_ops(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # capability: node0 comes first and runs every op, so node1's GPU gets none
    assert simulate("cnn", "two-node-h100", mode="timing").to_dict()["extra"][
        "placement_notes"
    ] == [NODE1_AFTER_NODE0]
    assert _plan_notes(["cnn", "--target", "two-node-h100"], capsys) == [
        f"note: {NODE1_AFTER_NODE0}"
    ]


def test_a_rule_to_a_later_choice_across_levels_names_where_the_ops_went() -> None:
    # node1 is after node0 at the root: node0's GPU could run every op, but a rule moved them
    graph, platform = load_model("cnn"), tag_platform("two-node-h100")
    plan = partition(graph, platform, "rules", [{"op": "*", "device": "node1"}])
    assert _notes(graph, platform, plan) == (
        "node0/gpu0 runs none of the 12 ops: placed on node1/gpu0 by the rules (12)",
    )


def test_a_nested_accelerator_is_judged_at_its_own_level() -> None:
    # vdevice0/host comes after vdevice0/npu in vdevice0's choices, though vdevice0 itself is the
    # root's first choice: the ops went to a later choice there, by the rules
    graph, platform = load_model("cnn"), tag_platform("arm-riscv-soc")
    plan = partition(graph, platform, "rules", [{"op": "*", "device": "vdevice0/host"}])
    assert _notes(graph, platform, plan) == (
        "vdevice0/npu runs none of the 12 ops: placed on vdevice0/host by the rules (11), "
        "no Softmax in its ops (1)",
    )


def test_a_folded_op_is_noted_as_folded(host_npu: Platform) -> None:
    # relu0 reads a constant only: folded at load time on the host, though the npu runs Relu
    b = GraphBuilder("g")
    weight = b.op("Relu", np.ones(4, np.float32))
    graph = b.build(b.op("Mul", b.input("x", (4,)), weight))
    plan = partition(graph, host_npu)
    assert _notes(graph, host_npu, plan) == (
        "npu runs none of the 2 ops: folded at load time (1), no Mul in its ops (1)",
    )


def test_a_rule_to_an_earlier_choice_names_the_rules_not_an_earlier_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # node0 comes before node1: the rule sent every op to node0's GPU, which capability would
    # have too, so node1's note said "placed on an earlier choice" of ops a rule placed
    rules = [{"op": "*", "device": "node0/gpu0"}]
    note = "node1/gpu0 runs none of the 12 ops: placed on node0/gpu0 by the rules (12)"
    result = simulate("cnn", "two-node-h100", partition="rules", rules=rules, mode="timing")
    assert result.to_dict()["extra"]["placement_notes"] == [note]
    path = tmp_path / "rules.yaml"
    path.write_text("- {op: '*', device: node0/gpu0}\n")
    argv = ["cnn", "--target", "two-node-h100", "--partition", "rules", "--rules", str(path)]
    assert _plan_notes(argv, capsys) == [f"note: {note}"]
    # an op no rule matches is capability's: an earlier choice took it
    result = simulate(
        "cnn", "two-node-h100", partition="rules", rules=[{"op": "Nothing", "device": "host"}],
        mode="timing",
    )  # fmt: skip
    assert result.to_dict()["extra"]["placement_notes"] == [NODE1_AFTER_NODE0]


def test_a_rule_that_matches_only_folded_ops_is_noted() -> None:
    # the Relu of a weight is folded at load time: the rule sending it to the GPU cannot, and
    # said nothing (a rule matching no op at all stays silent: a file may serve several models)
    b = GraphBuilder("g")
    weight = b.op("Relu", np.ones(4, np.float32), name="w_relu")
    graph = b.build(b.op("Add", b.input("x", (4,)), weight, name="a"))
    rules = [{"op": "Relu", "device": "gpu0"}, {"op": "Conv", "device": "gpu0"}]
    note = (
        "rules[0] (Relu -> gpu0) matches only ops folded at load time, which the root host "
        "computes from constants before the run: w_relu"
    )
    result = simulate(graph, "x86-h100", partition="rules", rules=rules, mode="timing")
    assert result.to_dict()["extra"]["placement_notes"] == [note]
    assert result.placement["a"] == "gpu0"  # capability's: no rule matches the Add
    # the plan's JSON keeps it (hetsim plan --json had it on stderr alone), and what rules placed
    ruling = [*rules, {"op": "Add", "device": "host"}]
    plan = partition(graph, platform_of("x86-h100"), "rules", ruling).to_dict()
    assert (plan["notes"], plan["ruled"], plan["placement"]["a"]) == ([note], ["a"], "host")


@pytest.mark.parametrize(("op", "close"), [("W_relu", "w_relu"), ("relu", "Relu")])
def test_a_rule_for_a_folded_op_in_another_case_is_refused(op: str, close: str) -> None:
    # the case check saw only the ops left after folding: a rule for the folded Relu in another
    # case passed without an error or a note, where the rule in its own case is noted (above)
    b = GraphBuilder("g")
    weight = b.op("Relu", np.ones(4, np.float32), name="w_relu")
    graph = b.build(b.op("Add", b.input("x", (4,)), weight, name="a"))
    with pytest.raises(PartitionError) as err:
        partition(graph, platform_of("x86-h100"), "rules", [{"op": op, "device": "host"}])
    assert str(err.value) == (
        f"rules[0].op: expected an op type or a glob over op names, got {op!r}, which matches "
        f"no op; rules match case-sensitively (did you mean {close!r}?)"
    )


def test_a_folded_op_a_rule_names_is_not_counted_as_placed_by_it() -> None:
    # Plan.ruled ("ops a rule placed") listed w_relu, which the root host computes at load time
    b = GraphBuilder("g")
    weight = b.op("Relu", np.ones(4, np.float32), name="w_relu")
    graph = b.build(b.op("Relu", b.op("Add", b.input("x", (4,)), weight, name="a"), name="r"))
    plan = partition(graph, platform_of("x86-h100"), "rules", [{"op": "Relu", "device": "gpu0"}])
    assert plan.folded == ("w_relu",)
    assert plan.ruled == ("r",)


def test_the_case_hint_for_a_glob_is_a_glob_that_matches_the_op() -> None:
    # it suggested the op's raw name 'Blk[1]': as a glob, that matches 'Blk1', not the op, and
    # the rule then placed nothing, silently
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.input("x", (4,)), name="Blk[1]"))
    with pytest.raises(PartitionError) as err:
        partition(graph, platform_of("x86-h100"), "rules", [{"op": "blk[[]1]", "device": "host"}])
    hint = "Blk[[]1[]]"
    assert str(err.value).endswith(f"(did you mean {hint!r}?)")
    plan = partition(graph, platform_of("x86-h100"), "rules", [{"op": hint, "device": "host"}])
    assert plan.placement["Blk[1]"] == "host"
