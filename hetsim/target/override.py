"""Overriding a built tree: changes merged into its spec, or set on its nodes without resolving.

`Target.override` is defined as resolving the edited spec again; `merge_spec` edits the spec.
When the changes only set attribute values of nodes the tree has (a sweep's
``executor.dispatch_us`` or ``devices[vdevice0].link.bandwidth_gbps``), the result is the tree
with those nodes' attributes merged, checked by their kinds' schemas and rules as
canonicalization checks them, and every other node shared: `set_attrs` builds that, and answers
None whenever it cannot vouch for equal trees, so that the caller resolves the spec as before.
Resolving ``arm-riscv-soc`` again for each of a sweep's points took 0.34 ms (docs/targets.md);
the shared nodes also pickle once per batch of points sent to a Dask worker.

The two agree because canonicalization works node by node: a node's attributes are its
explicit values over its kind's static defaults (`hetsim.target.schema.check_attrs`), and its
kind's rules read its canonical mapping. `set_attrs` declines, among others: a ``None`` anywhere
(it restores the value a tag gives, which a built tree no longer tells apart), a ``kind``,
``tag`` or ``name``, an unknown device or attribute, a spec whose top is written as one device
(its attributes belong to ``devices[dev0]``), a tree built before the tag registry changed, and
any value a schema or rule rejects (the full resolution words the problem).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hetsim.errors import Problem, TargetError
from hetsim.target.frozen import freeze, thaw
from hetsim.target.kinds import category_of, find_kind
from hetsim.target.resolve import (
    LEVEL_KEYS,
    Resolver,
    device_name,
    level_around,
    merge_values,
    resolved_device,
)
from hetsim.target.schema import Kind, check_attrs, closest, item_path, join_path
from hetsim.target.tags import TAGS

if TYPE_CHECKING:
    from hetsim.target.tree import Config, Target

__all__ = ["is_level_spec", "merge_spec", "set_attrs", "sets_under_null"]

_NOT_ATTRS = frozenset({"kind", "name", "tag", "host", "executor", "runtime", "devices"})
"""Keys that are a node's identity or structure, never one of its attributes."""
_NAMING = frozenset({"kind", "tag"})
"""Keys that name what a part is: attributes given with one replace the part."""
_PARTS = frozenset({"host", "executor", "runtime"})
"""A level's parts, each of which a spec may write by its kind or tag name."""
_TAG_CHAIN = 16
"""The most tag references `is_level_spec` follows (a registered tag chain is far shorter)."""


class _Decline(Exception):
    """The changes are not plain attribute values of existing nodes: resolve the spec again."""


def merge_spec(spec: Any, changes: Any, path: str = "") -> Any:
    """`changes` merged into a target spec as `merge_values` merges them, except that a mapping
    of device names merges into a written list of devices, each by the name it has in the
    resolved tree (as it merges into a tag's devices when the resolver reads it), attributes
    given for a part written by its kind or tag name (``executor: graph``) merge into that part,
    and a ``None`` stays in the spec: there it removes the value a tag gives too (dropped, a
    tag's ``host`` stayed where ``{"tag": ..., "host": None}`` gives the default one).

    Raises
    ------
    TargetError
        A device name the list does not have.

    Examples
    --------
    >>> spec = {"kind": "hetero", "devices": ["cuda", {"kind": "npu", "name": "npu"}]}
    >>> merge_spec(spec, {"devices": {"dev0": {"sync_us": 2}, "npu": {"cores": 2}}})["devices"]
    [{'kind': 'cuda', 'sync_us': 2}, {'kind': 'npu', 'name': 'npu', 'cores': 2}]
    """
    if not (isinstance(spec, Mapping) and isinstance(changes, Mapping)):
        return merge_values(spec, changes)
    merged = dict(spec)
    for key, value in changes.items():
        where = join_path(path, key)
        if value is None:  # kept, not dropped: it removes what a tag under the spec gives too
            merged[key] = None
        elif key == "devices" and isinstance(value, Mapping):
            merged[key] = _merge_devices(merged.get(key), value, where)
        elif key in _PARTS:
            merged[key] = merge_spec(_by_name(merged.get(key), value), value, where)
        else:
            merged[key] = merge_spec(merged.get(key), value, where)
    return merged


def _by_name(part: Any, changes: Any) -> Any:
    """A part written by its kind or tag name as a mapping, when `changes` sets attributes of it."""
    if isinstance(part, str) and isinstance(changes, Mapping) and not changes.keys() & _NAMING:
        return {"kind" if category_of(part) else "tag": part}
    return part


def _merge_device_list(devices: list[Any], changes: Mapping[Any, Any], path: str) -> list[Any]:
    names = [_resolved_name(d, i) for i, d in enumerate(devices)]
    merged = list(devices)
    for name, value in changes.items():
        if name not in names:
            where = item_path(path, name)
            raise TargetError([Problem(where, "unknown device", hint=closest(name, names))])
        index = names.index(name)
        device = _as_level(merged[index])  # changes address the level it becomes, if any
        merged[index] = merge_spec(_by_name(device, value), value, item_path(path, name))
    return [d for d in merged if d is not None]


def _merge_devices(devices: Any, changes: Mapping[Any, Any], path: str) -> Any:
    """A mapping of device names merged into a spec's devices: into a written list by each
    device's resolved name (`_merge_device_list`), and into a mapping of a tag's devices by
    name, each into the device as the spec writes it: attributes for a device it replaced by a
    kind or tag name merge into that replacement (merged as plain values, they had dropped the
    name, and the tag's own device came back)."""
    if isinstance(devices, list):
        return _merge_device_list(devices, changes, path)
    if not isinstance(devices, Mapping):
        return merge_values(devices, changes)
    merged = dict(devices)
    for name, value in changes.items():
        where = item_path(path, name)
        merged[name] = merge_spec(_by_name(merged.get(name), value), value, where)
    return merged


def _resolved_name(device: object, index: int) -> str:
    """The name written `device` has in the resolved tree: its own, else its tag's, else
    ``dev<index>``; as written when it does not resolve (resolving the spec says why)."""
    node = Resolver(TAGS).expand(device, "", "target", (), 0)
    return device_name(node if node is not None else device, index)


def is_level_spec(spec: object) -> bool:
    """Whether `spec`'s top is a level, told from its kind or tag without resolving it.

    A spec written as one device (``cuda``, ``{"tag": "nvidia/h100"}``) has that device's
    attributes at its top, which its canonical tree holds under ``devices[dev0]``. False when in
    doubt.

    >>> is_level_spec("arm-riscv-soc"), is_level_spec({"kind": "cuda"}), is_level_spec({})
    (True, False, False)
    """
    kind = _written_kind(spec)
    return kind is not None and kind.is_composite


def _written_kind(spec: object) -> Kind | None:
    """The kind `spec`'s top has, told from its ``kind``, else the tags it names (at most
    `_TAG_CHAIN` of them), else ``hetero`` for a mapping with devices; None when in doubt."""
    for _ in range(_TAG_CHAIN):
        if isinstance(spec, str):
            kind = find_kind("target", spec)
            if kind is not None:
                return kind
            name = TAGS.find(spec)
            if name is None:
                return None
            spec = TAGS.get(name).data
        elif isinstance(spec, Mapping):
            if "kind" in spec:
                return find_kind("target", spec["kind"])
            if "tag" not in spec:
                return find_kind("target", "hetero") if "devices" in spec else None
            spec = spec["tag"]
        else:
            return None
    return None


def _as_level(device: Any) -> Any:
    """A written device given its own host, executor or runtime, as the level it becomes
    (`hetsim.target.resolve.level_around`: ``devices[g]`` is that level in the tree, and in a
    tag's devices); any other device as it is. By its kind or by its tag's (``{tag:
    nvidia/h100, host: arm-cpu}`` becomes a level too)."""
    if not isinstance(device, Mapping) or not any(key in device for key in LEVEL_KEYS):
        return device
    # as resolved: a tag that gives its device a host is a level already, whose own host the
    # changes address (wrapped again, it had grown a second level)
    node = resolved_device(device, TAGS)
    kind = find_kind("target", node.get("kind")) if node is not None else None
    return device if kind is None or kind.is_composite else level_around(device, kind)


def sets_under_null(spec: Any, changes: Any) -> bool:
    """Whether `changes` set a value under a key that `spec` holds as ``None`` (a part or a
    value removed back to its default): resolving the merged spec then reads the change over
    what the spec says now, where the tree holds the default, so `set_attrs` must not build it
    from the tree (the two had disagreed: ``host: None``, then ``host: {freq_ghz: 1}``).

    >>> sets_under_null({"tag": "t", "host": None}, {"host": {"freq_ghz": 1.0}})
    True
    >>> sets_under_null({"tag": "t", "host": {"cores": 2}}, {"host": {"freq_ghz": 1.0}})
    False
    """
    if not (isinstance(spec, Mapping) and isinstance(changes, Mapping)):
        return False
    return any(
        (key in spec and spec[key] is None) or sets_under_null(spec.get(key), value)
        for key, value in changes.items()
    )


def set_attrs(root: Target, changes: Mapping[str, Any], spec: Any) -> Target | None:
    """`root` with `changes` merged into its nodes' attributes and `spec` as its spec, or None
    (see the module doc). A changed node below the root gets its canonical mapping as its spec,
    as `Target` gives one."""
    try:
        changed = _node(root, changes, "")
    except _Decline:
        return None
    return changed._replace(spec=spec)


def _node(node: Target, changes: Mapping[str, Any], path: str) -> Target:
    kind = find_kind("target", node.kind)
    if kind is None or not isinstance(changes, Mapping) or not changes:
        raise _Decline
    host, executor, runtime, devices = node.host, node.executor, node.runtime, node.devices
    attrs: dict[str, Any] = {}
    for key, value in changes.items():
        if value is None or not isinstance(key, str) or key in ("kind", "name", "tag"):
            raise _Decline
        where = join_path(path, key)
        if key not in _NOT_ATTRS:
            attrs[key] = value
        elif not kind.is_composite:
            raise _Decline
        elif key == "host":
            assert host is not None, "a level has a host"
            host = _node(host, value, where)
        elif key == "executor":
            executor = _config(executor, value, where, "executor")
        elif key == "runtime":
            runtime = _config(runtime, value, where, "runtime")
        else:
            devices = _devices(devices, value, where)
    merged = node.attrs
    if attrs:
        merged = freeze(_checked(kind, merge_values(thaw(node.attrs), attrs), path))
    parts = {"attrs": merged, "host": host, "executor": executor, "runtime": runtime}
    mapping = node._replace(**parts, devices=devices).export()
    for rule in kind.rules:
        if rule.check(mapping, path, find_kind):
            raise _Decline
    return node._replace(**parts, devices=devices, spec=mapping)


def _devices(devices: tuple[Target, ...], changes: object, path: str) -> tuple[Target, ...]:
    if not isinstance(changes, Mapping):
        raise _Decline  # a list replaces the devices: resolved again
    names = [device.name for device in devices]
    changed = list(devices)
    for name, value in changes.items():
        if name not in names:
            raise _Decline
        index = names.index(name)
        changed[index] = _node(changed[index], value, item_path(path, name))
    return tuple(changed)


def _config(config: Config | None, changes: object, path: str, category: str) -> Config:
    if config is None or not isinstance(changes, Mapping) or not changes:
        raise _Decline
    if any(value is None or key in ("kind", "tag") for key, value in changes.items()):
        raise _Decline
    kind = find_kind(category, config.kind)
    if kind is None:
        raise _Decline
    values = _checked(kind, merge_values(thaw(config.attrs), dict(changes)), path)
    return dataclasses.replace(config, attrs=freeze(values))


def _checked(kind: Kind, values: dict[str, Any], path: str) -> dict[str, Any]:
    """`values` as the kind's schema checks them; declines on any problem."""
    checked, problems = check_attrs(kind, values, path)
    if problems:
        raise _Decline
    return checked
