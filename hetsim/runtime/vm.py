"""VM bytecode: a level's placed ops compiled to the instructions its host interprets.

The instruction set (each instruction is a small frozen named tuple; its operands are resolved at
compile time to tensor slots, processor paths, memory and link names):

============  ===================================================================================
ALLOC         take the bytes of tensor slot `tensor` in `memory` (an op output, a copy target)
FREE          give them back after the tensor's last use (stream ordered: see docs/runtime.md)
CALL          run op `op` on the host itself, on slots `inputs` -> `outputs`
LAUNCH        launch op `op` on device `processor`'s stream (asynchronous); `waits` are input
              slots made on another stream, which the kernel waits for on the device
COPY          copy slot `src` to slot `dst` over the links of `route`, queued on the stream of
              `processor` (the source memory's device, else the destination's)
SYNC          block the host until `processor`'s stream has finished all work queued so far
INVOKE        call a nested level (issue 5; not emitted until nested levels are partitioned)
BRANCH_SHAPE  jump to `target` when symbolic dim `dim` compares true (`test`, `value`)
RET           end the program; `outputs` maps each graph output to its slot (in host memory)
============  ===================================================================================

Shapes may be symbolic: the program is compiled once, and `hetsim.sim.bind` resolves sizes and
durations for the dims of each run. Compilation rules: graph inputs arrive in the host's memory;
constants (initializers and ops computed from constants only, folded at load time) are resident
in the memory of each processor that reads them; a tensor needed in another memory is copied once
per memory, at its first use there; a host op that reads a tensor made on a stream is preceded by
a SYNC of that stream; the outputs are copied to the host's memory and every stream with work
left is synchronized before RET.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op
from hetsim.platform import Platform

__all__ = [
    "TESTS",
    "Alloc",
    "BranchShape",
    "Call",
    "Copy",
    "Free",
    "Instruction",
    "Invoke",
    "Launch",
    "Ret",
    "Slot",
    "Sync",
    "VmProgram",
    "compile_vm",
]


class Alloc(NamedTuple):
    """ALLOC `tensor` in `memory`; `processor` and `op` say who needs it (for messages)."""

    tensor: int
    memory: str
    processor: str
    op: str


class Free(NamedTuple):
    """FREE `tensor` from `memory`."""

    tensor: int
    memory: str


class Call(NamedTuple):
    """CALL op number `op` on the host."""

    op: int
    inputs: tuple[int | None, ...]
    outputs: tuple[int, ...]


class Launch(NamedTuple):
    """LAUNCH op number `op` on `processor`'s stream."""

    op: int
    processor: str
    inputs: tuple[int | None, ...]
    outputs: tuple[int, ...]
    waits: tuple[int, ...]


class Copy(NamedTuple):
    """COPY `src` to `dst` along `route` (link names), on `processor`'s stream."""

    src: int
    dst: int
    route: tuple[str, ...]
    processor: str
    waits: tuple[int, ...]


class Sync(NamedTuple):
    """SYNC with `processor`'s stream."""

    processor: str


class Invoke(NamedTuple):
    """INVOKE nested level `level` (issue 5)."""

    level: str


class BranchShape(NamedTuple):
    """BRANCH_SHAPE: jump to instruction `target` when ``dim <test> value``."""

    dim: str
    test: str
    value: int
    target: int


class Ret(NamedTuple):
    """RET with the graph outputs, name -> slot."""

    outputs: tuple[tuple[str, int], ...]


Instruction = Alloc | Free | Call | Launch | Copy | Sync | Invoke | BranchShape | Ret

MNEMONICS: Mapping[type, str] = {
    Alloc: "ALLOC",
    Free: "FREE",
    Call: "CALL",
    Launch: "LAUNCH",
    Copy: "COPY",
    Sync: "SYNC",
    Invoke: "INVOKE",
    BranchShape: "BRANCH_SHAPE",
    Ret: "RET",
}
"""Instruction type -> its name in listings and docs."""


class Slot(NamedTuple):
    """A tensor in one memory: `name` is the tensor, or ``tensor@memory`` for a copy."""

    name: str
    tensor: str
    memory: str


@dataclass(frozen=True, slots=True, eq=False)
class VmProgram:
    """The bytecode of one level, with its tensor slots.

    Parameters
    ----------
    level, host
        The level's path and its host processor.
    graph
        The model the ops come from; `ops` are the ops the program runs, by number.
    slots
        Every tensor slot the code names.
    code
        The instructions; execution starts at 0 and ends at a RET.
    inputs
        Graph input name -> its slot (host memory).
    constants
        Slots resident before the run: constants in each memory that reads them.
    folded
        Ops computed from constants only, at load time (their outputs are constants).
    placement
        Op name -> processor path.
    """

    level: str
    host: str
    graph: Graph
    ops: tuple[Op, ...]
    slots: tuple[Slot, ...]
    code: tuple[Instruction, ...]
    inputs: Mapping[str, int]
    constants: tuple[int, ...]
    folded: tuple[Op, ...]
    placement: Mapping[str, str]

    def __repr__(self) -> str:
        return (
            f"<VmProgram {self.graph.name} level={self.level or '(root)'} host={self.host} "
            f"instructions={len(self.code)} slots={len(self.slots)}>"
        )

    def listing(self) -> str:
        """The code as text, one instruction a line, slots and ops by name."""
        return "\n".join(
            f"{pc:4d}  {MNEMONICS[type(ins)]:<12} {_operands(self, ins)}"
            for pc, ins in enumerate(self.code)
        )


def _operands(program: VmProgram, ins: Instruction) -> str:
    def name(slot: int | None) -> str:
        return "-" if slot is None else program.slots[slot].name

    def names(slots: tuple[int | None, ...]) -> str:
        return ", ".join(name(s) for s in slots)

    match ins:
        case Alloc(tensor, memory, _, _) | Free(tensor, memory):
            return f"{name(tensor)} in {memory}"
        case Call(op, inputs, outputs):
            return f"{program.ops[op].name}({names(inputs)}) -> {names(outputs)}"
        case Launch(op, processor, inputs, outputs, waits):
            after = f" after {names(waits)}" if waits else ""
            return f"{program.ops[op].name}@{processor}({names(inputs)}) -> {names(outputs)}{after}"
        case Copy(src, dst, route, processor, _):
            return f"{name(src)} -> {name(dst)} on {processor} via {', '.join(route)}"
        case Sync(processor):
            return processor
        case Invoke(level):
            return level
        case BranchShape(dim, test, value, target):
            return f"if {dim} {test} {value} goto {target}"
        case Ret(outputs):
            return ", ".join(f"{out}={name(slot)}" for out, slot in outputs)
    raise AssertionError(f"unknown instruction {ins!r}")


def compile_vm(graph: Graph, platform: Platform, placement: Mapping[str, str]) -> VmProgram:
    """Compile the root level's placed ops to VM bytecode (rules in the module docstring).

    Parameters
    ----------
    graph
        The model, ops in topological order.
    platform
        The platform the placement refers to.
    placement
        Op name -> processor path (`hetsim.runtime.place`): the root host or a plain device of
        the root level.

    Raises
    ------
    SimulationError
        A placement on a processor the root level does not drive (nested levels are not yet
        supported), or a copy between memories no device stream can carry.
    """
    return _Compiler(graph, platform, placement).compile()


class _Compiler:
    """The state of one compilation: slots, where each tensor lives, stream bookkeeping."""

    def __init__(self, graph: Graph, platform: Platform, placement: Mapping[str, str]) -> None:
        self.graph = graph
        self.platform = platform
        self.placement = placement
        level = platform.levels[""]
        self.level = level
        self.host = level.host
        self.host_memory = platform.processors[self.host].memory
        self.devices = {p for p in level.devices if p in platform.processors}
        self.stream_of_memory = {
            platform.processors[p].memory: p
            for p in self.devices
            if platform.processors[p].owns_memory
        }
        self.slots: list[Slot] = []
        self.slot_of: dict[tuple[str, str], int] = {}
        self.home: dict[str, int] = {}
        self.code: list[Instruction] = []
        self.made_by: dict[int, tuple[str, int]] = {}  # slot -> (stream, item number)
        self.queued: dict[str, int] = {}  # stream -> items queued so far
        self.synced: dict[str, int] = {}  # stream -> items covered by the last SYNC
        self.constants: list[int] = []

    def compile(self) -> VmProgram:
        graph = self.graph
        constant_names, folded, ops = self._fold()
        self.constant_names = constant_names
        self.output_names = set(graph.outputs)
        self.kept = self.output_names | set(graph.inputs) | constant_names
        inputs = {}
        for name in graph.inputs:
            if name not in constant_names:
                inputs[name] = self._new_slot(name, self.host_memory, is_home=True)
        last_use = self._last_uses(ops)
        for number, op in enumerate(ops):
            self._compile_op(number, op, last_use)
        outputs = tuple(
            (name, self._located(name, self.host_memory, "RET")) for name in graph.outputs
        )
        for slot in dict.fromkeys(slot for _, slot in outputs):
            self._sync_for(slot)
        for stream, count in self.queued.items():
            if self.synced.get(stream, 0) < count:
                self._sync(stream)
        self.code.append(Ret(outputs))
        return VmProgram(
            level="",
            host=self.host,
            graph=graph,
            ops=tuple(ops),
            slots=tuple(self.slots),
            code=tuple(self.code),
            inputs=inputs,
            constants=tuple(self.constants),
            folded=tuple(folded),
            placement=dict(self.placement),
        )

    def _fold(self) -> tuple[set[str], list[Op], list[Op]]:
        """Constants (initializers that are not inputs, and what ops make of constants only)."""
        graph = self.graph
        constants = {name for name in graph.initializers if name not in graph.inputs}
        folded, kept = [], []
        for op in graph.ops:
            if all(not name or name in constants for name in op.inputs):
                folded.append(op)
                constants.update(name for name in op.outputs if name)
            else:
                kept.append(op)
        return constants, folded, kept

    def _last_uses(self, ops: list[Op]) -> dict[tuple[str, str], int]:
        last: dict[tuple[str, str], int] = {}
        last_any: dict[str, int] = {}
        for number, op in enumerate(ops):
            memory = self._memory_of(op)
            for name in op.inputs:
                if name:
                    last[name, memory] = number
                    last_any[name] = number
        for name, number in last_any.items():
            last[name, ""] = number  # the home copy lives until the last use anywhere
        return last

    def _memory_of(self, op: Op) -> str:
        path = self.placement[op.name]
        if path != self.host and path not in self.devices:
            raise SimulationError(
                f"op {op.name} ({op.type}): expected a placement on the root host or one of its "
                f"plain devices {sorted(self.devices)}, got {path!r} (nested levels are not yet "
                "supported)"
            )
        return self.platform.processors[path].memory

    def _new_slot(self, tensor: str, memory: str, *, is_home: bool) -> int:
        name = tensor if is_home else f"{tensor}@{memory}"
        slot = len(self.slots)
        self.slots.append(Slot(name, tensor, memory))
        self.slot_of[tensor, memory] = slot
        if is_home:
            self.home[tensor] = slot
        return slot

    def _compile_op(self, number: int, op: Op, last_use: Mapping[tuple[str, str], int]) -> None:
        path = self.placement[op.name]
        memory = self._memory_of(op)
        inputs = tuple(
            [self._located(name, memory, op.name) if name else None for name in op.inputs]
        )
        outputs = []
        for name in op.outputs:
            if name:
                slot = self._new_slot(name, memory, is_home=True)
                self.code.append(Alloc(slot, memory, path, op.name))
                outputs.append(slot)
        if path == self.host:
            for read in inputs:
                if read is not None:
                    self._sync_for(read)
            self.code.append(Call(number, inputs, tuple(outputs)))
        else:
            waits = self._waits(inputs, path)
            self.code.append(Launch(number, path, inputs, tuple(outputs), waits))
            self._queue(path, outputs)
        self._free_after(number, op, memory, last_use)

    def _free_after(
        self, number: int, op: Op, memory: str, last_use: Mapping[tuple[str, str], int]
    ) -> None:
        inputs = op.inputs if len(op.inputs) < 2 else tuple(dict.fromkeys(op.inputs))
        for name in inputs:
            if not name or name in self.constant_names:
                continue
            copy = self.slot_of[name, memory]
            home = self.home[name]
            if (
                last_use[name, memory] == number
                and copy != home
                and not (memory == self.host_memory and name in self.output_names)
            ):
                self.code.append(Free(copy, memory))
            if last_use[name, ""] == number and name not in self.kept:
                self.code.append(Free(home, self.slots[home].memory))
        for name in op.outputs:
            if name and name not in self.kept and (name, "") not in last_use:
                self.code.append(Free(self.home[name], memory))

    def _located(self, tensor: str, memory: str, op: str) -> int:
        """The slot of `tensor` in `memory`, copying it there first if needed."""
        slot = self.slot_of.get((tensor, memory))
        if slot is not None:
            return slot
        if tensor in self.constant_names:
            slot = self._new_slot(tensor, memory, is_home=memory == self.host_memory)
            self.constants.append(slot)
            return slot
        src = self.home[tensor]
        src_memory = self.slots[src].memory
        stream = self.stream_of_memory.get(src_memory) or self.stream_of_memory.get(memory)
        if stream is None:
            raise SimulationError(
                f"copy {tensor}: expected a device stream to carry {src_memory} -> {memory}, "
                "got none (nested levels are not yet supported)"
            )
        dst = self._new_slot(tensor, memory, is_home=False)
        user = self.placement.get(op, self.host)
        self.code.append(Alloc(dst, memory, user, op))
        route = tuple(link.name for link in self.platform.route(src_memory, memory))
        self.code.append(Copy(src, dst, route, stream, self._waits((src,), stream)))
        self._queue(stream, [dst])
        return dst

    def _waits(self, inputs: tuple[int | None, ...], stream: str) -> tuple[int, ...]:
        """Input slots made on a stream other than `stream`: the device must wait for them."""
        made_by = self.made_by
        waits = [s for s in inputs if s is not None and s in made_by and made_by[s][0] != stream]
        return tuple(dict.fromkeys(waits)) if len(waits) > 1 else tuple(waits)

    def _queue(self, stream: str, produced: list[int]) -> None:
        number = self.queued.get(stream, 0)
        self.queued[stream] = number + 1
        for slot in produced:
            self.made_by[slot] = (stream, number)

    def _sync_for(self, slot: int) -> None:
        """SYNC the stream that makes `slot`, unless a SYNC since already covers it."""
        made = self.made_by.get(slot)
        if made is not None and self.synced.get(made[0], 0) <= made[1]:
            self._sync(made[0])

    def _sync(self, stream: str) -> None:
        self.code.append(Sync(stream))
        self.synced[stream] = self.queued[stream]


TESTS: Mapping[str, Callable[[int, int], bool]] = {
    "==": lambda dim, value: dim == value,
    "!=": lambda dim, value: dim != value,
    "<": lambda dim, value: dim < value,
    "<=": lambda dim, value: dim <= value,
    ">": lambda dim, value: dim > value,
    ">=": lambda dim, value: dim >= value,
}
"""BRANCH_SHAPE comparisons by the string an instruction carries."""
