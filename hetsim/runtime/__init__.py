"""hetsim.runtime: programs for the simulated runtimes.

`compile_plan` (`hetsim.runtime.program`) turns a `hetsim.partition.Plan` into one program per
level invocation: VM bytecode (`hetsim.runtime.bytecode`, compiled by `hetsim.runtime.vm`) or a
graph executor's static node list (`hetsim.runtime.graph_executor`). `compile_vm` compiles a root
level from an op -> processor placement alone, and `place` is the simplest such placement (plain
root devices only). Durations and the execution itself belong to `hetsim.sim`.
"""

from hetsim.runtime.bytecode import (
    MNEMONICS,
    TESTS,
    Alloc,
    BranchShape,
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
from hetsim.runtime.graph_executor import GraphProgram, check_static, compile_graph
from hetsim.runtime.placement import ANY_OP, can_run, place
from hetsim.runtime.program import COMPILERS, LevelProgram, PlanProgram, compile_plan, compile_vm
from hetsim.runtime.vm import LevelCompiler, Unit

__all__ = [
    "ANY_OP",
    "COMPILERS",
    "MNEMONICS",
    "TESTS",
    "Alloc",
    "BranchShape",
    "Call",
    "Copy",
    "Free",
    "GraphProgram",
    "Instruction",
    "Invoke",
    "Launch",
    "LevelCompiler",
    "LevelProgram",
    "PlanProgram",
    "Ret",
    "Slot",
    "Sync",
    "Unit",
    "VmProgram",
    "can_run",
    "check_static",
    "compile_graph",
    "compile_plan",
    "compile_vm",
    "place",
]
