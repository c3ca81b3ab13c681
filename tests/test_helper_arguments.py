"""Documented helpers given an argument of the wrong type or value say so as a hetsim error,
naming it; each raised from inside (ZeroDivisionError, AttributeError, TypeError, KeyError, a
StatisticsError) or, for compare_model(repeats=-1), returned a comparison without samples."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from hetsim.calibrate import compare_model, error_pct, summarize
from hetsim.errors import HetsimError
from hetsim.ir import GraphBuilder, topological_order
from hetsim.kernels import lookup
from hetsim.models import load_model
from hetsim.partition import group_ops
from hetsim.platform import build_platform
from hetsim.platform import render_tree as platform_tree
from hetsim.runtime import compile_vm, place
from hetsim.sweep import best_points, metric_value, read_results
from hetsim.target import Target, load_kinds, register_tag, render_tree, schema_table
from hetsim.target.kinds import REGISTRIES

_MLP = load_model("mlp")
_PLATFORM = build_platform("x86-h100")


def _builder_op(op_type: Any = "Split", outputs: Any = 2) -> Callable[[], Any]:
    def build() -> Any:
        b = GraphBuilder("g")
        return b.op_with_outputs(op_type, b.input("x", (4,)), outputs=outputs)

    return build


CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("repeats", lambda: compare_model("mlp", "x86-cpu", repeats=-1),
     "compare_model: expected repeats an integer >= 1, got -1"),
    ("measured", lambda: error_pct(1.0, 0.0),
     "error_pct: expected a positive measured time, got 0.0"),
    ("summarize", lambda: summarize([]),
     "summarize: expected one or more comparisons, got none"),
    ("records", lambda: best_points(None),  # type: ignore[arg-type]
     "best_points: expected records (a list of results records), got None"),
    ("record", lambda: metric_value(None),  # type: ignore[arg-type]
     "record: expected a mapping (a results record), got None"),
    ("results path", lambda: read_results(None),  # type: ignore[arg-type]
     "read_results: expected a results file path (a str or a Path), got None"),
    ("tag name", lambda: register_tag(["a"], {"kind": "cuda"}),  # type: ignore[arg-type]
     "tags: expected a tag name (a str), got ['a']"),
    ("kinds file", lambda: load_kinds(None),  # type: ignore[arg-type]
     "None: expected a path to a kinds file (a str or a Path), got a NoneType"),
    ("kind name", lambda: schema_table("cudaa"),
     "schema_table: expected a Kind or a kind name in ["),
    ("op type", _builder_op(op_type=None),
     "graph g: expected an op type (a non-empty str), got None"),
    ("outputs", _builder_op(outputs=None),
     "graph g: expected outputs a count or a sequence of names, got None"),
    ("output count", _builder_op(outputs=2**70),  # it ran for ever naming the outputs
     "graph g: expected an output count from 0 to 65,536, got 1180591620717411303424"),
    # each of these raised AttributeError, TypeError or KeyError from inside
    ("platform tree", lambda: platform_tree("x86-h100"),
     "render_tree: expected platform a Platform (hetsim.platform.build_platform gives one), "
     "got str"),
    ("place graph", lambda: place("mlp", _PLATFORM),
     "place: expected a Graph (hetsim.load_model makes one of a zoo name or an .onnx path), "
     "got str 'mlp'"),
    ("place platform", lambda: place(_MLP, "x86-h100"),
     "place: expected platform a Platform (hetsim.platform.build_platform gives one), got str"),
    ("compile_vm graph", lambda: compile_vm(None, _PLATFORM, {}),
     "compile_vm: expected a Graph (hetsim.load_model makes one of a zoo name or an .onnx "
     "path), got None"),
    ("compile_vm platform", lambda: compile_vm(_MLP, Target("x86-h100"), {}),
     "compile_vm: expected platform a Platform (hetsim.platform.build_platform gives one), "
     "got Target"),
    ("compile_vm placement", lambda: compile_vm(_MLP, _PLATFORM, None),
     "compile_vm: expected placement a mapping of op name -> processor path "
     "(hetsim.runtime.place gives one), got NoneType"),
    ("lookup", lambda: lookup("Relu"),
     "lookup: expected an Op (OPS[type] gives a type's OpDef), got str 'Relu'"),
    ("topological_order", lambda: topological_order(["mlp"]),
     "topological_order: expected ops a collection of Ops, got str 'mlp' in it"),
    ("group_ops graph", lambda: group_ops(_MLP, {}),
     "group_ops: expected ops a sequence of Ops (a Graph's .ops), got Graph"),
    ("group_ops device", lambda: group_ops(_MLP.ops, None),
     "group_ops: expected device a mapping of op name -> device, got None"),
    ("group_ops op", lambda: group_ops([*_MLP.ops, "relu"], {o.name: "host" for o in _MLP.ops}),
     "group_ops: expected ops a sequence of Ops, got str 'relu' in it"),
    ("group_ops unplaced", lambda: group_ops(_MLP.ops, {}),
     "group_ops: expected a device for every op, got none for op fc1 (Gemm)"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "call", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_helper_names_its_bad_argument(what: str, call: Callable[[], Any], message: str) -> None:
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}"):
        call()


def test_render_tree_and_schema_table_take_names() -> None:
    # a tag name and a kind name failed with AttributeError ('str' object has no attribute)
    assert render_tree("x86-h100") == render_tree(Target("x86-h100"))
    assert schema_table("cuda") == schema_table(REGISTRIES["target"]["cuda"])
