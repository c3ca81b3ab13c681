"""`Target.override` without resolving again (`hetsim.target.override`) gives the tree that
resolving the edited spec gives: for every attribute of every node of every shipped tag, for
values the schemas accept and values they reject, and for the changes it leaves to resolution."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.errors import TargetError
from hetsim.target import TAGS, Target, register_tag, unregister_tag
from hetsim.target.kinds import find_kind
from hetsim.target.override import is_level_spec, set_attrs
from hetsim.target.values import STRUCTURAL_TYPES
from tests.target.test_properties import TREES, _value

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LEVEL_TAGS = sorted(name for name in TAGS if is_level_spec(name))


def resolved_again(target: Target, changes: Mapping[str, Any]) -> Target | str:
    """What `override` is defined as: the edited spec resolved again (or its error), as
    `override` did before it could set attributes in place."""
    with patch("hetsim.target.tree.set_attrs", return_value=None):
        return overridden(target, changes)


def overridden(target: Target, changes: Mapping[str, Any]) -> Target | str:
    try:
        return target.override(changes)
    except TargetError as err:
        return str(err)


def _places(target: Target) -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(path of keys in a spec, category, kind) of every node and config of the tree."""

    def walk(node: Target, keys: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str, str]]:
        yield keys, "target", node.kind
        if node.is_composite:
            assert node.host is not None
            assert node.executor is not None
            assert node.runtime is not None
            yield from walk(node.host, (*keys, "host"))
            yield (*keys, "executor"), "executor", node.executor.kind
            yield (*keys, "runtime"), "runtime", node.runtime.kind
            for device in node.devices:
                yield from walk(device, (*keys, "devices", device.name))

    yield from walk(target, ())


def _nested(keys: tuple[str, ...], value: Any) -> dict[str, Any]:
    for key in reversed(keys):
        value = {key: value}
    assert isinstance(value, dict)
    return value


def _attribute_changes() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A shipped level tag and one attribute of one of its nodes set to a value its schema
    accepts (or, one time in four, anything)."""

    @st.composite
    def draw_change(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
        tag = draw(st.sampled_from(LEVEL_TAGS))
        keys, category, kind_name = draw(st.sampled_from(list(_places(Target(tag)))))
        kind = find_kind(category, kind_name)
        assert kind is not None
        attrs = [a for a in kind.attrs if a.type not in STRUCTURAL_TYPES]
        attr = draw(st.sampled_from(attrs))
        junk = st.sampled_from([-1, 0, 2.5, "fast", True, [1], {"bandwidth_gbps": -1}])
        value = draw(_value(attr) | junk)
        return tag, _nested((*keys, attr.name), value)

    return draw_change()


@SETTINGS
@given(_attribute_changes())
def test_setting_an_attribute_equals_resolving_the_edited_spec(
    change: tuple[str, dict[str, Any]],
) -> None:
    tag, changes = change
    target = Target(tag)
    fast, slow = overridden(target, changes), resolved_again(target, changes)
    assert fast == slow
    if isinstance(fast, Target):
        assert isinstance(slow, Target)
        assert fast.spec == slow.spec
        assert hash(fast) == hash(slow)
        assert [(p, n.spec) for p, n in fast.walk()] == [(p, n.spec) for p, n in slow.walk()]


@SETTINGS
@given(TREES, st.data())
def test_generated_trees_override_as_they_resolve(spec: Any, data: st.DataObject) -> None:
    target = Target(spec)
    keys, category, kind_name = data.draw(st.sampled_from(list(_places(target))))
    kind = find_kind(category, kind_name)
    assert kind is not None
    attr = data.draw(st.sampled_from([a for a in kind.attrs if a.type not in STRUCTURAL_TYPES]))
    changes = _nested((*keys, attr.name), data.draw(_value(attr)))
    assert overridden(target, changes) == resolved_again(target, changes)


def test_unchanged_nodes_are_shared_and_changed_ones_checked() -> None:
    soc = Target("arm-riscv-soc")
    changes = {"devices": {"vdevice0": {"link": {"bandwidth_gbps": 4}}}}
    faster = soc.override(changes)
    assert faster == resolved_again(soc, changes)
    assert faster.host is soc.host
    assert faster.executor is soc.executor
    vdevice = faster.devices[0]
    assert vdevice.attrs["link"]["bandwidth_gbps"] == 4.0  # checked: the schema's float
    assert vdevice.host is soc.devices[0].host
    assert vdevice.spec == vdevice.export()  # a node below the root: its canonical mapping
    # the shared nodes pickle once for a batch of points
    points = [soc.override({"executor": {"dispatch_us": 0.1 * i}}) for i in range(1, 13)]
    one = len(pickle.dumps(points[0]))
    assert len(pickle.dumps(points)) < 2 * one
    assert pickle.loads(pickle.dumps(points)) == points


@pytest.mark.parametrize(
    "changes",
    [
        {"executor": {"dispatch_us": None}},  # restores the tag's value
        {"executor": {"kind": "graph"}},  # another kind: its defaults
        {"executor": "graph"},
        {"devices": {"vdevice0": {"npu": None}}},
        {"devices": {"vdevice9": {"link": {"bandwidth_gbps": 4}}}},  # unknown device
        {"devices": ["cuda"]},  # a list replaces the devices
        {"host": {"freq_ghz": 0}},  # rejected by the schema: resolution words it
        {"host": "x86-cpu"},
        {"name": "soc"},
        {"tag": "x86-h100"},
        {"bandwith_gbps": 1},
    ],
)
def test_changes_it_leaves_to_resolution_give_what_resolution_gives(
    changes: dict[str, Any],
) -> None:
    soc = Target("arm-riscv-soc")
    assert set_attrs(soc, changes, {}) is None
    assert overridden(soc, changes) == resolved_again(soc, changes)


def test_a_target_written_as_one_device_is_resolved_again() -> None:
    """Its top-level attributes are its device's, not the level's (which has a ``link`` too)."""
    npu = Target({"kind": "npu", "name": "npu"})
    changed = npu.override({"link": {"bandwidth_gbps": 4}})
    assert changed.devices[0].attrs["link"]["bandwidth_gbps"] == 4.0
    assert changed.attrs["link"] == npu.attrs["link"]
    assert not is_level_spec(npu.spec)
    assert is_level_spec("arm-riscv-soc")


def test_a_tree_from_another_registry_version_or_process_is_resolved_again() -> None:
    soc = Target("arm-riscv-soc")
    changes = {"executor": {"dispatch_us": 0.5}}
    loaded = pickle.loads(pickle.dumps(soc))
    assert set_attrs(loaded, changes, {}) is not None  # it could...
    assert loaded.override(changes).devices[0] is not loaded.devices[0]  # ...but may be stale
    assert soc.override(changes).devices[0] is soc.devices[0]
    TAGS.changed()
    assert soc.override(changes).devices[0] is not soc.devices[0]
    assert soc.override(changes) == resolved_again(soc, changes)


@pytest.mark.parametrize("changes", [None, [1], "x86-h100", 3])
def test_changes_that_are_not_a_mapping_are_refused(changes: Any) -> None:
    with pytest.raises(TargetError, match=r"^override: expected a mapping of changes, got "):
        Target("arm-riscv-soc").override(changes)


def test_load_refuses_what_is_not_a_path() -> None:
    with pytest.raises(TargetError, match=r"^load: expected a file path, got 3$"):
        Target.load(3)  # type: ignore[arg-type]


WRAPPED = {"kind": "hetero", "devices": [{"kind": "cuda", "name": "g", "host": "arm-cpu"}]}
"""A device written with its own host: the level ``g`` around the device ``g``."""
TAG_WRAPPED = {
    "kind": "hetero",
    "devices": [{"tag": "nvidia/h100", "name": "g", "host": "arm-cpu"}],
}
"""The same, the device written by its tag (its kind is the tag's)."""


@pytest.mark.parametrize("spec", [WRAPPED, TAG_WRAPPED])
@pytest.mark.parametrize(
    ("changes", "level", "device"),
    [
        ({"link": {"bandwidth_gbps": 4.0}}, {"link": 4.0}, {"link": 63.0}),
        ({"control_latency_us": 9.0}, {"control_latency_us": 9.0}, {}),
        ({"devices": {"g": {"cores": 7}}}, {}, {"cores": 7}),
    ],
)
def test_a_device_with_its_own_host_is_changed_as_the_level_it_becomes(
    spec: dict[str, Any],
    changes: dict[str, Any],
    level: dict[str, float],
    device: dict[str, float],
) -> None:
    # devices[g] is the level: the fast path changed it, while the edited spec changed the
    # written device (the link of the device, not of the level; control_latency_us, an
    # attribute of levels, was "devices[g].devices[g].control_latency_us: unknown attribute")
    target = Target(spec)
    change = {"devices": {"g": changes}}
    fast, slow = overridden(target, change), resolved_again(target, change)
    assert fast == slow == Target(fast.spec)

    def read(node: Target, key: str) -> float:
        value = node.attrs[key]
        return value["bandwidth_gbps"] if key == "link" else value

    (wrapped,) = fast.devices
    (inner,) = wrapped.devices
    assert {key: read(wrapped, key) for key in level} == level
    assert {key: read(inner, key) for key in device} == device


def test_a_device_whose_tag_has_a_host_is_not_wrapped_again() -> None:
    # the tag is a level already: wrapped around the kind's default host, it grew a second
    # level (x86-cpu around arm-cpu), and Target(t.spec) differed from t
    register_tag("lab/hosted", {"kind": "cuda", "host": "arm-cpu"})
    try:
        spec = {"kind": "hetero", "devices": [{"tag": "lab/hosted", "name": "g",
                                               "executor": "graph"}]}  # fmt: skip
        target = Target(spec)
        change = {"devices": {"g": {"control_latency_us": 9.0}}}
        fast, slow = overridden(target, change), resolved_again(target, change)
        assert fast == slow == Target(fast.spec)
        (level,) = fast.devices
        assert (level.host.kind, level.attrs["control_latency_us"]) == ("arm-cpu", 9.0)
        assert [d.kind for d in level.devices] == ["cuda"]
    finally:
        unregister_tag("lab/hosted")


@pytest.mark.parametrize("part", ["host", "executor"])
def test_a_null_part_of_a_tag_goes_back_to_its_default_as_written_in_the_spec(part: str) -> None:
    # merged into the spec {"tag": ...}, the null was dropped, and the tag's part stayed (an
    # arm/cortex-a78 host) where the spec written with it gives the default one (found by a
    # target audit)
    changed = Target("jetson-agx-orin").override({part: None})
    written = Target({"tag": "jetson-agx-orin", part: None})
    assert changed == written
    assert changed.spec == {"tag": "jetson-agx-orin", part: None}
    if part == "host":
        assert (changed.host.kind, changed.host.tag) == ("x86-cpu", None)


def test_attributes_for_a_replaced_device_merge_into_the_replacement() -> None:
    # the second override's attributes replaced the spec's device name, so the spec no longer
    # said what the tree held, and a later override resolving it again brought back the tag's
    # own NPU (found by a target audit)
    replaced = Target("rk3588").override({"devices": {"npu": "arm/cortex-a76"}})
    faster = replaced.override({"devices": {"npu": {"mem_bandwidth_gbps": 100}}})
    expected = {"tag": "arm/cortex-a76", "mem_bandwidth_gbps": 100}
    assert faster.spec == {"tag": "rk3588", "devices": {"npu": expected}}
    assert Target(faster.spec) == faster
    renamed = faster.override({"name": "board"})  # resolves the spec again
    npu = next(d for d in renamed.devices if d.name == "npu")
    assert (npu.tag, npu.attrs["mem_bandwidth_gbps"]) == ("arm/cortex-a76", 100)


@pytest.mark.parametrize(
    ("removed", "changed"),
    [
        ({"host": None}, {"host": {"freq_ghz": 1.0}}),
        (
            {"devices": {"vdevice0": {"link": None}}},
            {"devices": {"vdevice0": {"link": {"latency_us": 5}}}},
        ),
    ],
)
def test_a_change_under_a_null_gives_the_tree_its_spec_gives(
    removed: dict[str, Any], changed: dict[str, Any]
) -> None:
    # the tree was built from the default the null left (an x86-cpu host), while its spec
    # merged the change into the tag's part (a cortex-a72): t != Target(t.spec) (found by a
    # review)
    t = Target("arm-riscv-soc").override(removed).override(changed)
    assert t == Target(t.spec)
