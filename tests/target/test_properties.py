"""Property tests: any config parses or raises TargetError; every valid tree round-trips."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.errors import TargetError
from hetsim.target import KINDS, Target
from hetsim.target.schema import Attr
from hetsim.target.values import STRUCTURAL_TYPES

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROCESSORS = ["arm-cpu", "riscv-cpu", "x86-cpu", "cuda", "npu"]
CPUS = ["arm-cpu", "riscv-cpu", "x86-cpu"]
# attributes a cross-field rule ties to another: left at their defaults so a tree stays valid
RULED = {"graph_node_us", "launch_us", "cuda_graph", "ops"}
NAMES = [
    *KINDS,
    "vm",
    "graph",
    "cpp",
    "crt",
    "arm-riscv-soc",
    "nvidia/h100",
    "arm/cortex-a72",
    "nope",
    "",
    "devices",
    "host",
    "tag",
    "kind",
    "name",
    "*",
]


def _value(attr: Attr) -> st.SearchStrategy[Any]:
    """Valid values of one attribute, read from its schema."""
    if attr.type == "mapping":
        return st.fixed_dictionaries({}, optional={f.name: _value(f) for f in attr.fields})
    if attr.type == "list":
        assert attr.items is not None
        if attr.items.choices:
            return st.lists(st.sampled_from(attr.items.choices), max_size=3)
        return st.lists(st.sampled_from(["Conv", "MatMul", "Relu", "Add"]), min_size=1, max_size=3)
    if attr.choices:
        return st.sampled_from(attr.choices)
    if attr.type == "bool":
        return st.booleans()
    if attr.type == "str":
        return st.just(attr.default_value())
    low = attr.minimum if attr.minimum is not None else -1e6
    high = attr.maximum if attr.maximum is not None else 1e6
    if attr.type == "int":
        return st.integers(int(low) + 1 if attr.exclusive_minimum else int(low), int(low) + 500)
    return st.floats(low, high, exclude_min=attr.exclusive_minimum, allow_nan=False)


def _attrs(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    attrs = [a for a in KINDS[kind].attrs if a.type not in STRUCTURAL_TYPES and a.name not in RULED]
    return st.fixed_dictionaries(
        {"kind": st.just(kind)}, optional={a.name: _value(a) for a in attrs}
    )


PROCESSOR = st.sampled_from(PROCESSORS).flatmap(_attrs)
HOST = st.sampled_from(CPUS).flatmap(_attrs) | st.sampled_from(CPUS)
EXECUTOR = st.sampled_from(["vm", "graph"])


@st.composite
def _level(draw: st.DrawFn, devices: st.SearchStrategy[Any]) -> dict[str, Any]:
    children = draw(st.lists(devices, min_size=1, max_size=3))
    named = draw(st.lists(st.booleans(), min_size=len(children), max_size=len(children)))
    for i, (child, is_named) in enumerate(zip(children, named, strict=True)):
        if is_named and isinstance(child, dict):
            child["name"] = f"d{i}"
    executor = draw(EXECUTOR)
    level: dict[str, Any] = {"kind": "hetero", "executor": executor, "devices": children}
    if draw(st.booleans()):
        level["host"] = draw(HOST)
    if executor == "graph" and draw(st.booleans()):
        level["runtime"] = "crt"
    return level


TREES = st.recursive(PROCESSOR | st.sampled_from(PROCESSORS), _level, max_leaves=5)
JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.sampled_from(NAMES) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


def _parse_or_target_error(spec: Any) -> Target | None:
    try:
        return Target(spec)
    except TargetError:
        return None


@st.composite
def _mutated(draw: st.DrawFn) -> Any:
    """A valid tree with one value somewhere replaced by junk, or one key added or removed."""
    spec = draw(TREES)
    node = spec
    while isinstance(node, dict) and node.get("devices") and draw(st.booleans()):
        node = draw(st.sampled_from([d for d in node["devices"] if isinstance(d, dict)] or [node]))
    if not isinstance(node, dict):
        return draw(JUNK)
    action = draw(st.sampled_from(["replace", "add", "remove"]))
    key = draw(st.sampled_from(sorted(node)))
    if action == "replace":
        node[key] = draw(JUNK)
    elif action == "add":
        node[draw(st.sampled_from(NAMES) | st.text(max_size=8))] = draw(JUNK)
    else:
        del node[key]
    return spec


@SETTINGS
@given(TREES)
def test_every_generated_valid_tree_round_trips(spec: Any) -> None:
    t = Target(spec)
    assert Target(t.export()) == t
    assert hash(Target(t.export())) == hash(t)
    assert t.kind == "hetero"


@SETTINGS
@given(JUNK)
def test_random_configs_parse_or_raise_target_error(spec: Any) -> None:
    t = _parse_or_target_error(spec)
    if t is not None:
        assert Target(t.export()) == t


@SETTINGS
@given(_mutated())
def test_mutated_configs_parse_or_raise_target_error(spec: Any) -> None:
    t = _parse_or_target_error(spec)
    if t is not None:
        assert Target(t.export()) == t
