"""The kind registries and the built-in kinds: CPUs, cuda, npu, hetero, executors, runtimes.

`KINDS` holds target kinds (processors and the ``hetero`` composite), `EXECUTORS` and `RUNTIMES`
the schema-checked configs a level runs. Each is keyed by the name a user writes. Defaults are
plain numbers, never read from the machine hetsim runs on; where a default comes from a public
figure, the comment names it (see REFERENCE-NUMBERS.md of the project's shared notes).
The attributes the kinds are built of (op classes, dtypes, the shared processor attributes) are
`hetsim.target.kind_attrs`; registering kinds (from Python or a data file, checked first) is
`hetsim.target.catalog`.
"""

from __future__ import annotations

from typing import Any

from hetsim.target.kind_attrs import link_attr, non_negative, processor_attrs
from hetsim.target.rules import (
    AtMost,
    CpuNames,
    DevicesNeedExecutorFlag,
    HostNeedsFlag,
    OnlyAlone,
    RuntimeRunsExecutor,
)
from hetsim.target.schema import CATEGORIES, Attr, Kind

__all__ = [
    "DEFAULT_EXECUTOR",
    "DEFAULT_HOST",
    "DEFAULT_RUNTIME",
    "EXECUTORS",
    "KINDS",
    "NAME_PATTERN",
    "REGISTRIES",
    "RUNTIMES",
    "SHARED_ATTRS",
    "category_of",
    "find_kind",
]

NAME_PATTERN = r"[a-z][a-z0-9_-]*"
DEFAULT_HOST = "x86-cpu"
DEFAULT_EXECUTOR = "vm"
DEFAULT_RUNTIME = "cpp"


def _cpu(name: str, isa: str, triple: str, doc: str, default_host: str, **numbers: Any) -> Kind:
    extra = (
        Attr("mtriple", "str", "LLVM target triple", triple, pattern=r"[A-Za-z0-9_.-]+"),
        Attr("mcpu", "str", "LLVM CPU name ('' = generic)", "", pattern=r"[A-Za-z0-9_.+-]*"),
        Attr(
            "mattr",
            "list",
            "LLVM target features",
            [],
            items=Attr("feature", "str", "a feature", pattern=r"[+-]?[A-Za-z0-9_.-]+"),
        ),
    )
    return Kind(
        name,
        "target",
        doc,
        processor_attrs(**numbers) + extra,
        keys=("cpu", isa),
        can_host=True,
        default_host=default_host,
        rules=(OnlyAlone("ops", "*"), CpuNames(name)),
    )


CPU_EFFICIENCY = (0.6, 0.5, 0.3, 0.3, 0.3, 0.5, 0.3)  # assumed fractions of peak; calibrate
ARM_CPU = _cpu(
    "arm-cpu",
    "arm",
    "aarch64-linux-gnu",
    "an ARM application core cluster",
    "arm-cpu",
    cores=4,  # Raspberry Pi 4: 4 x Cortex-A72 (REFERENCE-NUMBERS.md)
    freq_ghz=1.5,  # Raspberry Pi 4: 1.5 GHz
    flops_per_cycle=8,  # Cortex-A72: ~8 FP32 FLOP/cycle/core (derived, REFERENCE-NUMBERS)
    mem_bandwidth_gbps=12.8,  # derived: LPDDR4-3200 x 32 bit = 12.8 GB/s (Pi 4)
    memory_gib=4,
    kernel_latency_us=1.0,
    launch_us=0.0,
    sync_us=0.0,
    efficiency=CPU_EFFICIENCY,
    link=(12.8, 0.0),  # a host's own memory: the link is its memory bus
)
RISCV_CPU = _cpu(
    "riscv-cpu",
    "riscv",
    "riscv64-unknown-linux-gnu",
    "a RISC-V application core cluster",
    "riscv-cpu",
    cores=4,  # SiFive U74 (JH7110): 4 x 1.5 GHz RV64GC (vendor datasheet)
    freq_ghz=1.5,
    flops_per_cycle=2,  # derived: one scalar FMA per cycle, no vector unit (U74)
    mem_bandwidth_gbps=11.2,  # derived: LPDDR4-2800 x 32 bit = 11.2 GB/s (JH7110)
    memory_gib=4,
    kernel_latency_us=1.5,
    launch_us=0.0,
    sync_us=0.0,
    efficiency=CPU_EFFICIENCY,
    link=(11.2, 0.0),
)
X86_CPU = _cpu(
    "x86-cpu",
    "x86",
    "x86_64-linux-gnu",
    "an x86-64 server or desktop CPU",
    "x86-cpu",
    cores=8,
    freq_ghz=3.0,
    flops_per_cycle=32,  # derived: AVX2, 2 FMA ports x 8 FP32 lanes x 2
    mem_bandwidth_gbps=51.2,  # derived: 2 channels DDR4-3200 x 8 B
    memory_gib=32,
    kernel_latency_us=0.5,  # REFERENCE-NUMBERS.md: onnxruntime per-op fixed cost 0.52 us
    launch_us=0.0,
    sync_us=0.0,
    efficiency=CPU_EFFICIENCY,
    link=(51.2, 0.0),
)

CUDA_GRAPH_ATTRS = (
    non_negative("graph_launch_us", "host-side time to launch an instantiated graph", 0.94),
    non_negative("graph_node_us", "device-side time per replayed graph node", 0.86),
    # 0.94 and 0.86 solve two REFERENCE-NUMBERS.md rows together: 80 tiny kernels replayed in
    # ~70 us (CUDA.jl "Graphs") and one 24 us kernel replayed in 25.8 us (B200, driver API):
    # 0.94 + 80 x 0.86 = 69.7 us; 0.94 + 0.86 + 24 = 25.8 us (derivation: targets/nvidia/h100.yaml)
    non_negative("capture_node_us", "host-side time to record one kernel into a capture", 3.24),
    # 3.24 = launch_us: stream capture records each launch through the same runtime API path
    non_negative("instantiate_us", "fixed time of cudaGraphInstantiate", 10.0),
    non_negative("instantiate_node_us", "time of cudaGraphInstantiate per node", 1.0),
    # instantiate grows linearly with the node count of a chain (CUDA programming guide); the
    # two figures are estimates to calibrate (REFERENCE-NUMBERS.md "Instantiate")
    Attr("graph_node_bytes", "int", "device memory per instantiated graph node", 40960, minimum=0),
    # vLLM: 0.21 GiB for 35 graphs of ~150 nodes = 42 950 B a node, taken as 40 KiB
    # (REFERENCE-NUMBERS.md)
    non_negative("update_us", "time of cudaGraphExecUpdate (same topology)", 5.0),
    # assumed: an in-place update of an unchanged topology, cheaper than re-instantiating
    Attr("cuda_graph", "bool", "replay this device's kernels as captured CUDA graphs", False),
    Attr("arch", "str", "CUDA compute capability, as TVM's -arch", "sm_90", pattern=r"sm_\d+a?"),
)
CUDA = Kind(
    "cuda",
    "target",
    "an NVIDIA GPU driven through CUDA",
    processor_attrs(
        cores=132,  # H100 SXM5: 132 SMs (NVIDIA H100 datasheet)
        freq_ghz=1.98,  # H100 SXM5 boost clock
        flops_per_cycle=256,  # derived: 66.9 TFLOP/s FP32 / (132 SMs x 1.98 GHz)
        mem_bandwidth_gbps=3350,  # H100 SXM5: 3.35 TB/s HBM3 (datasheet)
        memory_gib=80,  # H100 SXM5: 80 GB HBM3 (datasheet)
        kernel_latency_us=1.06,  # derived with launch_us, see below (targets/nvidia/h100.yaml)
        launch_us=3.24,  # derived: 80 x 3.24 + 1.06 = 260 us eager (CUDA.jl "Graphs") and
        # 3.24 + 1.06 + 24 = 28.3 us for one 24 us kernel launched (REFERENCE-NUMBERS.md)
        sync_us=5.0,  # assumed: an event query plus a wake-up, the launch's order
        efficiency=(0.7, 0.6, 0.5, 0.4, 0.4, 0.6, 0.3),  # assumed; calibrate
        link=(63.0, 1.0),  # PCIe Gen5 x16: ~63 GB/s per direction, ~1 us class (PCIe spec)
    )
    + CUDA_GRAPH_ATTRS,
    keys=("gpu", "cuda"),
    default_host=DEFAULT_HOST,
    rules=(
        OnlyAlone("ops", "*"),
        AtMost("graph_node_us", "launch_us", "a replayed node costs no more than a launch"),
    ),
)
NPU_OPS = (
    "Conv",
    "MatMul",
    "Gemm",
    "Relu",
    "Add",
    "Mul",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "BatchNormalization",
    "Clip",
    "Sigmoid",
    "Concat",
    "Reshape",
    # the int8 forms of the ops above, as ONNX and onnxruntime (QGemm, QLinearAdd...) state an
    # int8 model's ops
    "QLinearConv",
    "QLinearMatMul",
    "QGemm",
    "QLinearAdd",
    "QLinearMul",
    "QLinearConcat",
    "QLinearAveragePool",
    "QLinearGlobalAveragePool",
    "QLinearSigmoid",
)
NPU = Kind(
    "npu",
    "target",
    "a neural accelerator (MAC array) programmed by its level host",
    processor_attrs(
        cores=1,  # docs/architecture.md: an NPU's MAC array is one core
        freq_ghz=1.0,  # assumed SoC clock
        flops_per_cycle=2048,  # NVDLA nv_full: 1024 FP16 MACs x 2 (nvdla.org)
        mem_bandwidth_gbps=16.0,  # derived: AXI4 128 bit at 1 GHz (REFERENCE-NUMBERS.md)
        memory_gib=0,  # computes from its level host's memory
        kernel_latency_us=0.5,  # Ethos-U65 vela.ini: DRAM read 500 cycles = 0.5 us at 1 GHz
        launch_us=2.0,  # assumed: the controller programs one hardware layer (NVDLA)
        sync_us=1.0,  # assumed: completion interrupt (NVDLA, Ethos-U)
        efficiency=(0.7, 0.7, 0.2, 0.2, 0.3, 0.3, 0.1),  # assumed: MAC arrays favour dense ops
        link=(16.0, 0.5),  # AXI4 128 bit at 1 GHz; DRAM latency 0.5 us (vela.ini)
        ops=NPU_OPS,
        dtypes=("float32", "float16", "int8"),  # int8 and FP16 MACs (NVDLA, Ethos-U); float32
        # models at the FP16 rate, as TensorRT-on-DLA and RKNN convert them (vendor/npu)
    ),
    keys=("accel", "npu"),
    default_host="riscv-cpu",
    rules=(OnlyAlone("ops", "*"),),
)
HETERO = Kind(
    "hetero",
    "target",
    "a level: a host running an executor and a runtime, driving devices",
    (
        Attr("host", "target", "the CPU that runs this level's executor", DEFAULT_HOST),
        Attr("executor", "executor", "the executor the host runs", DEFAULT_EXECUTOR),
        Attr("runtime", "runtime", "the runtime the executor calls", DEFAULT_RUNTIME),
        Attr("devices", "list[target]", "the devices this level drives (at least one)"),
        link_attr(16.0, 1.0, "data link from this level's memory to its parent level host"),
        # 16 GB/s: AXI4 128 bit at 1 GHz (REFERENCE-NUMBERS.md); 1 us: assumed
        non_negative(
            "control_latency_us", "control link latency: the parent host invokes it", 2.0
        ),  # assumed: a mailbox write plus an interrupt
    ),
    keys=("hetero",),
    is_composite=True,
    default_host=DEFAULT_HOST,
    rules=(
        HostNeedsFlag("can_host"),
        RuntimeRunsExecutor(),
        DevicesNeedExecutorFlag("cuda_graph", "can_capture", "capture CUDA graphs"),
    ),
)

VM = Kind(
    "vm",
    "executor",
    "a bytecode VM: dynamic shapes, a dispatch cost per instruction",
    (
        non_negative("dispatch_us", "host time to dispatch one instruction", 0.27),
        # 0.27: measured TVM Relax VM per-op dispatch (REFERENCE-NUMBERS.md)
        Attr("is_static", "bool", "needs static shapes", False),
    ),
    can_capture=True,
)
GRAPH = Kind(
    "graph",
    "executor",
    "a graph executor: a static node list, static shapes only",
    (
        non_negative("node_us", "host time to run one node", 0.1),
        # 0.1: assumed, below the VM's 0.27 us (a node list has no decode or branch)
        Attr("is_static", "bool", "needs static shapes (always true)", True, choices=(True,)),
    ),
)


def _runtime(
    name: str, doc: str, alloc: float, free: float, call: float, executors: tuple[str, ...] = ()
) -> Kind:
    return Kind(
        name,
        "runtime",
        doc,
        (
            non_negative("alloc_us", "time to allocate one buffer", alloc),
            non_negative("free_us", "time to free one buffer", free),
            non_negative("call_us", "time of one packed-function call", call),
        ),
        executors=executors,
    )


# Estimates to calibrate: a C++ runtime allocates through a pooled allocator; the C runtime
# (microTVM CRT) from a static arena and runs the graph executor only (TVM CRT docs).
CPP = _runtime("cpp", "the C++ runtime (pooled allocator, packed functions)", 0.5, 0.2, 0.1)
CRT = _runtime(
    "crt",
    "the C runtime for bare metal (static arena; graph executor only)",
    0.2,
    0.1,
    0.05,
    executors=("graph",),
)

SHARED_ATTRS: dict[str, Kind] = {"target": NPU, "runtime": CPP}
"""Category -> the kind whose attributes (by name and type) every kind of it has, as the code past
validation reads them: the platform, the cost model and the simulator read `processor_attrs` of
every processor (npu has those and no more; ``hetero`` is apart) and every runtime's costs
(docs/architecture.md, "Shared contracts"). An executor is run by its kind's name."""

KINDS: dict[str, Kind] = {k.name: k for k in (ARM_CPU, RISCV_CPU, X86_CPU, CUDA, NPU, HETERO)}
EXECUTORS: dict[str, Kind] = {k.name: k for k in (VM, GRAPH)}
RUNTIMES: dict[str, Kind] = {k.name: k for k in (CPP, CRT)}
REGISTRIES: dict[str, dict[str, Kind]] = {
    "target": KINDS,
    "executor": EXECUTORS,
    "runtime": RUNTIMES,
}


def find_kind(category: str, name: object) -> Kind | None:
    """The registered kind called `name` in `category`, or None.

    >>> find_kind("target", "cuda").keys, find_kind("executor", "cuda")
    (('gpu', 'cuda'), None)
    """
    return REGISTRIES[category].get(name) if isinstance(name, str) else None


def category_of(name: object) -> str | None:
    """The category of a registered kind name, or None."""
    return next((c for c in CATEGORIES if find_kind(c, name) is not None), None)
