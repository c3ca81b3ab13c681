"""Overriding a built tree: changes merged into its spec as the resolver merges them.

`Target.override` is defined as resolving the edited spec again; `merge_spec` edits the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.target.kinds import category_of
from hetsim.target.resolve import device_name, merge_values
from hetsim.target.schema import closest, item_path, join_path

__all__ = ["merge_spec"]

_NAMING = frozenset({"kind", "tag"})
"""Keys that name what a part is: attributes given with one replace the part."""


def merge_spec(spec: Any, changes: Any, path: str = "") -> Any:
    """`changes` merged into a target spec as `merge_values` merges them, except that a mapping
    of device names merges into a written list of devices, each by its name (as it merges into
    a tag's devices when the resolver reads it), and attributes given for a part written by its
    kind or tag name (``executor: graph``) merge into that part.

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
    if isinstance(spec, str) and isinstance(changes, Mapping) and not changes.keys() & _NAMING:
        spec = {"kind" if category_of(spec) else "tag": spec}  # attributes of a part by name
    if not (isinstance(spec, Mapping) and isinstance(changes, Mapping)):
        return merge_values(spec, changes)
    merged = dict(spec)
    for key, value in changes.items():
        where = join_path(path, key)
        if value is None:
            merged.pop(key, None)
        elif key == "devices" and isinstance(merged.get(key), list) and isinstance(value, Mapping):
            merged[key] = _merge_device_list(merged[key], value, where)
        else:
            merged[key] = merge_spec(merged.get(key), value, where)
    return merged


def _merge_device_list(devices: list[Any], changes: Mapping[Any, Any], path: str) -> list[Any]:
    names = [device_name(d, i) for i, d in enumerate(devices)]
    merged = list(devices)
    for name, value in changes.items():
        if name not in names:
            where = item_path(path, name)
            raise TargetError([Problem(where, "unknown device", hint=closest(name, names))])
        index = names.index(name)
        merged[index] = merge_spec(merged[index], value, item_path(path, name))
    return [d for d in merged if d is not None]
