"""Problems in the TVM input's terms: a path in a hetsim tree, said as the TVM config writes it.

This module owns `in_tvm_terms`, which says a problem found resolving the spec that a TVM config
reads as where the config has it: the path and option names the input wrote (a composite's
devices by index, a lone device's attributes at the top, ``num-cores`` for ``cores``, ``model``
for a tag it names), and `tag_node`, the canonical node of a tag, which reading changes and whose
devices a path may name. Reading the config is `tvm_config`, what it means `tvm_reader`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.target.resolve import device_name, resolved_device, written_device
from hetsim.target.schema import item_path, join_path
from hetsim.target.tags import TAGS
from hetsim.target.tree import Target
from hetsim.target.tvm_config import config_at, is_list, is_written

__all__ = ["in_tvm_terms", "tag_node"]

_PATH_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[([^\]]*)\]")
"""One part of a config path (`join_path`, `item_path`): a key, or a device's name in brackets."""


def in_tvm_terms(problem: Problem, spec: object, config: Mapping[str, Any]) -> Problem:
    """`problem`, found resolving `spec`, the spec that TVM config `config` reads as, said where
    the config has it (`_tvm_path`)."""
    path = _tvm_path(problem.path, spec, config)
    return Problem(path, problem.expected, problem.got, problem.hint)


def _tvm_path(path: str, spec: object, config: Mapping[str, Any]) -> str:
    """The path in TVM config `config` of `path` in the tree of `spec`: ``devices[dev1].arch`` of a
    composite is ``devices[1].arch``, ``devices[dev0].cores`` of a lone device is ``num-cores``.
    A path that is no config path (a tag file's ``file:line``) is kept.

    >>> spec = {"kind": "hetero", "host": {"kind": "x86-cpu"},
    ...         "devices": [{"kind": "cuda"}, {"kind": "cuda", "arch": 90}]}
    >>> config = {"kind": "composite", "host": {"kind": "llvm", "mtriple": "x86_64-linux-gnu"},
    ...           "devices": [{"kind": "cuda"}, {"kind": "cuda", "arch": 90}]}
    >>> _tvm_path("devices[dev1].arch", spec, config), _tvm_path("host.cores", spec, config)
    ('devices[1].arch', 'host.num-cores')
    """
    parts = [(key, name) for key, name in _PATH_PART.findall(path)]
    if "".join(f".{k}" if k else f"[{n}]" for k, n in parts).removeprefix(".") != path:
        return path
    device = written_device(spec, TAGS)  # a lone device is its level's, under its name
    if device is not None and parts[:2] == _PATH_PART.findall(device):
        parts = parts[2:]
    return _walk(parts, spec, config, "", _tag_node_of(spec))


def _walk(
    parts: list[tuple[str, str]],
    spec: object,
    config: Mapping[str, Any],
    where: str,
    node: Target | None,
) -> str:
    """`where` (the path of `config`) and then `parts`, each the way `config` writes it: a host
    or a device as the config nests it, an attribute by the TVM option it came from."""
    if not parts:
        return where
    (key, _), rest = parts[0], parts[1:]
    spec = spec if isinstance(spec, Mapping) else {}
    if key == "host" and isinstance(config.get("host"), Mapping | str):
        host = config_at(config["host"], "", [])
        if host is not None:
            inner = _tag_node_of(spec.get("host")) or (node.host if node is not None else None)
            return _walk(rest, spec.get("host"), host, join_path(where, "host"), inner)
    if key == "devices" and rest and not rest[0][0]:
        found = _device_part(spec, config, rest[0][1], where, node)
        if found is not None:
            return _walk(rest[1:], *found)
    return _rest(join_path(where, _option_of(key, config)), rest)


def _device_part(
    spec: Mapping[str, Any],
    config: Mapping[str, Any],
    name: str,
    where: str,
    node: Target | None,
) -> tuple[object, Mapping[str, Any], str, Target | None] | None:
    """The spec, config, path and tag node of the device `name` of a level: a composite's by its
    index, the device of a device with a host in place; None where the spec has no such device."""
    devices = spec.get("devices")
    # a tag's devices changed by name: their order is the tag's
    own = node.devices if node is not None and isinstance(devices, Mapping) else ()
    if isinstance(devices, list):
        names = [device_name(_resolved(d), i) for i, d in enumerate(devices)]
    elif own:
        names = [d.name for d in own]
    else:
        return None
    if name not in names:
        return None
    index = names.index(name)
    device = devices[index] if isinstance(devices, list) else spec["devices"].get(name)
    inner = _tag_node_of(device) or (own[index] if own else None)
    if config.get("kind") != "composite":
        return device, config, where, inner
    listed = config.get("devices")
    if not is_list(listed) or index >= len(listed):
        return None
    at = item_path(join_path(where, "devices"), index)
    found = config_at(listed[index], at, [])
    return None if found is None else (device, found, at, inner)


def _resolved(device: object) -> object:
    """A listed device as resolved, which its name is of (a tag may name it)."""
    if not isinstance(device, Mapping):
        return device
    return resolved_device(device, TAGS) or device


def _tag_node_of(spec: object) -> Target | None:
    tag = spec.get("tag") if isinstance(spec, Mapping) else None
    return tag_node(tag) if isinstance(tag, str) else None


def tag_node(tag: str) -> Target | None:
    """The canonical node tag `tag` makes (a device's tag is wrapped in a level at the root);
    None for a name that is no tag, which resolving the spec reports."""
    try:
        root = Target(tag)
    except TargetError:
        return None
    return root if root.tag == tag else root.devices[0]


# hetsim attribute -> the TVM options it is read from, the first one the config has
_SOURCES = {"cores": ("num-cores",), "tag": ("tag", "mcpu", "arch")}


def _option_of(attr: str, config: Mapping[str, Any]) -> str:
    """The TVM option of `config` that hetsim attribute `attr` came from."""
    if attr == "tag" and is_written(config):
        return "model"
    sources = _SOURCES.get(attr, (attr,))
    return next((option for option in sources if config.get(option)), sources[0])


def _rest(where: str, parts: list[tuple[str, str]]) -> str:
    for key, name in parts:
        where = join_path(where, key) if key else item_path(where, name)
    return where
