"""hetsim.runtime: programs for the simulated runtimes.

`place` decides which processor runs each op (interim rule, until `hetsim.partition` lands) and
`compile_vm` turns the placed ops into VM bytecode (`hetsim.runtime.vm`). Durations and the
execution itself belong to `hetsim.sim`.
"""

from hetsim.runtime.placement import ANY_OP, can_run, place
from hetsim.runtime.vm import (
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
    compile_vm,
)

__all__ = [
    "ANY_OP",
    "MNEMONICS",
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
    "can_run",
    "compile_vm",
    "place",
]
