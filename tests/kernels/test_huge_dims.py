"""Dims so large that a cost passes a float64 are refused naming the op (a cost rule's own
OverflowError came out of `simulate`, `hetsim plan` and `compare --shapes` as a traceback), and
a summary whose total passes it says so (``model show`` printed ``work: inf EFLOP``)."""

from __future__ import annotations

import re

import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.models import load_model, summarize


def test_a_cost_past_a_float64_names_the_op() -> None:
    message = (
        "op scores (MatMul): expected flops and bytes that fit a float64 (dims too large?), got "
        "OverflowError: int too large to convert to float"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate("transformer", "x86-h100", mode="timing", dims={"seq": 10**300})


def test_a_summary_whose_total_flops_pass_a_float64_says_so() -> None:
    graph = load_model("transformer")
    with pytest.raises(ModelError, match=r"^model transformer: expected total flops that fit a "
                       r"float64 \(dims too large\?\), got inf at dims \{'seq': 1000"):  # fmt: skip
        summarize(graph, {"seq": 10**153})
    assert summarize(graph, {"seq": 16}).flops > 0
