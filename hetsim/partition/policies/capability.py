"""The ``capability`` policy: each op goes to the first device that supports it, else the host.

The way ONNX Runtime assigns execution providers: a level's devices are tried in their declared
order (the priority order) and the first whose ``ops`` attribute lists the op type takes it; a
nested level takes the ops one of its devices supports (and is partitioned again, the same way);
what no device takes runs on the level's host, if its ``ops`` allow. The capability rule itself
is `hetsim.partition.context.refusals`.
"""

from __future__ import annotations

from hetsim.partition.context import LevelContext

__all__ = ["place_by_capability"]


def place_by_capability(context: LevelContext) -> dict[str, str]:
    """Op name -> the first capable choice of the level (devices in order, then the host).

    Raises
    ------
    PartitionError
        An op that no device, host included, can run.

    Examples
    --------
    >>> from hetsim.ir import Op
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> ops = (Op("Conv", "c", ("x", "w"), ("y",)), Op("Softmax", "s", ("y",), ("z",)))
    >>> place_by_capability(LevelContext(soc, soc.levels[""], ops, {}, {}))
    {'c': 'vdevice0', 's': 'host'}
    """
    return context.first_choices()
