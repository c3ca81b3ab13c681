"""Every input form reaches the same canonical tree; wrapping, naming, defaults, export, values."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest

from hetsim.errors import TargetError
from hetsim.target import Target, canonicalize
from hetsim.target.frozen import FrozenMap
from hetsim.target.tree import Config

SEED = {
    "kind": "hetero",
    "host": {"kind": "arm-cpu", "cores": 4, "freq_ghz": 1.5},
    "executor": "vm",
    "devices": [
        {
            "name": "vdevice0",
            "kind": "hetero",
            "host": "riscv-cpu",
            "executor": "graph",
            "link": {"bandwidth_gbps": 8, "latency_us": 2},
            "devices": [{"kind": "npu", "name": "npu"}],
        }
    ],
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_kind_name_dict_json_and_target_reach_the_same_tree() -> None:
    by_name = Target("cuda")
    assert Target({"kind": "cuda"}) == by_name
    assert Target('{"kind": "cuda"}') == by_name
    assert Target(by_name) is by_name
    assert Target(" cuda ") == by_name


def test_yaml_json_and_toml_files_reach_the_same_tree(tmp_path: Path) -> None:
    expected = Target({"kind": "cuda", "name": "gpu0", "launch_us": 4.0})
    files = [
        _write(tmp_path / "t.yaml", "kind: cuda\nname: gpu0\nlaunch_us: 4.0\n"),
        _write(tmp_path / "t.yml", "kind: cuda\nname: gpu0\nlaunch_us: 4\n"),
        _write(tmp_path / "t.json", '{"kind": "cuda", "name": "gpu0", "launch_us": 4}'),
        _write(tmp_path / "t.toml", 'kind = "cuda"\nname = "gpu0"\nlaunch_us = 4.0\n'),
    ]
    for path in files:
        assert Target.load(path) == expected
        assert Target(str(path)) == expected


def test_a_target_file_may_describe_itself_as_a_tag_file_does(tmp_path: Path) -> None:
    """`hetsim calibrate --out FILE` writes a tag file; it works as ``--target FILE`` too."""
    described = _write(tmp_path / "gpu.yaml", "description: my GPU\nkind: cuda\nlaunch_us: 4\n")
    assert Target(str(described)) == Target({"kind": "cuda", "launch_us": 4.0})
    bad = _write(tmp_path / "bad.yaml", "description: [1]\nkind: cuda\n")
    with pytest.raises(TargetError) as err:
        Target(str(bad))
    assert str(err.value) == f"{bad}:1: description: expected a string, got [1]"


def test_a_dict_or_json_target_may_describe_itself_as_a_file_does(tmp_path: Path) -> None:
    # the same content as a file loaded; as a dict or a JSON string it was "devices[dev0].
    # description: unknown attribute (did you mean 'description'?)"
    spec = {"description": "my GPU", "kind": "cuda", "launch_us": 4}
    described = _write(tmp_path / "gpu.json", json.dumps(spec))
    assert Target(spec) == Target(json.dumps(spec)) == Target(str(described))
    assert Target(spec) == Target({"kind": "cuda", "launch_us": 4.0})
    with pytest.raises(TargetError) as err:
        Target({"description": 3, "kind": "cuda"})
    assert str(err.value) == "description: expected a string, got 3"


def test_a_key_no_kind_of_that_node_takes_is_not_hinted_as_itself() -> None:
    # "devices[dev0].devices: unknown attribute (did you mean 'devices'?)": a plain device has
    # no devices, and the hint named the very key it refused
    with pytest.raises(TargetError) as err:
        Target({"kind": "cuda", "devices": ["npu"]})
    assert str(err.value) == "devices: unknown attribute"


CORES = "cores: expected an integer >= 1, got -1"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Target({"kind": "cuda", "cores": -1, "name": "gpu"}), CORES),
        (lambda: Target('{"tag": "nvidia/h100", "cores": -1}'), CORES),
        (lambda: Target("cuda").override({"cores": -1}), CORES),
        (
            lambda: Target({"kind": "npu"}).override({"link": {"latency_us": -1}}),
            "link.latency_us: expected a non-negative number, got -1",
        ),
    ],
)
def test_a_target_written_as_one_device_names_paths_as_written(
    build: Callable[[], Target], message: str
) -> None:
    # data said devices[dev0].cores (devices[gpu].cores), the canonical tree's path, which no
    # spec or change may write (override refuses devices[dev0]); a file already said cores
    with pytest.raises(TargetError) as err:
        build()
    assert str(err.value) == message


def test_single_device_becomes_a_level_with_its_kinds_default_host() -> None:
    t = Target("cuda")
    assert (t.kind, t.name, t.is_composite, t.keys) == ("hetero", "", True, ("hetero",))
    assert (t.host.kind, t.host.name, t.executor.kind, t.runtime.kind) == (  # type: ignore[union-attr]
        "x86-cpu",
        "host",
        "vm",
        "cpp",
    )
    assert [(d.kind, d.name, d.is_composite) for d in t.devices] == [("cuda", "dev0", False)]
    assert Target("npu").host.kind == "riscv-cpu"  # type: ignore[union-attr]
    assert Target("arm-cpu").host.kind == "arm-cpu"  # type: ignore[union-attr]


def test_single_device_with_its_own_host_keeps_it() -> None:
    t = Target({"kind": "cuda", "host": "arm-cpu", "executor": "graph", "runtime": "crt"})
    assert [t.host.kind, t.executor.kind, t.runtime.kind] == ["arm-cpu", "graph", "crt"]  # type: ignore[union-attr]
    assert t.devices[0].kind == "cuda"


def test_nested_device_with_a_host_becomes_a_nested_level_named_like_it() -> None:
    t = Target({"kind": "hetero", "devices": [{"kind": "cuda", "name": "gpu0", "host": "arm-cpu"}]})
    level = t.devices[0]
    assert (level.kind, level.name, level.host.kind) == ("hetero", "gpu0", "arm-cpu")  # type: ignore[union-attr]
    assert [(d.kind, d.name) for d in level.devices] == [("cuda", "gpu0")]


def test_a_link_given_beside_a_devices_host_is_the_devices_own() -> None:
    # docs/targets.md, rule 2: the device keeps it; the level it becomes gets the default link
    device = {"tag": "vendor/npu", "name": "acc", "host": "riscv/sifive-u74",
              "link": {"bandwidth_gbps": 1}}  # fmt: skip
    level = Target({"kind": "hetero", "host": "arm/cortex-a72", "devices": [device]}).devices[0]
    assert level.attrs["link"]["bandwidth_gbps"] == 16.0
    assert level.devices[0].attrs["link"]["bandwidth_gbps"] == 1.0


def test_a_mapping_with_devices_and_no_kind_is_a_level() -> None:
    assert Target({"devices": ["npu"]}) == Target({"kind": "hetero", "devices": ["npu"]})


def test_devices_are_named_in_order_unless_named() -> None:
    t = Target({"kind": "hetero", "devices": ["npu", {"kind": "cuda", "name": "gpu"}, "npu"]})
    assert [d.name for d in t.devices] == ["dev0", "gpu", "dev2"]


def test_names_need_only_be_unique_within_a_level() -> None:
    inner = {"kind": "hetero", "name": "a", "devices": [{"kind": "npu", "name": "a"}]}
    t = Target({"kind": "hetero", "devices": [inner, {"kind": "npu", "name": "b"}]})
    assert [n for n, _ in t.walk()] == ["host", "a", "a/host", "a/a", "b"]


def test_only_a_device_may_not_be_named_host() -> None:
    # a device 'host' would be its level's host by path; the root's name is in no path
    spec = {"kind": "hetero", "name": "host", "devices": [{"kind": "npu", "name": "Host"}, "npu"]}
    assert [n for n, _ in Target(spec).walk()] == ["host", "Host", "dev1"]


def test_defaults_fill_every_attribute_and_given_values_win() -> None:
    t = Target(SEED)
    level = t.devices[0]
    assert dict(level.attrs) == {
        "link": {"bandwidth_gbps": 8.0, "latency_us": 2.0},
        "control_latency_us": 2.0,
    }
    assert level.executor == Config("graph", level.executor.attrs)  # type: ignore[union-attr]
    assert dict(level.executor.attrs) == {"node_us": 0.1, "is_static": True}  # type: ignore[union-attr]
    npu = level.devices[0].attrs
    assert (npu["cores"], npu["memory_gib"], npu["ops"][0]) == (1, 0.0, "Conv")
    assert dict(npu["efficiency"])["matmul"] == 0.7


def test_export_is_plain_json_that_parses_back_to_an_equal_tree() -> None:
    t = Target(SEED)
    text = json.dumps(t.export())
    assert Target(json.loads(text)) == t
    assert Target(text) == t
    assert hash(Target(text)) == hash(t)


def test_export_lists_every_part_of_a_level() -> None:
    exported = Target("npu").export()
    assert list(exported) == [
        "kind",
        "name",
        "link",
        "control_latency_us",
        "host",
        "executor",
        "runtime",
        "devices",
    ]
    assert exported["executor"] == {"kind": "vm", "dispatch_us": 0.27, "is_static": False}
    assert exported["devices"][0]["name"] == "dev0"


def test_equality_and_hash_compare_values() -> None:
    a = Target({"kind": "cuda", "launch_us": 4.0})
    b = Target({"kind": "cuda", "launch_us": 4})
    c = Target({"kind": "cuda", "launch_us": 4.5})
    assert a == b
    assert hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    assert a != "cuda"


def test_targets_are_immutable_and_pickle() -> None:
    t = Target(SEED)
    with pytest.raises(AttributeError, match=r"^Target is immutable: cannot set 'kind'$"):
        t.kind = "cuda"  # type: ignore[misc]
    loaded = pickle.loads(pickle.dumps(t))
    assert loaded == t
    assert hash(loaded) == hash(t)
    assert (loaded.devices[0].keys, loaded.spec) == (t.devices[0].keys, t.spec)
    # a hash is made where a tree is loaded, never carried: a string's differs between processes
    assert FrozenMap({"a": 1}).__reduce__() == (FrozenMap, ({"a": 1},))
    assert b"_hash" not in pickle.dumps(t)


def test_str_and_repr_are_readable() -> None:
    t = Target(SEED)
    assert str(t) == (
        "hetero(host=arm-cpu, executor=vm, runtime=cpp, devices=[vdevice0: hetero(host=riscv-cpu, "
        "executor=graph, runtime=cpp, devices=[npu: npu])])"
    )
    assert repr(t) == "<Target (root) kind=hetero>"
    assert repr(t.devices[0]) == "<Target vdevice0 kind=hetero>"


def test_spec_is_kept_and_override_resolves_again() -> None:
    t = Target({"kind": "cuda", "launch_us": 4.0})
    assert t.spec == {"kind": "cuda", "launch_us": 4.0}
    changed = t.override({"launch_us": 6.0, "graph_node_us": 1.0})
    assert changed.devices[0].attrs["launch_us"] == 6.0
    assert t.devices[0].attrs["launch_us"] == 4.0
    assert t.override({"launch_us": None}) == Target("cuda")


@pytest.mark.parametrize(
    ("spec", "device"),
    [("cuda", "devices[dev0]"), ("nvidia/h100", "devices[dev0]"),
     ({"kind": "npu", "name": "npu"}, "devices[npu]")],
)  # fmt: skip
def test_a_target_written_as_one_device_is_overridden_as_written(spec: object, device: str) -> None:
    """Its canonical ``devices[...]`` is not a path of what the user wrote: said so, with the
    path that works, rather than 'unknown attribute devices'."""
    t = Target(spec)
    assert t.override({"sync_us": 2.0}).devices[0].attrs["sync_us"] == 2.0
    message = (
        "devices: expected the attributes of the one device this target is written as, at its "
        f"top (sync_us, not {device}.sync_us)"
    )
    name = device.removeprefix("devices[").removesuffix("]")
    with pytest.raises(TargetError) as err:
        t.override({"devices": {name: {"sync_us": 2.0}}})
    assert str(err.value) == message
    level = Target("x86-h100").override({"devices": {"gpu0": {"sync_us": 2.0}}})  # a level
    assert level.devices[0].attrs["sync_us"] == 2.0


def test_editing_a_spec_and_resolving_again_leaves_nothing_stale() -> None:
    spec = {"kind": "hetero", "host": {"kind": "arm-cpu", "freq_ghz": 1.0}, "devices": ["npu"]}
    t = Target(spec)
    spec["host"]["freq_ghz"] = 2.0  # type: ignore[index]
    assert t.host.attrs["freq_ghz"] == 1.0  # type: ignore[union-attr]
    assert Target(spec).host.attrs["freq_ghz"] == 2.0  # type: ignore[union-attr]
    edited = t.export()
    edited["host"] = {"kind": "x86-cpu"}
    assert Target(edited).host.attrs["freq_ghz"] == 3.0  # type: ignore[union-attr]


def test_canonicalize_reports_problems_of_the_whole_tree_at_once() -> None:
    spec = {
        "kind": "hetero",
        "host": {"kind": "arm-cpu", "cores": 0},
        "devices": [{"kind": "cuda", "launch_us": -1}, {"kind": "npu", "freq_ghz": "1"}],
    }
    with pytest.raises(TargetError) as err:
        canonicalize(spec)
    assert str(err.value) == (
        "devices[dev0].launch_us: expected a non-negative number, got -1\n"
        "devices[dev1].freq_ghz: expected a positive number, got '1'\n"
        "host.cores: expected an integer >= 1, got 0"
    )
    assert [p.path for p in err.value.problems] == [
        "devices[dev0].launch_us",
        "devices[dev1].freq_ghz",
        "host.cores",
    ]
    assert isinstance(err.value, ValueError)


def test_walk_visits_hosts_first_depth_first() -> None:
    assert [(p, n.kind) for p, n in Target(SEED).walk()] == [
        ("host", "arm-cpu"),
        ("vdevice0", "hetero"),
        ("vdevice0/host", "riscv-cpu"),
        ("vdevice0/npu", "npu"),
    ]


def test_attributes_of_a_default_part_merge_into_it() -> None:
    """A level that names no host, executor or runtime gets the default: attributes given for
    one set that default's, as they would a tag's part (they were a 'kind or tag' error)."""
    spec = {"kind": "hetero", "devices": ["cuda"]}
    t = Target({**spec, "host": {"cores": 2}, "executor": {"dispatch_us": 1.5}})
    plain = Target(spec)
    assert (t.host.kind, t.host.attrs["cores"]) == (plain.host.kind, 2)  # type: ignore[union-attr]
    assert (t.executor.kind, t.executor.attrs["dispatch_us"]) == ("vm", 1.5)  # type: ignore[union-attr]
    assert t.runtime == plain.runtime
    device = Target({"kind": "npu", "host": {"freq_ghz": 1.0}})  # wrapped with its default host
    assert (device.host.kind, device.host.attrs["freq_ghz"]) == ("riscv-cpu", 1.0)  # type: ignore[union-attr]


def test_attributes_of_a_default_part_merge_into_it_below_a_tag(
    tag_folder: Callable[[dict[str, str]], Path],
) -> None:
    """A tag's own level that names no host: its attributes merge into the default host."""
    bare = (
        "description: a bare level\nkind: hetero\n"
        "devices:\n  - {name: lvl, kind: hetero, devices: [npu]}\n"
    )
    tag_folder({"test/bare.yaml": bare})
    changes = {"devices": {"lvl": {"host": {"cores": 2}, "runtime": {"alloc_us": 2}}}}
    t = Target({"tag": "test/bare", **changes})
    level, plain = t.devices[0], Target("test/bare").devices[0]
    assert (level.host.kind, level.host.attrs["cores"]) == (plain.host.kind, 2)  # type: ignore[union-attr]
    assert level.runtime.attrs["alloc_us"] == 2.0  # type: ignore[union-attr]
    assert Target("test/bare").override(changes) == t


def test_written_devices_and_parts_by_name_take_overrides_by_name() -> None:
    spec = {
        "kind": "hetero",
        "executor": "graph",
        "devices": ["cuda", {"kind": "npu", "name": "npu"}],
    }
    t = Target(spec).override(
        {"executor": {"node_us": 0.5}, "devices": {"dev0": {"sync_us": 2}, "npu": {"cores": 2}}}
    )
    assert (t.executor.kind, t.executor.attrs["node_us"]) == ("graph", 0.5)  # type: ignore[union-attr]
    assert [d.attrs["sync_us" if d.kind == "cuda" else "cores"] for d in t.devices] == [2.0, 2]
    with pytest.raises(TargetError) as err:
        Target(spec).override({"devices": {"npv": {"cores": 2}}})
    assert str(err.value) == "devices[npv]: unknown device (did you mean 'npu'?)"
    assert [d.name for d in Target(spec).override({"devices": {"dev0": None}}).devices] == ["npu"]
    gpu = Target({"kind": "hetero", "devices": [{"kind": "cuda", "arch": "sm_90"}]})
    with pytest.raises(TargetError) as err:  # an attribute's string is not a part by name
        gpu.override({"devices": {"dev0": {"arch": {"x": 1}}}})
    assert (
        str(err.value)
        == r"devices[dev0].arch: expected a string matching 'sm_\\d+a?', got {'x': 1}"
    )
