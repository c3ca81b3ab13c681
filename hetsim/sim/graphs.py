"""The engine's side of CUDA-graph offload: the graph step, its handler and the graph cache.

`hetsim.runtime.cuda_graph` rewrites a region of VM code into one CUDA_GRAPH instruction;
`hetsim.sim.capture` binds it to a `GraphStep` (the region's bound steps plus its costs and its
key, ``(region, shape key)``). The engine runs a `GraphStep` with `run_graph`:

- **capture** (the key is not in the `GraphCache`): one ``dispatch_us`` for the instruction, as
  on a replay; then the VM interprets the region's instructions as usual (``dispatch_us`` each,
  ALLOC and FREE with their runtime cost, taking no bytes: the buffers become the graph's) but
  records each launch into the capture (``capture_node_us``, category ``capture``) instead of
  running it; then ``cudaGraphInstantiate`` (``instantiate_us + nodes × instantiate_node_us``,
  ``capture``), which takes the graph's memory (``nodes × graph_node_bytes``) from the device
  for good; then the new graph is launched (``graph_launch_us``), its nodes and buffers as on a
  replay. Capture does not execute kernels (CUDA stream capture, and TVM's
  ``cuda_graph_builtin`` launch the instantiated graph after capturing).
- **replay** (the key is cached): one ``dispatch_us`` for the instruction and ``graph_launch_us``
  (``launch``) on the host; the region's allocations are the graph's static buffers (taken and
  given back at the host's time, for free; where the device computes in a memory it does not
  own, given back when its stream has run the nodes before them: `FreeStep.after`); every node
  is queued on the device's stream at once,
  each taking ``kernel_us − kernel_latency_us + graph_node_us``.

The cache belongs to whoever runs a sequence of iterations (`hetsim.compare`) and outlives each
`Simulation`; its counters are what a comparison reports.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from hetsim.sim.resources import EXEC
from hetsim.sim.steps import AllocStep, FreeStep

if TYPE_CHECKING:
    from hetsim.sim.engine import Simulation

__all__ = ["GraphCache", "GraphStats", "GraphStep", "run_graph"]


@dataclass(frozen=True, slots=True)
class GraphStats:
    """What CUDA-graph offload did over one or more runs.

    Parameters
    ----------
    captures
        Graphs captured and instantiated (one per new key).
    capture_us
        Host time spent capturing and instantiating.
    replays
        Launches of an already instantiated graph.
    graph_memory_bytes
        Device memory the instantiated graphs hold.
    padding_waste_us
        Device time spent on padding (``buckets``): padded minus real kernel time.
    eager_runs
        Runs that used no graph because a dim exceeded every bucket.
    """

    captures: int = 0
    capture_us: float = 0.0
    replays: int = 0
    graph_memory_bytes: int = 0
    padding_waste_us: float = 0.0
    eager_runs: int = 0

    def to_dict(self) -> dict[str, float]:
        """The counters as plain JSON values."""
        return {name: getattr(self, name) for name in self.__slots__}


class GraphCache:
    """Instantiated graphs by key, and the counters of their use: mutable, one per run sequence.

    Examples
    --------
    >>> cache = GraphCache()
    >>> cache
    <GraphCache graphs=0 captures=0 replays=0>
    """

    def __init__(self) -> None:
        self.graphs: dict[Hashable, int] = {}  # key -> graph memory bytes
        self.memory_bytes: dict[str, int] = {}  # memory name -> bytes held by graphs
        self.captures = 0
        self.capture_us = 0.0
        self.replays = 0
        self.padding_waste_us = 0.0
        self.eager_runs = 0

    def __repr__(self) -> str:
        return (
            f"<GraphCache graphs={len(self.graphs)} captures={self.captures} "
            f"replays={self.replays}>"
        )

    def stats(self) -> GraphStats:
        """The counters so far, frozen."""
        return GraphStats(
            self.captures,
            self.capture_us,
            self.replays,
            sum(self.memory_bytes.values()),
            self.padding_waste_us,
            self.eager_runs,
        )


class GraphStep(NamedTuple):
    """CUDA_GRAPH bound for one run: the region's steps, its replayed nodes and its costs.

    `body` holds the region's bound VM steps in order (ALLOC, FREE, LAUNCH, device-local COPY);
    `nodes` the same device work as it runs replayed (kernel time per `graph_node_us`).
    """

    name: str
    cost_us: float
    key: Hashable
    body: tuple[Any, ...]
    nodes: tuple[Any, ...]
    capture_node_us: float
    instantiate_us: float
    graph_launch_us: float
    graph_memory: AllocStep
    waste_us: float
    cache: GraphCache
    args: Mapping[str, Any]


def run_graph(sim: Simulation, step: GraphStep) -> None:
    """Run `step` on `sim`: capture it if its key is new, then launch the graph (module doc)."""
    cache = step.cache
    is_cached = step.key in cache.graphs
    sim.dispatch(step)  # the CUDA_GRAPH instruction itself, whether it captures or replays
    if is_cached:
        cache.replays += 1
    else:
        _capture(sim, step)
    t = sim.t
    flow = sim.new_flow()
    end = t + step.graph_launch_us
    sim.record((sim.host, EXEC, step.name, "launch", t, end, flow, None, step.args))
    sim.t = end
    cache.padding_waste_us += step.waste_us
    first = True
    for item in step.nodes:  # the launch, after a capture as on a replay
        cls = item.__class__
        if cls is AllocStep:  # the graph's static buffers, counted while the graph runs
            sim.take(item)
        elif cls is FreeStep:
            sim.give(item)
        else:
            if is_cached:  # a capture computed the values in program order already
                item.run(sim.values)
            sim.streams[item.stream].push((item, end, flow if first else None))
            first = False


def _capture(sim: Simulation, step: GraphStep) -> None:
    """Interpret the region once, recording its launches; instantiate the graph."""
    record, host = sim.record, sim.host
    nodes = 0
    for item in step.body:
        if item.__class__ is AllocStep or item.__class__ is FreeStep:
            # recorded into the graph as its static buffers: the instruction's cost is paid,
            # the bytes are taken when the graph is launched (below, in `run_graph`)
            sim.dispatch(item)
            continue
        t = sim.dispatch(item)
        item.run(sim.values)  # values do not depend on timing: in program order, as eagerly
        end = t + step.capture_node_us
        record((host, EXEC, f"capture {item.name}", "capture", t, end, None, None, item.args))
        sim.t = end
        nodes += 1
    t = sim.t
    end = t + step.instantiate_us
    record((host, EXEC, f"instantiate {step.name}", "capture", t, end, None, None, step.args))
    sim.t = end
    memory = step.graph_memory
    sim.take(memory)
    cache = step.cache
    cache.memory_bytes[memory.memory] = cache.memory_bytes.get(memory.memory, 0) + memory.size_bytes
    cache.graphs[step.key] = memory.size_bytes
    cache.captures += 1
    cache.capture_us += nodes * step.capture_node_us + step.instantiate_us
