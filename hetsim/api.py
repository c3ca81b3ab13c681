"""`simulate()`: the one call that strings the stages together.

model -> `Graph` (`hetsim.models.load_model`); target -> `Platform` (`hetsim.target.Target`,
`hetsim.platform.build_platform`); the plan (`hetsim.partition.partition`, by the chosen policy,
recursively over nested levels); one program per level invocation (`hetsim.runtime.compile_plan`:
VM bytecode, graph-executor node lists); shapes for this run (`hetsim.kernels.propagate`); one
engine run (`hetsim.sim.run_program`); and the `Result` (`hetsim.report.Result.from_record`).
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from hetsim.errors import (
    OpError,
    OutOfMemoryError,
    PartitionError,
    Problem,
    SimulationError,
    UnknownValueError,
    is_count,
)
from hetsim.ir import Graph, check_graph_dims
from hetsim.ir.cache import SIMULATOR_BUDGET, GraphCache
from hetsim.kernels import (
    Cost,
    Meta,
    bind_dims,
    input_signature,
    propagate_costs,
    value_inputs,
)
from hetsim.kernels.fuse import clear_fused
from hetsim.kernels.propagate import (
    check_input_array,
    check_input_names,
    check_inputs_mapping,
    declared_shape_notes,
)
from hetsim.memo import Recent
from hetsim.models import load_model, naming_model_file
from hetsim.models.inputs import (
    INT_INPUT_HIGH,
    check_seed,
    input_label,
    input_types,
    made_up_hint,
    made_up_read_by,
    make_inputs,
    owes_to_made_up,
)
from hetsim.partition import (
    POLICIES,
    Plan,
    idle_notes,
)
from hetsim.partition import partition as partition_graph
from hetsim.platform import Platform, build_platform, empty_memory_note
from hetsim.report import Result
from hetsim.runtime import PlanProgram, compile_plan
from hetsim.sim import RunRecord, SimOptions, run_program
from hetsim.sim.bind import clear_bound
from hetsim.sim.binders import clear_kernels
from hetsim.sim.capture import run_with_graphs
from hetsim.sim.collector import paused
from hetsim.sim.fusion import clear_groups
from hetsim.target import Target, target_argument
from hetsim.units import format_sizes

__all__ = [
    "INT_INPUT_HIGH",
    "clear_caches",
    "fastest_plan",
    "make_inputs",
    "platform_of",
    "set_cache_max_ops",
    "simulate",
]


def _check_inputs_fit(graph: Graph, platform: Platform, dims: Mapping[str, int]) -> None:
    """The inputs `make_inputs` would make must fit the root host's memory, where a run loads
    them: functional mode asks numpy for them first, and timing mode's run says the same."""
    memory = platform.memory_of(platform.levels[""].host)
    free = memory.capacity_bytes
    for name, (shape, dtype) in input_types(graph, dims).items():
        size = math.prod(shape) * dtype.itemsize
        if size > free:
            need, room = format_sizes(size, free)
            raise OutOfMemoryError(
                f"{input_label(name, shape, dtype)}: out of memory in {memory.name} (need "
                f"{need}, {room} free)"
                f"{empty_memory_note(memory.name, memory.capacity_bytes)}"
            )
        free -= size


PLATFORM_CACHE_SIZE = 8
"""Platforms `platform_of` keeps, by their target tree (the least recently asked for goes)."""

_platforms: Recent[Target, Platform] = Recent(PLATFORM_CACHE_SIZE)


def platform_of(target: Any) -> Platform:
    """The platform of `target`: a `Platform` as it is, a canonical tree built, else `Target`.

    A tree equal to one of the last `PLATFORM_CACHE_SIZE` asked for gives the same `Platform`
    object: a platform is a pure function of its tree, and immutable. So a target given again
    by tag, file or dict finds what `simulate` keeps for that `Platform` object (the bound
    program; the compiled plan is kept for its `Platform.layout`), as a `Platform` passed again
    does.

    >>> platform_of("x86-h100") is platform_of({"tag": "x86-h100"})
    True
    """
    if isinstance(target, Platform):
        return target
    if not (hasattr(target, "devices") and hasattr(target, "host")):
        target = target_argument(target, "target")
    if not isinstance(target, Target):  # a tree of another type: built as it is, not kept
        return build_platform(target)
    return _platforms.get(target, lambda: build_platform(target))


def fastest_plan(
    plans: Sequence[Plan],
    graph: Graph,
    platform: Platform,
    metas: Mapping[str, Meta],
    dims: Mapping[str, int],
    costs: Mapping[str, Cost] | None = None,
) -> Plan:
    """The plan whose timing-mode run ends first (the first one on a tie).

    The ``cost`` policy's estimate leaves out what only a run shows (allocation, copy dispatch,
    synchronization, link contention), so `simulate` checks its plan against the capability
    plan this way: ``partition="cost"`` is never slower than ``"capability"`` in simulated time.
    `costs`: the ops' costs for `metas`, when the caller has them (else each run computes them).
    A plan whose run fails (a `SimulationError`: a time that overflows, `TimeOverflowError`, a
    link latency near 1e308 µs; tensors that do not fit a memory, `OutOfMemoryError`; a processor
    whose rates give no finite kernel time) cannot run, so another wins; when none can run, the
    first one's error is raised.
    """
    if not isinstance(plans, Sequence) or isinstance(plans, str) or not plans:
        raise SimulationError(
            f"fastest_plan: expected plans a non-empty sequence of Plans, got {plans!r:.80}"
        )
    if not isinstance(metas, Mapping):
        raise SimulationError(
            f"fastest_plan: expected metas a mapping of tensor name -> Meta, got "
            f"{type(metas).__name__}"
        )
    if isinstance(graph, Graph):  # compile_plan says a graph of another type
        dims = check_graph_dims(graph, dims)
    programs = [compile_plan(graph, platform, plan) for plan in plans]

    def timed(program: PlanProgram) -> RunRecord:
        return run_program(
            program, platform, metas, dims=dims, is_functional=False, trace=False, costs=costs
        )

    return _fastest(programs, timed)[0].plan


def _fastest(
    programs: Sequence[PlanProgram], run: Callable[[PlanProgram], RunRecord]
) -> tuple[PlanProgram, list[float]]:
    """`fastest_plan` on compiled plans, each timed by `run` (`simulate` runs them as it runs
    the winner: with its CUDA-graph strategy): the winner's program, which `simulate` then runs
    rather than compiling its plan a second time, and each program's makespan (infinite for one
    that cannot run; the first one's error when none can)."""
    makespans: list[float] = []
    first: SimulationError | None = None  # a run that finishes has a finite makespan
    for program in programs:
        try:
            record = run(program)
        except SimulationError as err:  # this plan cannot run here (an overflow, no memory, a
            first = first or err  # processor its ops need with a rate that is no number): next
            makespans.append(math.inf)
        else:
            makespans.append(record.makespan_us)
    if first is not None and min(makespans) == math.inf:
        raise first
    return programs[makespans.index(min(makespans))], makespans


PLAN_CACHE_SIZE = 8
"""Compiled plans (and, apart, propagated metas with their costs) `simulate` keeps for reuse."""

# Kept from the second call on: a sweep compiles each point's plan for a new platform once, and
# keeping those made each ResNet-50 point on arm-riscv-soc 30% slower (the collector traversing
# them, the cache freeing them later: docs/runtime.md).
_plans: GraphCache[PlanProgram] = GraphCache(PLAN_CACHE_SIZE, SIMULATOR_BUDGET, admit_after=2)
_metas: GraphCache[tuple[Mapping[str, Meta], Mapping[str, Cost]]] = GraphCache(
    PLAN_CACHE_SIZE, SIMULATOR_BUDGET
)


def _compiled(
    graph: Graph, platform: Platform, policy: str, dims: Mapping[str, int], make: Any
) -> PlanProgram:
    """The compiled plan of `graph` on `platform` under `policy`, made by `make()` once.

    Placement and compilation are pure functions of the graph, the platform's layout
    (`Platform.layout`: what they read of it, its cost parameters left out), the policy and
    the compile-time dims, so a caller simulating one model on one platform again (a benchmark,
    a loop over inputs), or on platforms that differ only in costs (a sweep over dispatch or
    link parameters), skips them, as `execute` skips recompiling (`hetsim.ir.cache.GraphCache`).
    """
    return _plans.get(graph, make, extra=(policy, tuple(sorted(dims.items())), platform.layout))


def clear_caches() -> None:
    """Forget the platforms, compiled plans, metas, bound programs, kernels and fused groups
    `simulate` keeps between calls (and the folded weights it shares with `hetsim.execute`).

    Nothing needs it for correctness (the caches are keyed by what their contents depend on);
    a benchmark timing a cold `simulate` calls it first, and it frees the graphs they hold.
    """
    _plans.clear()
    _metas.clear()
    _platforms.clear()
    clear_bound()
    clear_kernels()
    clear_groups()
    clear_fused()


def set_cache_max_ops(ops: int) -> int:
    """Let each of `simulate`'s caches keep graphs of up to `ops` ops together; return the
    bound this replaces.

    The default, `hetsim.ir.cache.CACHE_MAX_OPS` (100 000), keeps about 130 MB for a timing-mode
    model of 1e5 ops (about 1.3 kB per op, for each model kept), and a model of more ops is
    placed, compiled and bound anew on every call: a cold `simulate`, where a warm one reuses
    them (at 1e5 ops, 14.5-16.3 against 1.95-2.36 times a raw SimPy timeout per op:
    `benchmarks/sim_speed.py`). To simulate a bigger model many times, raise it for as long as
    you do. Lowering it drops what the caches keep (`clear_caches`).

    Raises
    ------
    SimulationError
        `ops` is not an integer >= 0.

    Examples
    --------
    >>> previous = set_cache_max_ops(2_000_000)  # room for one model of 2e6 ops
    >>> set_cache_max_ops(previous)
    2000000
    """
    if not is_count(ops):
        raise SimulationError(
            Problem("set_cache_max_ops", "expected an integer >= 0", repr(ops)).message
        )
    previous = SIMULATOR_BUDGET.ops
    SIMULATOR_BUDGET.ops = int(ops)
    if ops < previous:
        clear_caches()
    return previous


def _propagated(
    graph: Graph, dims: Mapping[str, int], inputs: Mapping[str, Any]
) -> tuple[Mapping[str, Meta], Mapping[str, Cost]]:
    """`propagate_costs(graph, dims, inputs)`: every tensor's `Meta` and every op's `Cost`,
    reused while the graph, the dims and what propagation reads of the inputs (shape, dtype,
    and the values it keeps: `hetsim.kernels.value_inputs`) are the same (a warm functional
    ResNet-50 run then skips its shape and cost rules).

    Callers only read them.
    """
    arrays = {name: np.asarray(value) for name, value in inputs.items()}
    dims_key = tuple(sorted(dims.items()))
    signature = input_signature(graph, arrays)
    made: list[tuple[Mapping[str, Meta], Mapping[str, Cost]]] = []

    def make() -> tuple[Mapping[str, Meta], Mapping[str, Cost]]:
        made.append(propagate_costs(graph, dims, arrays))
        return made[-1]

    found = _metas.get(graph, make, extra=(dims_key, signature))
    again = input_signature(graph, arrays)
    if again == signature:
        return found
    # propagation learned meanwhile that a shape needs an input's value (a Resize's float
    # scales): the key read before lacked it, and an entry under it made by another thread's
    # call with other values is not this call's; one this call made is, kept under the new key
    return _metas.get(graph, (lambda: made[0]) if made else make, extra=(dims_key, again))


# compiling, binding and running n ops make O(n) objects that live until the run ends: with
# the collector on, a 1e5-op simulate() was several times slower per op than a 1e3-op one
@naming_model_file
@paused()
def simulate(
    model: Any,
    target: Any,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    mode: str = "functional",
    partition: str = "capability",
    rules: Any = None,
    **options: Any,
) -> Result:
    """Simulate `model` on `target` and return the timed (and, in functional mode, computed) run.

    Parameters
    ----------
    model
        A `Graph`, or anything `hetsim.models.load_model` takes (a zoo name, an .onnx path).
    target
        Anything `hetsim.target.Target` takes (a tag, a kind, a dict, a file), a canonical
        target tree, or an already built `Platform`.
    inputs
        Input arrays by name, each of the dtype the model declares and a shape that fits its
        declared one (as `hetsim.execute` requires). Without them, functional mode makes them
        with `make_inputs` from `seed`; timing mode needs none (symbolic dims then come from
        ``dims=``).
    seed
        Seed of the made-up inputs.
    mode
        ``"functional"`` (numpy computes every value; outputs are returned) or ``"timing"``
        (shapes only). Both give the same simulated times.
    partition
        The name of the policy that places the ops (`hetsim.partition.POLICIES`:
        ``"capability"``, ``"cost"``, ``"rules"``), level by level down the target tree.
    rules
        For ``partition="rules"``: a list of ``{op, device}`` mappings or a YAML file's path.
    **options
        `hetsim.sim.SimOptions` fields: ``dims={"seq": 128}`` (the model's symbolic dims only,
        each an integer >= 0), ``trace=False``, ``cuda_graph="regions"`` (CUDA-graph offload,
        docs/cuda-graphs.md; without it, the kernels of devices whose ``cuda_graph`` attribute
        is set are captured as ``regions``, and no others), ``buckets=(16, 32)`` (with
        ``cuda_graph="buckets"``; with no CUDA kernel to capture, the run is not padded, and its
        record notes so; with another strategy, they are unused, and noted).

    Returns
    -------
    Result
        Makespan, breakdown, per-processor, per-link and per-memory figures, placement, inputs,
        outputs (as `hetsim.execute` gives them: arrays of the caller's own).

    Raises
    ------
    HetsimError
        A bad model, target or option (`ModelError`, `TargetError`, `SimulationError`; dims
        are a `ModelError`), a partition that is not a policy name or a model the platform
        cannot run (`PartitionError`), made-up inputs too big for the root host's memory, or a
        run that fails (out of memory, deadlock: `SimulationError`). An op's error (`OpError`,
        `UnknownValueError`) of a model given as a path is led by the file, as ``hetsim run``
        leads it.

    Examples
    --------
    >>> result = simulate("mlp", "x86-h100")
    >>> sorted(result.outputs), round(result.makespan_us, 3)
    (['fc3'], 34.581)
    """
    opts = SimOptions.of(mode=mode, **options)
    check_seed(seed)  # in every mode: a bad one would pass unseen until a functional run
    if not isinstance(partition, str):  # None failed in difflib, a list as unhashable
        raise PartitionError(
            f"partition: expected a policy in {sorted(POLICIES)}, got {partition!r}"
        )
    if inputs is not None:
        check_inputs_mapping(inputs)
    graph = load_model(model)
    check_graph_dims(graph, opts.dims)
    for name, value in (inputs or {}).items():  # before they are read as arrays
        if name in graph.inputs:
            check_input_array(name, value, graph.inputs[name].dtype)
    platform = platform_of(target)
    # Dims given here are bound at compile time (static levels may take the ops); dims known only
    # from the input arrays are dynamic and keep their ops at VM levels.
    # With no input arrays and every dim bound, the run's shapes are the plan's estimate: one
    # propagation serves both (a speed trick: it is 5-18% of a timing-mode run).
    shared = None
    if inputs is None and not opts.is_functional and set(opts.dims) == set(graph.symbols):
        shared = _propagated(graph, opts.dims, {})
    made = inputs is None and opts.is_functional
    if made:
        _check_inputs_fit(graph, platform, opts.dims)
        inputs = make_inputs(graph, seed, opts.dims)
    given = dict(inputs or {})
    if opts.is_functional:  # as execute refuses them (timing mode needs no values)
        check_input_names(graph, given, complete=True)
    try:
        metas, costs = shared if shared is not None else _propagated(graph, opts.dims, given)
    except OpError as err:
        read = made_up_read_by(graph, err.op, value_inputs(graph, given)) if made else []
        if not read or not owes_to_made_up(read, err, graph, opts.dims, given, seed):
            raise
        raise OpError(f"{err} ({made_up_hint(read, seed)})", err.op) from err
    dims = bind_dims(graph, opts.dims, {name: np.shape(v) for name, v in given.items()})

    def plan_of(policy: str, given_rules: Any, values: Mapping[str, np.ndarray] | None) -> Plan:
        return partition_graph(
            graph, platform, policy, given_rules, dims=opts.dims,
            metas=metas if shared is not None else None,
            costs=costs if shared is not None else None, inputs=values,
        )  # fmt: skip

    cuda_graph, graph_devices = opts.cuda_graph, None
    if "cuda_graph" not in options:  # the target may ask for graphs: devices with cuda_graph set
        flagged = [p.path for p in platform.processors.values() if p.attrs.get("cuda_graph")]
        if flagged:
            cuda_graph, graph_devices = "regions", frozenset(flagged)

    def timed(program: PlanProgram) -> RunRecord:  # a cost candidate, run as the winner will be
        return run_with_graphs(
            program, platform, metas, costs=costs, dims=dims, is_functional=False, trace=False,
            cuda_graph=cuda_graph, buckets=opts.buckets, graph_devices=graph_devices,
        )  # fmt: skip

    candidates: dict[str, float] = {}  # the cost policy's plans by name -> makespan, in order

    def program_of(values: Mapping[str, np.ndarray] | None) -> PlanProgram:
        if partition == "cost":  # its choice depends on the run's shapes: never cached
            plans = _cost_candidates(plan_of, rules, values, platform)
            programs = [compile_plan(graph, platform, plan) for plan in plans]
            chosen, makespans = _fastest(programs, timed)
            candidates.clear()
            candidates.update(
                (COST_CANDIDATES[plan.policy], us)
                for plan, us in zip(plans, makespans, strict=True)
            )
            # a baseline that won is the cost policy's choice too (an idle device's note says
            # so), its rule the policy's own: no op was placed by a user's rule (compiling
            # reads none of these three fields)
            kept = dataclasses.replace(chosen.plan, policy=partition, ruled=(), notes=())
            return dataclasses.replace(chosen, plan=kept)
        if values is None and rules is None and partition in POLICIES:  # a rules file may change
            return _compiled(
                graph, platform, partition, opts.dims,
                lambda: compile_plan(graph, platform, plan_of(partition, None, None)),
            )  # fmt: skip
        return compile_plan(graph, platform, plan_of(partition, rules, values))

    try:
        program = program_of(None)
    except UnknownValueError:
        # A shape depends on an input's value (an Expand's shape, a Resize's scales given as an
        # input), which the plan's estimate does not know: plan with the values propagation
        # keeps (`value_inputs`). Such a plan holds for those values only, so it is not kept.
        values = value_inputs(graph, given)
        if not values:
            raise
        program = program_of(values)
    try:
        record = run_with_graphs(
            program,
            platform,
            metas,
            costs=costs,
            dims=dims,
            inputs=given,
            is_functional=opts.is_functional,
            trace=opts.trace,
            fuse=opts.fuse,
            cuda_graph=cuda_graph,
            buckets=opts.buckets,
            graph_devices=graph_devices,
        )
    except OpError as err:  # a kernel refused a value made up from the seed (an index past
        if not made:  # its range)
            raise
        integers = [n for n, t in graph.inputs.items() if np.dtype(t.dtype).kind in "iu"]
        read = made_up_read_by(graph, err.op, integers)
        if not read:
            raise
        raise OpError(f"{err} ({made_up_hint(read, seed, values=True)})", err.op) from err
    if "buckets" in options and cuda_graph != "buckets":  # kept: one option set for each strategy
        notes = [
            *record.extra.get("cuda_graph_notes", ()),
            _unused_buckets(opts.buckets, cuda_graph),
        ]
        record = dataclasses.replace(record, extra={**record.extra, "cuda_graph_notes": notes})
    idle = (*_idle_notes(program, platform, graph, metas), *program.plan.notes)
    if candidates:  # which of the cost policy's plans ran, and what the others took
        kept = min(candidates, key=candidates.__getitem__)  # the first fastest, as _fastest's
        idle = (*idle, _kept_note(candidates, kept))
        # a plan that cannot run took no time: None, as JSON has no infinity (`to_dict`)
        times = {name: (us if us < math.inf else None) for name, us in candidates.items()}
        said = {"cost_candidates_us": times, "cost_kept": kept}
        record = dataclasses.replace(record, extra={**record.extra, **said})
    if idle:
        record = dataclasses.replace(record, extra={**record.extra, "placement_notes": list(idle)})
    stale = declared_shape_notes(graph, metas)
    if stale:  # the run goes on, as onnxruntime's does
        record = dataclasses.replace(record, extra={**record.extra, "shape_notes": stale})
    return Result.from_record(record)


COST_CANDIDATES: Mapping[str, str] = MappingProxyType(
    {"cost": "cost", "capability": "capability", "rules": "root host"}
)
"""The name of each plan the ``cost`` policy times, by the policy that made it (`_cost_candidates`:
its own, the capability plan, and every op on the root host by a rule)."""


def _kept_note(candidates: Mapping[str, float], kept: str) -> str:
    """The note of which of the cost policy's plans `simulate` kept, and what each took.

    >>> _kept_note({"cost": 12.5, "capability": 10.0, "root host": math.inf}, "capability")
    ... # doctest: +NORMALIZE_WHITESPACE
    'partition cost: kept the capability plan; simulated us: cost 12.500, capability 10.000,
    root host cannot run'
    """
    times = ", ".join(
        f"{name} {us:,.3f}" if us < math.inf else f"{name} cannot run"
        for name, us in candidates.items()
    )
    return f"partition cost: kept the {kept} plan; simulated us: {times}"


def _cost_candidates(
    plan_of: Callable[[str, Any, Mapping[str, np.ndarray] | None], Plan],
    rules: Any,
    values: Mapping[str, np.ndarray] | None,
    platform: Platform,
) -> tuple[Plan, ...]:
    """The ``cost`` policy's plan and its baselines (`_baseline_plans`), to be timed. A cost plan
    the model cannot be placed by (its estimate put weights where they do not fit: a nested
    level invoked twice holds both invocations' weights) leaves the baselines to run; with none
    of them either, its own error is raised."""
    try:
        own = plan_of("cost", rules, values)
    except PartitionError:
        if rules is not None:  # refused, as partition refuses rules for any policy but 'rules'
            raise
        baselines = _baseline_plans(plan_of, values, platform)
        if not baselines:
            raise
        return baselines
    return (own, *_baseline_plans(plan_of, values, platform))


def _baseline_plans(
    plan_of: Callable[[str, Any, Mapping[str, np.ndarray] | None], Plan],
    values: Mapping[str, np.ndarray] | None,
    platform: Platform,
) -> tuple[Plan, ...]:
    """The plans the cost plan is checked against: the capability plan, and every op on the
    root host (no offload at all: where the estimate's blind spots, each launch's dispatch on
    the host, outweigh what a device saves). A baseline the model cannot be placed by (the
    capability plan's weights do not fit a device's memory that the cost plan avoids; the host
    lacks an op or a dtype) is left out: the others, the cost plan first, then run."""
    found = []
    root_host = [{"op": "*", "device": platform.levels[""].host}]
    for policy, given in (("capability", None), ("rules", root_host)):
        try:
            found.append(plan_of(policy, given, values))
        except PartitionError:
            continue
    return tuple(found)


def _unused_buckets(buckets: tuple[int, ...], cuda_graph: str | None) -> str:
    """The note of ``buckets=`` given to a run whose strategy does not pad: a loop over the
    strategies may pass one set of options to each, so this is a note, not an error."""
    return (
        f"buckets {list(buckets)} unused: only cuda_graph='buckets' pads dims to buckets, and "
        f"this run's is {cuda_graph or 'none'!r}"
    )


_idle: weakref.WeakKeyDictionary[PlanProgram, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _idle_notes(
    program: PlanProgram, platform: Platform, graph: Graph, metas: Mapping[str, Meta]
) -> tuple[str, ...]:
    """`hetsim.partition.idle_notes` of the program's plan, found once per compiled program (a
    warm run of a cached plan does not scan its placement again)."""
    found = _idle.get(program)
    if found is None:
        plan = program.plan
        found = _idle[program] = idle_notes(
            platform, graph.ops, metas, plan.placement,
            dynamic=plan.dynamic, folded=plan.folded, policy=plan.policy, ruled=plan.ruled,
        )  # fmt: skip
    return found
