"""The slot space: where the slots of every program of a plan live (`SlotSpace`, numbered one
program after the other), what each weighs (bytes, from the run's `Meta`), and each program's code
with its slots moved to that place (`relocated`).

Also keeps, for the binders (`hetsim.sim.binders`) that read it, the costs of the ops the
programs share and each processor's launch cost and kernel timer. Turning instructions into
steps is left to the binders; driving them, to `bind` (`hetsim.sim.bind`).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, cast

from hetsim.cost import kernel_timer, launch_us
from hetsim.ir.tables import in_order
from hetsim.kernels import Cost, Meta
from hetsim.partition.costs import op_costs
from hetsim.platform import Platform
from hetsim.runtime import (
    Alloc,
    BranchShape,
    Call,
    Copy,
    Free,
    Instruction,
    Invoke,
    Launch,
    LevelProgram,
    PlanProgram,
    Ret,
    Sync,
)
from hetsim.sim.steps import Run, Step

__all__ = [
    "SlotSpace",
    "new_tuple",
    "programs_of",
    "relocated",
]


def programs_of(program: LevelProgram | PlanProgram) -> tuple[LevelProgram, ...]:
    """Every program of `program`: a plan's, the root's first; or the one level program."""
    return program.programs if isinstance(program, PlanProgram) else (program,)


def _nbytes(meta: Meta) -> int:
    return math.prod(meta.shape) * meta.dtype.itemsize


def _sizes(slots: Sequence[Any], metas: Mapping[str, Meta]) -> list[int]:
    """Bytes of each slot's tensor; computed once per `Meta` (metas are shared per shape).

    The metas are read in their order alongside the slots, where the next slot's tensor is the
    next one there (propagation lists the tensors as the ops make them, and the compiler makes
    their home slots in that order), and looked up by name otherwise (a copy's slot, a tensor
    made on another level): at 1e6 ops a lookup per slot misses the caches.
    """
    known: dict[int, int] = {}
    sizes = []
    following = iter(metas.items())
    ahead: tuple[str, Meta] | None = next(following, None)
    for slot in slots:
        tensor = slot.tensor
        if ahead is not None and ahead[0] == tensor:
            found = ahead[1]
            ahead = next(following, None)
        else:
            found = metas[tensor]
        size = known.get(id(found))
        if size is None:
            size = known[id(found)] = _nbytes(found)
        sizes.append(size)
    return sizes


class SlotSpace:
    """The slots of every program of a plan, numbered one after the other, the costs of the ops
    they share (`op_costs` of the run's metas, unless the caller has them), and each processor's
    launch cost and kernel timer."""

    def __init__(
        self,
        programs: Sequence[LevelProgram],
        platform: Platform,
        metas: Mapping[str, Meta],
        costs: Mapping[str, Cost] | None = None,
    ) -> None:
        self.programs = tuple(programs)
        processors = platform.processors.items()
        self.launch_us = {path: launch_us(p) for path, p in processors}
        self.timers = {path: kernel_timer(p) for path, p in processors}
        # every program of a plan numbers the same ops (`hetsim.runtime.compile_plan`)
        self.costs = costs if costs is not None else op_costs(self.programs[0].ops, metas)
        self._numbered: list[Cost] | None = None
        # (processor, op type, id of its Cost) -> kernel µs and span args: ops of one signature
        # share a Cost, so each formula runs once per processor
        self.timed: dict[Hashable, tuple[float, Mapping[str, Any]]] = {}
        offsets, total = [], 0
        for p in programs:
            offsets.append(total)
            total += len(p.slots)
        self.offsets = tuple(offsets)
        self.slots = tuple(slot for p in programs for slot in p.slots)
        self.sizes = _sizes(self.slots, metas)
        # program number -> (its steps, each step's value computation): a nested program's
        # steps compute nothing when the engine runs them; the caller's INVOKE runs these.
        self.runs: dict[int, tuple[tuple[Step, ...], tuple[Run, ...]]] = {}
        # op number -> what it computes in a fused functional run (`hetsim.sim.fusion`)
        self.fused: dict[int, Run] = {}

    def numbered_costs(self) -> list[Cost]:
        """The `Cost` of each op by its number (the programs' ops), made at the first call and
        read with `in_order` (`propagate_costs` makes the costs in the ops' order, for a graph
        with no folded op; a KeyError names an op without one)."""
        if self._numbered is None:
            names = tuple([op.name for op in self.programs[0].ops])
            self._numbered = list(in_order(self.costs, names))
        return self._numbered


new_tuple = tuple.__new__
"""``new_tuple(AllocStep, (...))`` makes a step as ``AllocStep(...)`` does, without the Python-level
``__new__`` of a named tuple: for speed, in the binders of the instructions a program has one
or more of per op (ALLOC, FREE, LAUNCH) and in relocating a nested program's instructions."""


SLOT_FIELDS: Mapping[type, tuple[str, ...]] = {
    Alloc: ("tensor",),
    Free: ("tensor",),
    Call: ("inputs", "outputs"),
    Launch: ("inputs", "outputs", "waits"),
    Copy: ("src", "dst", "waits"),
    Invoke: ("inputs", "outputs", "waits"),
    Sync: (),
    BranchShape: (),
}
"""Instruction type -> its fields that hold slots (RET's outputs are pairs, moved apart)."""


_SLOT_INDICES: Mapping[type, frozenset[int]] = {
    kind: frozenset(cast(Any, kind)._fields.index(name) for name in names)
    for kind, names in SLOT_FIELDS.items()
}
"""`SLOT_FIELDS` as positions in each instruction tuple."""


def _relocate(ins: Instruction, offset: int) -> Any:
    """`ins` with every slot moved by `offset` (a nested program's place in the slot space)."""
    if offset == 0:
        return ins
    if isinstance(ins, Ret):
        return Ret(tuple((name, slot + offset) for name, slot in ins.outputs))
    indices = _SLOT_INDICES.get(type(ins), frozenset())

    def moved(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(None if s is None else s + offset for s in value)
        return value + offset

    # by position with tuple.__new__, for speed: `_replace` by field name took 10-17% of
    # binding a nested plan (ResNet-50 on arm-riscv-soc: 1.63-1.89 ms against 1.45-1.57)
    return new_tuple(type(ins), [moved(v) if i in indices else v for i, v in enumerate(ins)])


_relocations: weakref.WeakKeyDictionary[Any, tuple[Sequence[Instruction], ...]] = (
    weakref.WeakKeyDictionary()
)


def relocated(
    program: LevelProgram | PlanProgram,
    programs: tuple[LevelProgram, ...],
    offsets: tuple[int, ...],
) -> tuple[Sequence[Instruction], ...]:
    """Each program's code with its slots moved to its place in the slot space (`_relocate`),
    made once per compiled program: a pure function of it, and a sweep over cost parameters
    binds one program for every point (relocating took 12% of a SqueezeNet point)."""
    found = _relocations.get(program)
    if found is None:
        found = _relocations[program] = tuple(
            # the root program's slots start at 0: nothing to relocate
            tuple([_relocate(ins, base) for ins in p.code]) if base else p.code
            for p, base in zip(programs, offsets, strict=True)
        )
    return found
