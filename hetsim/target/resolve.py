"""Resolution: a spec's tag references and overrides, expanded into one tree of plain mappings.

`resolve` replaces every kind or tag name by a mapping, merges overrides into tags (deeply, by
attribute and by device name), detects tag cycles, bounds depth and size, wraps a device that has
its own host, executor or runtime into a ``hetero`` level, and fills each level's host, executor
and runtime. Checking values and filling attribute defaults is `hetsim.target.canonical`.

A resolved node keeps the tag it came from under ``tag``; devices are named later, in
`canonical`, by the same `device_name` rule that override merging uses here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hetsim.errors import Problem
from hetsim.target.kinds import (
    DEFAULT_EXECUTOR,
    DEFAULT_HOST,
    DEFAULT_RUNTIME,
    REGISTRIES,
    category_of,
    find_kind,
)
from hetsim.target.schema import Kind, closest, item_path, join_path
from hetsim.target.sources import nesting_problem
from hetsim.target.tags import TagRegistry

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "Resolver",
    "article",
    "device_name",
    "merge_values",
    "written_device",
]

MAX_DEPTH = 16  # nesting of devices and given hosts; a default host sits at its level's depth
MAX_NODES = 10_000
"""The most targets (levels, hosts, devices) one resolved tree may hold."""
EXPANSIONS_PER_NODE = 2 * (MAX_DEPTH + 1)
"""What resolving may spend per target of `MAX_NODES` before it stops: a tag is expanded, then
the values that override it. An exported tree names its tag at every node, so each node's tag
expands its whole subtree again, once per level above it (7.4 expansions per target for
two-node-h100's export; at most about twice the depth, which `MAX_DEPTH` bounds), so the tree
is counted once made, and this bounds the work before that."""
LEVEL_KEYS = ("host", "executor", "runtime")
# The category of what each structural key holds.
STRUCTURE = {"host": "target", "executor": "executor", "runtime": "runtime"}
DEFAULTS = {"executor": DEFAULT_EXECUTOR, "runtime": DEFAULT_RUNTIME}


def device_name(device: object, index: int) -> str:
    """A device's name: its own ``name``, else ``dev<index>``.

    >>> device_name({"name": "npu"}, 0), device_name("cuda", 1), device_name({"name": 3}, 2)
    ('npu', 'dev1', 'dev2')
    """
    if isinstance(device, Mapping) and isinstance(device.get("name"), str):
        return str(device["name"])
    return f"dev{index}"


def written_device(spec: object, tags: TagRegistry) -> str | None:
    """Where a target written as one device sits in its canonical tree: ``devices[<its name>]``,
    ``devices[dev0]`` when unnamed; None for a level, or for a spec that does not resolve.

    A device at the root becomes its level's one device (`Resolver.resolve`); its own host,
    executor and runtime go to the level, and so stay where the spec writes them.

    >>> from hetsim.target.tags import TAGS
    >>> written_device({"kind": "cuda", "host": "arm-cpu"}, TAGS)
    'devices[dev0]'
    >>> written_device({"tag": "nvidia/h100", "name": "gpu"}, TAGS)
    'devices[gpu]'
    >>> written_device({"kind": "hetero", "devices": ["cuda"]}, TAGS) is None
    True
    """
    if not isinstance(spec, Mapping) or nesting_problem(spec) is not None:
        return None
    node = resolved_device(spec, tags)
    kind = find_kind("target", node.get("kind")) if node is not None else None
    if kind is None or kind.is_composite:
        return None
    return item_path("devices", device_name(node, 0))


def resolved_device(spec: Mapping[str, Any], tags: TagRegistry) -> dict[str, Any] | None:
    """Written `spec` resolved without its own host, executor and runtime: the device a level
    is made around (`level_around`), unless its kind or tag is a level already (a tag that
    gives its device a host); None when it does not resolve.

    >>> from hetsim.target.tags import TAGS
    >>> resolved_device({"tag": "nvidia/h100", "host": "arm-cpu"}, TAGS)["kind"]
    'cuda'
    """
    device = {k: v for k, v in spec.items() if k not in LEVEL_KEYS}
    return Resolver(tags).expand(device, "", "target", (), 0)


def level_around(device: Mapping[str, Any], kind: Kind) -> dict[str, Any]:
    """``hetero(host=<its host or its kind's default host>, ..., devices=[device])`` of a
    device of `kind` (not ``hetero``) given its own host, executor or runtime (rule 2 of
    docs/targets.md), those moved to the level, which takes its name.

    >>> npu = find_kind("target", "npu")
    >>> level = level_around({"kind": "npu", "name": "n", "executor": "graph"}, npu)
    >>> level["name"], level["host"], level["executor"], level["devices"]
    ('n', 'riscv-cpu', 'graph', [{'kind': 'npu', 'name': 'n'}])
    """
    inner = dict(device)
    level: dict[str, Any] = {"kind": "hetero"}
    if "name" in inner:
        level["name"] = inner["name"]
    level["host"] = inner.pop("host", kind.default_host or DEFAULT_HOST)
    for key in LEVEL_KEYS[1:]:
        if key in inner:
            level[key] = inner.pop(key)
    level["devices"] = [inner]
    return level


def merge_values(base: Any, override: Any) -> Any:
    """Merge plain values deeply: mappings by key, ``None`` removes a key, anything else replaces.

    >>> merge_values({"link": {"bandwidth_gbps": 8, "latency_us": 2}}, {"link": {"latency_us": 1}})
    {'link': {'bandwidth_gbps': 8, 'latency_us': 1}}
    >>> merge_values({"a": 1, "b": 2}, {"b": None})
    {'a': 1}
    """
    if not (isinstance(base, Mapping) and isinstance(override, Mapping)):
        return copy.deepcopy(override)
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_values(merged.get(key), value)
    return merged


def article(noun: str) -> str:
    """The noun with its indefinite article.

    >>> article("executor"), article("target")
    ('an executor', 'a target')
    """
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _only_attrs(value: object) -> bool:
    """Whether an override sets attributes only: a mapping that names no kind or tag."""
    return isinstance(value, Mapping) and "kind" not in value and "tag" not in value


def _same_kind(old: object, new: object) -> bool:
    """Whether an override mapping refines `old` rather than replacing it."""
    if not (isinstance(old, dict) and isinstance(new, Mapping)) or "tag" in new:
        return False
    kind = new.get("kind", old.get("kind"))
    return isinstance(kind, str) and kind == old.get("kind")


@dataclass
class Resolver:
    """One resolution: the tags it reads, the problems it found, the nodes it made."""

    tags: TagRegistry
    problems: list[Problem] = field(default_factory=list)
    nodes: int = 0

    def resolve(self, spec: object) -> dict[str, Any] | None:
        """The resolved tree of `spec`, rooted at a ``hetero`` level when it resolves at all."""
        node = self.expand(spec, "", "target", (), 0)
        tree = self._complete(node, "", 0, is_root=True) if node is not None else None
        count = _targets(tree) if self.nodes <= MAX_NODES * EXPANSIONS_PER_NODE else 0
        if count > MAX_NODES:  # (past the work's bound, expanding said so and stopped)
            self._add("", f"expected at most {MAX_NODES} targets in one tree", str(count))
            return None
        return tree

    def expand(
        self, spec: object, path: str, category: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any] | None:
        """`spec` with tag references replaced and overrides merged; None after a problem."""
        if depth > MAX_DEPTH:
            if not any(p.expected.endswith(" nested levels") for p in self.problems):  # once
                self._add(path, f"expected at most {MAX_DEPTH} nested levels", f"level {depth}")
            return None
        self.nodes += 1
        if self.nodes > MAX_NODES * EXPANSIONS_PER_NODE:
            if self.nodes == MAX_NODES * EXPANSIONS_PER_NODE + 1:
                self._add(path, f"expected at most {MAX_NODES} targets in one tree", "more")
            return None
        export = getattr(spec, "export", None)
        if callable(export):
            spec = export()
        if isinstance(spec, str):
            return self._named(spec, path, category, stack, depth)
        if isinstance(spec, Mapping):
            return self._mapping(self._string_keys(spec, path), path, category, stack, depth)
        self._add(path, f"expected {article(category)} name or a mapping", repr(spec))
        return None

    def _named(
        self, name: str, path: str, category: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any] | None:
        if find_kind(category, name) is not None:
            return {"kind": name}
        if name in self.tags:
            return self._tag(name, path, category, stack, depth)
        other = category_of(name)
        if other is not None:
            self._add(path, f"expected {article(category)}", f"{other} kind {name!r}")
            return None
        names = [*REGISTRIES[category], *self.tags]
        what = "tag" if "/" in name else "kind or tag"
        self.problems.append(Problem(path, f"unknown {what} {name!r}", hint=closest(name, names)))
        return None

    def _tag(
        self, name: object, path: str, category: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any] | None:
        found = self.tags.find(name)
        if found is None:
            where = join_path(path, "tag")
            if not isinstance(name, str):
                self._add(where, "expected a tag name", repr(name))
            else:
                hint = closest(name, self.tags)
                self.problems.append(Problem(where, f"unknown tag {name!r}", hint=hint))
            return None
        if found in stack:
            loop = list(stack[stack.index(found) :])
            first = loop.index(min(loop))  # told from its first name, whichever tag found it
            cycle = [*loop[first:], *loop[:first], loop[first]]
            self._add("tags", "cycle " + " -> ".join(cycle))
            return None
        tag = self.tags.get(found)
        if tag.problems:
            self.problems += tag.problems
            return None
        node = self.expand(tag.data, path, category, (*stack, found), depth)
        if node is not None:
            node["tag"] = found
        return node

    def _mapping(
        self, spec: dict[str, Any], path: str, category: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any] | None:
        if "tag" in spec:
            base = self._tag(spec["tag"], path, category, stack, depth)
            if base is None:
                return None
            if "kind" in spec and spec["kind"] != base.get("kind"):
                expected = f"expected {base.get('kind')!r} (from tag {base['tag']})"
                self._add(join_path(path, "kind"), expected, repr(spec["kind"]))
            return self.merge(base, spec, path, category, stack, depth)
        if category == "target" and "kind" not in spec and "devices" in spec:
            spec = {"kind": "hetero", **spec}
        return self.merge({}, spec, path, category, stack, depth)

    def merge(
        self,
        base: dict[str, Any],
        over: Mapping[str, Any],
        path: str,
        category: str,
        stack: tuple[str, ...],
        depth: int,
    ) -> dict[str, Any]:
        """Merge the raw override `over` into the resolved node `base`."""
        node = dict(base)
        for key, value in over.items():
            where = join_path(path, key)
            if key in ("tag", "kind") and "tag" in base:
                continue
            if category == "target" and key in STRUCTURE:
                old = node.get(key)
                if old is None and _only_attrs(value):  # into the part the level gets anyway
                    old = self._default_part(base, over, key, where, stack, depth + 1)
                node[key] = self._merge_child(old, value, where, STRUCTURE[key], stack, depth + 1)
            elif category == "target" and key == "devices":
                node[key] = self._merge_devices(node.get(key), value, where, stack, depth)
            else:
                node[key] = merge_values(node.get(key), value)
            if value is None:
                node.pop(key, None)  # null removes a value; a part that failed stays, as None
        return self._wrap_device(node, path, stack, depth) if category == "target" else node

    def _default_part(
        self,
        base: Mapping[str, Any],
        over: Mapping[str, Any],
        key: str,
        path: str,
        stack: tuple[str, ...],
        depth: int,
    ) -> dict[str, Any] | None:
        """The host, executor or runtime a node gets when it names none (`_complete`, `wrap`):
        attributes given for it merge into that. None when the node's kind is unknown."""
        if key != "host":
            return self.expand(DEFAULTS[key], path, STRUCTURE[key], stack, depth)
        named = base.get("kind") if "tag" in base else over.get("kind", base.get("kind"))
        kind = find_kind("target", named)
        if kind is None:
            return None
        return self.expand(kind.default_host or DEFAULT_HOST, path, "target", stack, depth)

    def _merge_child(
        self,
        old: object,
        value: object,
        path: str,
        category: str,
        stack: tuple[str, ...],
        depth: int,
    ) -> dict[str, Any] | None:
        if value is None:
            return None
        if _same_kind(old, value):
            spec = self._string_keys(value, path)  # type: ignore[arg-type]
            return self.merge(old, spec, path, category, stack, depth)  # type: ignore[arg-type]
        return self.expand(value, path, category, stack, depth)

    def _merge_devices(
        self, old: object, value: object, path: str, stack: tuple[str, ...], depth: int
    ) -> list[Any] | None:
        if not isinstance(value, Mapping):
            return self._device_list(value, path, stack, depth)
        if not isinstance(old, list):
            expected = "expected a list of targets (a mapping merges into a tag's devices)"
            self._add(path, expected, "a mapping")
            return None
        names = [device_name(d, i) for i, d in enumerate(old)]
        devices: list[Any] = list(old)
        for key, override in self._string_keys(value, path).items():
            where = item_path(path, key)
            if key not in names:
                self.problems.append(Problem(where, "unknown device", hint=closest(key, names)))
                continue
            index = names.index(key)
            new = self._merge_child(devices[index], override, where, "target", stack, depth + 1)
            if isinstance(new, dict) and "name" not in new and key != f"dev{index}":
                new["name"] = key
            devices[index] = new if override is not None else _REMOVED
        return [d for d in devices if d is not _REMOVED]

    def _device_list(
        self, value: object, path: str, stack: tuple[str, ...], depth: int
    ) -> list[Any] | None:
        if not isinstance(value, list | tuple):
            if value is not None:  # none: the level's check says it wants a device, once
                self._add(path, "expected a list of targets", repr(value))
            return None
        return [
            self.expand(d, item_path(path, self._written_name(d, i)), "target", stack, depth + 1)
            for i, d in enumerate(value)
        ]

    def _written_name(self, device: object, index: int) -> str:
        """The name device `index` of a written list has in the tree (`device_name` of it once
        resolved): its own, else the one its tag gives it (a tag may name its device), else
        ``dev<index>``. Its problems are located by it: ``devices[dev0]`` had named the device
        whose tag names it ``accel0``, and another device truly named ``dev0`` (and its line)."""
        for _ in range(MAX_DEPTH):  # a tag chain is far shorter; a cycle is refused elsewhere
            if isinstance(device, Mapping) and isinstance(device.get("name"), str):
                return str(device["name"])
            tag = device.get("tag") if isinstance(device, Mapping) else device
            name = self.tags.find(tag)
            if name is None:
                break
            device = self.tags.get(name).data
        return f"dev{index}"

    def _wrap_device(
        self, node: dict[str, Any], path: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any]:
        """A device with its own host, executor or runtime becomes a ``hetero`` level around it."""
        kind = find_kind("target", node.get("kind"))
        if kind is None or kind.is_composite or not any(k in node for k in LEVEL_KEYS):
            return node
        return self.wrap(node, path, stack, depth)

    def wrap(
        self, node: dict[str, Any], path: str, stack: tuple[str, ...], depth: int
    ) -> dict[str, Any]:
        """``hetero(host=<its host or its kind's default host>, ..., devices=[node])``.

        The level takes the device's name, which the device keeps.
        """
        kind = find_kind("target", node.get("kind"))
        assert kind is not None, "only a device of a known kind is wrapped"
        level = level_around(node, kind)
        if isinstance(level["host"], str):  # its kind's default host, by name
            where = join_path(path, "host")
            level["host"] = self.expand(level["host"], where, "target", stack, depth)
        return level

    def _complete(self, node: object, path: str, depth: int, *, is_root: bool) -> Any:
        """Infer ``hetero`` from ``devices``, wrap a lone root device, fill each level's parts."""
        if not isinstance(node, dict):
            return node
        if "kind" not in node and "devices" in node:
            node["kind"] = "hetero"
        kind = find_kind("target", node.get("kind"))
        if kind is None:
            return node
        if is_root and not kind.is_composite:
            node = self.wrap(node, path, (), depth)
        elif not kind.is_composite:
            return node
        if "host" not in node:
            host = kind.default_host or DEFAULT_HOST
            node["host"] = self.expand(host, join_path(path, "host"), "target", (), depth)
        for key, default in DEFAULTS.items():
            node.setdefault(key, {"kind": default})
        if isinstance(node.get("devices"), list):
            node["devices"] = [
                self._complete(
                    d,
                    item_path(join_path(path, "devices"), device_name(d, i)),
                    depth + 1,
                    is_root=False,
                )
                for i, d in enumerate(node["devices"])
            ]
        return node

    def _string_keys(self, spec: Mapping[Any, Any], path: str) -> dict[str, Any]:
        keys = [k for k in spec if not isinstance(k, str)]
        for key in keys:
            self._add(join_path(path, key), "expected a string key", type(key).__name__)
        return {k: v for k, v in spec.items() if isinstance(k, str)}

    def _add(self, path: str, expected: str, got: str | None = None) -> None:
        self.problems.append(Problem(path, expected, got))


def _targets(tree: object) -> int:
    """The targets of a resolved tree: its levels, hosts and devices."""
    count, todo = 0, [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            count += 1
            todo.append(node.get("host"))
            devices = node.get("devices")
            if isinstance(devices, list):
                todo += devices
    return count


_REMOVED = object()
