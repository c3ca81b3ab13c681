"""Interim placement: the first capable plain device of the root level, else the root host."""

from __future__ import annotations

from hetsim.api import platform_of
from hetsim.ir import Op
from hetsim.runtime import place
from tests.sim.tiny import device, graph, target

OPS = (
    Op("Relu", "relu", ("x",), ("a",)),
    Op("Neg", "neg", ("a",), ("b",)),
    Op("Add", "add", ("a", "b"), ("c",)),
    Op("Relu", "relu2", ("c",), ("d",)),
)


def test_each_op_goes_to_the_first_device_that_lists_it() -> None:
    platform = platform_of(target(device("gpu0", ["Neg"]), device("gpu1", ["Relu", "Neg"])))
    placement = place(graph(*OPS, outputs=("d",)), platform)
    assert dict(placement) == {"relu": "gpu1", "neg": "gpu0", "add": "host", "relu2": "gpu1"}


def test_a_wildcard_device_takes_every_op() -> None:
    platform = platform_of(target(device("gpu0", ["Conv"]), device("gpu1", ["*"])))
    placement = place(graph(*OPS, outputs=("d",)), platform)
    assert set(placement.values()) == {"gpu1"}
    assert list(placement) == ["relu", "neg", "add", "relu2"]


def test_nested_levels_are_not_used_yet() -> None:
    # arm-riscv-soc: the root host drives one hetero device (vdevice0) and no plain device.
    platform = platform_of("arm-riscv-soc")
    placement = place(graph(*OPS, outputs=("d",)), platform)
    assert set(placement.values()) == {"host"}
