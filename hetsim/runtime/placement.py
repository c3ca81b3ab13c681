"""Interim placement: which processor of the root level runs each op.

Until `hetsim.partition` plans levels and segments, placement is the simplest rule that a
platform's capabilities allow: each op runs on the first plain device of the root level whose
``ops`` attribute lists the op type or ``"*"``, and on the root host when none does. Nested
``hetero`` devices are not used yet. The rule is a pure function of the graph and the platform.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from hetsim.ir import Graph, check_graph
from hetsim.platform import Platform, Processor, check_platform
from hetsim.target.values import ANY_OP

__all__ = ["ANY_OP", "can_run", "place"]


def can_run(processor: Processor, op_type: str) -> bool:
    """Whether `processor`'s ``ops`` attribute lists `op_type` or ``"*"``.

    Examples
    --------
    >>> npu = Processor("npu", "accelerator", "accel", "", {"ops": ["Conv", "Relu"]}, "npu.mem")
    >>> can_run(npu, "Conv"), can_run(npu, "Softmax")
    (True, False)
    """
    ops = processor.attrs.get("ops", ())
    return ANY_OP in ops or op_type in ops


def place(graph: Graph, platform: Platform) -> Mapping[str, str]:
    """Op name -> processor path: the first capable plain device of the root level, else the host.

    Parameters
    ----------
    graph
        The model; every op gets a processor.
    platform
        The platform; only its root level is used.

    Returns
    -------
    Mapping
        Read-only, in the graph's op order.

    Raises
    ------
    HetsimError
        `graph` is not a `Graph` (a `ModelError`) or `platform` not a `Platform`.
    """
    graph = check_graph(graph, "place")
    root = check_platform(platform, "place").levels[""]
    devices = [platform.processors[p] for p in root.devices if p in platform.processors]
    chosen: dict[str, str] = {}
    by_type: dict[str, str] = {}
    for op in graph.ops:
        path = by_type.get(op.type)
        if path is None:
            path = next((d.path for d in devices if can_run(d, op.type)), root.host)
            by_type[op.type] = path
        chosen[op.name] = path
    return MappingProxyType(chosen)
