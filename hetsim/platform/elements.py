"""The parts of a platform: processors, memories, data links and levels.

These are frozen values; `hetsim.platform.build` makes them from a canonical target tree and
`hetsim.platform.graph.Platform` holds them. Durations computed from their parameters belong to
`hetsim.cost`, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hetsim.target.canonical import MEMORY_SUFFIX
from hetsim.units import format_bytes

__all__ = [
    "ROLES",
    "Config",
    "Level",
    "Link",
    "Memory",
    "Processor",
    "empty_memory_note",
    "memory_name",
]

ROLES = ("host", "coprocessor", "accelerator")
"""A processor's role: the root host, the host of a nested level, or a plain device."""


class Config(Protocol):
    """An executor or runtime of a target level: a kind and its attributes (defaults filled)."""

    @property
    def kind(self) -> str: ...

    @property
    def attrs(self) -> Mapping[str, Any]: ...


def memory_name(processor_path: str) -> str:
    """The name of the memory a processor owns.

    >>> memory_name("vdevice0/host")
    'vdevice0/host.mem'
    """
    return f"{processor_path}{MEMORY_SUFFIX}"


@dataclass(frozen=True, slots=True)
class Processor:
    """One processor of the platform, named by its path in the target tree.

    Parameters
    ----------
    path
        ``host``, ``gpu0``, ``vdevice0/host``, ``vdevice0/npu``.
    role
        One of `ROLES`.
    kind
        The target kind (``arm``, ``gpu``, ``accel``, ...).
    level
        The path of the level it belongs to (``""`` for the root level).
    attrs
        The kind's attributes with defaults filled: the cost parameters.
    memory
        The name of the memory it computes from.

    Examples
    --------
    >>> Processor("vdevice0/npu", "accelerator", "accel", "vdevice0", {}, "vdevice0/host.mem")
    <Processor vdevice0/npu kind=accel role=accelerator memory=vdevice0/host.mem>
    """

    path: str
    role: str
    kind: str
    level: str
    attrs: Mapping[str, Any] = field(repr=False)
    memory: str

    def __repr__(self) -> str:
        return f"<Processor {self.path} kind={self.kind} role={self.role} memory={self.memory}>"

    @property
    def owns_memory(self) -> bool:
        """Whether the processor has a memory of its own (else it shares its host's)."""
        return self.memory == memory_name(self.path)


@dataclass(frozen=True, slots=True)
class Memory:
    """A memory space: its capacity, its bandwidth and the level it belongs to.

    Examples
    --------
    >>> Memory("gpu0.mem", 80 * 1024**3, 3350.0, "")
    <Memory gpu0.mem 80.0 GiB 3350.0 GB/s level=''>
    """

    name: str
    capacity_bytes: int
    bandwidth_gbps: float
    level: str

    def __repr__(self) -> str:
        return (
            f"<Memory {self.name} {format_bytes(self.capacity_bytes)} "
            f"{self.bandwidth_gbps} GB/s level={self.level!r}>"
        )


def empty_memory_note(memory: str, capacity_bytes: int) -> str:
    """What to add to a message about `memory` not fitting something: ``""``, or, where the
    memory holds 0 B, why (a root host with ``memory_gib: 0``) and what to do."""
    if capacity_bytes > 0:
        return ""
    return (
        f"; {memory} holds 0 B: its processor's memory_gib is 0 (or under a byte), and 0 means "
        "its level host's memory below the root and none at the root (a target whose host "
        "shares its parent's memory is meant as a device of another target)"
    )


@dataclass(frozen=True, slots=True)
class Link:
    """A data link between two memories: one shared resource, used in both directions.

    `a` is the memory on the upper (level host) side, `b` the device side.

    Examples
    --------
    >>> Link("host.mem--gpu0.mem", "host.mem", "gpu0.mem", 32.0, 1.0)
    <Link host.mem--gpu0.mem 32.0 GB/s 1.0 us>
    """

    name: str
    a: str
    b: str
    bandwidth_gbps: float
    latency_us: float

    def __repr__(self) -> str:
        return f"<Link {self.name} {self.bandwidth_gbps} GB/s {self.latency_us} us>"

    def other_end(self, memory: str) -> str:
        """The memory at the other end of the link from `memory`.

        >>> Link("host.mem--gpu0.mem", "host.mem", "gpu0.mem", 32.0, 1.0).other_end("gpu0.mem")
        'host.mem'
        """
        return self.b if memory == self.a else self.a


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the tree: a host with its executor and runtime, driving its devices.

    Parameters
    ----------
    path
        ``""`` for the root level, else the path of the ``hetero`` device (``vdevice0``).
    host
        The processor path of the level's host (``host``, ``vdevice0/host``).
    executor, runtime
        The level's executor and runtime configs (``.kind``, ``.attrs``).
    devices
        The processor path of each plain device and the level path of each nested level.
    parent
        The path of the parent level; ``None`` for the root.
    control_latency_us
        Latency of the control link the parent's host uses to invoke this level (0 for the root).
    attrs
        The ``hetero`` node's own attributes (``link``, ``control_latency_us``, ...).

    Examples
    --------
    >>> Level("vdevice0", "vdevice0/host", None, None, ("vdevice0/npu",), "", 5.0)
    <Level vdevice0 host=vdevice0/host devices=['vdevice0/npu'] parent=''>
    """

    path: str
    host: str
    executor: Config | None
    runtime: Config | None
    devices: tuple[str, ...]
    parent: str | None
    control_latency_us: float
    attrs: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return (
            f"<Level {self.path or '(root)'} host={self.host} devices={list(self.devices)} "
            f"parent={self.parent!r}>"
        )

    @property
    def is_root(self) -> bool:
        """Whether this is the root level."""
        return self.parent is None
