"""Comma-separated options (`hetsim.cli.lists`): an empty item is a usage error that names the
option, in every command that takes such a list, where it had been dropped without a word."""

from __future__ import annotations

import pytest

from hetsim.cli import main

COMPARE = ["compare", "mlp", "--target", "x86-h100"]
TRANSFORMER = ["transformer", "--target", "x86-h100"]


@pytest.mark.parametrize(
    ("argv", "option", "value", "item"),
    [
        # compare ran none and whole: "none,whole," compared what "none,whole" compares
        (COMPARE, "--cuda-graph", "none,whole,", "3 of 3"),
        (COMPARE, "--cuda-graph", ",none", "1 of 2"),
        (COMPARE, "--buckets", "16,,64", "2 of 3"),
        (["bench", "dispatch"], "--ops", "1,10,", "3 of 3"),
        (["run", *TRANSFORMER], "--dims", "seq=4,", "2 of 2"),
        (["plan", *TRANSFORMER], "--dims", "seq=4, ,", "2 of 3"),
        (["model", "show", "transformer"], "--dims", ",seq=4", "1 of 2"),
    ],
    ids=[
        "compare-strategies",
        "compare-leading",
        "compare-buckets",
        "bench-ops",
        "run-dims",
        "plan-dims",
        "model-show-dims",
    ],
)
def test_an_empty_item_is_a_usage_error_naming_the_option(
    argv: list[str], option: str, value: str, item: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, option, value])
    assert exit_info.value.code == 2
    command = " ".join(argv[:2] if argv[0] in ("bench", "model") else argv[:1])
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim {command}: error: argument {option}: expected comma-separated values, none "
        f"empty, got {value!r} (value {item} is empty)"
    )


def test_run_takes_one_strategy_so_a_trailing_comma_is_an_unknown_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "mlp", "--target", "x86-h100", "--cuda-graph", "none,"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "hetsim run: error: argument --cuda-graph: expected one of none, whole, regions, "
        "buckets, got 'none,' (did you mean 'none'?)"
    )
