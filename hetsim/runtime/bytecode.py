"""VM bytecode: the instructions a level's host interprets, and `VmProgram`, one level's code.

`hetsim.runtime.vm` compiles a level to this code (`hetsim.runtime.graph_executor` a static node
list of the same instructions); `hetsim.sim.bind` binds it for a run and `hetsim.sim` runs it.

The instruction set (each instruction is a small frozen named tuple; its operands are resolved at
compile time to tensor slots, processor paths, memory and link names):

============  ===================================================================================
ALLOC         take the bytes of tensor slot `tensor` in `memory` (an op output, a copy target);
              `writer` is the stream whose work writes them ("" for the host's)
FREE          give them back after the tensor's last use; with `after`, once those streams reach
              it (stream ordered: see docs/runtime.md)
CALL          run op `op` on the host itself, on slots `inputs` -> `outputs`
LAUNCH        launch op `op` on device `processor`'s stream (asynchronous); `waits` are input
              slots made on another stream, which the kernel waits for on the device
COPY          copy slot `src` to slot `dst` over the links of `route`, queued on the stream of
              `processor` (the source memory's device, else the destination's)
SYNC          block the host until `processor`'s stream has finished all work queued so far
INVOKE        queue one invocation of nested level `level` (its program number `program`) on the
              stream of that level's host; arguments in, result buffers filled (docs/runtime.md)
BRANCH_SHAPE  jump to `target` when symbolic dim `dim` compares true (`test`, `value`)
RET           end the program; `outputs` maps each graph output to its slot (in host memory)
============  ===================================================================================

Shapes may be symbolic: the program is compiled once, and `hetsim.sim.bind` resolves sizes and
durations for the dims of each run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from hetsim.ir import Graph, Op

__all__ = [
    "MNEMONICS",
    "RETURN_OP",
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
    "operands",
]


RETURN_OP = "(return)"
"""The op of an ALLOC of a result's copy into its level host's memory, made for RET (no op of
the level needs it)."""


class Alloc(NamedTuple):
    """ALLOC `tensor` in `memory`; `processor` and `op` say who needs it (for messages),
    `writer` the stream whose work writes it (a device's, or a nested level host's for an
    invocation's results; ``""`` where the host writes it): it may reuse bytes a FREE left to
    that stream (docs/runtime.md, "Memories")."""

    tensor: int
    memory: str
    processor: str
    op: str
    writer: str = ""


class Free(NamedTuple):
    """FREE `tensor` from `memory`; its bytes come back once the streams `after` reach it.

    `after` names the streams with work queued, and not synchronized since, that reads or
    writes the tensor in a memory their device does not own (a host's memory an accelerator
    computes in, a host buffer a device copies from): the FREE is queued on each, and the bytes
    come back when the last of them reaches it, as a stream-ordered free does
    (``cudaFreeAsync``). Empty, they come back at once (docs/runtime.md, "Memories").
    """

    tensor: int
    memory: str
    after: tuple[str, ...] = ()


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
    """INVOKE nested level `level`: run its program number `program` once.

    Queued on the stream `processor` (the nested level's host, as its parent sees it) after the
    slots in `waits`; `inputs` are the invocation's arguments in that host's memory, `outputs`
    the result buffers there, which the nested code fills; `segment` is the plan's segment id.
    """

    level: str
    program: int = 0
    inputs: tuple[int | None, ...] = ()
    outputs: tuple[int, ...] = ()
    processor: str = ""
    waits: tuple[int, ...] = ()
    segment: str = ""


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


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)  # bound programs: bind.bound_for
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
            f"{pc:4d}  {MNEMONICS[type(ins)]:<12} {operands(self, ins)}"
            for pc, ins in enumerate(self.code)
        )


def operands(program: VmProgram, ins: Instruction, *, results: bool = True) -> str:
    """Instruction `ins` of `program`'s operands as its listing line shows them, slots and ops by
    name (a name may hold spaces or newlines: read it from here, not from a listing's lines);
    without `results`, a CALL's or an INVOKE's up to what it reads (``add(a, b)``)."""

    def name(slot: int | None) -> str:
        return "-" if slot is None else program.slots[slot].name

    def names(slots: tuple[int | None, ...]) -> str:
        return ", ".join(name(s) for s in slots)

    match ins:
        case Alloc(tensor, memory, _, _, writer):
            on = f" on {writer}" if writer else ""
            return f"{name(tensor)} in {memory}{on}"
        case Free(tensor, memory, streams):
            after = f" after {', '.join(streams)}" if streams else ""
            return f"{name(tensor)} in {memory}{after}"
        case Call(op, inputs, outputs):
            call = f"{program.ops[op].name}({names(inputs)})"
            return f"{call} -> {names(outputs)}" if results else call
        case Launch(op, processor, inputs, outputs, waits):
            after = f" after {names(waits)}" if waits else ""
            return f"{program.ops[op].name}@{processor}({names(inputs)}) -> {names(outputs)}{after}"
        case Copy(src, dst, route, processor, _):
            return f"{name(src)} -> {name(dst)} on {processor} via {', '.join(route)}"
        case Sync(processor):
            return processor
        case Invoke(level, number, inputs, outputs, processor, waits, _):
            call = f"{level}#{number}({names(inputs)})"
            if not results:
                return call
            after = f" after {names(waits)}" if waits else ""
            return f"{call} -> {names(outputs)} on {processor}{after}"
        case BranchShape(dim, test, value, target):
            return f"if {dim} {test} {value} goto {target}"
        case Ret(outputs):
            return ", ".join(f"{out}={name(slot)}" for out, slot in outputs)
    raise AssertionError(f"unknown instruction {ins!r}")


TESTS: Mapping[str, Callable[[int, int], bool]] = {
    "==": lambda dim, value: dim == value,
    "!=": lambda dim, value: dim != value,
    "<": lambda dim, value: dim < value,
    "<=": lambda dim, value: dim <= value,
    ">": lambda dim, value: dim > value,
    ">=": lambda dim, value: dim >= value,
}
"""BRANCH_SHAPE comparisons by the string an instruction carries."""
