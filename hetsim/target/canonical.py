"""Canonical trees: check a resolved tree against the schemas, name devices, fill defaults.

`canonicalize(spec)` is the whole pipeline from a spec (already read into plain data) to the
canonical mapping that `Target` is built from and that `Target.export()` gives back: every node
has its ``kind``, ``name``, ``tag`` (when it came from one) and every attribute of its kind; every
level has its ``host``, ``executor``, ``runtime`` and named ``devices``. Every problem in the spec
is collected and raised together in one `TargetError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.located import locate
from hetsim.target.kinds import REGISTRIES, category_of, find_kind
from hetsim.target.resolve import Resolver, article, device_name, written_device
from hetsim.target.schema import Kind, check_attrs, closest, item_path, join_path
from hetsim.target.sources import nesting_problem
from hetsim.target.tags import TAGS, TagRegistry
from hetsim.target.values import show_value

__all__ = [
    "DEVICE_NAME_PATTERN",
    "HOST_NAME",
    "MEMORY_SUFFIX",
    "as_written",
    "canonicalize",
    "canonicalize_config",
    "locate_in_file",
]

DEVICE_NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_.-]*"
HOST_NAME = "host"
MEMORY_SUFFIX = ".mem"
"""What follows a processor's path in the name of the memory it owns (``gpu0.mem``,
`hetsim.platform.memory_name`): a device may not be named so, or it would share that name."""
META_KEYS = ("kind", "name", "tag")


def canonicalize(spec: object, tags: TagRegistry | None = None) -> dict[str, Any]:
    """The canonical mapping of a target spec (plain data, a name, or a `Target`).

    Parameters
    ----------
    spec
        A kind or tag name, a mapping, or anything with an ``export()`` method.
    tags
        The tag registry to resolve names in (the global one by default).

    Raises
    ------
    TargetError
        With every problem found, each with its path in the tree.

    Examples
    --------
    >>> tree = canonicalize("cuda")
    >>> tree["kind"], tree["host"]["kind"], tree["executor"]["kind"], tree["devices"][0]["name"]
    ('hetero', 'x86-cpu', 'vm', 'dev0')
    """
    too_deep = nesting_problem(spec)
    if too_deep is not None:
        raise TargetError([too_deep])
    resolver = Resolver(TAGS if tags is None else tags)
    tree = resolver.resolve(spec)
    problems = resolver.problems
    canonical = _target(tree, "", problems, role="root")
    if problems or canonical is None:
        raise TargetError(_unique(problems) or [Problem("", "expected a target", repr(spec))])
    return canonical


def canonicalize_config(
    spec: object, category: str, tags: TagRegistry | None = None
) -> dict[str, Any]:
    """The canonical mapping of an executor or runtime spec.

    >>> canonicalize_config({"kind": "vm", "dispatch_us": 1}, "executor")
    {'kind': 'vm', 'dispatch_us': 1.0, 'is_static': False}
    """
    too_deep = nesting_problem(spec)
    if too_deep is not None:
        raise TargetError([too_deep])
    resolver = Resolver(TAGS if tags is None else tags)
    node = resolver.expand(spec, "", category, (), 0)
    problems = resolver.problems
    config = _config(node, "", category, problems)
    if problems or config is None:
        fallback = Problem("", f"expected {article(category)}", repr(spec))
        raise TargetError(_unique(problems) or [fallback])
    return config


def locate_in_file(
    problems: Iterable[Problem], file: Path, spec: object, tags: TagRegistry | None = None
) -> list[Problem]:
    """The `problems` of `spec`, the target or config read from `file`, as the file writes them:
    each led by ``file:line`` (`hetsim.located.locate`), and, for a file written as one device,
    without the ``devices[dev0].`` that canonicalization puts it under (the device is the file).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = Path(folder) / "gpu.yaml"
    ...     _ = file.write_text("kind: cuda\\ncores: -1\\n")
    ...     problem = Problem("devices[dev0].cores", "expected an integer >= 1", "-1")
    ...     [p.message.replace(folder, "...") for p in
    ...      locate_in_file([problem], file, {"kind": "cuda", "cores": -1})]
    ['.../gpu.yaml:2: cores: expected an integer >= 1, got -1']
    """
    return locate(as_written(problems, spec, tags), file)


def as_written(
    problems: Iterable[Problem], spec: object, tags: TagRegistry | None = None
) -> list[Problem]:
    """The `problems` of `spec` with their paths as the spec writes them: for a target written
    as one device, without the ``devices[dev0].`` that canonicalization puts it under (its
    attributes are at its top, where `Target.override` takes them too); each once (a level's
    problem and its device's may meet).

    >>> problem = Problem("devices[dev0].cores", "expected an integer >= 1", "-1")
    >>> [p.message for p in as_written([problem], {"kind": "cuda", "cores": -1})]
    ['cores: expected an integer >= 1, got -1']
    >>> [p.message for p in as_written([problem], {"devices": [{"kind": "cuda", "cores": -1}]})]
    ['devices[dev0].cores: expected an integer >= 1, got -1']
    """
    device = written_device(spec, TAGS if tags is None else tags)
    if device is not None:
        problems = [_below(p, device) for p in problems]
    return list(dict.fromkeys(problems))


def _below(problem: Problem, device: str) -> Problem:
    """`problem` with its path taken below `device` (unchanged when not under it)."""
    if problem.path != device and not problem.path.startswith(f"{device}."):
        return problem
    path = problem.path.removeprefix(device).removeprefix(".")
    return Problem(path, problem.expected, problem.got, problem.hint)


def _unique(problems: list[Problem]) -> list[Problem]:
    """Each problem once, in path order (problems found apart in time read together)."""
    return sorted(dict.fromkeys(problems), key=lambda p: p.path)


_NAMING_KEYS = ("kind", "tag", "devices")
"""The keys that say what a node is (``devices`` alone: a ``hetero`` level)."""


def _neither(node: dict[str, Any], path: str) -> Problem:
    """A node with no kind or tag; a key that misspells one of `_NAMING_KEYS` (``tga``,
    ``device``) is named with it, as an unknown attribute is with the one it misspells.

    >>> _neither({"name": "g", "tga": "nvidia/h100"}, "devices[g]").message
    "devices[g]: expected a 'kind' or a 'tag', got neither, and key 'tga' (did you mean 'tag'?)"
    """
    for key in node:
        hint = closest(key, _NAMING_KEYS)
        if hint is not None and key != hint:
            return Problem(path, "expected a 'kind' or a 'tag'", f"neither, and key {key!r}", hint)
    return Problem(path, "expected a 'kind' or a 'tag'", "neither")


def _kind(node: dict[str, Any], path: str, category: str, problems: list[Problem]) -> Kind | None:
    """The node's kind, or None after recording why it has none."""
    name = node.get("kind")
    kind = find_kind(category, name)
    if kind is not None:
        return kind
    where = join_path(path, "kind")
    if "kind" not in node:
        problems.append(_neither(node, path))
    elif not isinstance(name, str):
        problems.append(Problem(where, f"expected {article(category)} kind name", repr(name)))
    elif (other := category_of(name)) is not None and isinstance(node.get("tag"), str):
        # the tag the user wrote made it (an executor's tag, tvm/relax-vm): named, and its line
        expected = f"expected {article(category)} tag (a platform's or a device's)"
        got = f"{other} tag {node['tag']!r} (of kind {name!r})"
        problems.append(Problem(join_path(path, "tag"), expected, got))
    elif other is not None:
        expected = f"expected {article(category)} kind"
        problems.append(Problem(where, expected, f"{other} kind {name!r}"))
    else:
        hint = closest(name, REGISTRIES[category])
        problems.append(Problem(where, f"unknown kind {name!r}", hint=hint))
    return None


def _lookup(category: str, name: str) -> Kind | None:
    return find_kind(category, name)


def _target(node: object, path: str, problems: list[Problem], role: str) -> dict[str, Any] | None:
    """Check one resolved target node and its subtree; its canonical mapping or None."""
    if not isinstance(node, dict):
        return None
    kind = _kind(node, path, "target", problems)
    if kind is None:
        return None
    before = len(problems)
    name = _name(node, path, role, problems)
    structure = ("host", "executor", "runtime", "devices") if kind.is_composite else ()
    values = {k: v for k, v in node.items() if k not in META_KEYS and k not in structure}
    attrs, found = check_attrs(kind, values, path)
    problems += found
    result: dict[str, Any] = {"kind": kind.name, "name": name}
    if node.get("tag"):
        result["tag"] = node["tag"]
    result |= attrs
    if kind.is_composite:
        result |= _level(node, path, problems)
    view = _with_host_kind(result, node) if kind.is_composite else result
    for rule in kind.rules:
        # a rule that reads attribute values needs them valid; one that reads only a level's
        # parts (each None when it had problems) runs anyway, so that every problem is reported
        if not found or not rule.reads_attrs:
            problems += rule.check(view, path, _lookup)
    return result if len(problems) == before else None


def _with_host_kind(result: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`result` for a level's rules: a host that had problems of its own, but has a kind,
    stands in as its kind and tag (whether it can host does not depend on its values)."""
    host = node.get("host")
    if result.get("host") is not None or not isinstance(host, dict):
        return result
    kind = find_kind("target", host.get("kind"))
    if kind is None:
        return result
    stub = {"kind": kind.name} | ({"tag": host["tag"]} if host.get("tag") else {})
    return result | {"host": stub}


def _name(node: dict[str, Any], path: str, role: str, problems: list[Problem]) -> str:
    name = node.get("name", {"root": "", "host": HOST_NAME}.get(role))
    where = join_path(path, "name")
    if role == "host" and name != HOST_NAME:
        problems.append(
            Problem(where, f"expected {HOST_NAME!r} (a host is always named so)", show_value(name))
        )
    elif role == "root" and name == "":
        return ""
    elif not isinstance(name, str) or not re.fullmatch(DEVICE_NAME_PATTERN, name):
        problems.append(
            Problem(where, f"expected a name matching {DEVICE_NAME_PATTERN!r}", show_value(name))
        )
    elif role == "device" and name == HOST_NAME:
        # processors are named by path: a device 'host' would be its level's host ('host',
        # 'vdevice0/host'), and the platform would keep one of the two
        expected = f"expected a name other than {HOST_NAME!r} (the level's host is named so)"
        problems.append(Problem(where, expected, repr(name)))
    elif role == "device" and name.endswith(MEMORY_SUFFIX):
        # processors and memories share one namespace (the platform graph, traces, reports):
        # a device 'gpu0.mem' next to a device 'gpu0' would be that device's memory
        expected = f"expected a name not ending in {MEMORY_SUFFIX!r} (memories are named so)"
        problems.append(Problem(where, expected, repr(name)))
    return name if isinstance(name, str) else ""


def _level(node: dict[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """A level's host, executor, runtime and devices, each checked."""
    result: dict[str, Any] = {
        "host": _target(node.get("host"), join_path(path, "host"), problems, role="host"),
        "executor": _config(
            node.get("executor"), join_path(path, "executor"), "executor", problems
        ),
        "runtime": _config(node.get("runtime"), join_path(path, "runtime"), "runtime", problems),
    }
    where = join_path(path, "devices")
    devices = node.get("devices")
    if devices is None and "devices" in node:
        result["devices"] = []  # resolving them failed, and said why
        return result
    if not isinstance(devices, list) or not devices:
        got = "none" if devices is None else repr(devices)
        problems.append(Problem(where, "expected at least one device", got))
        result["devices"] = []
        return result
    names = [device_name(d, i) for i, d in enumerate(devices)]
    first: dict[str, int] = {}
    result["devices"] = []
    for index, (name, device) in enumerate(zip(names, devices, strict=True)):
        # a device named '' (an exported root) is found by its index: 'devices[]' names none
        at = item_path(where, name if name else index)
        if first.setdefault(name, index) != index:
            # a repeat is found by its index: its name would lead to the first one's lines
            at = item_path(where, index)
            problems.append(
                Problem(
                    at,
                    "expected unique device names",
                    f"{name!r} again (the name of {item_path(where, first[name])})",
                )
            )
        if isinstance(device, dict):
            device = {**device, "name": device.get("name", name)}
        result["devices"].append(_target(device, at, problems, "device"))
    return result


def _config(
    node: object, path: str, category: str, problems: list[Problem]
) -> dict[str, Any] | None:
    """Check an executor or runtime node; its canonical mapping or None."""
    if not isinstance(node, dict):
        return None
    kind = _kind(node, path, category, problems)
    if kind is None:
        return None
    values = {k: v for k, v in node.items() if k not in ("kind", "tag")}
    attrs, found = check_attrs(kind, values, path)
    problems += found
    result: dict[str, Any] = {"kind": kind.name}
    if node.get("tag"):
        result["tag"] = node["tag"]
    return result | attrs
