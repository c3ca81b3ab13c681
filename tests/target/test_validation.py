"""Validation: every rule, each error asserted with its full message and path."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hetsim.errors import HetsimError, TargetError
from hetsim.target import Target, resolve
from hetsim.target.resolve import MAX_DEPTH, MAX_NODES

SOC = {
    "kind": "hetero",
    "host": "arm-cpu",
    "devices": [
        {
            "name": "vdevice0",
            "kind": "hetero",
            "host": "riscv-cpu",
            "executor": "graph",
            "devices": [{"kind": "npu", "name": "npu"}],
        },
    ],
}


def _messages(spec: Any) -> list[str]:
    with pytest.raises(TargetError) as err:
        Target(spec)
    return [p.message for p in err.value.problems]


def _with(**level: Any) -> dict[str, Any]:
    return {"kind": "hetero", "devices": ["npu"], **level}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"kind": "cuda", "host": {"kind": "arm-cpu", "freq_ghz": "fast"}},
            "host.freq_ghz: expected a positive number, got 'fast'",
        ),
        (_with(host="cuda"), "host: kind 'cuda' cannot host (a host needs can_host)"),
        (_with(host="npu"), "host: kind 'npu' cannot host (a host needs can_host)"),
        (
            _with(host=_with()),
            "host: kind 'hetero' cannot host (a host needs can_host): it is a level, as is a "
            "processor written with a host, executor or runtime of its own",
        ),
        (  # a processor with a host of its own is wrapped into a level: it said only 'hetero'
            _with(host={"kind": "x86-cpu", "host": "arm-cpu"}),
            "host: kind 'hetero' cannot host (a host needs can_host): it is a level, as is a "
            "processor written with a host, executor or runtime of its own",
        ),
        (_with(devices=[]), "devices: expected at least one device, got []"),
        ({"kind": "hetero"}, "devices: expected at least one device, got none"),
        (
            _with(devices=[{"kind": "npu", "name": "a"}, {"kind": "cuda", "name": "a"}]),
            "devices[1]: expected unique device names, got 'a' again (the name of devices[0])",
        ),
        (
            _with(devices=["npu", {"kind": "npu", "name": "dev0"}]),
            "devices[1]: expected unique device names, got 'dev0' again (the name of devices[0])",
        ),
        (
            _with(devices=[{"kind": "npu", "name": "a b"}]),
            "devices[a b].name: expected a name matching '[A-Za-z_][A-Za-z0-9_.-]*', got 'a b'",
        ),
        (
            _with(devices=[{"kind": "npu", "name": 3}]),
            "devices[dev0].name: expected a name matching '[A-Za-z_][A-Za-z0-9_.-]*', got 3",
        ),
        (
            _with(host={"kind": "arm-cpu", "name": "cpu"}),
            "host.name: expected 'host' (a host is always named so), got 'cpu'",
        ),
        (
            _with(devices=[{"kind": "cuda", "name": "host"}]),
            "devices[host].name: expected a name other than 'host' (the level's host is named "
            "so), got 'host'",
        ),
        (
            _with(devices=[{"kind": "hetero", "name": "host", "devices": ["npu"]}]),
            "devices[host].name: expected a name other than 'host' (the level's host is named "
            "so), got 'host'",
        ),
        (
            _with(devices=[_with(name="v", devices=[{"kind": "npu", "name": "host"}])]),
            "devices[v].devices[host].name: expected a name other than 'host' (the level's host "
            "is named so), got 'host'",
        ),
        (
            {"kind": "cuda", "name": "host"},
            "name: expected a name other than 'host' (the level's host is named so), got 'host'",
        ),
        (
            _with(devices=[{"kind": "npu", "name": 10**5000}]),  # repr() raises past 4,300 digits
            "devices[dev0].name: expected a name matching '[A-Za-z_][A-Za-z0-9_.-]*', "
            "got a 5001-digit integer",
        ),
        (
            _with(host={"kind": "x86-cpu", "memory_gib": 1e300}),
            "host.memory_gib: expected a finite number <= 8388608 (2^53 bytes), got 1e+300",
        ),
        (
            {"kind": "cuda", "memory_gib": math.inf},
            "memory_gib: expected a finite number <= 8388608 (2^53 bytes), got inf",
        ),
        (
            {"kind": "cuda", "cores": 10**400},
            "cores: expected an integer <= 1.7976931348623157e+308 (the largest "
            "float), got a 401-digit integer",
        ),
        (
            {"kind": "cuda", "graph_node_bytes": 2**60},
            "graph_node_bytes: expected an integer <= 9007199254740992 (2^53 "
            "bytes), got 1152921504606846976",
        ),
        (
            {"kind": "cuda", "freq_ghz": math.nan},
            "freq_ghz: expected a finite number, got nan",
        ),
        (
            {"kind": "npu", "link": {"bandwidth_gbps": math.inf}},
            "link.bandwidth_gbps: expected a finite number, got inf",
        ),
        (
            _with(executor={"kind": "vm", "dispatch_us": math.inf}),
            "executor.dispatch_us: expected a finite number, got inf",
        ),
        (
            _with(runtime="crt"),
            "runtime: expected a runtime that runs executor 'vm', got 'crt' (runs graph)",
        ),
        (
            _with(executor="graph", devices=[{"kind": "cuda", "cuda_graph": True, "name": "gpu0"}]),
            "devices[gpu0].cuda_graph: expected an executor that can capture CUDA graphs "
            "(can_capture), got executor 'graph'",
        ),
        (
            {"kind": "cuda", "graph_node_us": 6.0},
            "graph_node_us: expected at most launch_us "
            "(3.24; a replayed node costs no "
            "more than a launch), got 6.0",
        ),
        (
            {"kind": "npu", "ops": ["*", "Conv"]},
            "ops: expected ['*'] alone or a list without '*', got ['*', 'Conv']",
        ),
        (
            {"kind": "cuda", "cores": True},
            "cores: expected an integer >= 1, got True",
        ),
        ({"kind": "cuda", "cores": -4}, "cores: expected an integer >= 1, got -4"),
        ({"kind": "cuda", "cores": 4.0}, "cores: expected an integer >= 1, got 4.0"),
        (
            {"kind": "cuda", "cuda_graph": 1},
            "cuda_graph: expected true or false, got 1",
        ),
        (
            {"kind": "npu", "dtypes": ["float32", "float8"]},
            "dtypes[1]: expected one of 'float64', 'float32', 'float16', 'bfloat16', "
            "'int64', 'int32', 'int16', 'int8', 'uint64', 'uint32', 'uint16', 'uint8', 'bool', "
            "got 'float8'",
        ),
        (
            {"kind": "npu", "efficiency": {"matmul": 1.5}},
            "efficiency.matmul: expected a number in (0, 1], got 1.5",
        ),
        (
            {"kind": "npu", "efficiency": {"matmull": 0.5}},
            "efficiency.matmull: unknown attribute (did you mean 'matmul'?)",
        ),
        (
            {"kind": "cuda", "arch": "90"},
            "arch: expected a string matching 'sm_\\\\d+a?', got '90'",
        ),
        (
            {"kind": "cuda", "freq_gz": 1.0},
            "freq_gz: unknown attribute (did you mean 'freq_ghz'?)",
        ),
        (
            _with(executor={"kind": "graph", "is_static": False}),
            "executor.is_static: expected true, got False",
        ),
        (_with(executor={"kind": "vm", "node_us": 1.0}), "executor.node_us: unknown attribute"),
        (_with(executor="vmm"), "executor: unknown kind or tag 'vmm' (did you mean 'vm'?)"),
        (_with(executor="cpp"), "executor: expected an executor, got runtime kind 'cpp'"),
        (
            _with(runtime={"kind": "vm"}),
            "runtime.kind: expected a runtime kind, got executor kind 'vm'",
        ),
        (_with(host="vm"), "host: expected a target, got executor kind 'vm'"),
        ({"kind": "cdua"}, "kind: unknown kind 'cdua' (did you mean 'cuda'?)"),
        ({"kind": 3}, "kind: expected a target kind name, got 3"),
        ("cdua", "unknown kind or tag 'cdua' (did you mean 'cuda'?)"),
        ("CUDA", "unknown kind or tag 'CUDA' (did you mean 'cuda'?)"),  # had no hint: case
        ({"kind": "NPU"}, "kind: unknown kind 'NPU' (did you mean 'npu'?)"),
        ("nvidia/h10", "unknown tag 'nvidia/h10' (did you mean 'nvidia/h100'?)"),
        ({"tag": "nope/x"}, "tag: unknown tag 'nope/x'"),
        ({"tag": 5}, "tag: expected a tag name, got 5"),
        ({"cores": 2}, "expected a 'kind' or a 'tag', got neither"),
        (5, "expected a target name or a mapping, got 5"),
        ({"kind": "hetero", "devices": "npu"}, "devices: expected a list of targets, got 'npu'"),
        (
            {"kind": "hetero", "devices": {"a": "npu"}},
            "devices: expected a list of targets (a mapping merges into a tag's devices), "
            "got a mapping",
        ),
        ({"kind": "npu", 7: 1}, "7: expected a string key, got int"),
        (
            {"tag": "arm/cortex-a72", "kind": "cuda"},
            "kind: expected 'arm-cpu' (from tag arm/cortex-a72), got 'cuda'",
        ),
        (
            {"tag": "arm-riscv-soc", "devices": {"vdevic0": {}}},
            "devices[vdevic0]: unknown device (did you mean 'vdevice0'?)",
        ),
    ],
)
def test_error_message(spec: Any, message: str) -> None:
    assert _messages(spec) == [message]


def test_the_issue_examples_are_reported_together_with_their_paths() -> None:
    spec = {
        "tag": "arm-riscv-soc",
        "devices": {"vdevice0": {"host": {"freq_ghz": "fast"}, "link": {"bandwith_gbps": 8}}},
    }
    assert sorted(_messages(spec)) == [
        "devices[vdevice0].host.freq_ghz: expected a positive number, got 'fast'",
        "devices[vdevice0].link.bandwith_gbps: unknown attribute (did you mean 'bandwidth_gbps'?)",
    ]


def test_every_problem_of_a_tree_is_reported_at_once() -> None:
    spec = {
        "kind": "hetero",
        "host": "cuda",
        "runtime": "crt",
        "devices": [{"kind": "npu", "cores": 0}, {"kind": "cdua"}],
    }
    assert _messages(spec) == [
        "devices[dev0].cores: expected an integer >= 1, got 0",
        "devices[dev1].kind: unknown kind 'cdua' (did you mean 'cuda'?)",
        "host: kind 'cuda' cannot host (a host needs can_host)",
        "runtime: expected a runtime that runs executor 'vm', got 'crt' (runs graph)",
    ]


def test_target_error_is_a_hetsim_error_and_a_value_error() -> None:
    with pytest.raises(HetsimError):
        Target("cdua")
    with pytest.raises(ValueError, match=r"^unknown kind or tag 'cdua'"):
        Target("cdua")


def test_a_too_deep_tree_is_an_error() -> None:
    spec: dict[str, Any] = {"kind": "npu"}
    for _ in range(MAX_DEPTH + 2):
        spec = {"kind": "hetero", "devices": [spec]}
    messages = _messages(spec)
    assert messages == [
        "devices[dev0]"
        + ".devices[dev0]" * MAX_DEPTH
        + f": expected at most {MAX_DEPTH} nested levels, got level {MAX_DEPTH + 1}"
    ]


def test_a_too_deep_tree_is_reported_once() -> None:
    # each level's host and devices below the limit each reported it, the path ever longer
    spec: dict[str, Any] = {"kind": "cuda"}
    for _ in range(MAX_DEPTH + 2):
        spec = {"kind": "hetero", "host": "x86-cpu", "devices": [spec]}
    assert len(_messages(spec)) == 1


def test_a_tree_too_large_is_an_error(
    tag_folder: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each tag doubles the one below: ten copies of grow/l9 hold over 20,000 targets.
    files = {"grow/l0.yaml": "kind: hetero\ndevices: [npu, npu]\n"}
    for level in range(1, 10):
        files[f"grow/l{level}.yaml"] = f"kind: hetero\ndevices: [grow/l{level - 1}] * 2\n"
        files[f"grow/l{level}.yaml"] = (
            f"kind: hetero\ndevices: [grow/l{level - 1}, grow/l{level - 1}]\n"
        )
    tag_folder(files)
    with pytest.raises(TargetError) as err:
        Target({"kind": "hetero", "devices": ["grow/l9"] * 10})
    # 10 x (1023 levels, their 1023 hosts and 1024 NPUs), and the root and its host
    assert str(err.value) == f"expected at most {MAX_NODES} targets in one tree, got 30702"
    # a tree far larger stops while it is being made, where it was at that moment, once the
    # work passes EXPANSIONS_PER_NODE per target allowed (a smaller limit: the same rule, sooner)
    monkeypatch.setattr(resolve, "MAX_NODES", 300)
    with pytest.raises(
        TargetError,
        match=r"^devices\[dev\d\].*: expected at most 300 targets in one tree, got more$",
    ):
        Target({"kind": "hetero", "devices": ["grow/l9"] * 4})


def test_an_exported_tree_of_thousands_of_targets_reads_back() -> None:
    # each node of an export names its tag, expanded and then overridden: its expansions were
    # counted as targets, and 2102 targets read back as "expected at most 10000 targets"
    target = Target({"kind": "hetero", "devices": ["x86-h100"] * 700})
    assert 1 + sum(1 for _ in target.walk()) == 2102
    assert Target(target.export()) == target


def test_a_target_file_is_read_as_every_reader_reads_a_file(tmp_path: Path) -> None:
    # its own wording ("expected a readable text file, got 'utf-8' codec can't decode ...")
    # went with its own reading, beside hetsim.located.text_of's
    latin = tmp_path / "soc.yaml"
    latin.write_bytes(b"kind: cuda\nname: caf\xe9\n")
    with pytest.raises(TargetError) as caught:
        Target.load(latin)
    assert str(caught.value) == (
        f"{latin}: expected a target file, got bytes that are not UTF-8 (at byte 20)"
    )


def test_invalid_json_and_missing_files_are_target_errors(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"^spec: expected valid JSON, got Expecting"):
        Target('{"kind": cuda}')
    missing = tmp_path / "none.yaml"
    with pytest.raises(
        TargetError, match=rf"^{missing}: expected a target file, got no such file$"
    ):
        Target.load(missing)
    bad = tmp_path / "t.txt"
    bad.write_text("kind: cuda")
    with pytest.raises(
        TargetError,
        match=rf"^{bad}: expected a file ending in .yaml, .yml, "
        r"\.json, \.toml, got '\.txt'$",
    ):
        Target.load(bad)
    broken = tmp_path / "t.toml"
    broken.write_text("kind = ")
    with pytest.raises(TargetError, match=rf"^{broken}: expected valid toml, got "):
        Target.load(broken)


def _problems_of_file(path: Path, text: str) -> list[str]:
    path.write_text(text)
    with pytest.raises(TargetError) as err:
        Target.load(path)
    return [p.message for p in err.value.problems]


def test_a_device_named_host_is_reported_at_its_line(tmp_path: Path) -> None:
    # it replaced the level's host: `hetsim platform show` listed two processors named host
    path = tmp_path / "nh.yaml"
    text = "kind: hetero\ndevices:\n  - cuda\n  - {kind: hetero, name: host, devices: [npu]}\n"
    assert _problems_of_file(path, text) == [
        f"{path}:4: devices[host].name: expected a name other than 'host' (the level's host is "
        "named so), got 'host'"
    ]


def test_numbers_too_large_to_compute_with_are_reported_at_their_lines(tmp_path: Path) -> None:
    # each passed validation, then crashed a run with OverflowError (gib_to_bytes, peak_gflops)
    path = tmp_path / "big.yaml"
    text = (
        "kind: hetero\n"
        "host: {kind: x86-cpu, memory_gib: 1.0e+300}\n"
        "devices:\n"
        f"  - {{kind: cuda, cores: {'9' * 400}}}\n"
        "  - {kind: npu, memory_gib: .inf, freq_ghz: .nan}\n"
    )
    assert _problems_of_file(path, text) == [
        f"{path}:4: devices[dev0].cores: expected an integer <= 1.7976931348623157e+308 (the "
        "largest float), got a 400-digit integer",
        f"{path}:5: devices[dev1].freq_ghz: expected a finite number, got nan",
        f"{path}:5: devices[dev1].memory_gib: expected a finite number <= 8388608 (2^53 bytes), "
        "got inf",
        f"{path}:2: host.memory_gib: expected a finite number <= 8388608 (2^53 bytes), got 1e+300",
    ]


def test_the_largest_numbers_allowed_make_a_valid_tree() -> None:
    t = Target({"kind": "cuda", "memory_gib": 2**23, "cores": int(sys.float_info.max)})
    assert (t.devices[0].attrs["memory_gib"], t.devices[0].attrs["cores"]) == (
        8388608.0,
        int(sys.float_info.max),
    )
    assert Target(t.export()) == t


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("t.yaml", f"kind: cuda\ncores: {'9' * 5000}\n"),
        ("t.json", f'{{"kind": "cuda", "cores": {"9" * 5000}}}'),
        ("t.toml", f'kind = "cuda"\ncores = {"9" * 5000}\n'),
    ],
)
def test_an_integer_too_long_for_python_to_read_is_a_target_error(
    tmp_path: Path, name: str, text: str
) -> None:
    # int() refuses more than 4,300 digits with a ValueError, which escaped the readers, then
    # came with Python's words (and its advice to call sys.set_int_max_str_digits) and no line
    path = tmp_path / name
    line = 1 if name.endswith(".json") else 2
    assert _problems_of_file(path, text) == [
        f"{path}:{line}: expected valid {path.suffix[1:]}, got an integer of 5000 digits, more "
        "than Python reads (4300)"
    ]


LONG, HUGE = "1" * 5000, "9" * 4400


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        # the first long run of digits was blamed, in a string or a float (float() reads those)
        ("t.json", f'{{"kind": "cuda",\n "model": "{LONG}",\n "cores": {HUGE}}}', 3),
        ("t.toml", f'kind = "cuda"\nfreq_ghz = 0.{LONG}\ncores = {HUGE}\n', 3),
        # and, a review found, a key of digits, a comment, TOML's literal and multi-line strings
        # (one with an escaped quote), a hex integer, which int() reads whatever its length
        ("t.toml", f'kind = "cuda"\n{LONG} = 1\ncores = {HUGE}\n', 3),
        ("t.toml", f'kind = "cuda"\n# {LONG}\ncores = {HUGE}\n', 3),
        ("t.toml", f"kind = 'cuda'\nmodel = '{LONG}'\ncores = {HUGE}\n", 3),
        ("t.toml", f'kind = "cuda"\nmodel = """q\\"""{LONG}"""\ncores = {HUGE}\n', 3),
        ("t.toml", f'kind = "cuda"\nx = 0x{LONG}\ncores = {HUGE}\n', 3),
    ],
    ids=["json-string", "toml-float", "toml-key", "toml-comment", "toml-literal", "toml-ml", "hex"],
)
def test_the_integer_too_long_is_named_not_a_long_string_or_float(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    path = tmp_path / name
    assert _problems_of_file(path, text) == [
        f"{path}:{line}: expected valid {path.suffix[1:]}, got an integer of 4400 digits, more "
        "than Python reads (4300)"
    ]


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("!!int abc", "'abc', not an integer"),  # was "an integer of 0 digits, more than ..."
        ("!!int ''", "'', not an integer"),  # IndexError from PyYAML: a traceback
        ("!!timestamp foo", "'foo', not a date"),  # AttributeError from PyYAML: a traceback
    ],
)
def test_a_tagged_scalar_yaml_cannot_read_is_named_at_its_line(
    tmp_path: Path, value: str, got: str
) -> None:
    path = tmp_path / "t.yaml"
    assert _problems_of_file(path, f"kind: cuda\nmodel: {value}\n") == [
        f"{path}:2: expected valid yaml, got {got}"
    ]


def test_an_integer_too_long_where_no_line_is_found_is_named_without_one(tmp_path: Path) -> None:
    # a key of 5000 digits is more than YAML composes, which finds JSON's lines
    path = tmp_path / "t.json"
    text = f'{{"kind": "cuda", "{LONG}": 1,\n "cores": {"9" * 5000}}}'
    assert _problems_of_file(path, text) == [
        f"{path}: expected valid json, got an integer of 5000 digits, more than Python reads (4300)"
    ]


def test_a_date_that_does_not_exist_is_named_at_its_line(tmp_path: Path) -> None:
    # PyYAML's date() raised a ValueError without the line: "got day is out of range for month"
    path = tmp_path / "t.yaml"
    assert _problems_of_file(path, "kind: cuda\nmodel: 2023-02-30\n") == [
        f"{path}:2: expected valid yaml, got '2023-02-30', not a date (day is out of range for "
        "month)"
    ]


def test_a_json_spec_with_an_integer_too_long_to_read_is_a_target_error() -> None:
    with pytest.raises(TargetError) as err:
        Target(f'{{"kind": "cuda", "cores": {"9" * 5000}}}')
    assert str(err.value) == (
        "spec: expected valid JSON, got an integer of 5000 digits, more than Python reads (4300)"
    )


def test_a_directory_is_not_a_target_file(tmp_path: Path) -> None:
    # Target.load said: expected a file ending in .yaml, ..., got ''; Target said: unknown tag
    named = tmp_path / "soc.yaml"
    named.mkdir()
    for spec in (tmp_path, str(tmp_path), f"{tmp_path}/", named, str(named)):
        with pytest.raises(TargetError) as err:
            Target(spec)
        assert str(err.value) == f"{str(spec).strip()}: expected a target file, got a directory"
    with pytest.raises(TargetError) as err:
        Target.load(str(tmp_path))
    assert str(err.value) == f"{tmp_path}: expected a target file, got a directory"


def test_a_file_no_reader_takes_is_named_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it was taken for a name: "unknown kind or tag 'soc.txt'"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "soc.txt").write_text("kind: cuda\n")
    (tmp_path / "cdua").write_text("kind: cuda\n")  # no suffix: maybe a misspelt name
    for spec in ("soc.txt", "./soc.txt"):
        with pytest.raises(TargetError) as err:
            Target(spec)
        assert str(err.value) == (
            f"{spec}: expected a target file ending in .yaml, .yml, .json, .toml, got '.txt'"
        )
    with pytest.raises(TargetError) as err:
        Target("cdua")
    assert str(err.value) == "unknown kind or tag 'cdua' (did you mean 'cuda'?)"


def test_a_directory_named_like_a_kind_or_tag_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cuda").mkdir()
    (tmp_path / "nvidia" / "h100").mkdir(parents=True)
    assert Target("cuda") == Target({"kind": "cuda"})
    assert Target("nvidia/h100").devices[0].tag == "nvidia/h100"


def test_a_file_written_as_one_device_names_its_attributes_as_written(tmp_path: Path) -> None:
    # they were named devices[dev0].cores: the file's device, once wrapped in a level
    path = tmp_path / "gpu.yaml"
    text = "kind: cuda\nname: gpu\nhost: {kind: arm-cpu, cores: 0}\ncores: -1\nlaunch_uss: 1\n"
    assert _problems_of_file(path, text) == [
        f"{path}:4: cores: expected an integer >= 1, got -1",
        f"{path}:5: launch_uss: unknown attribute (did you mean 'launch_us'?)",
        f"{path}:3: host.cores: expected an integer >= 1, got 0",
    ]
    assert _problems_of_file(path, "tag: nvidia/h100\ncores: 0\n") == [
        f"{path}:2: cores: expected an integer >= 1, got 0"
    ]
    assert _problems_of_file(path, "name: host\nkind: npu\n") == [
        f"{path}:1: name: expected a name other than 'host' (the level's host is named so), "
        "got 'host'"
    ]


def test_a_name_too_long_for_a_file_is_still_an_unknown_name() -> None:
    # the check for a file of another suffix asked is_file(), which raised OSError (File name
    # too long) where the name had been "unknown kind or tag"
    name = "x" * 5000 + ".txt"
    with pytest.raises(TargetError) as err:
        Target(name)
    assert str(err.value) == f"unknown kind or tag {name!r}"


def test_a_key_true_and_a_key_1_are_told_apart() -> None:
    # the attribute check's cache took {1: 5.0} for {True: 5.0} and said link.True
    for key, shown in ((True, "True"), (1, "1")):
        with pytest.raises(TargetError) as err:
            Target({"kind": "cuda", "link": {key: 5.0}})
        assert str(err.value) == f"link.{shown}: unknown attribute"


# --- a level's rules beside the problems of its parts (every problem at once) ----------------


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        ({"devices": ["cuda"], "host": {"kind": "cuda", "cores": 0}},
         ["host: kind 'cuda' cannot host (a host needs can_host)",
          "host.cores: expected an integer >= 1, got 0"]),
        ({"devices": ["cuda"], "host": {"tag": "nvidia/h100", "cores": 0}},
         ["host: kind 'cuda' (from tag nvidia/h100) cannot host (a host needs can_host)",
          "host.cores: expected an integer >= 1, got 0"]),
        ({"devices": ["cuda"], "host": "cuda", "link": {"bandwidth_gbps": -1}},
         ["host: kind 'cuda' cannot host (a host needs can_host)",
          "link.bandwidth_gbps: expected a positive number, got -1"]),
    ],
)  # fmt: skip
def test_a_level_rule_is_reported_beside_the_problems_of_its_parts(
    spec: dict[str, Any], messages: list[str]
) -> None:
    # the host that cannot host was said only once its cores (or the level's link) were mended
    with pytest.raises(TargetError) as caught:
        Target(spec)
    assert [p.message for p in caught.value.problems] == messages


def test_an_unknown_host_kind_is_its_own_problem_alone() -> None:
    with pytest.raises(TargetError) as caught:
        Target({"devices": ["cuda"], "host": {"kind": "cudaa"}})
    assert [p.message for p in caught.value.problems] == [
        "host.kind: unknown kind 'cudaa' (did you mean 'cuda'?)"
    ]


def test_a_device_named_empty_is_found_by_its_index() -> None:
    # an exported root is named '': nested as a device, its problem was at 'devices[]'
    with pytest.raises(TargetError) as caught:
        Target({"devices": [Target("x86-h100").export()]})
    assert [p.message for p in caught.value.problems] == [
        "devices[0].name: expected a name matching '[A-Za-z_][A-Za-z0-9_.-]*', got ''"
    ]


def test_devices_null_is_one_problem() -> None:
    # it was two at one path: "expected a list of targets, got None" and "expected at least
    # one device, got none"
    with pytest.raises(TargetError) as caught:
        Target({"kind": "hetero", "host": "x86-cpu", "devices": None})
    assert [p.message for p in caught.value.problems] == [
        "devices: expected at least one device, got none"
    ]
