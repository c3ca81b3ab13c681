"""The values a partition produces: `Plan`, `LevelPlan`, `Segment` and `Transfer`.

A plan is frozen once built (`hetsim.partition.partition` builds it); this module owns only its
shape, its plain-dict form (`Plan.to_dict`) and its text form (`format_plan`). How ops are placed
is the policies' job, how segments are formed is `hetsim.partition.segments`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hetsim.errors import PartitionError, Problem, close_name
from hetsim.ir import format_dims
from hetsim.units import counted, format_bytes, format_flops

__all__ = ["LevelPlan", "Plan", "Segment", "Transfer", "format_plan"]

MAX_LISTED = 10
"""The most segment ids an unknown id's error lists (a large model has hundreds)."""


@dataclass(frozen=True, slots=True)
class Transfer:
    """A tensor that crosses a segment boundary from one memory to another.

    Parameters
    ----------
    tensor
        The tensor's name.
    src_memory, dst_memory
        Where it was made and where it is read (memory names, ``host.mem``).
    bytes
        Bytes it moves: the tensor's size.
    segment
        The id of the segment that reads it, or ``None`` when it returns to the level host's
        memory as an output of the level (a graph output, a nested level's result).
    via
        The memories its route passes between the two (`hetsim.platform.Platform.route`, the
        route a run copies it along): ``()`` when one link joins them. Each link of the route
        carries all of its bytes (`link_bytes`).

    Examples
    --------
    >>> Transfer("x", "host.mem", "npu.mem", 4096, "s0")
    <Transfer x host.mem -> npu.mem 4.0 KiB for s0>
    >>> t = Transfer("y", "gpu0.mem", "gpu1.mem", 4096, "s1", via=("host.mem",))
    >>> t, t.route, t.link_bytes
    (<Transfer y gpu0.mem -> host.mem -> gpu1.mem 4.0 KiB x 2 links for s1>, \
('gpu0.mem', 'host.mem', 'gpu1.mem'), 8192)
    """

    tensor: str
    src_memory: str
    dst_memory: str
    bytes: int
    segment: str | None = None
    via: tuple[str, ...] = ()

    def __repr__(self) -> str:
        reader = f" for {self.segment}" if self.segment else " (result)"
        size = f"{format_bytes(self.bytes)}{_links_crossed(self)}"
        return f"<Transfer {self.tensor} {' -> '.join(self.route)} {size}{reader}>"

    @property
    def route(self) -> tuple[str, ...]:
        """The memories it crosses, from `src_memory` to `dst_memory`."""
        return (self.src_memory, *self.via, self.dst_memory)

    @property
    def links(self) -> int:
        """The links its route crosses."""
        return len(self.via) + 1

    @property
    def link_bytes(self) -> int:
        """Bytes it puts on links: `bytes` once per link of its route, as a run counts them."""
        return self.bytes * self.links

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "tensor": self.tensor,
            "src_memory": self.src_memory,
            "dst_memory": self.dst_memory,
            "via": list(self.via),
            "bytes": self.bytes,
            "link_bytes": self.link_bytes,
            "segment": self.segment,
        }


@dataclass(frozen=True, slots=True)
class Segment:
    """A maximal connected group of ops placed on one device of one level.

    Parameters
    ----------
    id
        Unique in the plan: ``s0``, ``s1`` at the root level, ``vdevice0:s0`` below it.
    level
        The path of the level it belongs to (``""`` for the root).
    device
        A processor path (``host``, ``vdevice0/npu``) or, for a segment handed to a nested
        ``hetero`` device, that level's path (``vdevice0``), which partitions it again.
    ops
        Op names, in graph order.
    inputs, outputs
        Tensors it reads from outside and tensors read after it (or graph outputs), in order;
        constants (weights) are not listed: they are resident where they are read.
    parent
        The id of the parent level's segment it was cut from (``None`` at the root level).
    flops
        The ops' flops, at the plan's dims.
    op_types
        ``(type, count)`` pairs, most frequent first.
    is_nested
        Whether `device` is a nested level.

    Examples
    --------
    >>> Segment("s0", "", "vdevice0", ("c1", "r1"), ("x",), ("y",), is_nested=True)
    <Segment s0 level=(root) device=vdevice0 (nested) ops=2>
    """

    id: str
    level: str
    device: str
    ops: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    parent: str | None = None
    flops: float = 0.0
    op_types: tuple[tuple[str, int], ...] = ()
    is_nested: bool = False

    def __repr__(self) -> str:
        nested = " (nested)" if self.is_nested else ""
        return (
            f"<Segment {self.id} level={self.level or '(root)'} device={self.device}{nested} "
            f"ops={len(self.ops)}>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "id": self.id,
            "level": self.level,
            "device": self.device,
            "is_nested": self.is_nested,
            "parent": self.parent,
            "ops": list(self.ops),
            "op_types": dict(self.op_types),
            "flops": self.flops,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
        }


@dataclass(frozen=True, slots=True)
class LevelPlan:
    """The plan of one level: its segments in execution order and its boundary transfers.

    A nested level's segments come from every parent segment handed to it, in the parent's
    order. `executor` is the level executor's kind (``vm``, ``graph``).

    Examples
    --------
    >>> LevelPlan("vdevice0", "vdevice0/host", "graph", (), ())
    <LevelPlan vdevice0 host=vdevice0/host executor=graph segments=0 transfers=0>
    """

    path: str
    host: str
    executor: str
    segments: tuple[Segment, ...]
    transfers: tuple[Transfer, ...]

    def __repr__(self) -> str:
        return (
            f"<LevelPlan {self.path or '(root)'} host={self.host} executor={self.executor} "
            f"segments={len(self.segments)} transfers={len(self.transfers)}>"
        )

    @property
    def transfer_bytes(self) -> int:
        """Bytes the level's boundary transfers put on links: each transfer's bytes once per
        link of its route (`Transfer.link_bytes`), as a run's ``link_bytes`` count them."""
        return sum(t.link_bytes for t in self.transfers)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "path": self.path,
            "host": self.host,
            "executor": self.executor,
            "segments": [s.to_dict() for s in self.segments],
            "transfers": [t.to_dict() for t in self.transfers],
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """Where every op of a graph runs on a platform, level by level.

    Parameters
    ----------
    graph, platform
        Names of the model and the platform.
    policy
        The policy that placed the ops (a key of `POLICIES`).
    levels
        Level path -> `LevelPlan`, in the platform's tree order (every level, used or not).
    placement
        Op name -> the processor path that finally runs it.
    folded
        Ops computed from constants only: folded at load time on the root host, in no segment.
    dynamic
        Ops whose shapes depend on a symbolic dim not bound in `dims`; kept off static levels.
    dims
        The symbolic dims bound at compile time.
    ruled
        Ops a rule placed (policy ``rules``; the rest went by capability): an idle device's
        note names the rules for them (`hetsim.partition.idle_notes`).
    notes
        What the placement could not do as asked, said once: a rule that matches only ops
        folded at load time (`hetsim.partition.folded_rule_notes`).
    """

    graph: str
    platform: str
    policy: str
    levels: Mapping[str, LevelPlan]
    placement: Mapping[str, str]
    folded: tuple[str, ...] = ()
    dynamic: tuple[str, ...] = ()
    dims: Mapping[str, int] = field(default_factory=dict)
    ruled: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # segment id -> the segments a nested level cut from it, indexed on first use (`children`)
    _children: dict[str, tuple[Segment, ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __repr__(self) -> str:
        segments = sum(len(level.segments) for level in self.levels.values())
        return (
            f"<Plan {self.graph} on {self.platform} policy={self.policy} "
            f"levels={len(self.levels)} segments={segments}>"
        )

    @property
    def segments(self) -> tuple[Segment, ...]:
        """Every segment, level by level in tree order."""
        return tuple(s for level in self.levels.values() for s in level.segments)

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        """Every boundary transfer, level by level in tree order."""
        return tuple(t for level in self.levels.values() for t in level.transfers)

    def segment(self, segment_id: str) -> Segment:
        """The segment with id `segment_id`.

        Raises
        ------
        PartitionError
            No segment of the plan has that id (the message lists the plan's ids and suggests
            the closest).

        Examples
        --------
        >>> s = Segment("s0", "", "npu", ("c",), ("x",), ("y",))
        >>> level = LevelPlan("", "host", "vm", (s,), ())
        >>> plan = Plan("g", "soc", "capability", {"": level}, {"c": "npu"})
        >>> plan.segment("s0").device
        'npu'
        >>> plan.segment("S0")
        Traceback (most recent call last):
        ...
        hetsim.errors.PartitionError: Plan.segment: expected a segment id of plan g on soc \
(s0), got 'S0' (did you mean 's0'?)
        """
        found = next((s for s in self.segments if s.id == segment_id), None)
        if found is None:
            known = [s.id for s in self.segments]
            shown = ", ".join(known[:MAX_LISTED]) or "none"
            if len(known) > MAX_LISTED:
                shown += f", ... ({len(known)} in all)"
            expected = f"expected a segment id of plan {self.graph} on {self.platform} ({shown})"
            hint = close_name(segment_id, known) if isinstance(segment_id, str) else None
            raise PartitionError([Problem("Plan.segment", expected, repr(segment_id), hint)])
        return found

    def children(self, segment_id: str) -> tuple[Segment, ...]:
        """The segments a nested level cut from segment `segment_id` (one invocation), in order.

        Indexed once per plan: compiling asks for every invocation's, and a scan per question
        made compiling quadratic in the invocations (`benchmarks/nested_scaling.py`).
        """
        if self._children is None:
            index: dict[str, list[Segment]] = {}
            for segment in self.segments:
                if segment.parent is not None:
                    index.setdefault(segment.parent, []).append(segment)
            children = {parent: tuple(found) for parent, found in index.items()}
            object.__setattr__(self, "_children", children)
        assert self._children is not None
        return self._children.get(segment_id, ())

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (``json.dumps`` takes it as it is)."""
        return {
            "graph": self.graph,
            "platform": self.platform,
            "policy": self.policy,
            "dims": dict(self.dims),
            "levels": {path: level.to_dict() for path, level in self.levels.items()},
            "placement": dict(self.placement),
            "folded": list(self.folded),
            "dynamic": list(self.dynamic),
            "ruled": list(self.ruled),
            "notes": list(self.notes),
        }


def _format_segment(segment: Segment) -> str:
    nested = " (nested level)" if segment.is_nested else ""
    types = ", ".join(f"{name} x{count}" for name, count in segment.op_types)
    return (
        f"  {segment.id:<12} {segment.device}{nested}: {counted(len(segment.ops), 'op')}, "
        f"{format_flops(segment.flops)}  [{types}]"
    )


def _links_crossed(transfer: Transfer) -> str:
    """`` x N links`` after a transfer's size where its route crosses more than one link."""
    return f" x {transfer.links} links" if transfer.via else ""


def _format_transfer(transfer: Transfer) -> str:
    reader = transfer.segment or "result"
    return (
        f"    {transfer.tensor}: {' -> '.join(transfer.route)} "
        f"{transfer.bytes} B ({format_bytes(transfer.bytes)}){_links_crossed(transfer)} "
        f"for {reader}"
    )


def format_plan(plan: Plan) -> str:
    """The plan as text: per level, its segments (device, op counts, flops) and transfers.

    A level's ``B on links`` counts each transfer once per link of its route, as a run's link
    bytes do; a transfer whose route crosses more than one link shows the route
    (``gpu0.mem -> host.mem -> gpu1.mem ... x 2 links``).

    Raises
    ------
    PartitionError
        `plan` is not a `Plan`.

    Examples
    --------
    >>> s = Segment("s0", "", "npu", ("c",), ("x",), ("y",), flops=2e6, op_types=(("Conv", 1),))
    >>> t = (Transfer("x", "host.mem", "npu.mem", 64, "s0"),)
    >>> level = LevelPlan("", "host", "vm", (s,), t)
    >>> print(format_plan(Plan("g", "soc", "capability", {"": level}, {"c": "npu"})))
    plan of g on soc (policy capability)
    level (root): host host, executor vm, 1 segment, 64 B on links
      s0           npu: 1 op, 2.00 MFLOP  [Conv x1]
      transfers:
        x: host.mem -> npu.mem 64 B (64 B) for s0
    """
    if not isinstance(plan, Plan):
        raise PartitionError(
            "format_plan: expected plan a Plan (hetsim.partition.partition gives one), got "
            f"{type(plan).__name__}"
        )
    lines = [f"plan of {plan.graph} on {plan.platform} (policy {plan.policy})"]
    if plan.dims:
        lines.append(f"dims: {format_dims(plan.dims)}")
    for level in plan.levels.values():
        lines.append(
            f"level {level.path or '(root)'}: host {level.host}, executor {level.executor}, "
            f"{counted(len(level.segments), 'segment')}, {level.transfer_bytes} B on links"
        )
        lines.extend(_format_segment(s) for s in level.segments)
        if level.transfers:
            lines.append("  transfers:")
            lines.extend(_format_transfer(t) for t in level.transfers)
    if plan.folded:
        lines.append(f"folded at load time: {counted(len(plan.folded), 'op')}")
    if plan.dynamic:
        lines.append(f"dynamic (kept off static levels): {counted(len(plan.dynamic), 'op')}")
    return "\n".join(lines)
