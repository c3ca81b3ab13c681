"""Placement policies: `POLICIES` maps a policy name to ``(LevelContext) -> {op name: choice}``.

A choice is one of the level's candidates: a device path, a nested level path or the level host.
``capability`` (ONNX Runtime's execution-provider way), ``cost`` (HEFT-like earliest finish time)
and ``rules`` (the user's rules, first match wins). Segments, recursion and transfers are
`hetsim.partition.core`'s; a policy only chooses.
"""

from __future__ import annotations

from collections.abc import Callable

from hetsim.partition.context import LevelContext
from hetsim.partition.policies.capability import place_by_capability
from hetsim.partition.policies.heft import INVOKE_REQUEST_BYTES, estimate_us, op_us, place_by_cost
from hetsim.partition.policies.rules import (
    Rule,
    check_case,
    folded_rule_notes,
    load_rules,
    place_by_rules,
    read_rules,
    ruled_ops,
)

__all__ = [
    "INVOKE_REQUEST_BYTES",
    "POLICIES",
    "Policy",
    "Rule",
    "check_case",
    "estimate_us",
    "folded_rule_notes",
    "load_rules",
    "op_us",
    "place_by_capability",
    "place_by_cost",
    "place_by_rules",
    "read_rules",
    "ruled_ops",
]

Policy = Callable[[LevelContext], dict[str, str]]

POLICIES: dict[str, Policy] = {
    "capability": place_by_capability,
    "cost": place_by_cost,
    "rules": place_by_rules,
}
"""Policy name (what a user writes: ``partition="cost"``) -> the function that places ops."""
