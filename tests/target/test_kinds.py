"""Built-in kinds carry the shared attribute contract; kinds register from Python and data files."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from hetsim.errors import TargetError
from hetsim.kernels import OP_CLASSES, OPS
from hetsim.target import EXECUTORS, KINDS, RUNTIMES, Attr, Kind, Target, load_kinds, register_kind
from hetsim.target.catalog import check_kind, kind_from_data
from hetsim.target.kind_attrs import DTYPES
from hetsim.target.kind_attrs import OP_CLASSES as TARGET_OP_CLASSES
from hetsim.target.tags import TAGS
from hetsim.target.values import STRUCTURAL_TYPES

# docs/architecture.md, "Shared contracts / Targets"
PROCESSOR_ATTRS = {
    "cores",
    "freq_ghz",
    "flops_per_cycle",
    "mem_bandwidth_gbps",
    "memory_gib",
    "kernel_latency_us",
    "launch_us",
    "sync_us",
    "efficiency",
    "ops",
    "link",
}
CUDA_GRAPH_ATTRS = {
    "graph_launch_us",
    "graph_node_us",
    "capture_node_us",
    "instantiate_us",
    "instantiate_node_us",
    "graph_node_bytes",
    "update_us",
}


@pytest.fixture
def scratch_kinds() -> Iterator[None]:
    """Registries restored after a test that registers kinds."""
    saved = (dict(KINDS), dict(EXECUTORS), dict(RUNTIMES))
    yield
    for registry, old in zip((KINDS, EXECUTORS, RUNTIMES), saved, strict=True):
        registry.clear()
        registry.update(old)
    TAGS.changed()  # targets resolved with the test's kinds are not kept


def _names(kind: Kind) -> set[str]:
    return {a.name for a in kind.attrs}


def test_builtin_kinds_are_registered_by_category() -> None:
    assert list(KINDS) == ["arm-cpu", "riscv-cpu", "x86-cpu", "cuda", "npu", "hetero"]
    assert list(EXECUTORS) == ["vm", "graph"]
    assert list(RUNTIMES) == ["cpp", "crt"]


@pytest.mark.parametrize("name", ["arm-cpu", "riscv-cpu", "x86-cpu", "cuda", "npu"])
def test_every_processor_kind_has_the_shared_attributes(name: str) -> None:
    assert _names(KINDS[name]) >= PROCESSOR_ATTRS
    efficiency = KINDS[name].attr("efficiency")
    assert efficiency is not None
    assert tuple(f.name for f in efficiency.fields) == OP_CLASSES
    link = KINDS[name].attr("link")
    assert link is not None
    assert [f.name for f in link.fields] == ["bandwidth_gbps", "latency_us"]


def test_target_op_classes_match_the_kernels() -> None:
    assert TARGET_OP_CLASSES == OP_CLASSES


def test_cuda_adds_the_cuda_graph_parameters() -> None:
    assert _names(KINDS["cuda"]) >= CUDA_GRAPH_ATTRS


def test_processor_kinds_compute_by_default_what_such_hardware_does() -> None:
    # a CPU or a GPU computes every dtype hetsim names; an NPU its int8 and FP16 MACs, and
    # float32 at the FP16 rate; each int8 op form (QLinear*) of an NPU's float ops is listed
    defaults = {
        name: kind.attr("dtypes").default_value()
        for name, kind in KINDS.items()
        if kind.attr("dtypes") is not None
    }
    assert defaults == {
        "arm-cpu": list(DTYPES),
        "riscv-cpu": list(DTYPES),
        "x86-cpu": list(DTYPES),
        "cuda": list(DTYPES),
        "npu": ["float32", "float16", "int8"],
    }
    npu_ops = set(KINDS["npu"].attr("ops").default_value())
    int8_forms = {"Gemm": "QGemm"} | {op: f"QLinear{op}" for op in npu_ops if f"QLinear{op}" in OPS}
    assert {op for op in npu_ops if op.startswith("Q")} == {
        form for op, form in int8_forms.items() if op in npu_ops
    }


def test_level_executor_and_runtime_attributes() -> None:
    assert _names(KINDS["hetero"]) == {
        "host",
        "executor",
        "runtime",
        "devices",
        "link",
        "control_latency_us",
    }
    assert _names(EXECUTORS["vm"]) == {"dispatch_us", "is_static"}
    assert _names(EXECUTORS["graph"]) == {"node_us", "is_static"}
    for runtime in RUNTIMES.values():
        assert _names(runtime) == {"alloc_us", "free_us", "call_us"}


def test_keys_and_flags() -> None:
    assert {n: k.keys for n, k in KINDS.items()} == {
        "arm-cpu": ("cpu", "arm"),
        "riscv-cpu": ("cpu", "riscv"),
        "x86-cpu": ("cpu", "x86"),
        "cuda": ("gpu", "cuda"),
        "npu": ("accel", "npu"),
        "hetero": ("hetero",),
    }
    assert [n for n, k in KINDS.items() if k.can_host] == ["arm-cpu", "riscv-cpu", "x86-cpu"]
    assert [n for n, k in KINDS.items() if k.is_composite] == ["hetero"]
    assert [n for n, k in EXECUTORS.items() if k.can_capture] == ["vm"]
    assert RUNTIMES["crt"].executors == ("graph",)
    assert EXECUTORS["graph"].attr("is_static").default is True  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "kind", [*KINDS.values(), *EXECUTORS.values(), *RUNTIMES.values()], ids=lambda k: k.name
)
def test_every_default_passes_its_own_check(kind: Kind) -> None:
    for attr in kind.attrs:
        if attr.type not in STRUCTURAL_TYPES and attr.default is not None:
            assert attr.check(attr.default_value(), attr.name)[1] == [], attr.name


def test_defaults_are_plain_values_not_read_from_the_machine() -> None:
    # Two builds agree, and the x86 default is the documented 8 x 3.0 GHz, whatever runs this.
    assert Target("x86-cpu") == Target("x86-cpu")
    attrs = Target("x86-cpu").devices[0].attrs
    assert (attrs["cores"], attrs["freq_ghz"], attrs["flops_per_cycle"]) == (8, 3.0, 32.0)


@pytest.mark.usefixtures("scratch_kinds")
def test_register_kind_from_python_makes_it_usable() -> None:
    dsp = Kind("dsp", "target", "a DSP", KINDS["npu"].attrs, keys=("accel", "dsp"))
    register_kind(dsp)
    device = Target({"kind": "dsp", "cores": 2}).devices[0]
    assert (device.kind, device.keys, device.attrs["cores"]) == ("dsp", ("accel", "dsp"), 2)


@pytest.mark.usefixtures("scratch_kinds")
def test_a_kind_replaced_is_what_its_name_resolves_to_next() -> None:
    before = Target("npu")  # kept by name while the registries stay the same
    assert Target("npu") is before
    faster = tuple(
        dataclasses.replace(a, default=3.0) if a.name == "freq_ghz" else a
        for a in KINDS["npu"].attrs
    )
    register_kind(dataclasses.replace(KINDS["npu"], attrs=faster), replace=True)
    assert Target("npu").devices[0].attrs["freq_ghz"] == 3.0
    assert before.devices[0].attrs["freq_ghz"] == 1.0


@pytest.mark.usefixtures("scratch_kinds")
def test_register_kind_rejects_taken_names_and_bad_defaults() -> None:
    attrs = tuple(
        Attr("cores", "int", "", -1, minimum=1) if a.name == "cores" else a
        for a in KINDS["npu"].attrs
    )
    bad = Kind("cuda", "target", "", attrs)
    with pytest.raises(TargetError) as err:
        register_kind(bad)
    assert [p.message for p in err.value.problems] == [
        "kinds[cuda]: expected a new kind name, got a registered target kind",
        "kinds[cuda].cores: expected an integer >= 1, got -1",
    ]
    assert KINDS["cuda"].doc == "an NVIDIA GPU driven through CUDA"


def test_check_kind_rejects_defaults_too_large_to_compute_with() -> None:
    attrs = (
        Attr("memory_gib", "float", "", 1e300, minimum=0),
        Attr("clock_ghz", "float", "", float("inf"), minimum=0),
        Attr("lanes", "int", "", 10**400, minimum=1),
    )
    assert [p.message for p in check_kind(Kind("dsp", "executor", "", attrs))] == [
        "kinds[dsp].memory_gib: expected a finite number <= 8388608 (2^53 bytes), got 1e+300",
        "kinds[dsp].clock_ghz: expected a finite number, got inf",
        "kinds[dsp].lanes: expected an integer <= 1.7976931348623157e+308 (the largest float), "
        "got a 401-digit integer",
    ]


def test_check_kind_rejects_a_second_composite_and_bad_names() -> None:
    kind = Kind("Two Words", "target", "", (), is_composite=True)
    assert [p.message for p in check_kind(kind)] == [
        "kinds[Two Words]: expected a name matching '[a-z][a-z0-9_-]*', got 'Two Words'",
        "kinds[Two Words].is_composite: expected false (hetero is the one composite kind), "
        "got True",
    ]
    assert [p.message for p in check_kind(Kind("x", "device", "", ()))] == [
        "kinds[x].category: expected one of target, executor, runtime, got 'device'"
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_load_kinds_from_a_data_file(tmp_path: Path) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(
        "kinds:\n"
        "  - name: dsp\n"
        "    base: npu\n"
        "    keys: [accel, dsp]\n"
        "    doc: a vector DSP\n"
        "    attrs:\n"
        "      freq_ghz: {default: 0.8}\n"
        "      vector_width: {type: int, default: 8, minimum: 1, doc: lanes}\n"
        "  - name: aot\n"
        "    category: executor\n"
        "    attrs:\n"
        "      call_us: {type: float, default: 0.05, minimum: 0}\n"
    )
    dsp, aot = load_kinds(path)
    assert (dsp.doc, dsp.attr("freq_ghz").default, aot.category) == (  # type: ignore[union-attr]
        "a vector DSP",
        0.8,
        "executor",
    )
    t = Target(
        {"kind": "hetero", "executor": "aot", "devices": [{"kind": "dsp", "vector_width": 16}]}
    )
    assert (t.executor.kind, t.devices[0].attrs["vector_width"]) == ("aot", 16)  # type: ignore[union-attr]
    with pytest.raises(
        TargetError,
        match=r"^vector_width: expected an integer "
        r">= 1, got 0$",
    ):
        Target({"kind": "dsp", "vector_width": 0})


@pytest.mark.usefixtures("scratch_kinds")
def test_load_kinds_is_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(
        "kinds:\n"
        "  - {name: good-one, base: npu}\n"
        "  - {name: bad-one, base: npu, attrs: {cores: {default: 0}}}\n"
        "  - {name: worse, attrs: {x: {type: complex}}}\n"
        "  - {name: typo, bsae: npu}\n"
    )
    with pytest.raises(TargetError) as err:
        load_kinds(path)
    assert [p.message for p in err.value.problems] == [
        "kinds[bad-one].cores: expected an integer >= 1, got 0",
        "kinds[worse].attrs.x.type: expected one of int, float, str, bool, enum, op, list, "
        "got 'complex'",
        "kinds[typo].bsae: unknown attribute (did you mean 'base'?)",
    ]
    assert "good-one" not in KINDS


def test_kind_from_data_rejects_an_unknown_base() -> None:
    with pytest.raises(
        TargetError,
        match=r"^kinds\[x\]\.base: expected a registered target "
        r"kind, got 'nope'$",
    ):
        kind_from_data({"name": "x", "base": "nope"})


def _kinds_file_problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "kinds.yaml"
    path.write_text(text)
    with pytest.raises(TargetError) as err:
        load_kinds(path)
    return [p.message for p in err.value.problems]


@pytest.mark.usefixtures("scratch_kinds")
def test_a_processor_kind_needs_the_shared_attributes(tmp_path: Path) -> None:
    # it registered, and build_platform raised KeyError: 'link' on a device of it
    text = "kinds:\n  - {name: bare, keys: [accel], attrs: {speed: {type: float, default: 1}}}\n"
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[bare]: expected the attributes every target kind has (base: npu gives them), "
        "got no cores, freq_ghz, flops_per_cycle, mem_bandwidth_gbps, memory_gib, "
        "kernel_latency_us, launch_us, sync_us, efficiency, mem_efficiency, op_latency_us, "
        "gemm_half_dim, lowering, ops, dtypes, link, vendor, model"
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_a_runtime_kind_needs_the_runtime_costs(tmp_path: Path) -> None:
    # it registered, and simulate raised KeyError: 'alloc_us'
    assert _kinds_file_problems(tmp_path, "kinds:\n  - {name: rt, category: runtime}\n") == [
        "kinds[rt]: expected the attributes every runtime kind has (base: cpp gives them), "
        "got no alloc_us, free_us, call_us"
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_a_shared_attribute_keeps_its_type() -> None:
    attrs = tuple(
        Attr("cores", "float", "", 1.0) if a.name == "cores" else a for a in KINDS["npu"].attrs
    )
    assert [p.message for p in check_kind(Kind("dsp", "target", "", attrs))] == [
        "kinds[dsp].cores: expected an int (every target kind's cores is), got float"
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_an_attribute_named_like_a_key_of_every_node_is_rejected(tmp_path: Path) -> None:
    # an attribute 'devices' made Target raise TypeError: 'int' object is not iterable
    text = (
        "kinds:\n"
        "  - name: dsp\n"
        "    base: npu\n"
        "    attrs: {name: {type: str, default: x}, devices: {type: int, default: 3}}\n"
    )
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].name: expected an attribute name that is not a key of every node or level, "
        "got 'name'",
        "kinds[dsp].devices: expected an attribute name that is not a key of every node or "
        "level, got 'devices'",
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_bad_attribute_definitions_are_named(tmp_path: Path) -> None:
    # a minimum of 'x' raised TypeError from the default's check; a pattern '[' re.error
    text = (
        "kinds:\n"
        "  - name: dsp\n"
        "    base: npu\n"
        "    attrs:\n"
        "      freq_ghz: {minimum: x}\n"
        "      width: {type: str, pattern: '[', default: a}\n"
        "      mode: {type: enum, choices: 3, default: a}\n"
        "      speed: {type: float, default: .nan}\n"
        "      lanes: {type: list, items: 3}\n"
    )
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].attrs.lanes.items: expected a mapping (an attribute definition), got 3"
    ]
    text = text.replace("      lanes: {type: list, items: 3}\n", "")
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].freq_ghz.minimum: expected a finite number (or none), got 'x'",
        "kinds[dsp].width.pattern: expected a regular expression, got '[' (unterminated "
        "character set at position 0)",
        "kinds[dsp].mode.choices: expected a list of values (at least one), got 3",
        "kinds[dsp].speed: expected a finite number, got nan",
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_kind_fields_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    # keys: accel became ('a', 'c', 'c', 'e', 'l'), and can_host: 'yes' a host
    text = "kinds:\n  - {name: dsp, base: npu, keys: accel, can_host: 'yes', doc: 3}\n"
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].doc: expected a string, got 3",
        "kinds[dsp].keys: expected a list of strings, got 'accel'",
        "kinds[dsp].can_host: expected true or false, got 'yes'",
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_kind_entries_that_are_not_definitions_are_named(tmp_path: Path) -> None:
    text = (
        "kinds:\n"
        "  - 3\n"
        "  - {name: 4}\n"
        "  - {name: dsp, category: [1], base: npu}\n"
        "  - {name: dsp2, base: npu, attrs: [1, 2]}\n"
        "  - {name: dsp3, base: npu, attrs: {freq_ghz: 3}}\n"
    )
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[0]: expected a mapping (a kind definition), got 3",  # was kinds[None].name
        "kinds[1].name: expected a string, got 4",
        "kinds[dsp].category: expected one of target, executor, runtime, got [1]",
        "kinds[dsp2].attrs: expected a mapping of attribute names to definitions, got [1, 2]",
        "kinds[dsp3].attrs.freq_ghz: expected a mapping (an attribute definition), got 3",
    ]


def test_check_kind_names_a_kind_of_the_wrong_type() -> None:
    # register_kind("dsp") raised AttributeError: 'str' object has no attribute 'category'
    with pytest.raises(TargetError, match=r"^kinds: expected a Kind, got 'dsp'$"):
        register_kind("dsp")  # type: ignore[arg-type]
    bad = Kind("dsp", "executor", "", (Attr("x", "complex", ""),))
    assert [p.message for p in check_kind(bad)] == [
        "kinds[dsp].x.type: expected one of int, float, str, bool, enum, op, list, mapping, "
        "target, list[target], executor, runtime, got 'complex'"
    ]


@pytest.mark.usefixtures("scratch_kinds")
def test_attribute_names_and_types_that_are_not_words_are_named(tmp_path: Path) -> None:
    # a type [1] raised TypeError (unhashable), an attribute 3 AttributeError ('endswith')
    text = "kinds:\n  - {name: dsp, base: npu, attrs: {x: {type: [1]}}}\n"
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].attrs.x.type: expected one of int, float, str, bool, enum, op, list, got [1]"
    ]
    text = (
        "kinds:\n  - {name: dsp, base: npu, keys: [1], attrs: {3: {type: int}, a.b: {type: int}}}\n"
    )
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].keys: expected a list of strings, got [1]"
    ]
    text = text.replace("keys: [1], ", "")
    assert _kinds_file_problems(tmp_path, text) == [
        "kinds[dsp].3: expected an attribute name matching '[A-Za-z_][A-Za-z0-9_]*', got 3",
        "kinds[dsp].a.b: expected an attribute name matching '[A-Za-z_][A-Za-z0-9_]*', got 'a.b'",
    ]
