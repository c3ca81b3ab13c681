"""TVM interop round trips of changed tags, and TVM tags in the dict form TVM exports.

`tests/target/test_tvm.py` covers each direction alone; these tests write a tree, read it back
(as a config dict and, where apache-tvm is installed, through ``tvm.target.Target``) and compare
trees, and simulated makespans where a lost value changed them.
"""

from __future__ import annotations

from typing import Any

import pytest

from hetsim import simulate
from hetsim.errors import TargetError
from hetsim.target import Target
from hetsim.target.tvm_names import TVM_TAG_OPTIONS, TVM_TAGS
from hetsim.target.tvm_reader import tvm_to_spec


def _failure(config: object) -> str:
    with pytest.raises(TargetError) as caught:
        tvm_to_spec(config)
    return str(caught.value)


def _through_tvm(target: Target) -> Target:
    tvm = pytest.importorskip("tvm")
    return Target.from_tvm(tvm.target.Target(target.to_tvm()))


# A part of a tag replaced by a plain kind, and a nested level of a tag changed: each came back
# as the tag's own part (an RK3588 NPU, a Xeon 8480C host), or with its devices renamed dev0.
CHANGED = [
    {"tag": "rk3588", "devices": {"npu": "npu"}},
    {"tag": "x86-h100", "host": "x86-cpu"},
    {"tag": "x86-h100", "devices": {"gpu0": "cuda"}},
    {"tag": "jetson-agx-orin", "host": "arm-cpu"},
    {"tag": "two-node-h100", "devices": {"node1": {"devices": {"gpu0": "cuda"}}}},
    {"tag": "nxp-imx93", "devices": {"vdevice0": {"host": {"cores": 2}}}},
    {"tag": "arm-riscv-soc", "devices": {"vdevice0": {"host": {"cores": 2}}}},
    {"tag": "arm-riscv-soc", "devices": {"vdevice0": {"host": "riscv/spacemit-x60"}}},
    {"tag": "arm-riscv-soc", "devices": {"vdevice0": {"devices": {"npu": "nvidia/nvdla"}}}},
    {"tag": "two-node-h100", "devices": {"node1": {"host": {"cores": 8}}}},
    {"tag": "arm/cortex-a72", "mattr": ["+neon", "+crc"]},
    {"tag": "arm/cortex-a72", "mtriple": "armv7l-linux-gnueabihf"},
    {"tag": "arm/cortex-a72", "mcpu": "cortex-a73"},
    {"tag": "nvidia/h100", "arch": "sm_80"},
    {"tag": "x86-h100", "devices": {"gpu0": {"arch": "sm_80"}}},
]
IDS = [
    "plain-npu", "plain-host", "plain-gpu", "plain-arm-host", "nested-plain-gpu",
    "nested-host-cores", "nested-host-cores-named-npu", "nested-host-tag", "nested-device-tag",
    "nested-tag-host", "mattr", "mtriple", "mcpu", "arch", "platform-device-arch",
]  # fmt: skip


@pytest.mark.parametrize("spec", CHANGED, ids=IDS)
def test_a_changed_tag_reads_back_as_the_same_tree(spec: dict[str, Any]) -> None:
    target = Target(spec)
    assert Target.from_tvm(target.to_tvm()) == target


@pytest.mark.parametrize("spec", CHANGED, ids=IDS)
def test_a_changed_tag_reads_back_through_tvm_as_the_same_tree(spec: dict[str, Any]) -> None:
    target = Target(spec)
    assert _through_tvm(target) == target


@pytest.mark.parametrize(
    ("spec", "model"),
    [
        ({"tag": "rk3588", "devices": {"npu": "npu"}}, "cnn"),  # 61.02 us, 89.93 read back
        ({"tag": "nxp-imx93", "devices": {"vdevice0": {"host": {"cores": 2}}}}, "cnn_int8"),
    ],
    ids=["plain-npu", "nested-host-cores"],
)
def test_a_changed_tag_read_back_simulates_the_same(spec: dict[str, Any], model: str) -> None:
    target = Target(spec)
    before = simulate(model, target).makespan_us
    assert simulate(model, Target.from_tvm(target.to_tvm())).makespan_us == before


def test_a_plain_kind_that_cannot_replace_a_tags_part_is_an_error_not_the_tag() -> None:
    # a plain x86-cpu with 4 cores in place of the Xeon: a spec says it only as the Xeon's change
    host = {"kind": "llvm", "mtriple": "x86_64-linux-gnu", "num-cores": 4, "model": "hetsim:"}
    assert _failure(dict(Target("x86-h100").to_tvm(), host=host)) == (
        "host: expected a tag, another kind or 'x86-cpu' with its defaults in place of tag "
        "'x86/xeon-8480c' (a x86-cpu that sets more merges into the tag), got "
        "{'kind': 'x86-cpu', 'cores': 4}"
    )


def test_a_nested_tag_reads_back_as_changes_of_its_level() -> None:
    target = Target({"tag": "nxp-imx93", "devices": {"vdevice0": {"host": {"cores": 2}}}})
    assert tvm_to_spec(target.to_tvm()) == {
        "tag": "nxp-imx93",
        "kind": "hetero",
        "devices": {"vdevice0": {"host": {"cores": 2}}},
    }


@pytest.mark.parametrize("devices", [5, True, "cuda", {"a": 1}])
def test_devices_of_a_written_tag_that_are_no_list_are_an_error(devices: object) -> None:
    config = dict(Target("x86-h100").to_tvm(), devices=devices)
    assert _failure(config) == f"devices: expected a list, got {devices!r}"


# --- TVM tags ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "tag"), sorted(TVM_TAGS.items()))
def test_a_tvm_tag_in_dict_form_reads_as_its_name(name: str, tag: str) -> None:
    # TVM's export keeps the tag and adds its options: arch 'sm_90a' was refused as an override
    tvm = pytest.importorskip("tvm")
    assert tvm_to_spec(tvm.target.Target({"tag": name})) == {"tag": tag}
    assert tvm_to_spec(dict(TVM_TAG_OPTIONS[name], tag=name)) == {"tag": tag}


OPTIONS = ("arch", "mtriple", "mcpu", "mattr", "num-cores")


def _options(attrs: Any) -> dict[str, Any]:
    """The options of a real TVM target's attrs that are no code generation only, as plain data."""
    options: dict[str, Any] = {}
    for key in OPTIONS:
        if key in attrs:
            value = attrs[key]
            plain = int(value) if key == "num-cores" else str(value)
            options[key] = [str(v) for v in value] if key == "mattr" else plain
    return options


@pytest.mark.parametrize("name", sorted(TVM_TAGS))
def test_the_tvm_tag_options_are_those_tvm_gives_the_tag(name: str) -> None:
    tvm = pytest.importorskip("tvm")
    real = tvm.target.Target(name)
    own = _options(real.attrs)
    if real.host is not None:
        own["host"] = {"kind": str(real.host.kind.name), **_options(real.host.attrs)}
    assert own == TVM_TAG_OPTIONS[name]


def test_a_tvm_tag_option_other_than_its_own_is_still_an_error() -> None:
    assert _failure({"tag": "arm/rasp4b", "mattr": ["+neon", "+crc"]}) == (
        "mattr: expected only host or num-cores to override TVM tag 'arm/rasp4b', "
        "got ['+neon', '+crc']"
    )


JETSON_HOST = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a78",
               "num-cores": 8}  # fmt: skip


def test_a_platform_tvm_tag_with_a_host_changes_the_platforms_host() -> None:
    # it nested the whole Jetson in a new level under a second A78
    config = {"tag": "nvidia/jetson-agx-orin-64gb", "host": JETSON_HOST}
    assert tvm_to_spec(config) == {"tag": "jetson-agx-orin", "host": {"cores": 8}}


def test_a_platform_tvm_tag_with_a_host_changes_it_through_tvm() -> None:
    tvm = pytest.importorskip("tvm")
    config = {"tag": "nvidia/jetson-agx-orin-64gb", "host": JETSON_HOST}
    expected = Target({"tag": "jetson-agx-orin", "host": {"cores": 8}})
    assert Target.from_tvm(tvm.target.Target(config)) == expected


def test_a_platform_tvm_tag_with_another_host_tag_replaces_it() -> None:
    host = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"}
    config = {"tag": "nvidia/jetson-agx-orin-64gb", "host": host}
    assert tvm_to_spec(config) == {"tag": "jetson-agx-orin", "host": {"tag": "arm/cortex-a72"}}
