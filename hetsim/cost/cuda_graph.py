"""CUDA-graph costs: capture, instantiation, replay and graph memory, one formula each.

The parameters are the ``cuda`` kind's (`graph_launch_us`, `graph_node_us`, `capture_node_us`,
`instantiate_us`, `instantiate_node_us`, `graph_node_bytes`, plus `kernel_latency_us`); their
sources are in ``targets/nvidia/h100.yaml``. ``docs/cost-model.md`` ("CUDA graphs") writes each
formula out. When the engine pays them is `hetsim.sim.graphs`' business (``docs/cuda-graphs.md``).
"""

from __future__ import annotations

from hetsim.platform import Processor

__all__ = [
    "capture_us",
    "graph_launch_us",
    "graph_memory_bytes",
    "graph_node_us",
    "instantiate_us",
]


def capture_us(processor: Processor, n_nodes: int) -> float:
    """Host time to record `n_nodes` kernels into a stream capture: ``n_nodes × capture_node_us``.

    >>> gpu = Processor("gpu0", "accelerator", "cuda", "", {"capture_node_us": 3.24}, "gpu0.mem")
    >>> round(capture_us(gpu, 80), 2)
    259.2
    """
    return n_nodes * float(processor.attrs["capture_node_us"])


def instantiate_us(processor: Processor, n_nodes: int) -> float:
    """Host time of ``cudaGraphInstantiate``: ``instantiate_us + n_nodes × instantiate_node_us``.

    >>> gpu = Processor("gpu0", "accelerator", "cuda", "",
    ...     {"instantiate_us": 10.0, "instantiate_node_us": 1.0}, "gpu0.mem")
    >>> instantiate_us(gpu, 80)
    90.0
    """
    attrs = processor.attrs
    return float(attrs["instantiate_us"]) + n_nodes * float(attrs["instantiate_node_us"])


def graph_launch_us(processor: Processor) -> float:
    """Host time to launch one instantiated graph (``cudaGraphLaunch``): ``graph_launch_us``.

    >>> graph_launch_us(Processor("gpu0", "accelerator", "cuda", "", {"graph_launch_us": 0.94},
    ...     "gpu0.mem"))
    0.94
    """
    return float(processor.attrs["graph_launch_us"])


def graph_node_us(processor: Processor, kernel_us: float) -> float:
    """Device time of a kernel replayed as a graph node.

    ``kernel_us − kernel_latency_us + graph_node_us``: a node's fixed cost replaces the fixed
    latency of an eagerly launched kernel; the kernel's work is unchanged.

    >>> gpu = Processor("gpu0", "accelerator", "cuda", "",
    ...     {"kernel_latency_us": 1.06, "graph_node_us": 0.86}, "gpu0.mem")
    >>> round(graph_node_us(gpu, 25.06), 2)
    24.86
    """
    attrs = processor.attrs
    return kernel_us - float(attrs["kernel_latency_us"]) + float(attrs["graph_node_us"])


def graph_memory_bytes(processor: Processor, n_nodes: int) -> int:
    """Device memory an instantiated graph holds: ``n_nodes × graph_node_bytes``.

    >>> graph_memory_bytes(Processor("gpu0", "accelerator", "cuda", "",
    ...     {"graph_node_bytes": 40960}, "gpu0.mem"), 150)
    6144000
    """
    return n_nodes * int(processor.attrs["graph_node_bytes"])
