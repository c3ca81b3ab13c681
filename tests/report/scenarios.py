"""Hand-made run records with hand-computed figures, shared by the report and CLI tests.

`two_level_record()` is a host driving a GPU (two streams, one copy over a link) and a nested
level (a co-processor driving an NPU). Its figures, computed by hand from the spans below:

=================  ==========================  ========  ===========
processor          spans (us)                  busy      utilization
=================  ==========================  ========  ===========
host               [0, 10] without a gap       10.0      1.0
gpu0               stream0 [3, 9], s1 [4, 6]    6.0      0.6
vdevice0/host      [5, 8.5]                     3.5      0.35
vdevice0/npu       [6, 8.5]                     2.5      0.25
=================  ==========================  ========  ===========

Breakdown: dispatch 1 + 1 + 0.5 = 2.5; launch 2 + 2 (invoke) + 0.5 = 4.5; compute 4 + 2 + 2.5 = 8.5;
transfer 2 (the stream's copy; the link's span is not a processor's); sync_wait 4 + 2.5 = 6.5;
capture 0; idle 0 + 4 + 6.5 + 7.5 = 18. Per processor (`PROCESSOR_BREAKDOWN`): the host's
dispatch 1 + 1, launch 2 + 2 (the invoke) and sync_wait 4; gpu0's compute 4 + 2, transfer 2 and
idle 4; vdevice0/host's dispatch, launch 0.5 each, sync_wait 2.5, idle 6.5; the NPU's compute
2.5, idle 7.5.
"""

from __future__ import annotations

import numpy as np

from hetsim.sim.records import RunRecord, Span

LINK = "host.mem--gpu0.mem"

SPANS = (
    Span("host", "exec", "alloc a", "dispatch", 0.0, 1.0),
    Span("host", "exec", "launch k1", "launch", 1.0, 3.0, flow_out=1, args={"op": "Conv"}),
    Span("host", "exec", "invoke vdevice0", "invoke", 3.0, 5.0),
    Span("gpu0", "stream0", "k1", "compute", 3.0, 7.0, flow_in=1, args={"flops": np.int64(900)}),
    Span("gpu0", "stream1", "k2", "compute", 4.0, 6.0),
    Span("host", "exec", "sync gpu0", "sync_wait", 5.0, 9.0),
    Span("vdevice0/host", "exec", "node n1", "dispatch", 5.0, 5.5),
    Span("vdevice0/host", "exec", "launch n1", "launch", 5.5, 6.0, flow_out=2),
    Span("vdevice0/host", "exec", "sync npu", "sync_wait", 6.0, 8.5),
    Span("vdevice0/npu", "stream0", "n1", "compute", 6.0, 8.5, flow_in=2),
    Span("gpu0", "stream0", "copy y", "transfer", 7.0, 9.0, args={"bytes": 8000}),
    Span(LINK, "link", "copy y", "transfer", 7.0, 9.0, args={"bytes": 8000}),
    Span("host", "exec", "return", "dispatch", 9.0, 10.0),
)

BREAKDOWN = {
    "dispatch": 2.5,
    "launch": 4.5,
    "compute": 8.5,
    "transfer": 2.0,
    "sync_wait": 6.5,
    "capture": 0.0,
    "idle": 18.0,
}

BUSY = {"host": 10.0, "gpu0": 6.0, "vdevice0/host": 3.5, "vdevice0/npu": 2.5}


def two_level_record(**changes: object) -> RunRecord:
    """The scenario of the module docstring; `changes` replace its fields."""
    fields: dict[str, object] = {
        "makespan_us": 10.0,
        "spans": SPANS,
        "processors": ("host", "gpu0", "vdevice0/host", "vdevice0/npu"),
        "links": (LINK,),
        "link_bytes": {LINK: 8000},
        "peak_memory_bytes": {"host.mem": 4096, "gpu0.mem": 8000},
        "placement": {"k1": "gpu0", "k2": "gpu0", "n1": "vdevice0/npu"},
        "inputs": {"x": np.arange(6, dtype=np.float32).reshape(2, 3)},
        "outputs": {"y": np.full((2, 2), 0.5, dtype=np.float64), "file": np.arange(3)},
        "extra": {"mode": "functional", "seed": np.int64(0)},
    }
    fields.update(changes)
    return RunRecord(**fields)  # type: ignore[arg-type]


def _keys(**figures: float) -> dict[str, float]:
    return {**dict.fromkeys(BREAKDOWN, 0.0), **figures}


PROCESSOR_BREAKDOWN = {
    "host": _keys(dispatch=2.0, launch=4.0, sync_wait=4.0),
    "gpu0": _keys(compute=6.0, transfer=2.0, idle=4.0),
    "vdevice0/host": _keys(dispatch=0.5, launch=0.5, sync_wait=2.5, idle=6.5),
    "vdevice0/npu": _keys(compute=2.5, idle=7.5),
}
