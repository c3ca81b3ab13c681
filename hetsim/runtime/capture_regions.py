"""Capturable regions of a VM program: the runs of code one CUDA stream capture can record.

A *region* is a maximal run of instructions that a CUDA stream capture can record, as TVM's
``rewrite_cuda_graph`` pass finds them: LAUNCHes on one ``cuda`` device (without waits on another
stream), the ALLOCs and FREEs of that device's memory around them (they become the graph's
internal buffers), and copies that stay on the device. A host CALL, a SYNC, a copy to or from
host memory, an allocation elsewhere, a branch (or a branch target), an INVOKE or a RET ends the
region: the program is split there. A run without a LAUNCH is not a region.

`find_regions` finds them all; which ones become graphs, and the rewrite of the program, belong to
`hetsim.runtime.cuda_graph`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hetsim.platform import Platform
from hetsim.runtime.bytecode import Alloc, BranchShape, Copy, Free, Instruction, Launch, VmProgram

__all__ = ["Region", "find_regions"]


@dataclass(frozen=True, slots=True)
class Region:
    """Instructions ``code[start:stop]`` of a program, capturable as one graph on `processor`.

    `deferred` are FREEs of other memories inside that range (no stream work of their own; one
    that waits for the device's stream, `Free.after`, waits for the graph): they run just after
    the graph instead, so they do not split it.

    Examples
    --------
    >>> Region("g0", "gpu0", 2, 9, 3)
    <Region g0 gpu0 code[2:9] nodes=3>
    >>> Region("g0", "gpu0", 2, 6, 1, deferred=(4,)).body
    (2, 3, 5)
    """

    id: str
    processor: str
    start: int
    stop: int
    nodes: int
    deferred: tuple[int, ...] = ()

    @property
    def body(self) -> tuple[int, ...]:
        """Indices of the VM instructions the graph holds, in order."""
        return tuple(i for i in range(self.start, self.stop) if i not in self.deferred)

    def __repr__(self) -> str:
        return (
            f"<Region {self.id} {self.processor} code[{self.start}:{self.stop}] nodes={self.nodes}>"
        )


def _capturable(ins: Instruction, device: str, memory: str) -> bool:
    """Whether `ins` can sit inside a capture on `device`, which computes from `memory`.

    A copy qualifies only when it stays in that memory (no link): any link leads to host-visible
    memory or to another device, which one device's graph cannot hold.
    """
    if isinstance(ins, Launch):
        return ins.processor == device and not ins.waits
    if isinstance(ins, Alloc | Free):
        return ins.memory == memory
    if isinstance(ins, Copy):
        return ins.processor == device and not ins.route
    return False


def _device_of(ins: Instruction, capturing: frozenset[str]) -> str | None:
    """The cuda device a LAUNCH without cross-stream waits would start a region on."""
    if isinstance(ins, Launch) and ins.processor in capturing and not ins.waits:
        return ins.processor
    return None


def find_regions(program: VmProgram, platform: Platform) -> tuple[Region, ...]:
    """The maximal capturable regions of `program`, in program order (rules: module docstring).

    Examples
    --------
    >>> from hetsim.models import load_model
    >>> from hetsim.platform import build_platform
    >>> from hetsim.runtime import compile_vm, place
    >>> from hetsim.target import Target
    >>> platform = build_platform(Target("x86-h100"))
    >>> model = load_model("mlp")
    >>> program = compile_vm(model, platform, place(model, platform))
    >>> find_regions(program, platform)
    (<Region g0 gpu0 code[2:17] nodes=5>,)
    """
    capturing = frozenset(p.path for p in platform.processors.values() if p.kind == "cuda")
    targets = {ins.target for ins in program.code if isinstance(ins, BranchShape)}
    regions: list[Region] = []
    code = program.code
    pc = 0
    while pc < len(code):
        device = _device_of(code[pc], capturing)
        if device is None:
            pc += 1
            continue
        memory = platform.processors[device].memory
        start = pc
        while start > 0 and start not in targets and _is_leading(code[start - 1], memory):
            start -= 1
        stop = last_launch = pc
        deferred = []
        while stop < len(code) and (stop == pc or stop not in targets):
            ins = code[stop]
            if isinstance(ins, Free) and ins.memory != memory:
                deferred.append(stop)
            elif not _capturable(ins, device, memory):
                break
            elif isinstance(ins, Launch):
                last_launch = stop
            stop += 1
        # what follows the last launch stays outside, except the FREEs of the graph's buffers
        stop = last_launch + 1
        while stop < len(code) and stop not in targets and _is_trailing(code[stop], memory):
            stop += 1
        nodes = sum(isinstance(code[i], Launch) for i in range(start, stop))
        kept = tuple(i for i in deferred if i < stop)
        regions.append(Region(f"g{len(regions)}", device, start, stop, nodes, kept))
        pc = stop
    return tuple(regions)


def _is_trailing(ins: Instruction, memory: str) -> bool:
    """A FREE of the device's memory just after a region's last launch: one of its buffers."""
    return isinstance(ins, Free) and ins.memory == memory


def _is_leading(ins: Instruction, memory: str) -> bool:
    """An ALLOC of the device's memory just before a region: the graph's internal buffer."""
    return isinstance(ins, Alloc) and ins.memory == memory
