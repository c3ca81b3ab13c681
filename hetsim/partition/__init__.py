"""hetsim.partition: a graph on a platform as a `Plan` of levels, segments and transfers.

`partition(graph, platform, policy, rules, dims)` places every op (policies in `POLICIES`:
``capability``, ``cost``, ``rules``), cuts each level's ops into segments that never form a
cycle, partitions segments handed to nested levels again, and inserts a `Transfer` wherever a
tensor crosses memories. `format_plan` prints a plan. See ``docs/partition.md``.
"""

from __future__ import annotations

from hetsim.partition.context import (
    ANY_OP,
    LevelContext,
    idle_notes,
    refusals,
)
from hetsim.partition.core import ESTIMATE_DIM, fold, partition
from hetsim.partition.plan import LevelPlan, Plan, Segment, Transfer, format_plan
from hetsim.partition.policies import (
    INVOKE_REQUEST_BYTES,
    POLICIES,
    Rule,
    check_case,
    folded_rule_notes,
    load_rules,
    read_rules,
    ruled_ops,
)
from hetsim.partition.segments import group_ops

__all__ = [
    "ANY_OP",
    "ESTIMATE_DIM",
    "INVOKE_REQUEST_BYTES",
    "POLICIES",
    "LevelContext",
    "LevelPlan",
    "Plan",
    "Rule",
    "Segment",
    "Transfer",
    "check_case",
    "fold",
    "folded_rule_notes",
    "format_plan",
    "group_ops",
    "idle_notes",
    "load_rules",
    "partition",
    "read_rules",
    "refusals",
    "ruled_ops",
]
