"""ONNX's node conformance cases simulated on every shipped platform, nested levels and several
machines included: a functional run gives `execute`'s outputs bit for bit, a timing run its
makespan, and a refusal is one of the two hetsim documents (a dtype no processor of the
platform computes; a shape that needs a float graph input's value).

`test_onnx_node_cases.py` checks the cases' values against ONNX's on `x86-h100`; this module
checks that placing, compiling and running them anywhere else changes nothing.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("onnx")

from hetsim.api import simulate
from hetsim.errors import HetsimError, ModelError, PartitionError
from hetsim.frontend.onnx import load_onnx
from hetsim.kernels import execute
from tests.frontend.test_onnx_node_cases import CASES, _array

PLATFORMS = ["arm-riscv-soc", "nxp-imx93", "rk3588", "jetson-agx-orin", "two-node-h100", "x86-h100"]
#: The refusals hetsim documents: no processor computes the dtype, or a shape needs a value.
DOCUMENTED = re.compile(r"no device can run it; .*\(no u?int(16|32|64) in its dtypes\)")


def _loaded() -> list[tuple[str, object, dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """(name, graph, inputs, execute's outputs) of each case hetsim loads and executes."""
    found = []
    for case in CASES:
        try:
            graph = load_onnx(case.model)
        except ModelError:
            continue
        names = [name for name in graph.inputs if name not in graph.initializers]
        inputs = dict(zip(names, (_array(v) for v in case.data_sets[0][0]), strict=True))
        try:
            with np.errstate(all="ignore"):
                outputs = execute(graph, inputs, fuse=False)
        except ModelError:
            continue  # the refusals test_onnx_node_cases.py asserts
        found.append((case.name, graph, inputs, outputs))
    return found


LOADED = _loaded()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_node_cases_simulate_like_execute_on_every_platform(platform: str) -> None:
    wrong: list[str] = []
    ran = 0
    for name, graph, inputs, want in LOADED:
        try:
            with np.errstate(all="ignore"):
                functional = simulate(graph, platform, inputs=inputs, fuse=False)
                timing = simulate(graph, platform, inputs=inputs, fuse=False, mode="timing")
        except PartitionError as err:
            if not DOCUMENTED.search(str(err)):
                wrong.append(f"{name}: {err}")
            continue
        except HetsimError as err:
            wrong.append(f"{name}: {type(err).__name__}: {err}")
            continue
        ran += 1
        for output, expected in want.items():
            have = functional.outputs[output]
            if have.dtype != expected.dtype or not np.array_equal(have, expected, equal_nan=True):
                wrong.append(f"{name}: {output} differs from execute's")
        if timing.makespan_us != functional.makespan_us:
            wrong.append(
                f"{name}: timing {timing.makespan_us} µs, functional {functional.makespan_us}"
            )
    assert wrong == []
    assert ran >= 1300, f"only {ran} of {len(LOADED)} cases ran on {platform}"
