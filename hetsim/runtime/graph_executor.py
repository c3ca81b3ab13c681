"""The graph executor: a static node list compiled for one invocation of a level.

A graph executor (the ``graph`` executor kind, ``is_static: true``) runs a fixed list of nodes on
its level's host, typically a co-processor that drives the level's devices: launch a kernel on a
device, copy a tensor between memories, call a kernel on the host itself, wait for a device,
invoke a deeper level, return. Each node costs the executor's ``node_us`` (``hetsim.cost.
dispatch_us``), less than a VM instruction's ``dispatch_us``, because nothing is decided at run
time:

- **Static memory.** Every buffer the nodes write is planned at compile time and allocated once,
  when the module is loaded (`GraphProgram.storage`): there are no ALLOC or FREE nodes. The
  invocation's result buffers belong to the caller, which allocated them.
- **Static shapes.** Every shape is fixed at compile time. The partitioner never sends an op whose
  shape depends on a dim unbound at compile time (`hetsim.partition.Plan.dynamic`) to a level
  whose executor is static: such ops stay at a VM level. `compile_graph` rejects one anyway
  (a plan built by hand), and a run whose dims differ from the compiled ones is rejected when
  it is bound (`hetsim.sim.bind`).

The nodes are the VM's instruction tuples (`hetsim.runtime.bytecode`) minus ALLOC, FREE and
BRANCH_SHAPE; the engine runs them with the same handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hetsim.errors import SimulationError
from hetsim.ir import Graph, Op, op_label
from hetsim.runtime.bytecode import MNEMONICS, Alloc, Free, Instruction, Slot, VmProgram
from hetsim.runtime.vm import LevelCompiler

__all__ = ["GraphProgram", "check_static", "compile_graph"]


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)  # bound programs: bind.bound_for
class GraphProgram:
    """The static node list of one invocation of a graph-executor level.

    Parameters
    ----------
    level, host
        The level's path and its host processor (the co-processor that runs the nodes).
    graph, ops
        The model and the ops the nodes run, by number (shared by every program of a plan).
    slots
        Every tensor slot the nodes name.
    code
        The nodes; execution starts at 0 and ends at a RET.
    inputs
        Argument name -> its slot in the host's memory (filled by the caller).
    constants
        Slots of weights resident before the run.
    storage
        The statically planned buffers, allocated when the module is loaded.
    placement
        Op name -> processor path.
    dims
        The compile-time dims its shapes were compiled for: those a shape of its ops depends
        on (a dim its ops never read leaves its level as compiled when a run pads it).
    """

    level: str
    host: str
    graph: Graph
    ops: tuple[Op, ...]
    slots: tuple[Slot, ...]
    code: tuple[Instruction, ...]
    inputs: Mapping[str, int]
    constants: tuple[int, ...]
    storage: tuple[Alloc, ...]
    placement: Mapping[str, str]
    dims: Mapping[str, int]
    folded: tuple[Op, ...] = ()

    def __repr__(self) -> str:
        return (
            f"<GraphProgram {self.graph.name} level={self.level or '(root)'} host={self.host} "
            f"nodes={len(self.code)} storage={len(self.storage)}>"
        )

    def listing(self) -> str:
        """The static storage, then the nodes, one a line, slots and ops by name."""
        storage = [
            f"   -  STORAGE      {self.slots[a.tensor].name} in {a.memory}" for a in self.storage
        ]
        as_vm = VmProgram(
            self.level, self.host, self.graph, self.ops, self.slots, self.code, self.inputs,
            self.constants, self.folded, self.placement,
        )  # fmt: skip
        return "\n".join([*storage, as_vm.listing()])


def check_static(level: str, ops: tuple[Op, ...], dynamic: frozenset[str] | set[str],
                 dims_of: Callable[[Op], list[str]]) -> None:  # fmt: skip
    """Raise when one of `ops` has a shape that depends on a dim unbound at compile time
    (`dynamic` names those ops; `dims_of` gives the dims an op's shapes depend on, for the
    message).

    Raises
    ------
    SimulationError
        ``graph executor <level>: expected static shapes, got op <name> (<type>) with dynamic
        dims [...]``.

    Examples
    --------
    >>> relu = Op("Relu", "r1", ("x",), ("y",))
    >>> check_static("vdevice0", (relu,), {"r1"}, lambda op: ["seq"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hetsim.errors.SimulationError: graph executor vdevice0: expected static shapes, got op r1 ...
    """
    for op in ops:
        if op.name in dynamic:
            raise SimulationError(
                f"graph executor {level}: expected static shapes, got {op_label(op)} "
                f"with dynamic dims {dims_of(op)} (bind them with dims=, or keep the op at a VM "
                "level)"
            )


def compile_graph(
    compiler: LevelCompiler,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    dims: Mapping[str, int],
    *,
    folded: tuple[Op, ...] = (),
) -> GraphProgram:
    """The node list of `compiler`'s units: its code without ALLOC and FREE, buffers static.

    Parameters
    ----------
    compiler
        The level's units, ready to compile (`hetsim.runtime.vm.LevelCompiler`).
    inputs, outputs
        The invocation's arguments and results, in the host's memory.
    dims
        The dims the shapes are compiled for.
    folded
        At the root, the ops folded at load time: a functional run computes the constants from
        the root program's (a root graph executor without them had no value for a folded one).
    """
    program = compiler.compile(inputs, outputs, folded=folded)
    storage = tuple(ins for ins in program.code if isinstance(ins, Alloc))
    nodes = tuple(ins for ins in program.code if not isinstance(ins, Alloc | Free))
    assert all(type(ins) in MNEMONICS for ins in nodes), "unknown node type"
    return GraphProgram(
        level=program.level,
        host=program.host,
        graph=program.graph,
        ops=program.ops,
        slots=program.slots,
        code=nodes,
        inputs=program.inputs,
        constants=program.constants,
        storage=storage,
        placement=program.placement,
        dims=dict(dims),
        folded=program.folded,
    )
