"""`partition()`: a graph on a platform, level by level, as a frozen `Plan`.

Owns the recursion, the dynamic-shape rule, segment boundaries and the memory check:

1. Constants are the graph's initializers and the outputs of ops computed from constants only;
   those ops are *folded* (computed at load time, as the VM does) and join no segment.
2. Symbolic dims not bound in `dims` are unknown at compile time. An op that reads a tensor
   whose shape depends on one (tracked by dependence from the graph inputs) is *dynamic*; a
   dynamic op is never placed on a level whose executor `is_static` (a graph executor): it stays
   at a VM level. Costs and bytes of such tensors are estimated with each unbound dim set to
   `ESTIMATE_DIM`.
3. At each level the policy places the level's ops on its choices (devices, nested levels, the
   host); `hetsim.partition.segments.group_ops` cuts them into segments; a segment on a nested
   level is partitioned again there, with its inputs arriving in that level host's memory and
   its outputs returned there, to any depth.
4. A tensor read by a segment whose memory differs from where it was made (a graph input and a
   nested segment's input start in the level host's memory) crosses the boundary: one
   `Transfer` per tensor and destination memory, of the tensor's bytes. Outputs of the level
   (graph outputs, a nested segment's outputs) made elsewhere return to the host's memory.
5. The weights each memory holds (constants read by ops computed in it) must fit its capacity.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hetsim.errors import PartitionError
from hetsim.ir import Graph, Op
from hetsim.kernels import Cost, Meta, propagate
from hetsim.partition.context import LevelContext, home_memory, is_static
from hetsim.partition.costs import op_costs
from hetsim.partition.plan import LevelPlan, Plan, Segment, Transfer
from hetsim.partition.policies import POLICIES, Rule, load_rules
from hetsim.partition.segments import group_ops
from hetsim.platform import Level, Platform
from hetsim.units import format_bytes

__all__ = ["ESTIMATE_DIM", "fold", "partition"]

ESTIMATE_DIM = 1
"""Size assumed for a symbolic dim left unbound, to estimate costs and bytes."""


def fold(graph: Graph) -> tuple[frozenset[str], tuple[Op, ...], tuple[Op, ...]]:
    """Constants, folded ops (constants only in) and the ops that remain, in graph order.

    Examples
    --------
    >>> import numpy as np
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (Op("Neg", "n", ("w",), ("v",)), Op("Add", "a", ("x", "v"), ("y",))),
    ...     {"x": TensorType((2,), "float32")}, ("y",), {"w": np.ones(2, "float32")})
    >>> constants, folded, kept = fold(g)
    >>> sorted(constants), [o.name for o in folded], [o.name for o in kept]
    (['v', 'w'], ['n'], ['a'])
    """
    constants = {name for name in graph.initializers if name not in graph.inputs}
    known = {*constants, ""}  # an omitted input ("") does not stop folding
    folded, kept = [], []
    for op in graph.ops:
        if known.issuperset(op.inputs):
            folded.append(op)
            constants.update(name for name in op.outputs if name)
            known.update(op.outputs)
        else:
            kept.append(op)
    return frozenset(constants), tuple(folded), tuple(kept)


def _dynamic_ops(graph: Graph, ops: Sequence[Op], dims: Mapping[str, int]) -> frozenset[str]:
    shaped = {n for n, t in graph.inputs.items() if any(s not in dims for s in t.symbols)}
    if not shaped:
        return frozenset()
    dynamic = set()
    for op in ops:
        if any(name in shaped for name in op.inputs):
            dynamic.add(op.name)
            shaped.update(op.outputs)
    return frozenset(dynamic)


@dataclass
class _Builder:
    """The mutable state of one `partition` call: segments and transfers as levels are cut."""

    graph: Graph
    platform: Platform
    policy: str
    metas: Mapping[str, Meta]
    costs: Mapping[str, Cost]
    dynamic: frozenset[str]
    constants: frozenset[str]
    rules: tuple[Rule, ...]
    bound: Mapping[str, int]
    segments: dict[str, list[Segment]] = field(default_factory=dict)
    transfers: dict[str, list[Transfer]] = field(default_factory=dict)
    placement: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.consumers: dict[str, set[str]] = {}
        consumers = self.consumers
        for op in self.graph.ops:
            for name in op.inputs:
                found = consumers.get(name)
                if found is None:  # not setdefault: no empty set built per read
                    consumers[name] = {op.name}
                else:
                    found.add(op.name)
        self.outputs = set(self.graph.outputs)
        self.made = {
            op.name: op.outputs if "" not in op.outputs else tuple(t for t in op.outputs if t)
            for op in self.graph.ops
        }

    def _memory(self, choice: str) -> str:
        return home_memory(self.platform, choice)

    def _segment(
        self, level: Level, device: str, ops: tuple[Op, ...], parent: str | None
    ) -> Segment:
        names = {op.name for op in ops}
        made = {t for op in ops for t in op.outputs if t}
        inputs = dict.fromkeys(
            t for op in ops for t in op.inputs if t and t not in made and t not in self.constants
        )
        consumers, none = self.consumers, frozenset[str]()
        outputs = [
            t
            for op in ops
            for t in op.outputs
            if t and (t in self.outputs or not consumers.get(t, none) <= names)
        ]
        number = len(self.segments.setdefault(level.path, []))
        prefix = f"{level.path}:" if level.path else ""
        return Segment(
            id=f"{prefix}s{number}",
            level=level.path,
            device=device,
            ops=tuple(op.name for op in ops),
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            parent=parent,
            flops=float(sum(self.costs[op.name].flops for op in ops)),
            op_types=tuple(Counter(op.type for op in ops).most_common()),
            is_nested=device in self.platform.levels,
        )

    def _boundaries(self, level: Level, cut: list[Segment], exits: Sequence[str]) -> None:
        host_memory = self._memory(level.host)
        made_in: dict[str, str] = {}
        for s in cut:
            memory = self._memory(s.device)
            for op_name in s.ops:
                made_in.update(dict.fromkeys(self.made[op_name], memory))
        moved: set[tuple[str, str]] = set()
        found = self.transfers.setdefault(level.path, [])

        def move(tensor: str, dst: str, reader: str | None) -> None:
            src = made_in.get(tensor, host_memory)
            if src != dst and (tensor, dst) not in moved:
                moved.add((tensor, dst))
                found.append(Transfer(tensor, src, dst, self.metas[tensor].nbytes, reader))

        for segment in cut:
            for tensor in segment.inputs:
                move(tensor, self._memory(segment.device), segment.id)
        for tensor in exits:
            if tensor in made_in:
                move(tensor, host_memory, None)

    def cut(
        self, level: Level, ops: tuple[Op, ...], exits: Sequence[str], parent: str | None
    ) -> None:
        """Place `ops` at `level`, cut them into segments, recurse into nested levels."""
        if is_static(level):
            self._check_static(level, ops)
        context = LevelContext(
            self.platform,
            level,
            ops,
            self.metas,
            self.costs,
            self.dynamic,
            self.constants,
            self.rules,
        )
        chosen = POLICIES[self.policy](context)
        cut = []
        for device, group in group_ops(ops, chosen):
            segment = self._segment(level, device, group, parent)
            self.segments[level.path].append(segment)
            cut.append((segment, group))
        self._boundaries(level, [s for s, _ in cut], exits)
        for segment, group in cut:
            nested = self.platform.levels.get(segment.device)
            if nested is None:
                self.placement.update(dict.fromkeys(segment.ops, segment.device))
            else:
                self.cut(nested, group, segment.outputs, segment.id)

    def _check_static(self, level: Level, ops: tuple[Op, ...]) -> None:
        op = next((op for op in ops if op.name in self.dynamic), None)
        if op is not None:
            kind = level.executor.kind if level.executor is not None else "?"
            unbound = [s for s in self.graph.symbols if s not in self.bound]
            raise PartitionError(
                f"op {op.name} ({op.type}): expected static shapes at level "
                f"{level.path or '(root)'} ({kind} executor), got dynamic dims {unbound} "
                f"(bind them with dims=)"
            )

    def check_memory(self) -> None:
        """Raise when the weights placed in a memory exceed its capacity."""
        ops = {op.name: op for op in self.graph.ops}
        held: dict[str, set[str]] = {}
        for name, path in self.placement.items():
            weights = [t for t in ops[name].inputs if t in self.constants]
            if weights:  # an op without weights adds nothing to hold
                memory = self.platform.processors[path].memory
                held.setdefault(memory, set()).update(weights)
        for memory, weights in held.items():
            need = sum(self.metas[t].nbytes for t in weights)
            capacity = self.platform.memories[memory].capacity_bytes
            if need > capacity:
                raise PartitionError(
                    f"memory {memory}: expected the weights of the ops placed on it to fit in "
                    f"{format_bytes(capacity)}, got {format_bytes(need)} "
                    f"({len(weights)} weight tensor{'' if len(weights) == 1 else 's'})"
                )

    def plan(self, folded: tuple[Op, ...], dims: Mapping[str, int]) -> Plan:
        """The frozen plan (call after `cut` on the root level)."""
        levels = {}
        for path, level in self.platform.levels.items():
            executor = level.executor.kind if level.executor is not None else ""
            levels[path] = LevelPlan(
                path,
                level.host,
                executor,
                tuple(self.segments.get(path, ())),
                tuple(self.transfers.get(path, ())),
            )
        root_host = self.platform.levels[""].host
        placement = {op.name: self.placement.get(op.name, root_host) for op in self.graph.ops}
        return Plan(
            graph=self.graph.name,
            platform=self.platform.name,
            policy=self.policy,
            levels=MappingProxyType(levels),
            placement=MappingProxyType(placement),
            folded=tuple(op.name for op in folded),
            dynamic=tuple(op.name for op in self.graph.ops if op.name in self.dynamic),
            dims=MappingProxyType(dict(dims)),
        )


def _policy(policy: str, rules: Any, platform: Platform) -> tuple[Rule, ...]:
    if policy not in POLICIES:
        close = difflib.get_close_matches(policy, POLICIES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise PartitionError(
            f"partition: expected a policy in {sorted(POLICIES)}, got {policy!r}{hint}"
        )
    if policy == "rules":
        if rules is None:
            raise PartitionError(
                "rules: expected a list of rules or a YAML file for policy 'rules', got None"
            )
        return load_rules(rules, platform)
    if rules is not None:
        raise PartitionError(
            f"rules: expected no rules for policy {policy!r} (use policy 'rules'), got {rules!r}"
        )
    return ()


def partition(
    graph: Graph,
    platform: Platform,
    policy: str = "capability",
    rules: Sequence[Mapping[str, Any]] | str | Path | None = None,
    dims: Mapping[str, int] | None = None,
    *,
    metas: Mapping[str, Meta] | None = None,
) -> Plan:
    """Place every op of `graph` on `platform`: per level, segments, devices and transfers.

    Parameters
    ----------
    graph
        The model.
    platform
        The platform; every level of its tree is partitioned, recursively.
    policy
        A key of `POLICIES`: ``capability``, ``cost`` or ``rules``.
    rules
        For policy ``rules``: a list of ``{op, device}`` mappings or a YAML file path.
    dims
        Symbolic dims bound at compile time; unbound ones make the ops they reach dynamic.
    metas
        Every tensor's `Meta` at the estimate dims (each unbound dim `ESTIMATE_DIM`), when the
        caller has them already (`hetsim.api.simulate` reuses its own); else propagated here.

    Returns
    -------
    Plan
        Frozen.

    Raises
    ------
    PartitionError
        An unknown policy, bad rules, an op no device can run, a rule sending an op where it
        cannot run, or weights that do not fit a memory.

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> plan = partition(load_model("cnn"), build_platform(Target("arm-riscv-soc")))
    >>> [(s.id, s.device, len(s.ops)) for s in plan.segments]
    [('s0', 'vdevice0', 11), ('s1', 'host', 1), ('vdevice0:s0', 'vdevice0/npu', 11)]
    """
    bound = dict(dims or {})
    rule_list = _policy(policy, rules, platform)
    estimate = {s: bound.get(s, ESTIMATE_DIM) for s in graph.symbols}
    if metas is None:
        metas = propagate(graph, estimate)
    constants, folded, ops = fold(graph)
    builder = _Builder(
        graph,
        platform,
        policy,
        metas,
        op_costs(ops, metas),
        _dynamic_ops(graph, ops, bound),
        constants,
        rule_list,
        bound,
    )
    builder.cut(platform.levels[""], ops, graph.outputs, None)
    builder.check_memory()
    return builder.plan(folded, bound)
