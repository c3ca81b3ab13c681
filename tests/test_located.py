"""`hetsim.located`: the file and line of the path an error names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hetsim.cli import main
from hetsim.compare import load_shapes
from hetsim.errors import HetsimError, Problem, SweepError, TargetError
from hetsim.located import DuplicateKeyError, line_of, load_json, locate, safe_load, text_of
from hetsim.sweep import load_sweep
from hetsim.target import Target

SOC = """\
kind: hetero
host: arm-cpu
devices:
  - name: vdevice0
    kind: hetero
    host: {kind: riscv-cpu, freq_ghz: 1.5}
    devices:
      - npu
      - {kind: npu, link: {bandwidth_gbps: 8}}
"""


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("host", 2),
        ("devices", 3),
        ("devices[vdevice0]", 4),
        ("devices[vdevice0].host.freq_ghz", 6),
        ("devices[vdevice0].devices[dev0]", 8),
        ("devices[vdevice0].devices[dev1].link.bandwidth_gbps", 9),
        ("devices[vdevice0].devices[dev1].link.latency_us", 9),  # missing: its mapping's line
        ("devices[vdevice0].executor", 4),  # missing: the device's line
        ("runtime", None),  # not in the file at all (it comes from the defaults)
    ],
)
def test_a_path_is_followed_to_its_deepest_line(path: str, line: int | None) -> None:
    assert line_of(SOC, path) == line


def test_json_text_has_lines_too_and_broken_text_has_none() -> None:
    text = '{\n  "kind": "hetero",\n  "host": 3\n}\n'
    assert line_of(text, "host") == 3
    assert line_of("kind: [\n", "kind") is None


def test_a_problem_about_the_file_itself_is_left_alone(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text("kind: npu\n")
    itself = Problem(str(file), "expected valid yaml", "'...'")
    assert locate([itself], file) == [itself]


def _error(read: Callable[[Path], object], file: Path, text: str) -> str:
    """The message of the error `read` raises on `file` holding `text`."""
    file.write_text(text)
    with pytest.raises((TargetError, SweepError)) as error:
        read(file)
    return str(error.value)


def test_a_toml_file_names_the_line_of_each_problem(tmp_path: Path) -> None:
    # it named the file alone: tomllib keeps no lines
    file = tmp_path / "t.toml"
    text = 'kind = "hetero"\nhost = 3\n\n[[devices]]\nkind = "cuda"\ncores = -1\n'
    assert _error(Target, file, text) == (
        f"{file}:6: devices[dev0].cores: expected an integer >= 1, got -1\n"
        f"{file}:2: host: expected a target name or a mapping, got 3"
    )


SOC_TOML = """\
# a comment, then a multi-line string that looks like keys
kind = "hetero"
doc = '''
host = 1
[devices]
'''
host.kind = "riscv-cpu"
"quoted.key" = { a = 1 }
ops = [
  "Conv",  # a comment in an array
  "Relu",
]

[host.efficiency]
matmul = 0.5

[[devices]]
name = "vdevice0"
kind = "hetero"
link = { bandwidth_gbps = 8, latency_us = 2 }

[devices.host]
tag = "riscv/x"

[[devices.devices]]
kind = "npu"

[[devices.devices]]
name = "gpu"
kind = "cuda"

[[devices]]
kind = "npu"
"""


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("kind", 2),
        ("doc", 3),
        ("host", 7),  # a dotted key makes its table
        ("host.kind", 7),
        ("host.efficiency.matmul", 15),
        ("quoted.key.a", 8),
        ("ops[1]", 11),
        ("devices", 17),
        ("devices[vdevice0]", 17),
        ("devices[vdevice0].link.latency_us", 20),
        ("devices[vdevice0].host.tag", 23),
        ("devices[vdevice0].devices[dev0].kind", 26),
        ("devices[vdevice0].devices[gpu].kind", 30),
        ("devices[vdevice0].devices[gpu].cores", 28),  # missing: its table's line
        ("devices[dev1].kind", 33),
        ("runtime", None),
    ],
)
def test_a_path_is_followed_through_toml_tables(path: str, line: int | None) -> None:
    assert line_of(SOC_TOML, path, toml=True) == line


def test_toml_text_that_does_not_parse_has_no_lines() -> None:
    assert line_of("kind = \n", "kind", toml=True) is None
    assert line_of("kind: npu\n", "kind", toml=True) is None  # YAML, not TOML


def test_a_target_file_names_the_line_of_each_problem(tmp_path: Path) -> None:
    file = tmp_path / "soc.yaml"
    file.write_text(SOC.replace("freq_ghz: 1.5", "freq_ghz: fast").replace("8}", "-8}"))
    with pytest.raises(TargetError) as error:
        Target(file)
    assert [p.message for p in error.value.problems] == [
        f"{file}:9: devices[vdevice0].devices[dev1].link.bandwidth_gbps: expected a positive "
        "number, got -8",
        f"{file}:6: devices[vdevice0].host.freq_ghz: expected a positive number, got 'fast'",
    ]


def test_a_sweep_file_names_the_line_of_each_problem(tmp_path: Path) -> None:
    file = tmp_path / "sweep.yaml"
    head = "target: arm-riscv-soc\nmodels: [mlp]\n"
    message = _error(load_sweep, file, head + "mdoe: timing\n")
    assert message == f"{file}:3: mdoe: unknown key (did you mean 'mode'?)"
    # found when the points' targets are built
    message = _error(load_sweep, file, head + "vary:\n  executor.dispatch_us: [1, -2]\n")
    assert message == f"{file}:4: vary.executor.dispatch_us: expected a non-negative number, got -2"


NOT_A_TARGET = "expected a target name or a mapping, got"


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("t.yaml", "- kind: cuda\n", f"1: {NOT_A_TARGET} [{{'kind': 'cuda'}}]"),
        ("t.yaml", "# a scalar, after a comment\n\n42\n", f"3: {NOT_A_TARGET} 42"),
        ("t.yaml", "", f"1: {NOT_A_TARGET} None"),
        ("t.json", "[1, 2]", f"1: {NOT_A_TARGET} [1, 2]"),
        ("t.toml", "cores = 2\n", "1: expected a 'kind' or a 'tag', got neither"),
    ],
)
def test_a_target_file_wrong_at_its_root_names_the_line_it_starts_on(
    name: str, text: str, said: str, tmp_path: Path
) -> None:
    # it named the file alone, where a problem anywhere else named its line
    file = tmp_path / name
    assert _error(Target, file, text) == f"{file}:{said}"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("- target: cuda\n", "1: expected a mapping of keys, got [{'target': 'cuda'}]"),
        ("# nothing but a comment\n", "1: expected a mapping of keys, got None"),
        ("\n'a sweep'\n", "2: expected a mapping of keys, got 'a sweep'"),
    ],
)
def test_a_sweep_file_wrong_at_its_root_names_the_line_it_starts_on(
    text: str, said: str, tmp_path: Path
) -> None:
    # it said "sweep.yaml: sweep: expected a mapping of keys", without a line
    file = tmp_path / "sweep.yaml"
    assert _error(load_sweep, file, text) == f"{file}:{said}"


def test_a_sweep_given_as_data_has_no_file_to_name() -> None:
    with pytest.raises(SweepError) as error:
        load_sweep({"target": "arm-riscv-soc", "models": ["mlp"], "mdoe": "timing"})
    assert str(error.value) == "mdoe: unknown key (did you mean 'mode'?)"


# A key given twice in one mapping: PyYAML kept the last one silently (a 'kind: hetero' file
# with a second 'kind: cuda' became a GPU); every YAML file hetsim reads now refuses it.


def _refused(file: Path, content: str | bytes) -> list[str]:
    """The messages `Target` refuses `file` with, once it holds `content` (text in UTF-8)."""
    file.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(TargetError) as caught:
        Target(str(file))
    return [problem.message for problem in caught.value.problems]


def test_a_target_file_with_a_key_twice_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "soc.yaml"
    assert _refused(file, "kind: hetero\nhost: x86-cpu\nkind: cuda\n")[0] == (
        f"{file}:3: expected valid yaml, got found the key 'kind' twice"
    )


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "kind: hetero\ndevices:\n  - <<: {kind: npu, cores: 3, kind: cuda}\n    name: n1\n",
            "kind",
        ),
        (
            "kind: hetero\ndevices:\n  - <<: [{cores: 2}, {cores: 3, cores: 4}]\n    kind: npu\n",
            "cores",
        ),
        ("kind: hetero\ndevices:\n  - <<: &npu {kind: npu, <<: {x: 1, x: 2}}\n", "x"),
        ("kind: cuda\n<<: {cores: 2}\n<<: {cores: 3}\n", "<<"),  # the last merge won
    ],
)
def test_a_key_twice_in_a_merged_mapping_names_the_line(
    tmp_path: Path, text: str, key: str
) -> None:
    # PyYAML copies a merged mapping's keys in without constructing it: the last one won
    file = tmp_path / "soc.yaml"
    assert _refused(file, text)[0] == (
        f"{file}:3: expected valid yaml, got found the key {key!r} twice"
    )


def test_a_key_of_the_mapping_may_override_a_merged_one(tmp_path: Path) -> None:
    file = tmp_path / "soc.yaml"
    file.write_text("kind: hetero\ndevices:\n  - <<: {kind: npu, cores: 3}\n    cores: 5\n")
    assert Target(str(file)).devices[0].attrs["cores"] == 5


def test_a_sweep_file_with_a_key_twice_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "sweep.yaml"
    file.write_text("target: arm-riscv-soc\nmodels: [mlp]\nvary:\n  executor.dispatch_us: [1]\n"
                    "  executor.dispatch_us: [2]\n")  # fmt: skip
    with pytest.raises(SweepError) as caught:
        load_sweep(file)
    assert [p.message for p in caught.value.problems] == [
        f"{file}:5: expected YAML, got found the key 'executor.dispatch_us' twice"
    ]


def test_a_json_file_with_a_key_twice_names_the_line(tmp_path: Path) -> None:
    # json.loads kept the last one silently: a file with 'npu' then 'cuda' made a GPU
    file = tmp_path / "soc.json"
    text = '{"kind": "hetero",\n "devices": [\n  {"kind": "npu",\n   "kind": "cuda"}]}\n'
    assert _error(Target, file, text) == (
        f"{file}:4: expected valid json, got found the key 'kind' twice"
    )


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".yaml", "kind: hetero\ndevices:\n  - kind: npu\n    name: no\n    cores: 0\n"),
        (
            ".json",
            '{"kind": "hetero",\n "devices": [\n  {"kind": "npu",\n   "name": 7,\n'
            '   "cores": 0}]}\n',
        ),
        (".toml", 'kind = "hetero"\n[[devices]]\nkind = "npu"\nname = 7\ncores = 0\n'),
    ],
)
def test_a_device_whose_name_is_no_string_has_its_lines(
    tmp_path: Path, suffix: str, text: str
) -> None:
    # it is devices[dev0], as the tree names it; the locator took its name for one and found
    # no dev0, so every problem of the device was put at the 'devices' line
    file = tmp_path / f"soc{suffix}"
    file.write_text(text)
    with pytest.raises(TargetError) as caught:
        Target(str(file))
    # YAML's 'no' is false, and the message says why
    got = "False (an unquoted no, which YAML reads as false; quoted, 'no' is text)"
    got = got if suffix == ".yaml" else "7"
    assert sorted(p.message for p in caught.value.problems) == [
        f"{file}:4: devices[dev0].name: expected a name matching '[A-Za-z_][A-Za-z0-9_.-]*', "
        f"got {got}",
        f"{file}:5: devices[dev0].cores: expected an integer >= 1, got 0",
    ]


def test_a_json_file_indented_with_tabs_has_lines_too(tmp_path: Path) -> None:
    # YAML, which finds JSON's lines, refuses tabs: such a file was named without its line
    file = tmp_path / "soc.json"
    text = '{\n\t"kind": "hetero",\n\t"devices": [\n\t\t{"kind": "npu", "cores": 0}]}\n'
    assert _error(Target, file, text) == (
        f"{file}:4: devices[dev0].cores: expected an integer >= 1, got 0"
    )
    assert _error(Target, file, '{\n\t"kind": "npu",\n\t"kind": "cuda"\n}\n') == (
        f"{file}:3: expected valid json, got found the key 'kind' twice"
    )


def test_a_json_spec_with_a_key_twice_is_an_error() -> None:
    with pytest.raises(TargetError) as caught:
        Target('{"kind": "npu", "kind": "cuda"}')
    assert str(caught.value) == "spec: expected valid JSON, got found the key 'kind' twice"


def test_load_json_names_the_first_key_given_twice_in_the_text() -> None:
    text = '{"a": 1,\n "b": {"c": 1,\n       "c": 2},\n "a": 3}'
    with pytest.raises(DuplicateKeyError) as caught:
        load_json(text)
    assert (caught.value.problem, caught.value.problem_mark.line + 1) == (
        "found the key 'c' twice",
        3,
    )
    assert load_json('{"a": {"a": 1}, "b": [{"a": 2}]}') == {"a": {"a": 1}, "b": [{"a": 2}]}


def test_a_merged_key_may_be_overridden() -> None:
    text = "base: &b {cores: 4, freq_ghz: 2.0}\nhost:\n  <<: *b\n  cores: 8\n"
    assert safe_load(text)["host"] == {"cores": 8, "freq_ghz": 2.0}


def _laughs(levels: int, *, target: bool = True) -> str:
    """A "billion laughs": each level an alias list of ten of the one before (10**levels)."""
    lines = ["kind: hetero"] if target else []
    lines.append("a0: &a0 [x, x, x, x, x, x, x, x, x, x]")
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_aliases_that_expand_past_the_limit_are_refused_at_their_line(tmp_path: Path) -> None:
    file = tmp_path / "soc.yaml"
    file.write_text(_laughs(9) + "devices: *a8\n")
    with pytest.raises(TargetError) as caught:
        Target(str(file))  # without the limit, this walked 10**9 values
    assert caught.value.problems[0].message == (
        f"{file}:7: expected valid yaml, got found 1,111,111 values here with aliases expanded "
        "(at most 1,000,000)"
    )


def test_aliases_within_the_limit_load_as_shared_values() -> None:
    loaded = safe_load(_laughs(5, target=False))  # 11,111 values expanded
    assert loaded["a4"][9][9][9][9] == ["x"] * 10
    assert loaded["a4"][0] is loaded["a3"]


@pytest.mark.parametrize(
    "text", ["kind: hetero\nops: &a [*a]\n", "kind: hetero\nx: &a {k: [1, *a]}\n"]
)
def test_an_alias_inside_its_own_anchor_is_refused(text: str, tmp_path: Path) -> None:
    file = tmp_path / "soc.yaml"
    file.write_text(text)
    with pytest.raises(TargetError) as caught:
        Target(str(file))  # the size check looped, growing until the process was killed
    assert caught.value.problems[0].message == (
        f"{file}:2: expected valid yaml, got found an alias inside its own anchor (a value that "
        "holds itself)"
    )


def test_an_alias_used_twice_is_no_cycle() -> None:
    text = "b: &b [1, 2]\nboth: [*b, {k: *b}]\n"
    assert safe_load(text)["both"] == [[1, 2], {"k": [1, 2]}]


def test_yaml_reads_numbers_as_written_not_as_octal_or_base_60() -> None:
    # YAML 1.1 read 010 as 8 and 1:30 as 90, silently: they stay strings, for a schema to refuse
    data = safe_load(
        "a: 010\nb: 1:30\nc: 1:30.5\nd: 10\ne: 0\nf: 0x1f\ng: -5\nh: 1_000\ni: 1.5\n"
        "j: 1.0e+3\nk: .5\nl: -.inf\nm: true\n"
    )
    assert data == {
        "a": "010", "b": "1:30", "c": "1:30.5", "d": 10, "e": 0, "f": 31, "g": -5, "h": 1000,
        "i": 1.5, "j": 1000.0, "k": 0.5, "l": float("-inf"), "m": True,
    }  # fmt: skip
    assert safe_load("x: .nan")["x"] != safe_load("x: .nan")["x"]  # NaN, as before


def test_a_target_number_with_a_leading_zero_is_refused_with_its_decimal(tmp_path: Path) -> None:
    # cores: 010 made an 8-core host
    path = tmp_path / "soc.yaml"
    path.write_text("kind: hetero\nhost:\n  kind: arm-cpu\n  cores: 010\ndevices: [npu]\n")
    with pytest.raises(TargetError) as err:
        Target(path)
    assert str(err.value) == (
        f"{path}:4: host.cores: expected an integer >= 1, got '010' (did you mean '10'?)"
    )


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("description: 5\nkind: cuda\ncores: 0\n", "3: cores: expected an integer >= 1, got 0"),
        (  # a config, checked as one: not 'expected a target kind, got executor kind'
            "description: 5\ntag: tvm/relax-vm\ndispatch_us: -1\n",
            "3: dispatch_us: expected a non-negative number, got -1",
        ),
    ],
)
def test_a_bad_description_is_reported_with_the_rest(
    tmp_path: Path, text: str, rest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # the description was read apart, first, and its problem alone was reported
    file = tmp_path / "soc.yaml"
    file.write_text(text)
    assert main(["targets", "validate", str(file)]) == 1
    assert capsys.readouterr().out == (
        f"{file}:1: description: expected a string, got 5\n{file}:{rest}\n"
    )


@pytest.mark.parametrize("breaker", ["\u2028", "\u2029", "\u0085"])
def test_a_unicode_line_separator_in_a_string_keeps_the_lines(tmp_path: Path, breaker: str) -> None:
    # PyYAML counts it as a line break: cores, on line 6, was reported on line 7
    file = tmp_path / "soc.yaml"
    text = (
        f'kind: hetero\nhost: {{kind: x86-cpu, model: "Xeon{breaker}rev B"}}\ndevices:\n'
        "  - kind: cuda\n    name: g\n    cores: 0\n"
    )
    assert _refused(file, text)[0] == f"{file}:6: devices[g].cores: expected an integer >= 1, got 0"


def test_a_line_separator_in_a_name_keeps_that_names_lines(tmp_path: Path) -> None:
    # read as a blank to count lines, the name no longer matched the path: line 2 for both
    file = tmp_path / "soc.yaml"
    text = 'kind: hetero\ndevices:\n  - kind: cuda\n    name: "g\u2028x"\n    cores: 0\n'
    lines = [message.split(": ")[0] for message in _refused(file, text)]
    assert lines == [f"{file}:5", f"{file}:4"]  # cores, then the name


def test_bytes_that_are_not_utf8_are_counted_from_the_files_start(tmp_path: Path) -> None:
    # read past a BOM, the offset was the decoded text's: 10 for byte 13
    file = tmp_path / "bad.yaml"
    assert _refused(file, b"\xef\xbb\xbfkind: cuda\xff\n") == [
        f"{file}: expected a target file, got bytes that are not UTF-8 (at byte 13)"
    ]


def test_an_empty_path_is_said_so_by_every_reader_of_a_file() -> None:
    # Path("") is the current folder: each reader had said "a directory" where none was named
    # (the rules reader alone had said so, in a case of its own)
    assert text_of("", "a sweep file").message == "'': expected a sweep file, got an empty path"
    with pytest.raises(SweepError, match=r"^'': expected a sweep file, got an empty path$"):
        load_sweep("")
    with pytest.raises(
        HetsimError, match=r"^--shapes : expected a shapes file, got an empty path$"
    ):
        load_shapes("")


@pytest.mark.parametrize("word", ["off", "Yes", "NO", "on"])
def test_a_word_yaml_reads_as_a_boolean_is_named_where_a_string_was_expected(
    tmp_path: Path, word: str
) -> None:
    # it read "vendor: expected a string, got False", where the file says vendor: off
    file = tmp_path / "gpu.yaml"
    file.write_text(f"kind: cuda\nvendor: {word}\nmodel: '{word}'\n")
    value = str(word.lower() in ("yes", "on"))
    with pytest.raises(TargetError) as caught:
        Target(str(file))
    assert [p.message for p in caught.value.problems] == [
        f"{file}:2: vendor: expected a string, got {value} (an unquoted {word}, which YAML "
        f"reads as {value.lower()}; quoted, '{word}' is text)"
    ]


def test_a_boolean_written_as_one_gets_no_word_hint(tmp_path: Path) -> None:
    file = tmp_path / "gpu.yaml"
    file.write_text("kind: cuda\nvendor: true\n")
    with pytest.raises(TargetError) as caught:
        Target(str(file))
    assert [p.message for p in caught.value.problems] == [
        f"{file}:2: vendor: expected a string, got True"
    ]
