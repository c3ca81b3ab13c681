"""The attributes kinds are built of: op classes, dtypes and the shared processor attributes.

`processor_attrs` makes the attributes every processor kind has (docs/architecture.md, shared
contracts), with per-op-class tables keyed by `OP_CLASSES`; `non_negative` and `link_attr` make
the plain number and link attributes other kinds use too. The built-in kinds themselves, with
their default numbers and the registries that hold them, are `hetsim.target.kinds`; `Attr` and
checking values against it are `hetsim.target.schema`.
"""

from __future__ import annotations

from collections.abc import Callable

from hetsim.target.schema import Attr

__all__ = ["DTYPES", "OP_CLASSES", "link_attr", "non_negative", "processor_attrs"]

# The op classes of docs/architecture.md (the same tuple as hetsim.kernels.OP_CLASSES; the target
# layer may not import kernels, and tests/target/test_kinds.py checks that the two agree).
OP_CLASSES = (
    "matmul",
    "conv",
    "elementwise",
    "reduction",
    "normalization",
    "data_movement",
    "other",
)
DTYPES = (
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint64",
    "uint32",
    "uint16",
    "uint8",
    "bool",
)


def _positive(name: str, doc: str, default: float) -> Attr:
    return Attr(name, "float", doc, default, minimum=0, exclusive_minimum=True)


def non_negative(name: str, doc: str, default: float) -> Attr:
    """A float attribute that is 0 or more."""
    return Attr(name, "float", doc, default, minimum=0)


def link_attr(bandwidth_gbps: float, latency_us: float, doc: str) -> Attr:
    """A data link attribute: ``bandwidth_gbps`` and ``latency_us``, with these defaults."""
    fields = (
        _positive("bandwidth_gbps", "bandwidth of the link (GB/s)", bandwidth_gbps),
        non_negative("latency_us", "fixed time of one transfer", latency_us),
    )
    return Attr("link", "mapping", doc, fields=fields)


def _per_class(name: str, doc: str, field: Callable[[str], Attr]) -> Attr:
    """A mapping attribute with one field per op class (`OP_CLASSES`), made by `field`."""
    return Attr(name, "mapping", doc, fields=tuple(field(c) for c in OP_CLASSES))


def _fraction(name: str, doc: str, default: float) -> Attr:
    return Attr(name, "float", doc, default, minimum=0, maximum=1, exclusive_minimum=True)


def _efficiency(values: tuple[float, ...]) -> Attr:
    default = dict(zip(OP_CLASSES, values, strict=True))
    return _per_class(
        "efficiency",
        "fraction of peak reached, per op class",
        lambda c: _fraction(c, f"fraction of peak on {c} ops", default[c]),
    )


# The per-class tables below default to no effect, so every shipped tag's kernels cost
# kernel_latency_us plus the plain roofline; `hetsim calibrate` fits them for the local target
# (docs/cost-model.md, "Kernel time").
_MEM_EFFICIENCY = _per_class(
    "mem_efficiency",
    "fraction of mem_bandwidth_gbps reached, per op class",
    lambda c: _fraction(c, f"fraction of mem_bandwidth_gbps that {c} ops stream at", 1.0),
)
_OP_LATENCY = _per_class(
    "op_latency_us",
    "fixed time per kernel of each op class, on top of kernel_latency_us",
    lambda c: non_negative(c, f"fixed time added to each {c} kernel (µs)", 0.0),
)
_GEMM_HALF_DIM = _per_class(
    "gemm_half_dim",
    "Hockney's n½ per op class: rate · d / (d + n½) for a GEMM whose smallest dimension is d",
    lambda c: non_negative(
        c, f"smallest GEMM dimension at which {c} kernels reach half their rate", 0.0
    ),
)


def processor_attrs(
    *,
    cores: int,
    freq_ghz: float,
    flops_per_cycle: float,
    mem_bandwidth_gbps: float,
    memory_gib: float,
    kernel_latency_us: float,
    launch_us: float,
    sync_us: float,
    efficiency: tuple[float, ...],
    link: tuple[float, float],
    ops: tuple[str, ...] = ("*",),
    dtypes: tuple[str, ...] = DTYPES,
) -> tuple[Attr, ...]:
    """The attributes every processor kind has (docs/architecture.md, shared contracts)."""
    item = Attr("op", "op", "an ONNX op type hetsim runs, or '*'")
    return (
        Attr("cores", "int", "cores (a GPU's SMs; an NPU's MAC array is one)", cores, minimum=1),
        _positive("freq_ghz", "clock frequency", freq_ghz),
        _positive(
            "flops_per_cycle",
            "flops per core per cycle: FP32 on a CPU or GPU, 2 x an NPU's MACs at its rated dtype",
            flops_per_cycle,
        ),
        _positive(
            "mem_bandwidth_gbps", "bandwidth of the memory it computes from", mem_bandwidth_gbps
        ),
        non_negative(
            "memory_gib", "capacity of its memory; 0: its level host's memory", memory_gib
        ),
        non_negative(
            "kernel_latency_us", "fixed device-side time of one kernel", kernel_latency_us
        ),
        non_negative("launch_us", "host-side time to launch one kernel here", launch_us),
        non_negative("sync_us", "host-side time to observe a completion", sync_us),
        _efficiency(efficiency),
        _MEM_EFFICIENCY,
        _OP_LATENCY,
        _GEMM_HALF_DIM,
        Attr(
            "lowering",
            "enum",
            "how its kernels are implemented: 'native' (a vendor library) or 'numpy' (hetsim's "
            "own kernels, which also move their scratch: im2col columns, erf's temporaries)",
            "native",
            choices=("native", "numpy"),
        ),
        Attr("ops", "list", "op types it can run; ['*'] means all", list(ops), items=item),
        Attr(
            "dtypes",
            "list",
            "element types it computes in",
            list(dtypes),
            items=Attr("dtype", "enum", "a dtype", choices=DTYPES),
        ),
        link_attr(*link, "data link from its memory to its level host's memory"),
        Attr("vendor", "str", "vendor, for people", ""),
        Attr("model", "str", "model name, for people", ""),
    )
