"""Fixtures of the partition tests: a host with one NPU, and a small chain graph."""

from __future__ import annotations

import pytest

from hetsim.ir import Graph, GraphBuilder
from hetsim.platform import Platform
from tests.partition.tiny import LINK, level, platform_of, proc


@pytest.fixture
def host_npu() -> Platform:
    """A host and one NPU that runs Relu and Add only, with its own memory."""
    return platform_of(
        level(proc("arm-cpu"), [proc("npu", name="npu", ops=["Relu", "Add"], link=LINK)])
    )


@pytest.fixture
def chain() -> Graph:
    """x[1000] -> relu0 (Relu) -> neg0 (Neg) -> add0 (Add, with neg0 and relu0) -> output."""
    b = GraphBuilder("chain")
    x = b.input("x", (1000,))
    r = b.op("Relu", x)
    n = b.op("Neg", r)
    return b.build(b.op("Add", n, r))
