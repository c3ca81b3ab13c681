"""`simulate()`: the one call that strings the stages together.

model -> `Graph` (`hetsim.models.load_model`); target -> `Platform` (`hetsim.target.Target`,
`hetsim.platform.build_platform`); placement (`hetsim.runtime.place`); VM bytecode
(`hetsim.runtime.compile_vm`); shapes for this run (`hetsim.kernels.propagate`); one engine run
(`hetsim.sim.run_program`); and the `Result` (`hetsim.report.Result.from_record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hetsim.ir import Graph, bind_shape
from hetsim.kernels import bind_dims, propagate
from hetsim.models import load_model
from hetsim.platform import Platform, build_platform
from hetsim.report import Result
from hetsim.runtime import compile_vm, place
from hetsim.sim import SimOptions, run_program
from hetsim.target import Target

__all__ = ["INT_INPUT_HIGH", "make_inputs", "platform_of", "simulate"]

INT_INPUT_HIGH = 4
"""Made-up integer inputs are drawn from ``[0, INT_INPUT_HIGH)``: valid indices of small tables."""


def make_inputs(
    graph: Graph, seed: int = 0, dims: Mapping[str, int] | None = None
) -> dict[str, np.ndarray]:
    """Deterministic inputs for every graph input: same graph, seed and dims, same arrays.

    Floats come from ``np.random.default_rng(seed).standard_normal``, integers from
    ``integers(0, INT_INPUT_HIGH)``, booleans from ``integers(0, 2)``, one generator for all
    inputs in the graph's input order, each cast to its declared dtype.

    Raises
    ------
    ModelError
        A symbolic dim without a size in `dims`.

    Examples
    --------
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (), {"x": TensorType((2, "n"), "float32"),
    ...                     "i": TensorType(("n",), "int64")}, ())
    >>> made = make_inputs(g, seed=0, dims={"n": 3})
    >>> made["x"].shape, made["x"].dtype, made["i"].tolist()
    ((2, 3), dtype('float32'), [2, 2, 3])
    """
    bound = bind_dims(graph, dims)
    rng = np.random.default_rng(seed)
    made = {}
    for name, declared in graph.inputs.items():
        if name in graph.initializers:
            continue
        shape = bind_shape(declared.shape, bound)
        dtype = np.dtype(declared.dtype)
        if dtype.kind == "f":
            made[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            made[name] = rng.integers(0, 2, shape).astype(dtype)
        else:
            made[name] = rng.integers(0, INT_INPUT_HIGH, shape).astype(dtype)
    return made


def platform_of(target: Any) -> Platform:
    """The platform of `target`: a `Platform` as it is, a canonical tree built, else `Target`."""
    if isinstance(target, Platform):
        return target
    if not (hasattr(target, "devices") and hasattr(target, "host")):
        target = Target(target)
    return build_platform(target)


def simulate(
    model: Any,
    target: Any,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    mode: str = "functional",
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
        Input arrays by name. Without them, functional mode makes them with `make_inputs` from
        `seed`; timing mode needs none (symbolic dims then come from ``dims=``).
    seed
        Seed of the made-up inputs.
    mode
        ``"functional"`` (numpy computes every value; outputs are returned) or ``"timing"``
        (shapes only). Both give the same simulated times.
    **options
        `hetsim.sim.SimOptions` fields: ``dims={"seq": 128}``, ``trace=False``.

    Returns
    -------
    Result
        Makespan, breakdown, per-processor, per-link and per-memory figures, placement, inputs,
        outputs.

    Raises
    ------
    HetsimError
        A bad model, target or option (`ModelError`, `TargetError`, `SimulationError`), or a run
        that fails (out of memory, deadlock: `SimulationError`).

    Examples
    --------
    >>> result = simulate("mlp", "cpu")  # doctest: +SKIP
    >>> sorted(result.outputs)  # doctest: +SKIP
    ['fc3']
    """
    opts = SimOptions.of(mode=mode, **options)
    graph = load_model(model)
    platform = platform_of(target)
    program = compile_vm(graph, platform, place(graph, platform))
    if inputs is None and opts.is_functional:
        inputs = make_inputs(graph, seed, opts.dims)
    given = dict(inputs or {})
    metas = propagate(graph, opts.dims, given)
    dims = bind_dims(graph, opts.dims, {name: np.shape(v) for name, v in given.items()})
    record = run_program(
        program,
        platform,
        metas,
        dims=dims,
        inputs=given,
        is_functional=opts.is_functional,
        trace=opts.trace,
    )
    return Result.from_record(record)
