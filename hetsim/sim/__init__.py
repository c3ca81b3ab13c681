"""hetsim.sim: the SimPy engine that runs compiled programs in simulated time.

`Simulation` (`hetsim.sim.engine`) holds a run's state: SimPy env, streams and memories
(`hetsim.sim.resources`), links, and runs the VM interpreter it derives from
(`hetsim.sim.interpreter`); `bind` (kept by `bound_for`) and `run_program` (`hetsim.sim.bind`)
resolve a compiled program for one run's shapes and run it;
`RunRecord` and `Span` (`hetsim.sim.records`) are what a run leaves behind; `SimOptions`
(`hetsim.sim.options`) how.
"""

from hetsim.sim.bind import (
    BoundProgram,
    bind,
    bound_for,
    run_program,
    simulation_for,
)
from hetsim.sim.binders import DESCRIPTOR_BYTES
from hetsim.sim.engine import Simulation
from hetsim.sim.interpreter import Executor
from hetsim.sim.options import MODES, SimOptions
from hetsim.sim.records import CATEGORIES, RunRecord, Span
from hetsim.sim.resources import EXEC, LINK, STREAM, MemoryState, Stream

__all__ = [
    "CATEGORIES",
    "DESCRIPTOR_BYTES",
    "EXEC",
    "LINK",
    "MODES",
    "STREAM",
    "BoundProgram",
    "Executor",
    "MemoryState",
    "RunRecord",
    "SimOptions",
    "Simulation",
    "Span",
    "Stream",
    "bind",
    "bound_for",
    "run_program",
    "simulation_for",
]
