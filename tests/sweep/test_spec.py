"""Sweep files: validation messages in full, expansion to points, override paths, hashes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import SweepError
from hetsim.sweep import load_sweep, override_tree, parse_path
from hetsim.sweep.runner import simulate_point
from hetsim.target import TAGS, Target

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sweep-arm-riscv.yaml"
BASE: dict[str, Any] = {"target": "arm-riscv-soc", "models": ["mlp"]}
DISPATCH = "executor.dispatch_us"
BANDWIDTH = "devices[vdevice0].link.bandwidth_gbps"
NPU = "devices[vdevice0].devices[npu]"
NPU_OPS, NPU_DTYPES = f"{NPU}.ops", f"{NPU}.dtypes"
SETS_EXPECTED = (
    "expected distinct values (ops and dtypes lists are sets: their order and repeats mean nothing)"
)


METRIC_EXPECTED = (
    "metric: expected a number of the result: makespan_us, breakdown_us.<category>, "
    "processors.<path>.busy_us, processors.<path>.utilization, "
    "processors.<path>.breakdown_us.<category>, links.<link>.bytes, links.<link>.busy_us or "
    "peak_memory_bytes.<memory> (a category: dispatch, launch, compute, transfer, sync_wait, "
    "capture, idle)"
)


def _full(message: str) -> str:
    return "^" + re.escape(message) + "$"


BAD_SWEEPS = [
    ({**BASE, "mdoe": "timing"}, "mdoe: unknown key (did you mean 'mode'?)"),
    ({"target": "arm-riscv-soc"}, "models: expected a value (required)"),
    (
        {**BASE, "vary": {DISPATCH: 0.5}},
        "vary.executor.dispatch_us: expected a non-empty list of values or "
        "{start, stop, step|num}, got 0.5",
    ),
    (
        {**BASE, "vary": {"host[0].freq_ghz": [1]}},
        "vary.host[0].freq_ghz: expected brackets only after 'devices', got 'host[0].freq_ghz'",
    ),
    (
        {**BASE, "vary": {"devices[vdevice0].host.freq_gz": [1, 2]}},
        "vary.devices[vdevice0].host.freq_gz: unknown attribute (did you mean 'freq_ghz'?)",
    ),
    (
        {**BASE, "vary": {DISPATCH: [0.5, -1]}},
        "vary.executor.dispatch_us: expected a non-negative number, got -1",
    ),
    (
        {**BASE, "vary": {"devices[vdevice1].link.bandwidth_gbps": [1]}},
        "vary.devices[vdevice1]: unknown device (did you mean 'vdevice0'?)",
    ),
    ({**BASE, "mode": "fast"}, "mode: expected one of 'functional', 'timing', got 'fast'"),
    ({**BASE, "expand": "zip"}, "expand: expected one of 'grid', 'list', got 'zip'"),
    (
        {**BASE, "expand": "list", "vary": {DISPATCH: [0.5, 1], "host.freq_ghz": [1]}},
        "vary: expected lists of one length (expand: list zips them), "
        "got lengths executor.dispatch_us: 2, host.freq_ghz: 1",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 1, "stop": 0, "step": 0.5}}},
        "vary.executor.dispatch_us.step: expected a number that walks from start to stop, got 0.5",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 1, "stop": 2}}},
        "vary.executor.dispatch_us: expected a range {start, stop, step} or {start, stop, num}, "
        "got {'start': 1, 'stop': 2}",
    ),
    (
        {**BASE, "vary": {DISPATCH: [1, 1]}},
        "vary.executor.dispatch_us: expected distinct values, got [1, 1]",
    ),
    (
        {**BASE, "vary": {"link": [{"bandwidth_gbps": 1}], "link.latency_us": [1]}},
        "vary.link.latency_us: expected separate paths, got a path inside 'link'",
    ),
    (
        {**BASE, "models": ["mlpp"]},
        "models[0]: load_model: expected a zoo name or a path to an .onnx file, got 'mlpp' "
        "(did you mean 'mlp'?)",
    ),
    (
        {**BASE, "target": "arm-riscv-sco"},
        "target: unknown kind or tag 'arm-riscv-sco' (did you mean 'arm-riscv-soc'?)",
    ),
    (
        {**BASE, "metric": "makespan"},
        f"{METRIC_EXPECTED}, got 'makespan' (did you mean 'makespan_us'?)",
    ),
    ({**BASE, "metric": "processors"}, f"{METRIC_EXPECTED}, got 'processors'"),
    ({**BASE, "metric": "breakdown_us.nosuch"}, f"{METRIC_EXPECTED}, got 'breakdown_us.nosuch'"),
    (
        {**BASE, "metric": "breakdown_us.dispach"},
        f"{METRIC_EXPECTED}, got 'breakdown_us.dispach' (did you mean 'breakdown_us.dispatch'?)",
    ),
    (
        {**BASE, "metric": "processors.host.busy"},
        f"{METRIC_EXPECTED}, got 'processors.host.busy' (did you mean 'processors.host.busy_us'?)",
    ),
    ({**BASE, "metric": "makespan_us.x"}, f"{METRIC_EXPECTED}, got 'makespan_us.x'"),
    ({**BASE, "metric": 3}, f"{METRIC_EXPECTED}, got 3"),
    (
        {**BASE, "iterations": 3},
        "iterations: expected 1 (a point simulates its model once; hetsim compare runs "
        "iterations), got 3",
    ),
    (
        {**BASE, "models": ["mlp", "transformer"]},
        "models[1]: expected a size in dims for each symbolic dim of 'transformer', "
        "got none for 'seq'",
    ),
    (
        {**BASE, "dims": {"seq": 8}},
        "dims.seq: expected a symbolic dim of the models (none), got 'seq'",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 1, "stop": "1e9", "num": 2}}},
        "vary.executor.dispatch_us.stop: expected a number, got '1e9' (did you mean '1.0e+9'?)",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": "fast", "stop": 2, "num": 2}}},
        "vary.executor.dispatch_us.start: expected a number, got 'fast'",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 1, "step": "1e-1"}}},
        "vary.executor.dispatch_us.step: expected a number that walks from start to stop, "
        "got '1e-1' (did you mean '1.0e-1'?)",
    ),
    ([1, 2], "sweep: expected a mapping of keys, got [1, 2]"),
    ({**BASE, "models": [3]}, "models[0]: expected a name, got 3"),
    (
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 1, "num": 10**8}}},
        "vary.executor.dispatch_us.num: expected at most 1000000, got 100000000",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 1, "step": 1e-9}}},
        "vary.executor.dispatch_us.step: expected a step that makes at most 1000000 values, "
        "got 1e-09",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 0.5, "stop": 0.5, "num": 3}}},
        "vary.executor.dispatch_us: expected distinct values (start equals stop), "
        "got {'start': 0.5, 'stop': 0.5, 'num': 3}",
    ),
    (
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 1e-11, "step": 1e-13}}},
        "vary.executor.dispatch_us: expected distinct values (a range's values are rounded to "
        "12 decimals), got 11 distinct of 101",
    ),
    (
        {
            **BASE,
            "vary": {
                DISPATCH: {"start": 0.1, "stop": 1, "num": 1000},
                BANDWIDTH: {"start": 1, "stop": 2, "num": 1001},
            },
        },
        "sweep: expected at most 1000000 points, got 1001000 (models x policies x ...)",
    ),
    # each of these raised a built-in error from deep inside, or made a sweep silently wrong
    (  # OverflowError from math.isfinite
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 10**400, "num": 2}}},
        "vary.executor.dispatch_us.stop: expected a number, got a 401-digit integer",
    ),
    (  # OverflowError from math.floor(inf)
        {**BASE, "vary": {DISPATCH: {"start": -1e308, "stop": 1e308, "step": 1e308}}},
        "vary.executor.dispatch_us: expected a range whose width (stop - start) is a finite "
        "number, got -1e+308 to 1e+308",
    ),
    (  # values nan, inf, inf: "2 distinct of 3 (rounded to 12 decimals)"
        {**BASE, "vary": {DISPATCH: {"start": -1e308, "stop": 1e308, "num": 3}}},
        "vary.executor.dispatch_us: expected a range whose width (stop - start) is a finite "
        "number, got -1e+308 to 1e+308",
    ),
    (  # OverflowError: 1 / 5e-324 steps is inf
        {**BASE, "vary": {DISPATCH: {"start": 0, "stop": 1, "step": 5e-324}}},
        "vary.executor.dispatch_us.step: expected a step that makes at most 1000000 values, "
        "got 5e-324",
    ),
    (  # two points of one target, with two ids
        {**BASE, "vary": {DISPATCH: [1, 1.0]}},
        "vary.executor.dispatch_us: expected distinct values, got [1, 1.0]",
    ),
    (  # the same ops in another order: two points of one target, which tied
        {**BASE, "vary": {NPU_OPS: [["Gemm", "Relu"], ["Relu", "Gemm"]]}},
        f"vary.{NPU_OPS}: {SETS_EXPECTED}, got ['Gemm', 'Relu'] and ['Relu', 'Gemm']",
    ),
    (  # an op repeated
        {**BASE, "vary": {NPU_OPS: [["Gemm"], ["Relu"], ["Gemm", "Gemm"]]}},
        f"vary.{NPU_OPS}: {SETS_EXPECTED}, got ['Gemm'] and ['Gemm', 'Gemm']",
    ),
    (  # dtypes are read as a set too
        {**BASE, "vary": {NPU_DTYPES: [["int8", "float32"], ["float32", "int8"]]}},
        f"vary.{NPU_DTYPES}: {SETS_EXPECTED}, got ['int8', 'float32'] and ['float32', 'int8']",
    ),
    (  # in a device varied whole
        {**BASE, "vary": {NPU: [{"ops": ["Gemm", "Relu"]}, {"ops": ["Relu", "Gemm"]}]}},
        f"vary.{NPU}: {SETS_EXPECTED}, got {{'ops': ['Gemm', 'Relu']}} and "
        "{'ops': ['Relu', 'Gemm']}",
    ),
    (  # written alike: the list says it
        {**BASE, "vary": {NPU_OPS: [["Gemm"], ["Gemm"]]}},
        f"vary.{NPU_OPS}: expected distinct values, got [['Gemm'], ['Gemm']]",
    ),
    (  # str(None): the attribute 'None'
        {**BASE, "vary": {None: [1]}},
        "vary.None: expected a path such as devices[vdevice0].host.freq_ghz, got None",
    ),
    (  # TypeError from sorting the keys to tell the values apart
        {**BASE, "vary": {"link": [{1: 2, "latency_us": 1}]}},
        "vary.link.1: unknown attribute",
    ),
    ({**BASE, "name": None}, "name: expected a string, got None"),  # the label 'None'
    ({**BASE, "name": ["a"]}, "name: expected a string, got ['a']"),
    ({**BASE, "name": True}, "name: expected a string, got True"),  # YAML's 'yes'
    ({**BASE, "seed": None}, "seed: expected an integer >= 0, got None"),
    ({**BASE, "models": [None]}, "models[0]: expected a name, got None"),
]


@pytest.mark.parametrize(("data", "message"), BAD_SWEEPS, ids=[m[:40] for _, m in BAD_SWEEPS])
def test_bad_sweep_names_key_and_path(data: Any, message: str) -> None:
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(data)


def test_ops_in_another_order_or_repeated_simulate_alike() -> None:
    # why a varied ops list counts as a set: the same ops, in any order, place and time alike
    base = Target("arm-riscv-soc")
    runs = [
        simulate("cnn", base.override(override_tree(((NPU_OPS, ops),))), mode="timing")
        for ops in (["Conv", "Relu"], ["Relu", "Conv", "Relu"])
    ]
    assert runs[0].makespan_us == runs[1].makespan_us
    assert runs[0].placement == runs[1].placement
    assert "vdevice0/npu" in runs[0].placement.values()


def test_a_policy_or_strategy_no_run_knows_is_reported_before_any_point_runs() -> None:
    # it failed every point of the sweep, after all of them ran
    data = {**BASE, "policies": ["costs", None], "strategies": ["whole", "regoins"]}
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.message for p in caught.value.problems] == [
        "policies[0]: expected one of capability, cost, rules or null, got 'costs' (did you "
        "mean 'cost'?)",
        "strategies[1]: expected one of none, whole, regions, buckets or null, got 'regoins' "
        "(did you mean 'regions'?)",
    ]


def test_every_problem_is_reported_at_once() -> None:
    data = {**BASE, "models": ["transformer"], "seed": -1, "iterations": 0, "dims": {"seq": -1}}
    data["policies"] = [3]
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.message for p in caught.value.problems] == [
        "policies[0]: expected a name or null, got 3",
        "iterations: expected 1 (a point simulates its model once; hetsim compare runs "
        "iterations), got 0",
        "seed: expected an integer >= 0, got -1",
        "dims.seq: expected an integer >= 0 (or a list of them), got -1",
    ]


def test_a_misspelt_dim_is_reported_with_the_dim_it_leaves_unsized() -> None:
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "models": ["mlp", "transformer"], "dims": {"sq": 8}})
    assert [p.message for p in caught.value.problems] == [
        "models[1]: expected a size in dims for each symbolic dim of 'transformer', "
        "got none for 'seq'",
        "dims.sq: expected a symbolic dim of the models (seq), got 'sq' (did you mean 'seq'?)",
    ]


def test_dims_are_not_checked_against_a_model_that_does_not_load() -> None:
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "models": ["mlp", "nosuch"], "dims": {"seq": 8}})
    assert [p.path for p in caught.value.problems] == ["models[1]"]


def test_a_bad_key_does_not_hide_a_bad_override_or_target(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "mdoe: timing\n"  # line 1
        "target: arm-riscv-soc\n"
        "models: [mlp]\n"
        "vary:\n"  # line 4
        "  executor.dispatch_us: [-1]\n"
        "  devices[vdevice1].host.freq_ghz: [1.0]\n"  # line 6: the key of the unknown device
    )
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:1: mdoe: unknown key (did you mean 'mode'?)",
        f"{path}:6: vary.devices[vdevice1]: unknown device (did you mean 'vdevice0'?)",
        f"{path}:5: vary.executor.dispatch_us: expected a non-negative number, got -1",
    ]


def test_an_empty_vary_path_is_found_on_its_own_line(tmp_path: Path) -> None:
    # it read "bad.yaml:3: vary.: ...", the line of vary itself
    path = tmp_path / "bad.yaml"
    path.write_text(
        'target: arm-riscv-soc\nmodels: [mlp]\nvary:\n  executor.dispatch_us: [1]\n  "": [1]\n'
    )
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:5: vary.'': expected a path such as devices[vdevice0].host.freq_ghz, got ''",
    ]


RULE = (
    "graph_node_us: expected at most launch_us (0.1; a replayed node costs no more than a "
    "launch), got 0.86"
)


@pytest.mark.parametrize("target", ["cuda", "nvidia/h100", "{kind: cuda, name: g}"])
def test_a_one_device_target_problem_names_the_path_as_the_file_writes_it(
    tmp_path: Path, target: str
) -> None:
    # the paths of a target written as one device lack devices[dev0]; its problems named it
    # (vary.devices[dev0].launch_us, which the sweep refuses), and a rule across two fields at
    # the line of the first varied key (found by a sweep audit)
    cases = {
        "  memory_gib: [1, 100]\n  launch_us: [0.1]\n": [f":5: vary.launch_us: {RULE}"],
        "  freq_gz: [1]\n  cores: [-1]\n": [
            ":4: vary.freq_gz: unknown attribute (did you mean 'freq_ghz'?)",
            ":5: vary.cores: expected an integer >= 1, got -1",
        ],
    }
    for varied, expected in cases.items():
        path = tmp_path / "one.yaml"
        path.write_text(f"target: {target}\nmodels: [mlp]\nvary:\n{varied}")
        with pytest.raises(SweepError) as caught:
            load_sweep(path)
        assert sorted(p.message for p in caught.value.problems) == [f"{path}{e}" for e in expected]


def test_a_rule_across_two_varied_fields_is_reported_at_the_one_it_names(tmp_path: Path) -> None:
    # both share devices[gpu0]: the tie went to the first in the file, freq_ghz
    path = tmp_path / "two.yaml"
    varied = "  devices[gpu0].freq_ghz: [1.5]\n  devices[gpu0].launch_us: [0.1]\n"
    path.write_text(f"target: x86-h100\nmodels: [mlp]\nvary:\n{varied}")
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:5: vary.devices[gpu0].launch_us: devices[gpu0].{RULE}",
    ]


def test_a_bad_target_in_a_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("mdoe: timing\nmodels: [mlp]\ntarget: arm-riscv-sco\n")
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:1: mdoe: unknown key (did you mean 'mode'?)",
        f"{path}:3: target: unknown kind or tag 'arm-riscv-sco' (did you mean 'arm-riscv-soc'?)",
    ]


def test_a_misspelt_op_type_in_a_varied_ops_list_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text(
        "target: x86-h100\nmodels: [mlp]\nvary:\n"
        "  devices[gpu0].ops: [[Gemm, Relux], [Gemm, relu, Relux], ['*']]\n"
    )
    with pytest.raises(SweepError) as caught:
        load_sweep(path)  # every point that took one failed in its run, once the cluster was up
    expected = "expected an op type hetsim runs, or '*', got"
    assert [p.message for p in caught.value.problems] == [
        f"{path}:4: vary.devices[gpu0].ops[1]: {expected} 'Relux' (did you mean 'Relu'?)",
        f"{path}:4: vary.devices[gpu0].ops[1]: {expected} 'relu' (did you mean 'Relu'?)",
        f"{path}:4: vary.devices[gpu0].ops[2]: {expected} 'Relux' (did you mean 'Relu'?)",
    ]


def test_a_misspelt_op_type_in_the_target_is_reported_at_the_target_key(tmp_path: Path) -> None:
    (tmp_path / "soc.yaml").write_text(
        "kind: hetero\nhost: x86/xeon-8480c\ndevices:\n"
        "  - {name: gpu0, kind: cuda, ops: [Gemm, Relux]}\n"
    )
    path = tmp_path / "sweep.yaml"
    path.write_text(f"models: [mlp]\ntarget: soc.yaml\nvary:\n  {DISPATCH}: [1, 2]\n")
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:2: target: {tmp_path / 'soc.yaml'}:4: devices[gpu0].ops[1]: expected an op type "
        "hetsim runs, or '*', got 'Relux' (did you mean 'Relu'?)"
    ]


def test_axes_that_cannot_be_expanded_are_reported_without_the_points() -> None:
    data = {**BASE, "expand": "list", "vary": {DISPATCH: [1, 2], BANDWIDTH: [4, 8, 16]}}
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.message for p in caught.value.problems] == [
        "vary: expected lists of one length (expand: list zips them), got lengths "
        f"{DISPATCH}: 2, {BANDWIDTH}: 3"
    ]


def test_a_loaded_sweep_keeps_its_points_until_the_tags_change() -> None:
    spec = load_sweep({**BASE, "vary": {DISPATCH: [0.1, 0.2]}})
    points = spec.points()
    assert spec.points() is points  # validating built them; running reuses them
    TAGS.changed()
    again = spec.points()
    assert again is not points
    assert again == points


def test_a_bad_override_is_reported_once_for_all_its_points() -> None:
    data = {**BASE, "vary": {"host.freq_gz": [1, 2], DISPATCH: [0.1, 0.2, 0.3]}}
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.message for p in caught.value.problems] == [
        "vary.host.freq_gz: unknown attribute (did you mean 'freq_ghz'?)"
    ]


def test_a_bad_metric_in_a_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("target: arm-riscv-soc\nmodels: [mlp]\nmetric: processors\n")
    with pytest.raises(SweepError, match=_full(f"{path}:3: {METRIC_EXPECTED}, got 'processors'")):
        load_sweep(path)


def test_an_unsized_symbolic_dim_in_a_file_names_the_model_line(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("target: arm-riscv-soc\nmodels:\n  - mlp\n  - transformer\n")
    message = (
        f"{path}:4: models[1]: expected a size in dims for each symbolic dim of 'transformer', "
        "got none for 'seq'"
    )
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_yaml_1_1_exponent_in_a_range_suggests_the_number(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(
        "target: arm-riscv-soc\nmodels: [mlp]\nvary:\n"
        "  host.freq_ghz: {start: 1, stop: 1e9, num: 2}\n"
    )
    message = (
        f"{path}:4: vary.host.freq_ghz.stop: expected a number, got '1e9' (did you mean '1.0e+9'?)"
    )
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_two_spellings_of_one_path_are_the_same_path() -> None:
    dotted = "devices.vdevice0.host.freq_ghz"
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "vary": {"devices[vdevice0].host.freq_ghz": [1], dotted: [2]}})
    assert [p.message for p in caught.value.problems] == [
        "vary.devices[vdevice0].host.freq_ghz: expected separate paths, got the same path as "
        f"'{dotted}'",
        f"vary.{dotted}: expected separate paths, got the same path as "
        "'devices[vdevice0].host.freq_ghz'",
    ]


@pytest.mark.parametrize(("is_folder", "got"), [(True, "a directory"), (False, "no such file")])
def test_a_model_file_is_named_where_it_was_looked_for(
    tmp_path: Path, is_folder: bool, got: str
) -> None:
    # it said "m.onnx: ... got no such file", read from the current folder
    if is_folder:
        (tmp_path / "m.onnx").mkdir()
    path = tmp_path / "sweep.yaml"
    path.write_text("target: arm-riscv-soc\nmodels: [m.onnx]\n")
    message = f"{path}:2: models[0]: {tmp_path / 'm.onnx'}: expected an ONNX model file, got {got}"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_bad_target_file_follows_the_target_key(tmp_path: Path) -> None:
    # it read "target./.../soc.yaml:2: host.freq_ghz: ...", the file joined as an attribute
    soc = tmp_path / "soc.yaml"
    soc.write_text("kind: arm-cpu\nfreq_ghz: fast\n")
    path = tmp_path / "sweep.yaml"
    path.write_text("target: soc.yaml\nmodels: [mlp]\n")
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:1: target: {soc}:2: freq_ghz: expected a positive number, got 'fast'"
    ]


def test_a_target_file_that_is_a_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "soc.yaml").mkdir()
    path = tmp_path / "sweep.yaml"
    path.write_text("target: soc.yaml\nmodels: [mlp]\n")
    message = f"{path}:1: target: {tmp_path / 'soc.yaml'}: expected a target file, got a directory"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_missing_file_says_no_such_file(tmp_path: Path) -> None:
    path = tmp_path / "nonexist.yaml"
    with pytest.raises(SweepError, match=_full(f"{path}: expected a sweep file, got no such file")):
        load_sweep(path)


def test_a_directory_is_not_a_sweep_file(tmp_path: Path) -> None:
    with pytest.raises(
        SweepError, match=_full(f"{tmp_path}: expected a sweep file, got a directory")
    ):
        load_sweep(tmp_path)


def test_sized_symbolic_dims_and_iterations_1_are_valid() -> None:
    spec = load_sweep({**BASE, "models": ["transformer"], "dims": {"seq": 8}, "iterations": 1})
    assert dict(spec.points()[0].options) == {
        "mode": "timing",
        "seed": 0,
        "trace": False,
        "dims": {"seq": 8},
    }


def test_numpy_numbers_are_read_as_python_numbers() -> None:
    # np.int64 dims and seeds were refused (``dims.seq: expected an integer >= 0, got
    # np.int64(4)``) though simulate takes them; varied np.int64 values passed, then failed
    # the whole run as its records were written as JSON
    numbers = {
        **BASE,
        "models": ["transformer"],
        "vary": {"host.cores": list(np.arange(1, 3)), DISPATCH: [np.float32(0.5)]},
        "dims": {"seq": np.int64(4)},
        "seed": np.int64(3),
    }
    plain = {**numbers, "vary": {"host.cores": [1, 2], DISPATCH: [0.5]}, "dims": {"seq": 4}}
    plain["seed"] = 3
    points = load_sweep(numbers).points()
    assert [p.params for p in points] == [p.params for p in load_sweep(plain).points()]
    assert [p.id for p in points] == [p.id for p in load_sweep(plain).points()]
    assert [type(v) for _, v in points[0].values] == [int, float]
    assert dict(points[0].options) == {
        "mode": "timing",
        "seed": 3,
        "trace": False,
        "dims": {"seq": 4},
    }
    assert json.dumps(points[0].params) == (
        '{"model": "transformer", "host.cores": 1, "executor.dispatch_us": 0.5}'
    )


@pytest.mark.parametrize(
    "metric",
    [
        "makespan_us",
        "breakdown_us.sync_wait",
        "processors.vdevice0/npu.utilization",
        "links.host.mem--vdevice0/host.mem.bytes",
        "peak_memory_bytes.vdevice0/npu.mem",
    ],
)
def test_every_form_of_metric_is_valid(metric: str) -> None:
    assert load_sweep({**BASE, "metric": metric}).metric == metric


def test_a_file_that_is_not_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("target: [unclosed\n")
    message = f"{path}:2: expected YAML, got expected ',' or ']', but got '<stream end>'"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_file_nested_deeper_than_python_recurses_names_the_file(tmp_path: Path) -> None:
    # PyYAML's RecursionError came out as a traceback; a target file said the same words
    path = tmp_path / "deep.yaml"
    path.write_text(
        "target: x86-h100\nmodels: [mlp]\nvary: {executor.dispatch_us: "
        + "[" * 900
        + "]" * 900
        + "}\n"
    )
    message = f"{path}: expected YAML, got maximum recursion depth exceeded"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_mapping_nested_deeper_than_python_recurses_is_refused_at_its_path() -> None:
    # a RecursionError came out as a traceback (from the checks, and from reading numpy values)
    deep: dict[str, object] = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    message = (
        "vary" + ".a" * 99 + ": expected lists and mappings nested at most 100 deep, got deeper"
    )
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep({"target": "x86-h100", "models": ["mlp"], "vary": deep})


@pytest.mark.parametrize(
    "other", ["./m.onnx", "sub/../m.onnx", "{folder}/m.onnx"], ids=["dot", "dotdot", "absolute"]
)
def test_one_model_file_named_two_ways_is_refused(other: str, tmp_path: Path) -> None:
    # both points had one id: the results file kept one, and --resume refused it
    pytest.importorskip("onnx")
    from hetsim.models import light_model_path

    shutil.copyfile(light_model_path("alexnet"), tmp_path / "m.onnx")
    (tmp_path / "sub").mkdir()
    other = other.format(folder=tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(f"target: arm-riscv-soc\nmodels:\n  - m.onnx\n  - {other}\n")
    message = (
        f"{path}:2: models: expected distinct models, got one file named 'm.onnx' and {other!r}"
    )
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_sweep_file_read_through_a_symlink_reads_the_files_beside_it(tmp_path: Path) -> None:
    # the link's folder was read: "elsewhere/m.onnx: expected an ONNX model file, got no such
    # file", where docs/sweeps.md says a sweep file by another path has the same points
    pytest.importorskip("onnx")
    from hetsim.models import light_model_path

    (tmp_path / "real").mkdir()
    (tmp_path / "elsewhere").mkdir()
    shutil.copyfile(light_model_path("squeezenet"), tmp_path / "real" / "m.onnx")
    real = tmp_path / "real" / "s.yaml"
    real.write_text("target: arm-riscv-soc\nmodels: [m.onnx]\n")
    link = tmp_path / "elsewhere" / "s.yaml"
    link.symlink_to(real)
    by_link, by_file = load_sweep(link), load_sweep(real)
    assert by_link.hash == by_file.hash
    assert [p.params for p in by_link.points()] == [p.params for p in by_file.points()]


def test_grid_crosses_models_and_values_in_order() -> None:
    spec = load_sweep({**BASE, "models": ["mlp", "cnn"], "vary": {DISPATCH: [0.1, 0.2]}})
    params = [(p.index, p.params["model"], p.params[DISPATCH]) for p in spec.points()]
    assert params == [(0, "mlp", 0.1), (1, "mlp", 0.2), (2, "cnn", 0.1), (3, "cnn", 0.2)]


def test_list_zips_values() -> None:
    vary = {DISPATCH: [0.1, 0.2], BANDWIDTH: [4, 8]}
    spec = load_sweep({**BASE, "expand": "list", "vary": vary})
    assert [p.params for p in spec.points()] == [
        {"model": "mlp", DISPATCH: 0.1, BANDWIDTH: 4},
        {"model": "mlp", DISPATCH: 0.2, BANDWIDTH: 8},
    ]


@pytest.mark.parametrize("expand", ["grid", "list"])
def test_nothing_varied_makes_a_point_per_model_and_option(expand: str) -> None:
    # zipping no lists made no combination: an empty sweep, "0 points, 0 failed", exit 0
    spec = load_sweep({**BASE, "models": ["mlp", "cnn"], "expand": expand,
                       "strategies": ["none", "regions"]})  # fmt: skip
    assert [p.params for p in spec.points()] == [
        {"model": model, "cuda_graph": strategy}
        for model in ("mlp", "cnn")
        for strategy in ("none", "regions")
    ]


def test_a_varied_model_or_cuda_graph_attribute_keeps_points_apart() -> None:
    # a one-device target's own "model" and "cuda_graph" had the keys of the point's model and
    # strategy: mlp's and cnn's points had one id, and the results kept one of them
    spec = load_sweep({"target": "nvidia/h100", "models": ["mlp", "cnn"],
                       "strategies": ["none"],
                       "vary": {"model": ["H100 A"], "cuda_graph": [True, False]}})  # fmt: skip
    assert spec.varied == ("target.model", "target.cuda_graph")
    points = spec.points()
    assert [p.params for p in points] == [
        {"model": model, "target.model": "H100 A", "target.cuda_graph": flag, "cuda_graph": "none"}
        for model in ("mlp", "cnn")
        for flag in (True, False)
    ]
    assert len({p.id for p in points}) == 4
    assert [p.target.devices[0].attrs["cuda_graph"] for p in points] == [True, False] * 2


def test_point_target_equals_the_hand_written_override() -> None:
    spec = load_sweep({**BASE, "vary": {BANDWIDTH: [4], DISPATCH: [0.3]}})
    expected = Target(
        {
            "tag": "arm-riscv-soc",
            "executor": {"dispatch_us": 0.3},
            "devices": {"vdevice0": {"link": {"bandwidth_gbps": 4}}},
        }
    )
    assert spec.points()[0].target == expected


def test_policies_and_strategies_become_simulate_options() -> None:
    spec = load_sweep({**BASE, "policies": ["cost", None], "strategies": ["whole"]})
    assert [p.params for p in spec.points()] == [
        {"model": "mlp", "partition": "cost", "cuda_graph": "whole"},
        {"model": "mlp", "cuda_graph": "whole"},
    ]
    assert dict(spec.points()[0].options) == {"mode": "timing", "seed": 0, "trace": False}


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"start": 0.1, "stop": 0.7, "step": 0.2}, [0.1, 0.3, 0.5, 0.7]),
        ({"start": 2, "stop": 10, "step": 4}, [2, 6, 10]),
        ({"start": 10, "stop": 1, "step": -4}, [10, 6, 2]),
        ({"start": 0.0, "stop": 1.0, "num": 5}, [0.0, 0.25, 0.5, 0.75, 1.0]),
        ({"start": 3, "stop": 9, "num": 1}, [3.0]),
    ],
)
def test_ranges_expand_to_values(values: dict[str, Any], expected: list[float]) -> None:
    spec = load_sweep({**BASE, "vary": {DISPATCH: values}})
    assert list(spec.axes[0].values) == expected


def test_override_paths_parse_to_nested_keys() -> None:
    assert parse_path("devices[vdevice0].devices[npu].freq_ghz") == (
        "devices",
        "vdevice0",
        "devices",
        "npu",
        "freq_ghz",
    )
    assert override_tree(((BANDWIDTH, 4), ("devices[vdevice0].host.freq_ghz", 1.0))) == {
        "devices": {"vdevice0": {"link": {"bandwidth_gbps": 4}, "host": {"freq_ghz": 1.0}}}
    }
    message = "expected a path such as devices[vdevice0].host.freq_ghz, got 'devices..x'"
    with pytest.raises(ValueError, match=_full(message)):
        parse_path("devices..x")


def test_hash_ignores_name_and_metric_but_not_values() -> None:
    first = load_sweep({**BASE, "vary": {DISPATCH: [0.1]}})
    renamed = load_sweep(
        {**BASE, "vary": {DISPATCH: [0.1]}, "name": "x", "metric": "breakdown_us.idle"}
    )
    other = load_sweep({**BASE, "vary": {DISPATCH: [0.2]}})
    assert first.hash == renamed.hash != other.hash
    assert first.points()[0].id == renamed.points()[0].id


def test_example_sweep_is_valid() -> None:
    spec = load_sweep(EXAMPLE)
    assert (spec.name, len(spec.points()), spec.varied) == (
        "arm-riscv-link-and-dispatch",
        32,
        (DISPATCH, BANDWIDTH),
    )


def test_a_value_may_be_a_mapping() -> None:
    links = [{"bandwidth_gbps": 4, "latency_us": 1}, {"bandwidth_gbps": 8, "latency_us": 3}]
    spec = load_sweep({**BASE, "vary": {"devices[vdevice0].link": links}})
    assert [dict(p.target.devices[0].attrs["link"]) for p in spec.points()] == [
        {"bandwidth_gbps": 4.0, "latency_us": 1.0},
        {"bandwidth_gbps": 8.0, "latency_us": 3.0},
    ]


CONV_ON_HOST = [{"op": "Conv", "device": "host"}]


def test_rules_points_run_the_rules_of_the_sweep(tmp_path: Path) -> None:
    """The ``rules`` key (a file next to the sweep, read when the sweep loads) goes to the
    ``rules`` points only; such a point equals `simulate` with those rules."""
    (tmp_path / "place.yaml").write_text("- {op: Conv, device: host}\n")
    (tmp_path / "s.yaml").write_text(
        "target: arm-riscv-soc\nmodels: [cnn]\npolicies: [capability, rules]\nrules: place.yaml\n"
    )
    spec = load_sweep(tmp_path / "s.yaml")
    assert spec.rules == (("Conv", "host"),)
    capability, rules = spec.points()
    assert "rules" not in dict(capability.options)
    expected = simulate("cnn", "arm-riscv-soc", mode="timing", trace=False, partition="rules",
                        rules=CONV_ON_HOST)  # fmt: skip
    assert simulate_point(rules) == expected.to_dict()
    convs = {op: where for op, where in expected.placement.items() if op.startswith("conv")}
    assert convs == {"conv1": "host", "conv2": "host"}  # capability puts them on the NPU


def test_rules_are_part_of_the_hash_only_when_given() -> None:
    # pinned: a change to what the hash covers refuses every results file written before it
    # (as does a change to the target: arm-riscv-soc's CPUs took uint16-uint64 in their dtypes)
    assert load_sweep({**BASE}).hash == "4fee5192490d9ebb"
    first = load_sweep({**BASE, "policies": ["rules"], "rules": CONV_ON_HOST})
    other = load_sweep({**BASE, "policies": ["rules"], "rules": [{"op": "Gemm", "device": "host"}]})
    assert first.hash != other.hash
    assert first.points()[0].id == other.points()[0].id  # a point is its params: model, policy


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"policies": ["rules"]},
            "rules: expected a rules file or a list of {op, device} for policy 'rules' "
            "(required with it)",
        ),
        (
            {"rules": CONV_ON_HOST},
            "rules: expected policy 'rules' in policies (no other policy reads rules)",
        ),
        (
            {"policies": ["rules"], "rules": [{"op": "Conv"}]},
            "rules[0].device: expected a value (required)",
        ),
        (
            {"policies": ["rules"], "rules": [{"op": "Conv", "device": "vdevice0/nup"}]},
            "rules[0].device: expected a processor or level of platform arm-riscv-soc, got "
            "'vdevice0/nup' (did you mean 'vdevice0/npu'?)",
        ),
        (
            {"policies": ["rules"], "rules": "nope.yaml"},
            "rules: expected a YAML file or a list of rules, got 'nope.yaml' (no such file)",
        ),
    ],
)
def test_bad_rules_are_reported_before_any_point_runs(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep({**BASE, **changes})


def test_a_rule_device_is_checked_when_a_point_target_is_bad() -> None:
    # the rule's unknown device was reported only once the varied value was mended
    data = {**BASE, "policies": ["rules"], "rules": [{"op": "*", "device": "vdevice9"}]}
    with pytest.raises(SweepError) as caught:
        load_sweep({**data, "vary": {DISPATCH: [-1, 1]}})
    assert [p.message for p in caught.value.problems] == [
        f"vary.{DISPATCH}: expected a non-negative number, got -1",
        "rules[0].device: expected a processor or level of platform arm-riscv-soc, got "
        "'vdevice9' (did you mean 'vdevice0'?)",
    ]


@pytest.mark.parametrize("in_file", [False, True], ids=["listed", "rules-file"])
def test_a_rule_device_a_varied_name_renamed_says_so(tmp_path: Path, in_file: bool) -> None:
    # "platform x86-h100" has gpu0: the sweep's first point, whose gpu0 is g1, does not; a note
    # put after the rule's message had landed after its "got" for a rules file
    (tmp_path / "place.yaml").write_text("- {op: fc1, device: gpu0}\n")
    rules: Any = "place.yaml" if in_file else [{"op": "fc1", "device": "gpu0"}]
    path = tmp_path / "s.yaml"
    path.write_text(
        "target: x86-h100\nmodels: [mlp]\npolicies: [rules]\n"
        f"rules: {json.dumps(rules)}\nvary:\n  devices[gpu0].name: [g1]\n"
    )
    rule = f"rules: {tmp_path / 'place.yaml'}:1: rules[0].device" if in_file else "rules[0].device"
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert str(caught.value).splitlines() == [
        f"{path}:4: {rule}: expected a processor or level of platform x86-h100, got 'gpu0'",
        f"{path}:6: vary.devices[gpu0].name: expected names that keep the devices the rules name "
        "('gpu0'): rules are checked against the first point's platform",
    ]


def test_no_rename_note_for_a_rule_device_no_platform_has(tmp_path: Path) -> None:
    data = {
        "target": "x86-h100",
        "models": ["mlp"],
        "policies": ["rules"],
        "rules": [{"op": "fc1", "device": "gpu9"}],
        "vary": {"devices[gpu0].name": ["g1"]},
    }
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.message for p in caught.value.problems] == [
        "rules[0].device: expected a processor or level of platform x86-h100, got 'gpu9'"
    ]


@pytest.mark.parametrize(
    ("device", "renamed"), [("node0/gpu0", "node0"), ("node1", "node1")], ids=["device", "level"]
)
def test_only_the_rename_of_a_rule_device_or_its_level_is_named(device: str, renamed: str) -> None:
    # every varied name was blamed, the other node's too
    data = {
        "target": "two-node-h100",
        "models": ["mlp"],
        "policies": ["rules"],
        "rules": [{"op": "fc1", "device": device}],
        "vary": {"devices[node0].name": ["n0"], "devices[node1].name": ["n1"]},
    }
    with pytest.raises(SweepError) as caught:
        load_sweep(data)
    assert [p.path for p in caught.value.problems] == [
        "rules[0].device",
        f"vary.devices[{renamed}].name",
    ]
    assert caught.value.problems[-1].expected == (
        f"expected names that keep the devices the rules name ({device!r}): rules are checked "
        "against the first point's platform"
    )


def test_a_bad_target_is_reported_when_the_points_cannot_be_made() -> None:
    # paths inside one another stop the points being made: the unknown tag waited for a rerun
    vary = {DISPATCH: [1], "executor": [{"kind": "vm"}]}
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "target": "arm-riscv-sco", "vary": vary})
    assert [p.message for p in caught.value.problems] == [
        f"vary.{DISPATCH}: expected separate paths, got a path inside 'executor'",
        "target: unknown kind or tag 'arm-riscv-sco' (did you mean 'arm-riscv-soc'?)",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "- {op: Conv, device: host, devic: host}\n",
            "1: rules[0].devic: unknown key (did you mean 'device'?)",
        ),
        # a bad device: it named the sweep file's line as if the rule were in the sweep file
        (
            "# placement\nrules:\n  # the host\n  - {op: Relu, device: host}\n"
            "  # the NPU\n  - {op: Gemm, device: vdevice0/npux}\n",
            "6: rules[1].device: expected a processor or level of platform arm-riscv-soc, got "
            "'vdevice0/npux' (did you mean 'vdevice0/npu'?)",
        ),
    ],
    ids=["form", "device"],
)
def test_a_bad_rule_in_a_rules_file_names_both_files_and_lines(
    tmp_path: Path, text: str, problem: str
) -> None:
    rules = tmp_path / "place.yaml"
    rules.write_text(text)
    (tmp_path / "s.yaml").write_text(
        "target: arm-riscv-soc\nmodels: [mlp]\npolicies: [rules]\nrules: place.yaml\n"
    )
    message = f"{tmp_path / 's.yaml'}:4: rules: {rules}:{problem}"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(tmp_path / "s.yaml")


def test_an_integer_range_evenly_apart_gives_integers() -> None:
    # 1.0, 2.0, ... failed an integer attribute's check, though the file wrote integers
    spec = load_sweep(
        {
            **BASE,
            "vary": {"devices[vdevice0].devices[npu].cores": {"start": 1, "stop": 4, "num": 4}},
        }
    )
    assert spec.axes[0].values == (1, 2, 3, 4)
    spec = load_sweep({**BASE, "vary": {DISPATCH: {"start": 1, "stop": 4, "num": 3}}})
    assert spec.axes[0].values == (1.0, 2.5, 4.0)


def test_a_sweep_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    # it raised UnicodeDecodeError
    path = tmp_path / "garbage.yaml"
    path.write_bytes(b"name: x\n\x8d\xff")
    message = f"{path}: expected a sweep file, got bytes that are not UTF-8 (at byte 8)"
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


def test_a_model_name_with_a_nul_is_a_sweep_error() -> None:
    # Path.stat's "embedded null byte" ValueError came out of load_sweep bare
    with pytest.raises(SweepError) as err:
        load_sweep({"target": "x86-h100", "models": ["a\0b.onnx"]})
    where = Path.cwd() / "a\0b.onnx"  # looked for there: a worker elsewhere looks there too
    shown = str(where).replace("\0", "\\x00")  # a control character, escaped
    assert str(err.value) == f"models[0]: {shown}: expected an ONNX model file, got no such file"


@pytest.mark.parametrize("in_file", [False, True], ids=["listed", "rules-file"])
def test_a_rule_in_another_case_is_refused_at_load(tmp_path: Path, in_file: bool) -> None:
    # every point failed as it ran (a PartitionError naming no file), after the cluster started
    problem = (
        "rules[0].op: expected an op type or a glob over op names, got 'relu', which matches no "
        "op; rules match case-sensitively (did you mean 'Relu'?)"
    )
    rules = "[{op: relu, device: host}]"
    if in_file:
        (tmp_path / "place.yaml").write_text("- {op: relu, device: host}\n")
        rules = "place.yaml"
        problem = f"rules: {tmp_path / 'place.yaml'}:1: {problem}"
    (tmp_path / "s.yaml").write_text(
        f"target: arm-riscv-soc\nmodels: [mlp]\npolicies: [rules]\nrules: {rules}\n"
    )
    with pytest.raises(SweepError, match=_full(f"{tmp_path / 's.yaml'}:4: {problem}")):
        load_sweep(tmp_path / "s.yaml")


def test_a_rule_a_varied_value_breaks_is_reported_at_its_key(tmp_path: Path) -> None:
    # the runtime, which no value sets, refuses the varied executor: the problem was reported at
    # 'vary:' (line 3) under a path the file never wrote, vary.devices[vdevice0].runtime
    path = tmp_path / "s.yaml"
    path.write_text(
        "target: arm-riscv-soc\nmodels: [mlp]\nvary:\n"
        "  devices[vdevice0].devices[npu].memory_gib: [0, 1]\n"
        "  devices[vdevice0].executor: [vm]\n"
    )
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert [p.message for p in caught.value.problems] == [
        f"{path}:5: vary.devices[vdevice0].executor: devices[vdevice0].runtime: expected a "
        "runtime that runs executor 'vm', got 'crt' (runs graph)"
    ]


def test_a_toml_sweep_file_is_refused_by_name(tmp_path: Path) -> None:
    # read as YAML, its text was one string: "sweep: expected a mapping of keys, got 'target =
    # ...'" (found by a sweep audit)
    path = tmp_path / "s.toml"
    path.write_text('target = "arm-riscv-soc"\nmodels = ["mlp"]\n')
    message = (
        f"{path}: expected a YAML or JSON sweep file, got a TOML file (TOML has no null, which "
        "a sweep's policies and strategies take)"
    )
    with pytest.raises(SweepError, match=_full(message)):
        load_sweep(path)


# --- varied dims: dims: {seq: [sizes]} -------------------------------------------------------


def test_a_list_of_sizes_varies_a_dim_a_point_per_size() -> None:
    # one sweep file per size had been the only way (dims: {seq: [8, 16]} was refused)
    data = {
        **BASE,
        "target": "x86-h100",
        "models": ["transformer", "mlp"],
        "dims": {"seq": [8, 16]},
        "vary": {"devices[gpu0].launch_us": [2, 4]},
    }
    spec = load_sweep(data)
    assert spec.varied == ("devices[gpu0].launch_us", "dims.seq")
    points = spec.points()
    assert [(p.model, p.params.get("dims.seq"), p.params["devices[gpu0].launch_us"])
            for p in points] == [
        ("transformer", 8, 2), ("transformer", 8, 4), ("transformer", 16, 2),
        ("transformer", 16, 4), ("mlp", 8, 2), ("mlp", 8, 4), ("mlp", 16, 2), ("mlp", 16, 4),
    ]  # fmt: skip
    for point in points[:4]:  # each equals simulate at its size and launch cost
        seq, launch_us = point.params["dims.seq"], point.params["devices[gpu0].launch_us"]
        target = {"tag": "x86-h100", "devices": {"gpu0": {"launch_us": launch_us}}}
        expected = simulate("transformer", target, mode="timing", dims={"seq": seq}, trace=False)
        assert simulate_point(point) == expected.to_dict()
    assert len({p.id for p in points}) == len(points)
    fixed = load_sweep({**data, "dims": {"seq": 8}})
    assert fixed.hash != spec.hash
    assert [p.id for p in fixed.points()] != [p.id for p in points[::2]]


def test_a_range_of_sizes_varies_a_dim_and_fixed_dims_stay() -> None:
    data = {**BASE, "models": ["transformer"], "dims": {"seq": {"start": 8, "stop": 32, "step": 8}}}
    points = load_sweep(data).points()
    assert [p.params["dims.seq"] for p in points] == [8, 16, 24, 32]
    assert [dict(p.options)["dims"] for p in points] == [{"seq": s} for s in (8, 16, 24, 32)]
    assert all(type(p.params["dims.seq"]) is int for p in points)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([8, -1], "dims.seq: expected integers >= 0, got -1"),
        ([8, 2.5], "dims.seq: expected integers >= 0, got 2.5"),
        ([8, 8], "dims.seq: expected distinct values, got [8, 8]"),
        ([], "dims.seq: expected a non-empty list of values or {start, stop, step|num}, got []"),
    ],
)
def test_bad_sizes_of_a_varied_dim_are_refused(sizes: list[Any], message: str) -> None:
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "models": ["transformer"], "dims": {"seq": sizes}})
    assert [p.message for p in caught.value.problems] == [message]


def test_a_misspelt_varied_dim_is_reported_as_a_fixed_one_is() -> None:
    with pytest.raises(SweepError) as caught:
        load_sweep({**BASE, "models": ["mlp"], "dims": {"sq": [8, 16]}})
    assert [p.message for p in caught.value.problems] == [
        "dims.sq: expected a symbolic dim of the models (none), got 'sq'"
    ]
