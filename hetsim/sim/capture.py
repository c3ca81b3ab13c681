"""Running a `CapturedProgram`: its VM steps bound for one run, each region folded into a GraphStep.

`hetsim.runtime.cuda_graph.capture_program` decides which regions become graphs; here they are
bound for one run's shapes. The VM program is bound as usual (`hetsim.sim.bind`), then each
region's steps are folded into one `hetsim.sim.graphs.GraphStep` whose key is ``(region, the
shapes of every tensor the region touches)``: a new shape is a new capture.

With the ``buckets`` strategy the symbolic dims are padded up to a bucket and the program is bound
a second time, shapes only, with the padded dims: a region then runs (and allocates) at the padded
shapes, so its kernels cost the padded work, while its values are still computed from the real
inputs (padding never reaches a result). Padded minus real kernel time is the padding waste. A run
whose dims exceed every bucket uses no graph at all (as vLLM runs eagerly past its largest capture
size).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from hetsim.cost import (
    capture_us,
    dispatch_us,
    graph_launch_us,
    graph_memory_bytes,
    graph_node_us,
)
from hetsim.cost import instantiate_us as instantiate_cost_us
from hetsim.errors import ModelError, SimulationError
from hetsim.ir import Graph, format_dims
from hetsim.kernels import Cost, Meta, propagate, value_inputs
from hetsim.platform import Platform
from hetsim.runtime import (
    Alloc,
    BranchShape,
    Free,
    GraphProgram,
    Launch,
    PlanProgram,
    VmProgram,
)
from hetsim.runtime.capture_regions import Region
from hetsim.runtime.cuda_graph import (
    CapturedProgram,
    CudaGraph,
    bucket_dims,
    capture_program,
    uncaptured_notes,
)
from hetsim.sim.bind import (
    BoundProgram,
    bind,
    bound_for,
    levels_of,
    run_program,
    simulation_for,
)
from hetsim.sim.graphs import GraphCache, GraphStats, GraphStep
from hetsim.sim.records import RunRecord
from hetsim.sim.steps import GRAPH_POOL_OP, AllocStep, BranchStep, FreeStep, Step

__all__ = ["run_graph_program", "run_with_graphs"]


def run_with_graphs(
    program: VmProgram | PlanProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    *,
    cuda_graph: str = "none",
    buckets: tuple[int, ...] = (),
    graph_devices: Collection[str] | None = None,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    is_functional: bool = True,
    trace: bool = True,
    costs: Mapping[str, Cost] | None = None,
    fuse: bool = True,
) -> RunRecord:
    """`run_program` with CUDA-graph strategy `cuda_graph` (``"none"``: exactly `run_program`)
    on the kernels of `graph_devices` (``None``: of every CUDA device).

    The record's ``extra["cuda_graph"]`` holds the run's `GraphStats` as a dict, and its
    ``extra["cuda_graph_notes"]`` the strategy's notes: why it runs some or all kernels eagerly
    (``whole`` on a program with no kernel launches, or more than one region). `costs` and
    `fuse`: as `hetsim.sim.bind` takes them.
    """
    options: dict[str, Any] = {
        "dims": dims, "inputs": inputs, "trace": trace, "costs": costs, "fuse": fuse,
    }  # fmt: skip
    if cuda_graph == "none":
        return run_program(program, platform, metas, is_functional=is_functional, **options)
    root = program.root if isinstance(program, PlanProgram) else program
    if graph_devices is not None and not isinstance(root, VmProgram):
        # flagged by the target, not asked for: devices of nested levels (a graph-executor root
        # has no device that may set the flag), whose kernels run eagerly, as at a VM root
        record = run_program(program, platform, metas, is_functional=is_functional, **options)
        notes = list(uncaptured_notes(platform, graph_devices, root.level))
        stats = GraphStats().to_dict()  # no graph: every counter 0, as a VM root's would read
        extra = {**record.extra, "cuda_graph": stats, "cuda_graph_notes": notes}
        return dataclasses.replace(record, extra=extra)
    rewritten = capture_program(program, platform, cuda_graph, buckets, graph_devices)
    record = run_graph_program(
        rewritten, platform, metas, GraphCache(), is_functional=is_functional, **options
    )
    notes = list(rewritten.notes)
    if record.extra["cuda_graph"]["eager_runs"]:  # this run's dims fit no bucket
        notes.append(
            f"{format_dims(dims or {})}: past the largest bucket ({max(rewritten.buckets)}), so "
            "every kernel runs eagerly, without padding"
        )
    return dataclasses.replace(record, extra={**record.extra, "cuda_graph_notes": notes})


def _check_static_levels(
    compiled: VmProgram | PlanProgram, dims: Mapping[str, int], padded: Mapping[str, int]
) -> None:
    """Padding binds the whole plan at the bucket's dims: a graph-executor level compiled for
    the dims given cannot run them (its static shapes), which this says in the strategy's
    terms rather than binding's."""
    programs = compiled.programs if isinstance(compiled, PlanProgram) else (compiled,)
    for level in programs:
        if not isinstance(level, GraphProgram):
            continue
        for name, size in sorted(level.dims.items()):
            if padded.get(name, size) != size:
                raise SimulationError(
                    f"cuda_graph buckets: expected every level to run {name}={padded[name]} "
                    f"({name}={dims[name]} padded up to its bucket), got graph executor "
                    f"{level.level} compiled for {name}={size}; "
                    + (f"give {name} a bucket size, or " if size > 0 else "")  # no bucket is 0
                    + "use cuda_graph 'regions'"
                )


def run_graph_program(
    rewritten: CapturedProgram,
    platform: Platform,
    metas: Mapping[str, Meta],
    cache: GraphCache,
    *,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    is_functional: bool = True,
    trace: bool = True,
    costs: Mapping[str, Cost] | None = None,
    fuse: bool = True,
) -> RunRecord:
    """Run `rewritten` once on a fresh `Simulation`; `cache` carries graphs across runs.

    Graphs already in `cache` hold their memory from time 0. The record's
    ``extra["cuda_graph"]`` is this run's share of the cache's counters. `costs` and `fuse`: as
    `hetsim.sim.bind` takes them.
    """
    program, compiled = rewritten.program, rewritten.compiled
    dims = dict(dims or {})
    given = dict(inputs or {})
    sim = simulation_for(compiled, platform, trace=trace)
    bound = bound_for(
        compiled, platform, metas, dims=dims, is_functional=is_functional, costs=costs, fuse=fuse
    )
    before = cache.stats()
    shaped = (bound, metas)
    regions = rewritten.regions
    if rewritten.is_bucketed:
        padded = bucket_dims(dims, rewritten.buckets)
        if padded is None:
            cache.eager_runs += 1
            regions = ()
        elif padded != dims:
            _check_static_levels(compiled, dims, padded)
            padded_metas = _padded_metas(program.graph, dims, padded, given)
            shaped = (bind(compiled, platform, padded_metas, dims=padded), padded_metas)
    code = _Folder(rewritten, regions, platform, bound, shaped, cache).fold()
    resident = bound.resident + _graph_memory(cache, program.host)
    record = sim.run(
        code,
        bound.slot_names,
        ready=bound.ready,
        resident=resident,
        values=bound.values_for(given),
        placement=compiled.plan.placement
        if isinstance(compiled, PlanProgram)
        else compiled.placement,
        inputs=given,
        programs=bound.programs,
        deferred=bound.deferred,
    )
    delta = _difference(cache.stats().to_dict(), before.to_dict())
    delta["graph_memory_bytes"] = cache.stats().graph_memory_bytes
    extra = {**record.extra, "levels": levels_of(platform), "cuda_graph": delta}
    return dataclasses.replace(record, extra=extra)


def _padded_metas(
    graph: Graph, dims: Mapping[str, int], padded: Mapping[str, int], inputs: Mapping[str, Any]
) -> Mapping[str, Meta]:
    """Every tensor's `Meta` at the padded dims, with the values of the run's small integer
    inputs (a shape may depend on one: an Expand's), once per padded run.

    Raises
    ------
    SimulationError
        A shape that does not follow the dims when they are padded (a shape given as an input).
    """
    values = value_inputs(graph, inputs)
    try:
        return propagate(graph, padded, values)
    except ModelError as err:
        grown = ", ".join(f"{n}={dims[n]} to {padded[n]}" for n in sorted(padded)
                          if padded[n] != dims.get(n))  # fmt: skip
        raise SimulationError(
            f"cuda_graph buckets: expected shapes that follow the dims padded up to a bucket "
            f"({grown}), got {err}; use cuda_graph 'regions'"
        ) from err


def _difference(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    return {name: after[name] - before[name] for name in after}


def _graph_memory(cache: GraphCache, host: str) -> tuple[AllocStep, ...]:
    """Memory held by graphs instantiated in earlier runs: resident from time 0."""
    return tuple(
        AllocStep("cuda graphs", 0.0, name, size, "(cuda graphs)", host, "-", {})
        for name, size in cache.memory_bytes.items()
    )


class _Folder:
    """Builds one run's steps from a rewritten program and its bindings (real and padded)."""

    def __init__(
        self,
        rewritten: CapturedProgram,
        regions: Sequence[Region],
        platform: Platform,
        bound: BoundProgram,
        shaped: tuple[BoundProgram, Mapping[str, Meta]],
        cache: GraphCache,
    ) -> None:
        self.rewritten = rewritten
        self.program = rewritten.program
        self.platform = platform
        self.bound = bound
        self.shaped, self.shaped_metas = shaped
        self.cache = cache
        self.regions = {r.id: r for r in regions}
        self.dispatch_us = dispatch_us(platform.levels[self.program.level].executor)
        # Instructions bound at the padded shapes: those inside a graph that runs.
        self.padded = {i for r in regions for i in r.body}
        self.alloc_at = {
            ins.tensor: i for i, ins in enumerate(self.program.code) if isinstance(ins, Alloc)
        }

    def step(self, index: int) -> Any:
        """The bound step of VM instruction `index`; a FREE gives back what its ALLOC took."""
        chosen = self.shaped if index in self.padded else self.bound
        step = chosen.code[index]
        if isinstance(step, FreeStep):
            at = self.alloc_at.get(step.slot)
            source: Any = self.step(at) if at is not None else self.bound.code[index]
            taken = source.size_bytes
            if taken != step.size_bytes:  # and its span says so: the padded size had stayed
                step = step._replace(size_bytes=taken, args=source.args)
        return step

    def fold(self) -> tuple[Any, ...]:
        """The run's steps (VM steps and GraphSteps); branch targets renumbered to match."""
        rewritten = self.rewritten
        steps: list[Step | GraphStep] = []
        renumber: dict[int, int] = {}  # rewritten pc -> pc in `steps`
        eager: set[int] = set()  # VM code an eager region's steps hold already
        for pc, (ins, origin) in enumerate(zip(rewritten.code, rewritten.origin, strict=True)):
            renumber[pc] = len(steps)
            if isinstance(ins, CudaGraph) and ins.region in self.regions:
                steps.append(self.graph_step(self.regions[ins.region]))
            elif isinstance(ins, CudaGraph):  # this run uses no graph: the VM code, eager, in
                # its order: the FREEs of other memories a graph defers (rewritten to follow
                # it) where the program has them, as a run without CUDA graphs
                span = range(ins.body[0], ins.body[-1] + 1)
                steps.extend(self.step(i) for i in span)
                eager.update(span)
            elif origin in eager:
                continue
            else:
                step = self.step(origin)
                if isinstance(ins, BranchShape):  # its step has the VM code's target: take
                    step = step._replace(target=ins.target)  # the rewritten code's (renumbered)
                steps.append(step)
        return tuple(
            s._replace(target=renumber[s.target]) if isinstance(s, BranchStep) else s for s in steps
        )

    def graph_step(self, region: Region) -> GraphStep:
        """One region bound for this run: body at the region's shapes, replay nodes, key."""
        program, device = self.program, self.platform.processors[region.processor]
        body: list[Any] = []
        nodes: list[Any] = []
        waste_us = 0.0
        touched: set[int] = set()
        for index in region.body:
            ins = program.code[index]
            step = self.step(index)
            body.append(step)
            if isinstance(ins, Launch):
                real: Any = self.bound.code[index]
                waste_us += step.kernel_us - real.kernel_us
                step = step._replace(run=real.run)  # values from the real inputs, never padded
                body[-1] = step
                nodes.append(step._replace(kernel_us=graph_node_us(device, step.kernel_us)))
                touched.update(s for s in (*ins.inputs, *ins.outputs) if s is not None)
            else:
                nodes.append(step)
                if isinstance(ins, Alloc | Free):
                    touched.add(ins.tensor)
        slots, metas = program.slots, self.shaped_metas
        key: Hashable = (
            region.id,
            tuple((slots[s].name, metas[slots[s].tensor].shape) for s in sorted(touched)),
        )
        name = f"graph {region.id}"
        memory = AllocStep(
            name, 0.0, device.memory, graph_memory_bytes(device, region.nodes),
            name, region.processor, GRAPH_POOL_OP, {},
        )  # fmt: skip
        args = {"region": region.id, "nodes": region.nodes, "processor": region.processor}
        return GraphStep(
            name, self.dispatch_us, key, tuple(body), tuple(nodes), capture_us(device, 1),
            instantiate_cost_us(device, region.nodes), graph_launch_us(device), memory,
            waste_us, self.cache, args,
        )  # fmt: skip
