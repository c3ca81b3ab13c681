"""Cross-field rules: what one attribute cannot check alone, declared in a kind's schema.

A `Rule` reads a node's canonical mapping (its attributes already valid) and returns problems. A
kind lists its rules (`Kind.rules`); `hetsim.target.canonical` runs them; the docs print `doc`.
Level rules see the level's host, executor, runtime and devices, each None when it had problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hetsim.errors import Problem
from hetsim.target.schema import item_path, join_path
from hetsim.target.tvm_names import CPU_FAMILIES, LLVM_CPUS

if TYPE_CHECKING:
    from hetsim.target.schema import Kind

__all__ = [
    "AtMost",
    "CpuNames",
    "DevicesNeedExecutorFlag",
    "HostNeedsFlag",
    "OnlyAlone",
    "Rule",
    "RuntimeRunsExecutor",
]


class Rule:
    """A cross-field rule declared in a kind's schema: `check` returns the problems it finds.

    `lookup(category, name)` gives the `Kind` of a config or target kind (level rules need the
    executor's and runtime's flags). `node` is the node's canonical mapping, its attributes
    valid (but for a rule that does not `reads_attrs`, which runs beside their problems too); a
    level's host, executor, runtime or a device is None when it had problems of its own (a host
    with a kind stands in as its kind and tag: `hetsim.target.canonical`).
    """

    doc: str = ""
    reads_attrs: bool = True
    """Whether `check` reads the node's attribute values (then it runs only when they are
    valid); a level rule that reads only its host, executor, runtime and devices does not."""

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        raise NotImplementedError(f"{type(self).__name__} must define check")


@dataclass(frozen=True, slots=True)
class AtMost(Rule):
    """``attr <= limit``, both attributes of the same node."""

    attr: str
    limit: str
    reason: str

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"`{self.attr}` <= `{self.limit}` ({self.reason})"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        if node[self.attr] <= node[self.limit]:
            return []
        expected = f"expected at most {self.limit} ({node[self.limit]!r}; {self.reason})"
        return [Problem(join_path(path, self.attr), expected, repr(node[self.attr]))]


@dataclass(frozen=True, slots=True)
class CpuNames(Rule):
    """A CPU's ``mtriple`` names its own architecture, and its ``mcpu``, where it is a core
    hetsim knows (`hetsim.target.tvm_names.LLVM_CPUS`), one of that architecture: an ARM kind
    with an x86 triple read back from TVM as an x86 CPU (`Target.to_tvm`, `from_tvm`)."""

    kind: str

    @property
    def doc(self) -> str:  # type: ignore[override]
        return "`mtriple` and a known `mcpu` are of this kind's architecture"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        family = CPU_FAMILIES.get(self.kind)
        if family is None:  # a kind registered without a family: nothing to check against
            return []
        problems = []
        triple, mcpu = node["mtriple"], node["mcpu"]
        if not family.matches(triple):
            prefixes = ", ".join(f"{p}*" for p in family.prefixes)
            expected = f"expected a triple of {self.kind} ({prefixes})"
            problems.append(Problem(join_path(path, "mtriple"), expected, repr(triple)))
        cpu = LLVM_CPUS.get(mcpu)
        if cpu is not None and cpu.kind != self.kind:
            expected = f"expected an mcpu of {self.kind} or one hetsim does not know"
            got = f"{mcpu!r}, a core of {cpu.kind}"
            problems.append(Problem(join_path(path, "mcpu"), expected, got))
        return problems


@dataclass(frozen=True, slots=True)
class OnlyAlone(Rule):
    """A wildcard list item (``"*"``) stands alone."""

    attr: str
    item: str

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"`{self.item}` in `{self.attr}` stands alone"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        values = node[self.attr]
        if self.item not in values or len(values) == 1:
            return []
        expected = f"expected [{self.item!r}] alone or a list without {self.item!r}"
        return [Problem(join_path(path, self.attr), expected, repr(list(values)))]


@dataclass(frozen=True, slots=True)
class HostNeedsFlag(Rule):
    """A level's host has a capability flag (``can_host``)."""

    reads_attrs = False

    flag: str = "can_host"

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"the host's kind has `{self.flag}`"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        host = node["host"]
        kind = lookup("target", host["kind"]) if host else None
        if kind is None or getattr(kind, self.flag):
            return []
        origin = f" (from tag {host['tag']})" if host.get("tag") else ""
        expected = f"kind {kind.name!r}{origin} cannot host (a host needs {self.flag})"
        if kind.is_composite:  # perhaps written as a processor, with a host of its own
            expected += (
                ": it is a level, as is a processor written with a host, executor or runtime "
                "of its own"
            )
        return [Problem(join_path(path, "host"), expected)]


@dataclass(frozen=True, slots=True)
class RuntimeRunsExecutor(Rule):
    """A level's runtime can run its executor (a runtime lists the executors it runs)."""

    reads_attrs = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        return "the runtime runs the executor (a runtime's `executors`, empty = all)"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        if not (node["runtime"] and node["executor"]):
            return []
        runtime = lookup("runtime", node["runtime"]["kind"])
        executor = node["executor"]["kind"]
        if runtime is None or not runtime.executors or executor in runtime.executors:
            return []
        expected = f"expected a runtime that runs executor {executor!r}"
        got = f"{runtime.name!r} (runs {', '.join(runtime.executors)})"
        return [Problem(join_path(path, "runtime"), expected, got)]


@dataclass(frozen=True, slots=True)
class DevicesNeedExecutorFlag(Rule):
    """A device that sets a bool attribute needs a level executor with a flag."""

    reads_attrs = False

    attr: str
    flag: str
    what: str

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"a device with `{self.attr}: true` needs an executor with `{self.flag}`"

    def check(
        self, node: Mapping[str, Any], path: str, lookup: Callable[[str, str], Kind | None]
    ) -> list[Problem]:
        executor = lookup("executor", node["executor"]["kind"]) if node["executor"] else None
        if executor is None or getattr(executor, self.flag):
            return []
        expected = f"expected an executor that can {self.what} ({self.flag})"
        got = f"executor {executor.name!r}"
        return [
            Problem(
                join_path(item_path(join_path(path, "devices"), d["name"]), self.attr),
                expected,
                got,
            )
            for d in node["devices"]
            if d and d.get(self.attr) is True
        ]
