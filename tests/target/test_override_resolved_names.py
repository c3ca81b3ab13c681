"""`Target.override` names a device as the resolved tree does: by its own name, else the name its
tag gives it, else ``dev<index>``; alike for a spec's written list of devices and for a tag's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hetsim.errors import TargetError
from hetsim.target import Target, register_tag, unregister_tag
from tests.target.test_override import overridden, resolved_again

LIST = {"kind": "hetero", "devices": ["lab/named"]}
"""A level whose device gets its name, ``accel0``, from its tag."""


@pytest.fixture
def named() -> Iterator[None]:
    """``lab/named``, an NPU named by its tag, and ``lab/level``, a level of one of them."""
    register_tag("lab/named", {"kind": "npu", "name": "accel0", "cores": 2})
    try:
        register_tag("lab/level", LIST)
        try:
            yield
        finally:
            unregister_tag("lab/level")
    finally:
        unregister_tag("lab/named")


@pytest.mark.usefixtures("named")
def test_a_device_named_by_its_tag_is_overridden_by_that_name() -> None:
    target = Target(LIST)
    assert [d.name for d in target.devices] == ["accel0"]
    changes = {"devices": {"accel0": {"cores": 3}}}
    changed = target.override(changes)
    assert changed.spec == {"kind": "hetero", "devices": [{"tag": "lab/named", "cores": 3}]}
    assert [(d.name, d.attrs["cores"]) for d in changed.devices] == [("accel0", 3)]
    assert changed == resolved_again(target, changes) == Target(changed.spec)


@pytest.mark.usefixtures("named")
@pytest.mark.parametrize("spec", [LIST, "lab/level"])
def test_both_paths_override_a_device_by_the_name_its_tag_gives(spec: Any) -> None:
    changed = Target(spec).override({"devices": {"accel0": {"cores": 3}}})
    assert [(d.name, d.attrs["cores"]) for d in changed.devices] == [("accel0", 3)]


@pytest.mark.usefixtures("named")
@pytest.mark.parametrize("spec", [LIST, "lab/level"])
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("accel1", "devices[accel1]: unknown device (did you mean 'accel0'?)"),
        ("dev0", "devices[dev0]: unknown device"),  # the device is named accel0
    ],
)
def test_both_paths_refuse_a_name_the_resolved_tree_does_not_have(
    spec: Any, name: str, message: str
) -> None:
    target = Target(spec)
    changes = {"devices": {name: {"cores": 3}}}
    assert overridden(target, changes) == resolved_again(target, changes) == message


@pytest.mark.usefixtures("named")
def test_a_nested_device_named_by_its_tag_is_overridden_by_that_name() -> None:
    spec = {"kind": "hetero", "devices": [{"kind": "hetero", "name": "vdevice0", **LIST}]}
    changed = Target(spec).override(
        {"devices": {"vdevice0": {"devices": {"accel0": {"cores": 3}}}}}
    )
    assert changed.devices[0].devices[0].attrs["cores"] == 3


@pytest.mark.usefixtures("named")
def test_a_name_written_in_the_spec_wins_over_its_tags() -> None:
    target = Target({"kind": "hetero", "devices": [{"tag": "lab/named", "name": "mine"}]})
    assert overridden(target, {"devices": {"accel0": {"cores": 3}}}) == (
        "devices[accel0]: unknown device"
    )
    assert target.override({"devices": {"mine": {"cores": 3}}}).devices[0].attrs["cores"] == 3


@pytest.mark.usefixtures("named")
def test_a_problem_of_a_device_named_by_its_tag_is_located_by_that_name() -> None:
    # located by the name the device had as written: devices[dev0], the other device's name
    spec = {"kind": "hetero", "devices": [
        {"tag": "lab/named", "executor": "no-such-exec", "kind": "cuda"},
        {"kind": "cuda", "name": "dev0"},
    ]}  # fmt: skip
    with pytest.raises(TargetError) as err:
        Target(spec)
    assert str(err.value).splitlines() == [
        "devices[accel0].executor: unknown kind or tag 'no-such-exec'",
        "devices[accel0].kind: expected 'npu' (from tag lab/named), got 'cuda'",
    ]
