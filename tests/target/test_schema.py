"""Attr checks, expected-value texts, units, mappings, and the declared cross-field rules."""

from __future__ import annotations

import math
import re
import sys
import warnings

import numpy as np
import pytest

from hetsim.errors import Problem, TargetError
from hetsim.target import Target
from hetsim.target.kinds import find_kind
from hetsim.target.rules import AtMost, OnlyAlone
from hetsim.target.schema import Attr, Kind, check_attrs, closest


def _messages(problems: list[Problem]) -> list[str]:
    return [p.message for p in problems]


@pytest.mark.parametrize(
    ("attr", "expected"),
    [
        (Attr("cores", "int", "", 1, minimum=0, exclusive_minimum=True), "a positive integer"),
        (Attr("n", "int", "", 1, minimum=0), "a non-negative integer"),
        (Attr("n", "int", "", 1, minimum=1), "an integer >= 1"),
        (Attr("n", "int", "", 1), "an integer"),
        (
            Attr("x", "float", "", 1.0, minimum=0, maximum=1, exclusive_minimum=True),
            "a number in (0, 1]",
        ),
        (Attr("x", "float", "", 1.0, minimum=0, maximum=1), "a number in [0, 1]"),
        (Attr("x", "float", "", 1.0, maximum=3), "a number <= 3"),
        (Attr("s", "str", "", "a", pattern=r"sm_\d+"), "a string matching 'sm_\\\\d+'"),
        (Attr("b", "bool", "", True), "true or false"),
        (Attr("b", "bool", "", True, choices=(True,)), "true"),
        (Attr("e", "enum", "", "a", choices=("a", "b")), "one of 'a', 'b'"),
        (Attr("l", "list", "", [], items=Attr("i", "str", "")), "a list of strings"),
        (
            Attr("l", "list", "", [], items=Attr("i", "enum", "", choices=("a",))),
            "a list of values (one of 'a')",
        ),
    ],
)
def test_expected_text_describes_type_and_range(attr: Attr, expected: str) -> None:
    assert attr.expected == expected


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("freq_ghz", "GHz"),
        ("bandwidth_gbps", "GB/s"),
        ("latency_us", "µs"),
        ("memory_gib", "GiB"),
        ("graph_node_bytes", "bytes"),
        ("cores", ""),
    ],
)
def test_unit_comes_from_the_name(name: str, unit: str) -> None:
    assert Attr(name, "float", "").unit == unit


@pytest.mark.parametrize("value", [True, False, 1.0, "2", None, [2]])
def test_int_rejects_bool_float_and_strings(value: object) -> None:
    attr = Attr("cores", "int", "", 1, minimum=1)
    assert _messages(attr.check(value, "host.cores")[1]) == [
        f"host.cores: expected an integer >= 1, got {value!r}"
    ]


@pytest.mark.parametrize("value", [True, "fast", -math.inf, -1.0, 0, None])
def test_positive_float_rejects_bools_strings_and_non_positive(value: object) -> None:
    attr = Attr("freq_ghz", "float", "", 1.0, minimum=0, exclusive_minimum=True)
    assert _messages(attr.check(value, "freq_ghz")[1]) == [
        f"freq_ghz: expected a positive number, got {value!r}"
    ]


@pytest.mark.parametrize("value", [math.nan, math.inf, np.float32(math.inf), np.float64(math.nan)])
def test_float_rejects_inf_and_nan_as_not_finite(value: object) -> None:
    attr = Attr("freq_ghz", "float", "", 1.0, minimum=0, exclusive_minimum=True)
    assert _messages(attr.check(value, "host.freq_ghz")[1]) == [
        f"host.freq_ghz: expected a finite number, got {value!r}"
    ]


def test_float_rejects_an_int_too_large_for_a_float_without_overflow() -> None:
    attr = Attr("freq_ghz", "float", "", 1.0, minimum=0, exclusive_minimum=True)
    assert _messages(attr.check(10**400, "host.freq_ghz")[1]) == [
        "host.freq_ghz: expected a finite number, got a 401-digit integer"
    ]


def test_int_rejects_what_a_float_cannot_hold() -> None:
    cores = Attr("cores", "int", "", 1, minimum=1)
    assert cores.check(int(sys.float_info.max), "cores") == (int(sys.float_info.max), [])
    assert _messages(cores.check(10**400, "host.cores")[1]) == [
        "host.cores: expected an integer <= 1.7976931348623157e+308 (the largest float), "
        "got a 401-digit integer"
    ]
    assert _messages(Attr("n", "int", "").check(-(10**400), "n")[1]) == [
        "n: expected an integer >= -1.7976931348623157e+308 (the largest float), "
        "got a 401-digit negative integer"
    ]


def test_a_range_error_shows_a_long_integer_by_its_digits() -> None:
    # repr() of an int past 4,300 digits raises ValueError
    cores = Attr("cores", "int", "", 1, minimum=1)
    assert _messages(cores.check(-(10**5000), "host.cores")[1]) == [
        "host.cores: expected an integer >= 1, got a 5001-digit negative integer"
    ]
    assert _messages(cores.check(-(10**19), "host.cores")[1]) == [
        "host.cores: expected an integer >= 1, got -10000000000000000000"
    ]


@pytest.mark.parametrize(
    ("value", "got"), [(1e300, "1e+300"), (8388608.5, "8388608.5"), (math.inf, "inf")]
)
def test_a_capacity_is_at_most_2_to_the_53_bytes(value: float, got: str) -> None:
    memory = Attr("memory_gib", "float", "", 4.0, minimum=0)
    assert memory.check(8388608, "memory_gib") == (8388608.0, [])
    assert _messages(memory.check(value, "host.memory_gib")[1]) == [
        f"host.memory_gib: expected a finite number <= 8388608 (2^53 bytes), got {got}"
    ]


def test_a_capacity_in_bytes_is_at_most_2_to_the_53() -> None:
    size = Attr("graph_node_bytes", "int", "", 40960, minimum=0)
    assert size.check(2**53, "graph_node_bytes") == (2**53, [])
    assert _messages(size.check(2**53 + 1, "devices[gpu].graph_node_bytes")[1]) == [
        "devices[gpu].graph_node_bytes: expected an integer <= 9007199254740992 (2^53 bytes), "
        "got 9007199254740993"
    ]


@pytest.mark.parametrize(
    ("name", "largest"),
    [
        ("memory_gib", 2.0**23),
        ("scratch_mib", 2.0**33),
        ("sram_kib", 2.0**43),
        ("graph_node_bytes", 2.0**53),
        ("freq_ghz", sys.float_info.max),
        ("latency_us", sys.float_info.max),
    ],
)
def test_largest_is_2_to_the_53_bytes_for_a_capacity_else_the_largest_float(
    name: str, largest: float
) -> None:
    assert Attr(name, "float", "").largest == largest


def test_numpy_float32_is_checked_without_an_overflow_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Attr("x", "float", "").check(np.float32(2.5), "x") == (2.5, [])


def test_float_accepts_int_and_normalizes_it() -> None:
    value, problems = Attr("x", "float", "", 1.0).check(3, "x")
    assert (value, type(value), problems) == (3.0, float, [])


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [("int", np.int64(10), 10), ("float", np.float32(2.5), 2.5), ("float", np.int32(3), 3.0),
     ("bool", np.True_, True), ("bool", np.False_, False)],  # a numpy bool had been refused
)  # fmt: skip
def test_numpy_numbers_are_taken_as_python_ones(kind: str, value: object, expected: object) -> None:
    # a target built from numpy values was refused: "expected an integer >= 1, got np.int64(10)"
    checked, problems = Attr("x", kind, "", 1, minimum=1).check(value, "x")
    assert (checked, type(checked), problems) == (expected, type(expected), [])
    assert _messages(Attr("x", "int", "", 1).check(np.bool_(True), "x")[1]) == [
        "x: expected an integer, got np.True_"
    ]


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("1e3", "1.0e+3"),
        ("2E-6", "2.0e-6"),
        ("-5e+2", "-5.0e+2"),
        ("1.0e3", "1.0e+3"),  # a point but no sign: a string to YAML 1.1 too, given no hint
        ("2.5E6", "2.5e+6"),
    ],
)
def test_a_number_yaml_reads_as_a_string_gets_its_yaml_spelling(text: str, hint: str) -> None:
    attr = Attr("bandwidth_gbps", "float", "", 1.0, minimum=0, exclusive_minimum=True)
    assert _messages(attr.check(text, "link.bandwidth_gbps")[1]) == [
        f"link.bandwidth_gbps: expected a positive number, got {text!r} (did you mean {hint!r}?)"
    ]


@pytest.mark.parametrize(
    ("kind", "text", "hint"),
    [
        ("int", "1e3", " (did you mean '1000'?)"),  # '1.0e+3' was refused next: not an integer
        ("int", "1.5e3", " (did you mean '1500'?)"),
        ("int", "1e-3", ""),  # no integer
        ("int", "1e300", ""),  # a float, not the integer written
        ("float", "1e400", ""),  # '1.0e+400' was refused next: inf
    ],
)
def test_a_number_hint_names_only_a_number_the_attribute_takes(
    kind: str, text: str, hint: str
) -> None:
    attr = Attr("cores", kind, "", 1, minimum=0)
    expected = "a non-negative integer" if kind == "int" else "a non-negative number"
    assert _messages(attr.check(text, "cores")[1]) == [
        f"cores: expected {expected}, got {text!r}{hint}"
    ]


def test_bool_accepts_only_bools() -> None:
    attr = Attr("b", "bool", "", False)
    assert attr.check(True, "b") == (True, [])
    assert _messages(attr.check(1, "b")[1]) == ["b: expected true or false, got 1"]


def test_list_reports_each_bad_item_with_its_index() -> None:
    attr = Attr("ops", "list", "", ["*"], items=Attr("op", "str", "", pattern=r"[A-Z]\w*"))
    assert _messages(attr.check(["Conv", 3, "relu"], "ops")[1]) == [
        "ops[1]: expected a string matching '[A-Z]\\\\w*', got 3",
        "ops[2]: expected a string matching '[A-Z]\\\\w*', got 'relu'",
    ]
    assert _messages(attr.check("Conv", "ops")[1]) == [
        "ops: expected a list of strings matching '[A-Z]\\\\w*', got 'Conv'"
    ]


def test_mapping_merges_with_field_defaults_and_suggests_names() -> None:
    link = find_kind("target", "hetero").attr("link")  # type: ignore[union-attr]
    assert link.check({"latency_us": 3}, "link") == (
        {"bandwidth_gbps": 16.0, "latency_us": 3.0},
        [],
    )
    assert _messages(link.check({"bandwith_gbps": 3}, "devices[vdevice0].link")[1]) == [
        "devices[vdevice0].link.bandwith_gbps: unknown attribute (did you mean 'bandwidth_gbps'?)"
    ]
    assert _messages(link.check(8, "link")[1]) == [
        "link: expected a mapping with keys bandwidth_gbps, latency_us, got 8"
    ]


def test_check_attrs_fills_defaults_in_schema_order_and_reports_all() -> None:
    kind = Kind("dsp", "target", "", (Attr("a", "int", "", 1), Attr("b", "float", "", 2.0)))
    assert check_attrs(kind, {"b": 3}, "") == ({"a": 1, "b": 3.0}, [])
    _, problems = check_attrs(kind, {"a": "x", "c": 1, 7: 2}, "host")
    assert _messages(problems) == [
        "host.a: expected an integer, got 'x'",
        "host.c: unknown attribute",
        "host.7: unknown attribute",
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # an abbreviation of an attribute named with its unit: close to the name less the unit
        ({"kind": "x86-cpu", "frq": 3}, "frq: unknown attribute (did you mean "
         "'freq_ghz'?)"),
        ({"kind": "x86-cpu", "memry": 8}, "memry: unknown attribute (did you mean "
         "'memory_gib'?)"),
        ({"kind": "cuda", "link": {"lat": 1}}, "link.lat: unknown attribute (did "
         "you mean 'latency_us'?)"),
        # close to no attribute, with or without its unit: no hint
        ({"kind": "x86-cpu", "speed": 3}, "speed: unknown attribute"),
        ({"kind": "x86-cpu", "bw": 3}, "bw: unknown attribute"),
    ],
)  # fmt: skip
def test_unknown_attribute_suggests_the_one_it_abbreviates_without_its_unit(
    spec: dict[str, object], message: str
) -> None:
    # "frq" had no hint: 'freq_ghz' is too long to be close to it, 'freq' is not
    with pytest.raises(TargetError, match=f"^{re.escape(message)}$"):
        Target(spec)


def test_closest_suggests_only_close_names() -> None:
    assert closest("freq_gz", ["freq_ghz", "cores"]) == "freq_ghz"
    assert closest("zzz", ["freq_ghz", "cores"]) is None


def test_at_most_rule_names_both_attributes() -> None:
    rule = AtMost("a_us", "b_us", "a is part of b")
    assert rule.check({"a_us": 1.0, "b_us": 2.0}, "x", find_kind.__call__) == []
    assert _messages(rule.check({"a_us": 3.0, "b_us": 2.0}, "x", find_kind)) == [
        "x.a_us: expected at most b_us (2.0; a is part of b), got 3.0"
    ]


def test_only_alone_rule_keeps_the_wildcard_alone() -> None:
    rule = OnlyAlone("ops", "*")
    assert rule.check({"ops": ["*"]}, "", find_kind) == []
    assert _messages(rule.check({"ops": ["*", "Conv"]}, "", find_kind)) == [
        "ops: expected ['*'] alone or a list without '*', got ['*', 'Conv']"
    ]


def test_rules_describe_themselves_for_the_docs() -> None:
    docs = [r.doc for k in ("cuda", "hetero") for r in find_kind("target", k).rules]  # type: ignore[union-attr]
    assert docs == [
        "`*` in `ops` stands alone",
        "`graph_node_us` <= `launch_us` (a replayed node costs no more than a launch)",
        "the host's kind has `can_host`",
        "the runtime runs the executor (a runtime's `executors`, empty = all)",
        "a device with `cuda_graph: true` needs an executor with `can_capture`",
    ]


def test_kept_checks_tell_one_from_true_and_hand_out_copies() -> None:
    kind = Kind(
        "dsp",
        "target",
        "a DSP",
        (
            Attr("cores", "int", "cores", 1, minimum=1),
            Attr("ops", "list", "ops", [], items=Attr("op", "str", "op", "")),
        ),
    )
    assert check_attrs(kind, {"cores": 1}, "host") == ({"cores": 1, "ops": []}, [])
    # equal to 1 under ==, but not an integer: a kept check of 1 must not answer for it
    problem = Problem("host.cores", "expected an integer >= 1", "True")
    assert check_attrs(kind, {"cores": True}, "host") == ({"cores": None, "ops": []}, [problem])
    first, _ = check_attrs(kind, {"ops": ["Conv"]}, "host")
    first["ops"].append("Relu")  # the caller's copy: the next call gets the checked value
    assert check_attrs(kind, {"ops": ["Conv"]}, "host")[0]["ops"] == ["Conv"]
    # not plain data: checked each time, as before
    assert check_attrs(kind, {"cores": np.int64(2)}, "dev")[0]["cores"] == 2
