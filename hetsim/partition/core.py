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
   `Transfer` per tensor and destination memory, of the tensor's bytes, along the platform's
   route between the two memories (`Transfer.via`: a copy between two device memories may pass
   through the host's). Outputs of the level (graph outputs, a nested segment's outputs) made
   elsewhere return to the host's memory.
5. The weights each memory holds (constants read by ops computed in it) must fit its capacity.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from hetsim.errors import OpError, PartitionError, UnknownValueError
from hetsim.ir import Graph, Op, check_graph_dims, format_dims, op_label
from hetsim.ir.tables import in_order
from hetsim.kernels import Cost, Meta, propagate_costs
from hetsim.partition.context import LevelContext, home_memory, is_static
from hetsim.partition.costs import op_costs
from hetsim.partition.folding import dims_of_op, dynamic_ops, fold
from hetsim.partition.plan import LevelPlan, Plan, Segment, Transfer
from hetsim.partition.policies import (
    POLICIES,
    Rule,
    folded_rule_notes,
    load_rules,
    ruled_ops,
)
from hetsim.partition.segments import Grouping, grouping
from hetsim.platform import Level, Platform, check_platform, empty_memory_note
from hetsim.units import counted, format_bytes, format_sizes

__all__ = ["ESTIMATE_DIM", "fold", "partition"]

ESTIMATE_DIM = 1
"""Size assumed for a symbolic dim left unbound, to estimate costs and bytes."""

PROBE_DIMS = (2, 2520)
"""Sizes the unbound dims are tried at when an op's shapes fail at `ESTIMATE_DIM`: where the op
fails at each of them too, the refusal says so beside its hint to bind the dims (no size may
hold: a float32[n, 4] plus a [3]; or few: a Reshape to ``[-1, 16]``). 2520 is a multiple of
every size up to 10."""


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
    held: dict[str, set[str]] = field(default_factory=dict)
    """Memory -> the weights the levels cut so far put there (`LevelContext.held`)."""
    dtypes: frozenset[str] = field(init=False)
    """The names of the dtypes among `metas` (`LevelContext.dtypes`): one pass in order over
    the table, where a lookup per op by name misses the caches at 1e6 ops."""

    def __post_init__(self) -> None:
        found = {meta.dtype for meta in self.metas.values()}  # a few: each named once
        self.dtypes = frozenset([dtype.name for dtype in found])

    def _memory(self, choice: str) -> str:
        return home_memory(self.platform, choice)

    def _segments(
        self,
        level: Level,
        cut: Grouping,
        exits: Sequence[str],
        parent: str | None,
    ) -> tuple[list[Segment], dict[str, int]]:
        """The level's segments, and the index of the segment that makes each tensor (of those
        read outside it: the level's `exits` and the inputs of another segment).

        One pass over the groups in execution order sees each tensor's producer before its
        readers. A tensor leaves its segment when a later segment reads it or it is one of the
        level's `exits`: any reader outside the level's ops makes it an output of the parent
        segment (a graph output, at the root), and folded ops read constants only. A speed trick:
        no graph-wide set of consumers per tensor (with it and the one-device segments of
        `group_ops`, `partition` of a 1e5-op chain went from 5.4-5.8 to 2.1-2.5 µs per op); and
        one group's inputs are what `grouping` saw it read from outside (`Grouping.outside`),
        with no table of what each op makes (at 1e6 ops, each lookup in one misses the caches).
        """
        groups = cut.groups
        constants, costs = self.constants, self.costs
        leaving = set(exits)
        if cut.outside is not None:  # one group: it reads from outside only
            read = [dict.fromkeys(t for t in cut.outside if t and t not in constants)]
        else:
            made: dict[str, int] = {}
            read = []
            for k, (_, group) in enumerate(groups):
                inputs: dict[str, None] = {}
                for op in group:
                    for t in op.inputs:
                        source = made.get(t)
                        if source is None:
                            if t and t not in constants:
                                inputs[t] = None
                        elif source != k:
                            inputs[t] = None
                            leaving.add(t)
                    for t in op.outputs:
                        if t:
                            made[t] = k
                read.append(inputs)
        first = len(self.segments.setdefault(level.path, []))  # ids go on across parents
        prefix = f"{level.path}:" if level.path else ""
        segments: list[Segment] = []
        leaves: dict[str, int] = {}
        for k, (device, group) in enumerate(groups):
            names = tuple([op.name for op in group])
            outputs = tuple([t for op in group for t in op.outputs if t and t in leaving])
            leaves.update(dict.fromkeys(outputs, k))
            segments.append(
                Segment(
                    id=f"{prefix}s{first + k}",
                    level=level.path,
                    device=device,
                    ops=names,
                    inputs=tuple(read[k]),
                    outputs=outputs,
                    parent=parent,
                    flops=float(sum([cost.flops for cost in in_order(costs, names)])),
                    op_types=tuple(Counter([op.type for op in group]).most_common()),
                    is_nested=device in self.platform.levels,
                )
            )
        return segments, leaves

    def _boundaries(
        self, level: Level, cut: list[Segment], made: Mapping[str, int], exits: Sequence[str]
    ) -> None:
        host_memory = self._memory(level.host)
        memories = [self._memory(s.device) for s in cut]
        moved: set[tuple[str, str]] = set()
        found = self.transfers.setdefault(level.path, [])

        def move(tensor: str, dst: str, reader: str | None) -> None:
            k = made.get(tensor)
            src = host_memory if k is None else memories[k]
            if src != dst and (tensor, dst) not in moved:
                moved.add((tensor, dst))
                size = self.metas[tensor].nbytes
                found.append(Transfer(tensor, src, dst, size, reader, self._via(src, dst)))

        for segment, memory in zip(cut, memories, strict=True):
            for tensor in segment.inputs:
                move(tensor, memory, segment.id)
        for tensor in exits:
            if tensor in made:
                move(tensor, host_memory, None)

    def _via(self, src: str, dst: str) -> tuple[str, ...]:
        """The memories between `src` and `dst` on the route a run copies along."""
        memories = [src]
        for link in self.platform.route(src, dst):
            memories.append(link.other_end(memories[-1]))
        return tuple(memories[1:-1])

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
            self.held,
            self.dtypes,
        )
        placed = POLICIES[self.policy](context)
        grouped = grouping(ops, placed)
        cut, made = self._segments(level, grouped, exits, parent)
        self.segments[level.path].extend(cut)
        self._boundaries(level, cut, made, exits)
        for segment, (_, group) in zip(cut, grouped.groups, strict=True):
            nested = self.platform.levels.get(segment.device)
            if nested is None and len(cut) == 1 and len(placed) == len(segment.ops):
                # one segment holds every op, all placed on its device, in order: the policy's
                # table is its placement (not made again, a lookup per op at 1e6 ops)
                self.placement.update(placed)
            elif nested is None:
                self.placement.update(dict.fromkeys(segment.ops, segment.device))
            else:
                self.cut(nested, group, segment.outputs, segment.id)

    def _check_static(self, level: Level, ops: tuple[Op, ...]) -> None:
        op = next((op for op in ops if op.name in self.dynamic), None)
        if op is not None:
            kind = level.executor.kind if level.executor is not None else "?"
            unbound = [s for s in self.graph.symbols if s not in self.bound]
            read = dims_of_op(self.graph, self.graph.ops, unbound, op.name)
            raise PartitionError(
                f"{op_label(op)}: expected static shapes at level "
                f"{level.path or '(root)'} ({kind} executor), got dynamic dims {read} (bind them "
                "with dims=)"
            )

    def check_memory(self) -> None:
        """Raise when the weights placed in a memory exceed its capacity."""
        constants = self.constants
        if not constants:
            return  # no weights to hold
        # Only an op that reads a constant holds weights; a memory's weights are the constants
        # among what its ops read, found by one set intersection rather than a list per op.
        reads = {op.name: op.inputs for op in self.graph.ops if not constants.isdisjoint(op.inputs)}
        paths = set(self.placement.values())
        memory_of = {path: self.platform.processors[path].memory for path in paths}
        held: dict[str, list[tuple[str, tuple[str, ...]]]] = {}  # memory -> (op, its inputs)
        for name, path in self.placement.items():
            inputs = reads.get(name)
            if inputs is not None:
                held.setdefault(memory_of[path], []).append((name, inputs))
        for memory, read in held.items():
            weights = constants.intersection(chain.from_iterable(i for _, i in read))
            need = sum(self.metas[t].nbytes for t in weights)
            capacity = self.platform.memories[memory].capacity_bytes
            if need > capacity:
                raise PartitionError(
                    _weights_message(memory, capacity, need, weights, read, self.metas)
                )

    def plan(self, folded: tuple[Op, ...], dims: Mapping[str, int]) -> Plan:
        """The frozen plan (call after `cut` on the root level), with what its rules did."""
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
        names = [op.name for op in self.graph.ops]
        folded_names = {op.name for op in folded}
        ruled: frozenset[str] = frozenset()
        if self.rules:  # a pass over the ops each, skipped without rules (nearly every plan)
            # a folded op a rule names is computed by the root host at load time: none placed it
            kept = [op for op in self.graph.ops if op.name not in folded_names]
            ruled = ruled_ops(self.rules, kept)
        if list(self.placement) == names:  # every op placed, in the graph's order (no folds,
            placement = self.placement  # one segment a level): no table rebuilt by name
        else:
            placement = dict.fromkeys(names, root_host)
            placement.update(self.placement)  # keeps the graph's order
        return Plan(
            graph=self.graph.name,
            platform=self.platform.name,
            policy=self.policy,
            levels=MappingProxyType(levels),
            placement=MappingProxyType(placement),
            folded=tuple(op.name for op in folded),
            dynamic=tuple(filter(self.dynamic.__contains__, names)) if self.dynamic else (),
            dims=MappingProxyType(dict(dims)),
            ruled=tuple(filter(ruled.__contains__, names)) if ruled else (),
            notes=folded_rule_notes(self.rules, self.graph.ops, folded_names),
        )


def _policy(policy: str, rules: Any, platform: Platform, ops: Sequence[Op]) -> tuple[Rule, ...]:
    if not isinstance(policy, str) or policy not in POLICIES:  # None, a list: a TypeError
        close = difflib.get_close_matches(policy, POLICIES, n=1) if isinstance(policy, str) else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise PartitionError(
            f"partition: expected a policy in {sorted(POLICIES)}, got {policy!r}{hint}"
        )
    if policy == "rules":
        if rules is None:
            raise PartitionError(
                "rules: expected a list of rules or a YAML file for policy 'rules', got None"
            )
        return load_rules(rules, platform, ops)  # a device's and a case's problems at once
    if rules is not None:
        given = repr(str(rules)) if isinstance(rules, Path) else repr(rules)  # a file by its name
        raise PartitionError(
            f"rules: expected no rules for policy {policy!r} (use policy 'rules'), got {given}"
        )
    return ()


def _weights_message(
    memory: str,
    capacity: int,
    need: int,
    weights: AbstractSet[str],
    read: list[tuple[str, tuple[str, ...]]],
    metas: Mapping[str, Meta],
) -> str:
    """What `check_memory` says of a memory its weights overflow: the sizes, and the largest
    weight (the first by name of equal ones) with the first op placed there that reads it."""
    largest = min(weights, key=lambda name: (-metas[name].nbytes, name))
    user = next(op for op, inputs in read if largest in inputs)
    fit, got = format_sizes(capacity, need)
    which = (
        f"{largest}" if len(weights) == 1
        else f"the largest {largest}, {format_bytes(metas[largest].nbytes)}"
    )  # fmt: skip
    return (
        f"memory {memory}: expected the weights of the ops placed on it to fit in {fit}, got "
        f"{got} ({counted(len(weights), 'weight tensor')}: {which}, read by op {user})"
        f"{empty_memory_note(memory, capacity)}"
    )


def _estimate(
    graph: Graph, bound: Mapping[str, int], inputs: Mapping[str, np.ndarray]
) -> tuple[dict[str, Meta], dict[str, Cost]]:
    """Metas and costs of the plan's estimate: unbound dims at `ESTIMATE_DIM`, except the dims
    of the given `inputs`, which their arrays' shapes bind."""
    known = graph.inputs  # a name it lacks is propagate's to refuse, with its message
    from_arrays = {symbol for name in inputs if name in known for symbol in known[name].symbols}
    estimate = {
        s: bound.get(s, ESTIMATE_DIM) for s in graph.symbols if s in bound or s not in from_arrays
    }
    try:
        return propagate_costs(graph, estimate, inputs)
    except OpError as err:  # a shape rule's refusal (not an UnknownValueError: raised as is)
        guessed = [s for s in sorted(estimate) if s not in bound]
        if not guessed or err.op not in dynamic_ops(graph, graph.ops, bound):
            raise  # no guess, or an op whose shapes no guessed dim reaches: its own error
        sizes = {n: dict.fromkeys(guessed, n) for n in (ESTIMATE_DIM, *PROBE_DIMS)}
        estimated = format_dims(sizes[ESTIMATE_DIM])
        also = ""
        if all(_fails_at(graph, {**estimate, **sizes[n]}, inputs, err.op) for n in PROBE_DIMS):
            # the hint alone sent the user to sizes that failed too (a float32[n, 4] plus a
            # [3]); some sizes may still hold (a Reshape to [-1, 16] at 16 and 32)
            probed = " and ".join(format_dims(sizes[n]) for n in PROBE_DIMS)
            also = f"; it fails at {probed} too: few sizes, or none, may hold"
        # a shape rule that holds at the run's sizes may not at the guess (a Reshape to
        # [-1, 2] of [n]): the rule's message alone named sizes the user never gave
        raise PartitionError(
            f"partition: expected shapes that hold with the dims not bound at compile time "
            f"set to {ESTIMATE_DIM} for the plan's estimate ({estimated}), got {err} "
            f"(bind them with dims=, as this run's sizes{also})"
        ) from err


def _fails_at(
    graph: Graph, dims: Mapping[str, int], inputs: Mapping[str, np.ndarray], op: str
) -> bool:
    """Whether op `op`'s shape rule refuses its shapes at `dims` (not when an earlier op does)."""
    try:
        propagate_costs(graph, dims, inputs)
    except OpError as err:
        return err.op == op
    except UnknownValueError:  # a value the sizes leave unknown: no shape rule's refusal
        pass
    return False


def partition(
    graph: Graph,
    platform: Platform,
    policy: str = "capability",
    rules: Sequence[Mapping[str, Any]] | str | Path | None = None,
    dims: Mapping[str, int] | None = None,
    *,
    metas: Mapping[str, Meta] | None = None,
    costs: Mapping[str, Cost] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
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
    costs
        Every op's `Cost` for those `metas` (`op_costs`), when the caller has them (`simulate`
        binds its run with the same table); else computed here (with the metas, in one walk:
        `hetsim.kernels.propagate_costs`, when neither is given). Only with `metas`.
    inputs
        Arrays of graph inputs whose values shapes depend on (an Expand's shape as an input),
        for an estimate made here: their values are used, and the dims of their shapes taken
        from the arrays. Without them such a graph cannot be estimated (`UnknownValueError`).

    Returns
    -------
    Plan
        Frozen.

    Raises
    ------
    PartitionError
        A `graph` or `platform` of the wrong type, an unknown policy, bad rules, an op no device
        can run, a rule sending an op where it cannot run, weights that do not fit a memory, or
        `metas` or `costs` that lack a tensor's Meta or an op's Cost.
    ModelError
        Bad `dims` (`hetsim.ir.check_graph_dims`: a negative size, a name the graph lacks).

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> plan = partition(load_model("cnn"), build_platform(Target("arm-riscv-soc")))
    >>> [(s.id, s.device, len(s.ops)) for s in plan.segments]
    [('s0', 'vdevice0', 11), ('s1', 'host', 1), ('vdevice0:s0', 'vdevice0/npu', 11)]
    """
    if not isinstance(graph, Graph):
        raise PartitionError(
            f"partition: expected graph a hetsim Graph (hetsim.load_model gives one), got "
            f"{type(graph).__name__}"
        )
    check_platform(platform, "partition", PartitionError)
    bound = dict(check_graph_dims(graph, dims))  # as simulate checks them: sizes >= 0, names
    if inputs is not None and not isinstance(inputs, Mapping):
        raise PartitionError(
            f"partition: expected inputs a mapping of input name -> array, got "
            f"{type(inputs).__name__}"
        )
    for name, given_table in (("metas", metas), ("costs", costs)):
        if given_table is not None and not isinstance(given_table, Mapping):
            raise PartitionError(
                f"partition: expected {name} a mapping of name -> "
                f"{'Meta' if name == 'metas' else 'Cost'}, got {type(given_table).__name__}"
            )
    constants, folded, ops = fold(graph)
    rule_list = _policy(policy, rules, platform, graph.ops)  # a case check sees folded ops too
    given = metas is not None  # the caller's: a key it lacks is said as such
    if metas is None:
        if costs is not None:
            raise PartitionError("partition: expected metas= with costs= (costs are of metas)")
        metas, costs = _estimate(graph, bound, inputs or {})  # one walk gives both
    try:  # caught, not checked: nothing per op when metas and costs are whole
        builder = _Builder(
            graph,
            platform,
            policy,
            metas,
            costs if costs is not None else op_costs(ops, metas),
            dynamic_ops(graph, ops, bound),
            constants,
            rule_list,
            bound,
        )
        builder.cut(platform.levels[""], ops, graph.outputs, None)
        builder.check_memory()  # reads the weights' metas
    except KeyError as err:
        key = err.args[0] if err.args else None
        missing = _not_given(graph, metas, costs, key) if given else None
        if missing is None:
            raise
        raise missing from err
    return builder.plan(folded, bound)


def _not_given(
    graph: Graph, metas: Mapping[str, Meta], costs: Mapping[str, Cost] | None, key: object
) -> PartitionError | None:
    """The error for `key`, which a caller's `metas` or `costs` lacked (an op's Cost, a
    tensor's Meta: a name of the graph's); None for any other key (an internal error, left as
    it is)."""
    if costs is not None and key not in costs and any(op.name == key for op in graph.ops):
        return PartitionError(
            f"partition: expected a Cost for every op of graph {graph.name} (as "
            f"hetsim.partition.costs.op_costs gives them), got none for op {key!r}"
        )
    tensors = chain(graph.inputs, graph.initializers, *(op.outputs for op in graph.ops))
    if isinstance(key, str) and key not in metas and key in tensors:
        return PartitionError(
            f"partition: expected a Meta for every tensor of graph {graph.name} (as "
            f"hetsim.kernels.propagate gives them), got none for {key!r}"
        )
    return None
