"""What a policy sees of one level, and who at that level can run an op.

Owns `LevelContext` (the level, its ops, their shapes and costs, which are dynamic) and the one
capability rule every policy shares: a processor runs the op types its ``ops`` attribute lists
(``"*"`` = all); a nested level runs an op when one of its devices does, unless the op is dynamic
and the level's executor `is_static` (a graph executor). A level's candidates are its devices in
declared order (the priority order), then its host. The error for an op nobody can run is built
here, once, as is the note on an accelerator a plan leaves idle (`idle_notes`).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import PartitionError
from hetsim.ir import Op, op_label
from hetsim.kernels import OPS, Cost, Meta
from hetsim.platform import Level, Platform
from hetsim.target.values import ANY_OP, set_op_types

__all__ = [
    "ANY_OP",
    "LevelContext",
    "home_memory",
    "idle_notes",
    "index_towards",
    "is_static",
    "no_device_error",
    "path_refusals",
    "refusals",
]


# The target schema checks each ``ops`` entry against the op types hetsim runs, which it cannot
# import (it sits below the kernels): this layer, which places ops by those lists, names them.
set_op_types(OPS)


def home_memory(platform: Platform, choice: str) -> str:
    """The memory a choice computes in: a processor's own, a nested level's host's.

    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> home_memory(soc, "vdevice0"), home_memory(soc, "vdevice0/npu")
    ('vdevice0/host.mem', 'vdevice0/npu.mem')
    """
    level = platform.levels.get(choice)
    return platform.processors[level.host if level else choice].memory


def is_static(level: Level) -> bool:
    """Whether the level's executor runs static shapes only (its ``is_static`` attribute)."""
    return bool(level.executor is not None and level.executor.attrs.get("is_static", False))


def refusals(
    platform: Platform,
    choice: str,
    op: Op,
    is_dynamic: bool,
    dtypes: frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """Why `choice` (a processor or nested level path) cannot run `op`: ``(path, reason)`` pairs.

    Empty when it can. A processor must list the op in its ``ops`` and each of `dtypes` (the
    element types the op computes in: its outputs') in its ``dtypes``. A nested level lists the
    refusals of each of its devices (not its host: a nested level is offered the ops its
    devices run).

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> refusals(soc, "vdevice0", Op("Softmax", "sm", ("x",), ("y",)), False)
    [('vdevice0/npu', 'no Softmax in its ops')]
    >>> refusals(soc, "vdevice0", Op("Relu", "r", ("x",), ("y",)), True)
    [('vdevice0', 'dynamic shapes; its graph executor is static')]
    >>> refusals(soc, "host", Op("Softmax", "sm", ("x",), ("y",)), True)
    []
    >>> refusals(soc, "vdevice0/npu", Op("Relu", "r", ("x",), ("y",)), False, {"float64"})
    [('vdevice0/npu', 'no float64 in its dtypes')]
    """
    level = platform.levels.get(choice)
    if level is None:
        attrs = platform.processors[choice].attrs
        ops = attrs.get("ops", (ANY_OP,))
        if ANY_OP not in ops and op.type not in ops:
            return [(choice, f"no {op.type} in its ops")]
        computes = attrs.get("dtypes")
        missing = sorted(dtypes.difference(computes)) if computes is not None else []
        return [(choice, f"no {missing[0]} in its dtypes")] if missing else []
    if is_dynamic and is_static(level):
        return [_static(level)]
    found: list[tuple[str, str]] = []
    for device in level.devices:
        refused = refusals(platform, device, op, is_dynamic, dtypes)
        if not refused:
            return []
        found.extend(refused)
    return found


def _processors_under(platform: Platform, choice: str) -> list[str]:
    """The processors whose capabilities `refusals` reads for `choice`: itself, or a nested
    level's devices, to any depth."""
    level = platform.levels.get(choice)
    if level is None:
        return [choice]
    return [path for device in level.devices for path in _processors_under(platform, device)]


@functools.cache
def _names(dtypes: tuple[np.dtype[Any], ...]) -> frozenset[str]:
    """The names of `dtypes`, made once per combination: numpy builds ``dtype.name`` anew on
    every read (1.65 µs, where hashing a dtype takes 22 ns), and placing asks per op."""
    return frozenset(d.name for d in dtypes)


def _static(level: Level) -> tuple[str, str]:
    kind = level.executor.kind if level.executor is not None else "?"
    return (level.path, f"dynamic shapes; its {kind} executor is static")


def path_refusals(
    platform: Platform,
    device: str,
    op: Op,
    is_dynamic: bool,
    dtypes: frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """Why `op` cannot run on exactly `device`, reached through every nested level above it.

    Unlike `refusals`, a processor inside a nested level is checked itself (a rule may name a
    co-processor whose level's accelerators lack the op).

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> sm = Op("Softmax", "sm", ("x",), ("y",))
    >>> path_refusals(soc, "vdevice0/host", sm, False), refusals(soc, "vdevice0", sm, False)
    ([], [('vdevice0/npu', 'no Softmax in its ops')])
    >>> path_refusals(soc, "vdevice0/host", sm, True)
    [('vdevice0', 'dynamic shapes; its graph executor is static')]
    """
    if is_dynamic:
        for path, level in platform.levels.items():
            above = device == path or device.startswith(path + "/")
            if path and above and is_static(level):
                return [_static(level)]
    return refusals(platform, device, op, is_dynamic, dtypes)


def no_device_error(op: Op, tried: list[tuple[str, str]]) -> PartitionError:
    """The error for an op that no candidate runs, naming each one tried and why not.

    >>> print(no_device_error(Op("Foo", "f1", (), ("y",)), [("npu", "no Foo in its ops")]))
    op f1 (Foo): no device can run it; tried npu (no Foo in its ops)
    """
    listed = ", ".join(f"{path} ({reason})" for path, reason in tried)
    return PartitionError(f"{op_label(op)}: no device can run it; tried {listed}")


@dataclass(frozen=True)
class LevelContext:
    """One level's share of the graph, as a policy sees it.

    Parameters
    ----------
    platform, level
        The platform and the level being partitioned.
    ops
        The level's ops in graph order (the whole graph at the root, a segment below it).
    metas, costs
        Every tensor's `Meta` and every op's `Cost`, at the plan's dims.
    dynamic
        Names of ops whose shapes depend on an unbound symbolic dim.
    constants
        Tensors resident before the run (weights and folded values): they never move.
    rules
        The user's rules (policy ``rules`` only).
    held
        Memory -> the weights placed there by the levels partitioned before this one, which
        the ``cost`` policy adds its own to (shared by one `partition` call's contexts: a
        nested level invoked twice holds both invocations' weights).
    """

    platform: Platform
    level: Level
    ops: tuple[Op, ...]
    metas: Mapping[str, Meta] = field(repr=False)
    costs: Mapping[str, Cost] = field(repr=False)
    dynamic: frozenset[str] = frozenset()
    constants: frozenset[str] = frozenset()
    rules: tuple[Any, ...] = ()
    held: dict[str, set[str]] = field(default_factory=dict, repr=False, compare=False)
    dtypes: frozenset[str] | None = field(default=None, repr=False, compare=False)
    """The names of the dtypes among `metas`, where the caller found them (`partition` does,
    once for all its levels): when every processor the level's choices run on takes all of
    them, no op is refused for its dtypes, and `candidates` reads none."""
    # Refusals depend on the op's type, dynamism and output dtypes only: worked out once per
    # combination, not per op.
    _capable: dict[tuple[Any, ...], tuple[tuple[str, ...], list[tuple[str, str]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def choices(self) -> tuple[str, ...]:
        """The level's devices in priority order, then its host."""
        return (*self.level.devices, self.level.host)

    def candidates(self, op: Op) -> tuple[str, ...]:
        """The choices that can run `op`, in priority order (one tuple per kind of op, shared
        by its ops rather than copied for each).

        Raises
        ------
        PartitionError
            None can; the message names each processor tried and why not.
        """
        is_dynamic = op.name in self.dynamic
        # an op's dtypes are read from `metas` by its outputs' names: at 1e6 ops, a lookup that
        # misses the caches, for nothing where no choice refuses a dtype the graph has
        dtypes_read = self._reads_dtypes
        key = (op.type, is_dynamic, self._compute_dtypes(op) if dtypes_read else ())
        known = self._capable.get(key)
        if known is None:
            dtypes = self.dtypes_of(op) if dtypes_read else frozenset()
            found: list[str] = []
            tried: list[tuple[str, str]] = []
            for choice in self.choices:
                refused = refusals(self.platform, choice, op, is_dynamic, dtypes)
                if refused:
                    tried.extend(refused)
                else:
                    found.append(choice)
            known = self._capable[key] = (tuple(found), tried)
        if not known[0]:
            raise no_device_error(op, known[1])
        return known[0]

    def first_choices(self) -> dict[str, str]:
        """Op name -> the first of its `candidates`, for every op of the level, in their order.

        Where no op is dynamic and no choice refuses a dtype the graph has, an op's candidates
        depend on its type alone (`candidates`' key): they are found once per type, with no
        call per op.

        Raises
        ------
        PartitionError
            As `candidates`.
        """
        if self.dynamic or self._reads_dtypes:
            return {op.name: self.candidates(op)[0] for op in self.ops}
        by_type: dict[str, str] = {}
        first: dict[str, str] = {}
        for op in self.ops:
            choice = by_type.get(op.type)
            if choice is None:
                choice = by_type[op.type] = self.candidates(op)[0]
            first[op.name] = choice
        return first

    @functools.cached_property
    def _reads_dtypes(self) -> bool:
        """Whether a processor the choices run on lacks one of `dtypes` (or they are unknown)."""
        if self.dtypes is None:
            return True
        processors = self.platform.processors
        for choice in self.choices:
            for path in _processors_under(self.platform, choice):
                computes = processors[path].attrs.get("dtypes")
                if computes is not None and not self.dtypes.issubset(computes):
                    return True
        return False

    def dtypes_of(self, op: Op) -> frozenset[str]:
        """The element types `op` computes in: its outputs' dtypes' names, and where its one
        output is bool its first input's too (a uint16 Less, an IsNaN of float64: computed in
        the input's type, though they give bools)."""
        return _names(self._compute_dtypes(op))

    def _compute_dtypes(self, op: Op) -> tuple[np.dtype[Any], ...]:
        metas, outputs = self.metas, op.outputs
        if len(outputs) == 1 and outputs[0] in metas:  # nearly every op: no generator
            dtype = metas[outputs[0]].dtype
            if dtype.kind == "b" and op.inputs and op.inputs[0] in metas:
                return (metas[op.inputs[0]].dtype, dtype)
            return (dtype,)
        return tuple(metas[name].dtype for name in outputs if name in metas)

    def memory_of(self, choice: str) -> str:
        """The memory a choice computes in: a nested level's is its host's."""
        return home_memory(self.platform, choice)


IDLE_REASONS_SHOWN = 3
"""The most frequent refusals an idle device's note names (the rest are counted together)."""

RANKED_POLICIES = frozenset({"capability", "rules"})
"""Policies that give an op to the first choice that can run it (``rules``: an op no rule
matches); under them an op a device could run went to an earlier choice, or where a rule said."""

_FOLDED = "folded at load time"  # an idle device's reason for a folded op (not a processor path)


def idle_notes(
    platform: Platform,
    ops: Sequence[Op],
    metas: Mapping[str, Meta],
    placement: Mapping[str, str],
    *,
    dynamic: Collection[str] = (),
    folded: Collection[str] = (),
    policy: str | None = None,
    ruled: Collection[str] = (),
) -> tuple[str, ...]:
    """Why each accelerator that `placement` (op name -> processor) gives no op runs none of
    the placed ones among `ops`: its most frequent refusals (none for one whose ``ops`` is
    empty: it runs nothing by design).

    An accelerator left idle looks, in a run's summary, like one that was fast; the note says
    what kept the ops off it (a float model on an int8 NPU: ``no float32 in its dtypes``; a
    dynamic op under a static level: ``dynamic shapes; its graph executor is static``), that the
    op was folded, or, for an op it could run, where it went instead: ``placed on an earlier
    choice`` (a choice before it in priority order, under the `RANKED_POLICIES`), else ``placed
    on host by the rules`` or ``placed on host by the cost policy``.

    Parameters
    ----------
    dynamic, folded, policy
        The plan's (`Plan.dynamic`, `Plan.folded`, `Plan.policy`). Without `policy` an op
        that went to a later choice is ``placed on host``, by whom unsaid.
    ruled
        The ops a rule placed (``rules`` policy: `hetsim.partition.ruled_ops`): ``placed on P
        by the rules`` wherever P is, where an earlier choice had been taken for capability's.

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> from hetsim.kernels import propagate
    >>> from hetsim.models import load_model
    >>> cnn, ethos = load_model("cnn"), build_platform(Target("arm/ethos-u65"))
    >>> on_host = {op.name: "host" for op in cnn.ops}
    >>> (note,) = idle_notes(ethos, cnn.ops, propagate(cnn, {}), on_host)
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    dev0 runs none of the 12 ops: no float32 in its dtypes (9), no BatchNormalization in its
    ops (2), no GlobalAveragePool in its ops (1)
    >>> h100 = build_platform(Target("x86-h100"))
    >>> idle_notes(h100, cnn.ops, propagate(cnn, {}), on_host, policy="rules")
    ('gpu0 runs none of the 12 ops: placed on host by the rules (12)',)
    """
    used = set(placement.values())
    processors = platform.processors.values()
    # one whose `ops` lists none runs none by design (a calibrated tag's placeholder): no note
    idle = [
        p.path
        for p in processors
        if p.role == "accelerator" and p.path not in used and p.attrs.get("ops", (ANY_OP,))
    ]
    ops = [op for op in ops if op.name in placement] if idle else []
    if not ops:
        return ()
    # dtypes do not depend on the level; each device's own levels refuse in `path_refusals`
    context = LevelContext(platform, platform.levels[""], tuple(ops), metas, {})
    dynamic, folded, ruled = frozenset(dynamic), frozenset(folded), frozenset(ruled)
    # a refusal depends on the op's type, dtypes and dynamism only: one per kind, weighted by
    # its ops; where an op the device could run went depends on its processor
    kinds: Counter[tuple[str, frozenset[str], bool, str, bool]] = Counter()
    example: dict[tuple[str, frozenset[str], bool, str, bool], Op] = {}
    for op in ops:
        where = _FOLDED if op.name in folded else placement[op.name]
        key = (op.type, context.dtypes_of(op), op.name in dynamic, where, op.name in ruled)
        kinds[key] += 1
        example.setdefault(key, op)
    notes = []
    for path in idle:
        reasons: Counter[str] = Counter()
        for key, count in kinds.items():
            reasons[_idle_reason(platform, path, example[key], key, policy)] += count
        shown = reasons.most_common(IDLE_REASONS_SHOWN)
        listed = [f"{reason} ({count})" for reason, count in shown]
        rest = len(ops) - sum(count for _, count in shown)
        if rest:
            listed.append(f"other reasons ({rest})")
        notes.append(f"{path} runs none of the {len(ops)} ops: {', '.join(listed)}")
    return tuple(notes)


def _idle_reason(
    platform: Platform,
    device: str,
    op: Op,
    key: tuple[str, frozenset[str], bool, str, bool],
    policy: str | None,
) -> str:
    """Why `op` (of kind `key`: type, dtypes, dynamism, where it went, whether a rule sent it
    there) is not on `device`."""
    _, dtypes, is_dynamic, placed, by_rule = key
    if placed == _FOLDED:
        return _FOLDED
    refused = path_refusals(platform, device, op, is_dynamic, dtypes)
    if refused:
        return refused[0][1]
    if by_rule:
        return f"placed on {placed} by the rules"
    is_ranked = policy is None or policy in RANKED_POLICIES
    if is_ranked and _is_earlier(platform, placed, device):
        return "placed on an earlier choice"
    by = {None: "", "rules": " by the rules"}.get(policy, f" by the {policy} policy")
    return f"placed on {placed}{by}"


def _is_earlier(platform: Platform, placed: str, device: str) -> bool:
    """Whether processor `placed` lies on a choice before `device`'s, at the deepest level
    that holds both (the root holds every processor)."""
    deepest, is_earlier = -1, False
    for level in platform.levels.values():
        choices = (*level.devices, level.host)
        at_placed, at_device = index_towards(choices, placed), index_towards(choices, device)
        if at_placed is not None and at_device is not None and len(level.path) > deepest:
            deepest, is_earlier = len(level.path), at_placed < at_device
    return is_earlier


def index_towards(choices: Sequence[str], path: str) -> int | None:
    """The index of the choice that is `path` or the nested level on the way to it, or None.

    >>> index_towards(("vdevice0", "host"), "vdevice0/npu"), index_towards(("host",), "gpu0")
    (0, None)
    """
    return next((i for i, c in enumerate(choices) if path == c or path.startswith(c + "/")), None)
