"""The VM compiler: a level's placed ops (and nested invocations) compiled to the bytecode its
host interprets (`hetsim.runtime.bytecode`). `LevelCompiler` compiles any level's units;
`hetsim.runtime.program.compile_vm` a root placed by hand, and `compile_plan` a whole plan.

Shapes may be symbolic: a level is compiled once, and `hetsim.sim.bind` binds each run's dims.
Compilation rules: graph inputs arrive in the host's memory; constants (initializers and ops
computed from constants only, folded at load time) are resident in the memory of each processor
that reads them; a tensor needed in another memory is copied once per memory, at its first use
there; a host op that reads a tensor made on a stream is preceded by a SYNC of that stream; the
outputs are copied to the host's memory and every stream with work left is synchronized before RET.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from hetsim.errors import SimulationError, printable
from hetsim.ir import Graph, Op
from hetsim.platform import Platform
from hetsim.runtime.bytecode import (
    RETURN_OP,
    Alloc,
    Call,
    Copy,
    Free,
    Instruction,
    Invoke,
    Launch,
    Ret,
    Slot,
    Sync,
    VmProgram,
)

__all__ = ["LevelCompiler", "Unit", "UnitPlacement"]


_new = tuple.__new__
"""``_new(Alloc, (slot, memory, user, op, writer))`` makes an instruction (or a `Slot`, a
`Unit`) as ``Alloc(slot, memory, user, op, writer)`` does, without the Python-level ``__new__``
a named tuple runs (every field given: it fills no defaults): for speed, where the compiler
makes one per op (with the binder's steps made the same way, compiling a 1e5-op chain went from
4.7-5.9 to 3.6-4.5 µs per op: docs/runtime.md)."""


class Unit(NamedTuple):
    """One thing a level's host runs: op number `op` on processor `where`, or (``op`` is
    ``None``) one invocation of nested level `where` that runs program `program`."""

    name: str
    where: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    op: int | None = None
    program: int | None = None
    op_type: str = ""

    @classmethod
    def of_op(cls, number: int, op: Op, where: str) -> Unit:
        """The unit of op `number` placed on processor `where`."""
        return cls(op.name, where, op.inputs, op.outputs, number, None, op.type)


class UnitPlacement(Mapping[str, str]):
    """Each of `units`' names -> where it runs (`Unit.where`): a program's placement, read as a
    mapping, made into a table at the first read of one name.

    A compiled plan's placement of its ops is the plan's (`Plan.placement`), which a run reads;
    a program's own is read where it runs alone or its level is a graph executor's. Made at
    once, it cost a lookup per op in a table of 1e6 names, missing the caches, for nothing.
    """

    __slots__ = ("_table", "_units")

    def __init__(self, units: tuple[Unit, ...]) -> None:
        self._units = units
        self._table: dict[str, str] | None = None

    def _made(self) -> dict[str, str]:
        if self._table is None:
            self._table = {unit.name: unit.where for unit in self._units}
        return self._table

    def __getitem__(self, name: str) -> str:
        return self._made()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())

    def __repr__(self) -> str:
        return repr(self._made())


class LevelCompiler:
    """The state of one compilation of one level's code: slots, homes, stream bookkeeping.

    `units` are the level's ops and invocations in execution order; `inputs` arrive in the
    level host's memory; `outputs` are returned there. With `caller_outputs`, the outputs'
    buffers in the host's memory belong to the caller (a nested invocation writes its results
    into buffers its parent allocated), so this code does not allocate them.
    """

    def __init__(
        self,
        graph: Graph,
        platform: Platform,
        level: str,
        ops: tuple[Op, ...],
        constants: AbstractSet[str],
        units: tuple[Unit, ...],
        placement: Mapping[str, str],
        *,
        caller_outputs: bool = False,
    ) -> None:
        self.graph = graph
        self.platform = platform
        self.ops = ops
        self.units = units
        self.placement = placement
        self.level = platform.levels[level]
        self.host = self.level.host
        self.host_memory = platform.processors[self.host].memory
        self.processors = {p for p in self.level.devices if p in platform.processors}
        self.nested = {
            p: platform.levels[p].host for p in self.level.devices if p in platform.levels
        }
        streams = self.processors | set(self.nested.values())
        self.stream_of_memory = {
            platform.processors[p].memory: p for p in streams if platform.processors[p].owns_memory
        }
        self.constant_names = constants
        self.caller_outputs = caller_outputs
        self.slots: list[Slot] = []
        # Per-tensor tables are lists by tensor number (`_number`), filled by `compile`:
        # tensor -> its slot in each memory (-1: none yet), its home slot, its kind.
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self.unit_inputs: list[list[int]] = []  # per unit, its input numbers (-1: omitted)
        self.unit_outputs: list[list[int]] = []
        self.slot_in: defaultdict[str, list[int]] = defaultdict(list)
        self.home: list[int] = []
        self.is_constant: list[bool] = []
        self.is_output: list[bool] = []
        self.is_kept: list[bool] = []  # graph inputs, outputs and constants: never freed here
        self.code: list[Instruction] = []
        # slot -> the stream whose work makes it (None: made by the host, or resident) and that
        # work's item number on the stream
        self.made_on: list[str | None] = []
        self.made_item: list[int] = []
        self.queued: dict[str, int] = {}  # stream -> items queued so far
        self.synced: dict[str, int] = {}  # stream -> items covered by the last SYNC
        self.constants: list[int] = []
        self.memory_at: dict[str, str] = {}  # placement path -> its memory, once checked
        # slot -> stream -> the last item queued on that stream that reads or writes the slot,
        # for streams whose device does not own the slot's memory: a FREE of the slot waits
        # for those items not synchronized since (`Free.after`)
        self.used_on: dict[int, dict[str, int]] = {}

    def compile(
        self,
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        *,
        folded: tuple[Op, ...] = (),
    ) -> VmProgram:
        """The level's code: every unit, then the outputs in the host's memory, SYNCs, RET."""
        self._number(inputs, outputs)
        ids = self.ids
        slots_in = {}
        for name in inputs:
            if name not in self.constant_names:
                slots_in[name] = self._new_slot(ids[name], self.host_memory, is_home=True)
        memory_at, memory_of = self.memory_at, self._memory_of  # checked once per placement
        memories = [memory_at.get(unit.where) or memory_of(unit) for unit in self.units]
        last_in, last_any = self._last_uses(memories)
        self._compile_units(memories, last_in, last_any)
        returned = tuple(
            (name, self._located(ids[name], self.host_memory, RETURN_OP, self.host))
            for name in outputs
        )
        self._free_returned_homes(returned)
        for slot in dict.fromkeys(slot for _, slot in returned):
            self._sync_for(slot)
        for stream, count in self.queued.items():
            if self.synced.get(stream, 0) < count:
                self._sync(stream)
        self.code.append(Ret(returned))
        placement = self.placement  # a given table copied, as it may change; units' are made
        if not isinstance(placement, UnitPlacement):
            placement = dict(placement)
        return VmProgram(
            level=self.level.path,
            host=self.host,
            graph=self.graph,
            ops=self.ops,
            slots=tuple(self.slots),
            code=tuple(self.code),
            inputs=slots_in,
            constants=tuple(self.constants),
            folded=folded,
            placement=placement,
        )

    def _number(self, inputs: tuple[str, ...], outputs: tuple[str, ...]) -> None:
        """Number the level's tensors, first seen first, and size the per-tensor tables.

        Every table of the compilation is a list by tensor number: a lookup by name in a dict
        slows down as the graph outgrows the caches (docs/runtime.md, "Performance"); each name
        is looked up once here instead of a dozen times per unit.
        """
        ids = self.ids
        for name in inputs:
            ids.setdefault(name, len(ids))
        get = ids.get
        unit_inputs, unit_outputs = self.unit_inputs, self.unit_outputs
        # the inputs, then the outputs, in a loop each (one per op: compiling a 1e5-op chain took
        # 3.31-3.36 µs per op so, 3.44-3.52 with a loop over the pair, 3.54-3.58 with a
        # comprehension each)
        for unit in self.units:
            numbers = []
            for name in unit.inputs:
                if name:
                    number = get(name)
                    if number is None:
                        number = ids[name] = len(ids)
                    numbers.append(number)
                else:
                    numbers.append(-1)
            unit_inputs.append(numbers)
            numbers = []
            for name in unit.outputs:
                if name:
                    number = get(name)
                    if number is None:
                        number = ids[name] = len(ids)
                    numbers.append(number)
                else:
                    numbers.append(-1)
            unit_outputs.append(numbers)
        for name in outputs:
            ids.setdefault(name, len(ids))
        self.names = list(ids)
        size = len(ids)
        self.slot_in = defaultdict(lambda: [-1] * size)
        self.home = [-1] * size
        self.is_constant = [False] * size
        self.is_output = [False] * size
        self.is_kept = [False] * size
        constants = self.constant_names
        if len(constants) < size:
            for name in constants:
                number = get(name)
                if number is not None:
                    self.is_constant[number] = self.is_kept[number] = True
        else:  # a nested level reads few of the graph's many weights: look those up instead
            for number, name in enumerate(self.names):
                if name in constants:
                    self.is_constant[number] = self.is_kept[number] = True
        for name in inputs:
            self.is_kept[ids[name]] = True
        for name in outputs:
            self.is_kept[ids[name]] = self.is_output[ids[name]] = True

    def _last_uses(self, memories: list[str]) -> tuple[defaultdict[str, list[int]], list[int]]:
        """When each tensor is last read: per memory (memory -> tensor -> unit number, -1 for
        never), and anywhere (the home copy lives until then)."""
        size = len(self.names)
        last_in: defaultdict[str, list[int]] = defaultdict(lambda: [-1] * size)
        last_any = [-1] * size
        for number, inputs in enumerate(self.unit_inputs):
            here = last_in[memories[number]]
            for tensor in inputs:
                if tensor >= 0:
                    here[tensor] = number
                    last_any[tensor] = number
        return last_in, last_any

    def _memory_of(self, unit: Unit) -> str:
        path = unit.where
        found = self.memory_at.get(path)
        if found is not None:
            return found
        self.memory_at[path] = found = self._check_memory_of(unit)
        return found

    def _check_memory_of(self, unit: Unit) -> str:
        path = unit.where
        label = f"op {printable(unit.name)} ({unit.op_type})"
        if path in self.nested and unit.op is not None:  # only invocations go to a nested level
            raise SimulationError(
                f"{label}: expected a placement on a processor of level "
                f"{self.level.path or '(root)'} {[self.host, *sorted(self.processors)]}, got "
                f"{path!r}, a nested level (hetsim.partition places ops there, and compile_plan "
                "compiles them)"
            )
        if path in self.nested:
            return self.platform.processors[self.nested[path]].memory
        if path != self.host and path not in self.processors:
            raise SimulationError(
                f"{label}: expected a placement on the host of level "
                f"{self.level.path or '(root)'} or one of its devices "
                f"{sorted(self.processors | set(self.nested))}, got {path!r}"
            )
        return self.platform.processors[path].memory

    def _new_slot(self, tensor: int, memory: str, *, is_home: bool) -> int:
        name = self.names[tensor]
        slot = len(self.slots)
        self.slots.append(_new(Slot, (name if is_home else f"{name}@{memory}", name, memory)))
        self.slot_in[memory][tensor] = slot
        self.made_on.append(None)
        self.made_item.append(0)
        if is_home:
            self.home[tensor] = slot
        return slot

    def _compile_units(
        self, memories: list[str], last_in: defaultdict[str, list[int]], last_any: list[int]
    ) -> None:
        """Compile every unit in order: ALLOC its outputs, run it (CALL, LAUNCH or INVOKE, each
        input first copied to its memory if it is not there), then FREE what it read last.

        One loop with the tables in locals and no call per step, as it runs once per op: with a
        method per step, compiling a 1e5-op chain took 4.9-5.7 µs per op, against 4.3-4.7
        (docs/runtime.md, "Performance").
        """
        code, slots, names, made_on, made_item = (
            self.code, self.slots, self.names, self.made_on, self.made_item
        )  # fmt: skip
        homes, kept, constant, is_output = (
            self.home, self.is_kept, self.is_constant, self.is_output
        )  # fmt: skip
        slot_in, nested, host, host_memory = self.slot_in, self.nested, self.host, self.host_memory
        queued, synced = self.queued, self.synced
        append, located = code.append, self._located
        own, used_on, after = self.stream_of_memory, self.used_on, self._after
        unit_inputs, unit_outputs, caller_outputs = (
            self.unit_inputs, self.unit_outputs, self.caller_outputs
        )  # fmt: skip
        for number, unit in enumerate(self.units):
            memory = memories[number]
            where = unit.where
            user = nested.get(where, where)  # an invocation runs on its level's host
            here = slot_in[memory]
            tensors = unit_inputs[number]
            read: list[int | None] = []
            for tensor in tensors:
                if tensor < 0:
                    read.append(None)
                else:
                    slot = here[tensor]
                    read.append(slot if slot >= 0 else located(tensor, memory, unit.name, where))
            inputs = tuple(read)
            made = unit_outputs[number]
            outputs = []
            owned = caller_outputs and memory == host_memory
            # who makes the outputs: the host, or the stream the unit is queued on as item
            # `item` (nothing else is queued before it is, once its inputs are in place)
            if where == host:
                maker, item = None, 0
            else:
                maker, item = user, queued.get(user, 0)
            for tensor in made:  # a new home slot per output (`_new_slot`, inlined)
                if tensor >= 0:
                    name = names[tensor]
                    slot = len(slots)
                    slots.append(_new(Slot, (name, name, memory)))
                    here[tensor] = homes[tensor] = slot
                    made_on.append(maker)
                    made_item.append(item)
                    if not (owned and kept[tensor]):
                        writer = "" if where == host else user  # a CALL's: the host's
                        append(_new(Alloc, (slot, memory, user, unit.name, writer)))
                    outputs.append(slot)
            if where == host:
                for source in inputs:  # `_sync_for`, inlined
                    if source is not None:
                        stream = made_on[source]
                        if stream is not None and synced.get(stream, 0) <= made_item[source]:
                            self._sync(stream)
                append(_new(Call, (unit.op, inputs, tuple(outputs))))
            else:
                waits: tuple[int, ...] = ()
                for source in inputs:  # `_waits` only where an input was made on another stream
                    if source is not None and made_on[source] not in (None, user):
                        waits = self._waits(inputs, user)
                        break
                if unit.op is None:
                    assert unit.program is not None, f"invocation {unit.name} without a program"
                    append(Invoke(where, unit.program, inputs, tuple(outputs), user, waits,
                                  unit.name))  # fmt: skip
                else:
                    append(_new(Launch, (unit.op, where, inputs, tuple(outputs), waits)))
                if waits and used_on:
                    self._covered(waits)
                queued[user] = item + 1  # `_queue`, inlined (the outputs' makers set above)
                # its slots, all in `memory`, wait for the stream unless it is their device's
                # (the next work there queues behind); an invocation's always: its level's host
                # allocates in that memory while the invocation runs
                if unit.op is None or own.get(memory) != user:
                    for used in (*inputs, *outputs):
                        if used is not None:
                            used_on.setdefault(used, {})[user] = item
            # FREE each tensor this unit reads last: its copy here, its home anywhere
            last_here = last_in[memory]
            in_host = memory == host_memory
            if len(tensors) > 1 and len(set(tensors)) < len(tensors):
                tensors = list(dict.fromkeys(tensors))
            for tensor in tensors:
                if tensor < 0 or constant[tensor]:
                    continue
                if last_here[tensor] == number:
                    copy = here[tensor]
                    if copy != homes[tensor] and not (in_host and is_output[tensor]):
                        streams = after(copy) if copy in used_on else ()
                        append(_new(Free, (copy, memory, streams)))
                if last_any[tensor] == number and not kept[tensor]:
                    home = homes[tensor]
                    streams = after(home) if home in used_on else ()
                    append(_new(Free, (home, slots[home].memory, streams)))
            for tensor in made:  # an output nothing reads
                if tensor >= 0 and not kept[tensor] and last_any[tensor] < 0:
                    home = homes[tensor]
                    streams = after(home) if home in used_on else ()
                    append(_new(Free, (home, memory, streams)))

    def _free_returned_homes(self, returned: tuple[tuple[str, int], ...]) -> None:
        """FREE each output's copy on a device once its COPY to the host's memory is queued,
        stream-ordered as every FREE after a device's last use (a nested VM level invoked N
        times had kept N of them: its device's peak grew with each invocation)."""
        for tensor in dict.fromkeys(self.ids[name] for name, _ in returned):
            home = self.home[tensor]  # a constant has none; any other output has one
            if not self.is_constant[tensor] and self.slots[home].memory != self.host_memory:
                self.code.append(_new(Free, (home, self.slots[home].memory, self._after(home))))

    def _located(self, tensor: int, memory: str, user_name: str, where: str) -> int:
        """The slot of tensor number `tensor` in `memory`, copying it there first if needed, for
        unit `user_name` placed on `where` (not looked up by name: an op may be named as a
        segment, ``s0``, or as the result copies' ``(return)``)."""
        slot = self.slot_in[memory][tensor]
        if slot >= 0:
            return slot
        if self.is_constant[tensor]:
            slot = self._new_slot(tensor, memory, is_home=memory == self.host_memory)
            self.constants.append(slot)
            return slot
        src = self.home[tensor]
        name = self.names[tensor]
        assert src >= 0, f"{user_name} reads {name!r} before anything at this level makes it"
        src_memory = self.slots[src].memory
        stream = self.stream_of_memory.get(src_memory) or self.stream_of_memory.get(memory)
        if stream is None:
            raise SimulationError(
                f"copy {name}: expected a device stream to carry {src_memory} -> {memory}, got none"
            )
        dst = self._new_slot(tensor, memory, is_home=False)
        if not (self.caller_outputs and memory == self.host_memory and self.is_kept[tensor]):
            self.code.append(Alloc(dst, memory, self.nested.get(where, where), user_name, stream))
        route = tuple(link.name for link in self.platform.route(src_memory, memory))
        waits = self._waits((src,), stream)
        self.code.append(Copy(src, dst, route, stream, waits))
        self._covered(waits)
        self._queue(stream, [dst])
        item = self.queued[stream] - 1
        for slot, in_memory in ((src, src_memory), (dst, memory)):
            if self.stream_of_memory.get(in_memory) != stream:
                self.used_on.setdefault(slot, {})[stream] = item
        return dst

    def _covered(self, waits: tuple[int, ...]) -> None:
        """Work queued now waits for `waits`, made on other streams: a FREE of one need not
        wait for the stream that made it, unless that stream used it since (the waiting
        stream's order covers the making; where it does not own the memory, its own use is
        noted as any)."""
        made_on, made_item = self.made_on, self.made_item
        for slot in waits:
            uses = self.used_on.get(slot)
            maker = made_on[slot]
            if uses is not None and maker is not None and uses.get(maker) == made_item[slot]:
                del uses[maker]

    def _after(self, slot: int) -> tuple[str, ...]:
        """The streams a FREE of `slot` waits for (`Free.after`): those with work queued that
        uses it in a memory their device does not own, and no SYNC since."""
        synced = self.synced
        return tuple(
            stream
            for stream, item in self.used_on.get(slot, {}).items()
            if synced.get(stream, 0) <= item
        )

    def _waits(self, inputs: tuple[int | None, ...], stream: str) -> tuple[int, ...]:
        """Input slots made on a stream other than `stream`: the device must wait for them."""
        made_on = self.made_on
        waits = [s for s in inputs if s is not None and made_on[s] not in (None, stream)]
        if not waits:
            return ()
        return tuple(dict.fromkeys(waits)) if len(waits) > 1 else (waits[0],)

    def _queue(self, stream: str, produced: list[int]) -> None:
        number = self.queued.get(stream, 0)
        self.queued[stream] = number + 1
        for slot in produced:
            self.made_on[slot] = stream
            self.made_item[slot] = number

    def _sync_for(self, slot: int) -> None:
        """SYNC the stream that makes `slot`, unless a SYNC since already covers it."""
        stream = self.made_on[slot]
        if stream is not None and self.synced.get(stream, 0) <= self.made_item[slot]:
            self._sync(stream)

    def _sync(self, stream: str) -> None:
        self.code.append(Sync(stream))
        self.synced[stream] = self.queued[stream]
