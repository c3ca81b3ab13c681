"""Options that take one name of a fixed set: the CLI's own lists equal the engine's, and an
unknown name is a usage error with the closest known one."""

from __future__ import annotations

import pytest

from hetsim.cli import main
from hetsim.cli.choices import POLICY_NAMES, STRATEGY_NAMES
from hetsim.partition import POLICIES
from hetsim.runtime.cuda_graph import STRATEGIES


def test_the_written_out_names_are_the_engines() -> None:
    assert sorted(POLICY_NAMES) == sorted(POLICIES)
    assert sorted(STRATEGY_NAMES) == sorted(STRATEGIES)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "cnn", "--target", "x86-h100", "--partition", "costs"],
            "argument --partition: expected one of capability, cost, rules, got 'costs' "
            "(did you mean 'cost'?)",
        ),
        (
            ["plan", "cnn", "--target", "x86-h100", "--partition", "Rules"],
            "argument --partition: expected one of capability, cost, rules, got 'Rules' "
            "(did you mean 'rules'?)",
        ),
        (
            ["run", "cnn", "--target", "x86-h100", "--cuda-graph", "regons"],
            "argument --cuda-graph: expected one of none, whole, regions, buckets, got 'regons' "
            "(did you mean 'regions'?)",
        ),
        (
            ["compare", "cnn", "--target", "x86-h100", "--cuda-graph", "none,hole"],
            "argument --cuda-graph: expected one of none, whole, regions, buckets, got 'hole' "
            "(did you mean 'whole'?)",
        ),
    ],
    ids=["run-partition", "plan-partition", "run-cuda-graph", "compare-cuda-graph"],
)
def test_an_unknown_name_is_a_usage_error_with_the_closest(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # run's were errors with status 1 after the model and the target were read; compare's too
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: {message}\n")
