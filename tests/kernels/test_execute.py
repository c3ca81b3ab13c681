"""The eager run: values against numpy, compiled once, constants folded, intermediates freed."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError, SimulationError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import compile_program, execute
from hetsim.kernels.arrays import owned_outputs

execute_module = importlib.import_module("hetsim.kernels.execute")


def _block() -> Graph:
    """relu(x + b) summed over the last axis, and the transposed sum, as a second output."""
    ops = (
        Op("Add", "add", ("x", "b"), ("h",)),
        Op("Relu", "relu", ("h",), ("r",)),
        Op("ReduceSum", "sum", ("r", "axes"), ("s",), {"keepdims": 0}),
        Op("Transpose", "t", ("r",), ("rt",)),
    )
    inits = {"b": np.array([0.5, -1.0, 2.0], np.float32), "axes": np.array([-1], np.int64)}
    return Graph("block", ops, {"x": TensorType(("n", 3), "float32")}, ("s", "rt"), inits)


def test_execute_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 3)).astype(np.float32)
    out = execute(_block(), {"x": x})
    r = np.maximum(x + np.array([0.5, -1.0, 2.0], np.float32), 0)
    assert list(out) == ["s", "rt"]
    np.testing.assert_allclose(out["s"], r.sum(axis=-1), rtol=1e-6)
    np.testing.assert_array_equal(out["rt"], r.T)
    assert out["s"].dtype == np.float32


def test_symbolic_dims_take_any_size(rng: np.random.Generator) -> None:
    graph = _block()
    for n in (1, 7):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        assert execute(graph, {"x": x})["rt"].shape == (3, n)


def test_program_is_compiled_once_per_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Graph, bool]] = []

    def counting(graph: Graph, *, fuse_ops: bool) -> execute_module.Program:
        calls.append((graph, fuse_ops))
        return compile_program(graph, fuse_ops=fuse_ops)

    monkeypatch.setattr(execute_module, "compile_program", counting)
    graph, x = _block(), np.zeros((2, 3), np.float32)
    execute(graph, {"x": x})
    execute(graph, {"x": x})
    execute(graph, {"x": x}, fuse=False)  # the op-by-op program is cached apart
    execute(graph, {"x": x}, fuse=False)
    assert calls == [(graph, True), (graph, False)]


def test_program_cache_keeps_only_the_last_few_graphs() -> None:
    x = np.zeros((1, 3), np.float32)
    graphs = [_block() for _ in range(execute_module._CACHE_SIZE + 2)]
    for graph in graphs:
        execute(graph, {"x": x})
    cached = list(execute_module._programs.graphs())
    assert cached == graphs[-execute_module._CACHE_SIZE :]


def test_constant_subgraphs_are_folded_at_compile() -> None:
    ops = (
        Op("ConstantOfShape", "w", ("shape",), ("weight",), {"value": np.array([2.0], np.float32)}),
        Op("Mul", "scale", ("x", "weight"), ("y",)),
    )
    graph = Graph(
        "g", ops, {"x": TensorType((3,), "float32")}, ("y",), {"shape": np.array([3], np.int64)}
    )
    program = compile_program(graph)
    assert len(program.steps) == 1
    assert execute(graph, {"x": np.ones(3, np.float32)})["y"].tolist() == [2.0, 2.0, 2.0]


def _constant_output() -> Graph:
    """y = x + (-w), with -w (folded at compile) an output too."""
    ops = (Op("Neg", "neg", ("w",), ("minus",)), Op("Add", "add", ("x", "minus"), ("y",)))
    inits = {"w": np.ones(3, np.float32)}
    return Graph("g", ops, {"x": TensorType((3,), "float32")}, ("y", "minus"), inits)


def test_a_constant_output_cannot_change_later_runs() -> None:
    graph = _constant_output()
    first = execute(graph, {"x": np.zeros(3, np.float32)})
    first["minus"][0] = 100.0  # the caller's own copy (`owned_outputs`)
    again = execute(graph, {"x": np.zeros(3, np.float32)})
    assert again["minus"].tolist() == again["y"].tolist() == [-1.0, -1.0, -1.0]
    held = graph.initializers["w"]  # a read-only view (Graph); the caller's array left alone
    assert not held.flags.writeable
    assert held.base.flags.writeable


def _aliasing_outputs() -> Graph:
    """y = Identity(x), z = Identity(y), v = Flatten(w), s = Slice(x): every output a view of
    an input, of another output or of a constant, as numpy's kernels give them."""
    ops = (
        Op("Identity", "i", ("x",), ("y",)),
        Op("Identity", "j", ("y",), ("z",)),
        Op("Flatten", "f", ("w",), ("v",)),
        Op("Slice", "s", ("x", "zero", "one"), ("s",)),
    )
    inits = {
        "w": np.ones((2, 3), np.float32),
        "zero": np.array([0], np.int64),
        "one": np.array([1], np.int64),
    }
    return Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("y", "z", "v", "s"), inits)


@pytest.mark.parametrize("run", ["execute", "simulate"])
def test_outputs_are_the_callers_own_arrays(run: str) -> None:
    graph = _aliasing_outputs()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    if run == "execute":
        out = execute(graph, {"x": x})
    else:
        out = simulate(graph, "x86-h100", inputs={"x": x}).outputs
    for name in ("y", "z", "v", "s"):
        np.add(out[name], 100.0, out=out[name])  # each a writeable array of its own
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]  # the input untouched
    assert out["y"].tolist() == out["z"].tolist() == [[100, 101, 102], [103, 104, 105]]
    assert out["v"].tolist() == [[101] * 3] * 2
    assert out["s"].tolist() == [[100, 101, 102]]
    assert graph.initializers["w"].tolist() == [[1] * 3] * 2


def test_outputs_that_alias_nothing_are_handed_out_as_they_are() -> None:
    x = np.ones(4, np.float32)
    y, z = np.zeros(4, np.float32), np.zeros(4, np.float32)
    halves = np.arange(4.0)  # two outputs of one buffer that do not overlap: no copy either
    out = owned_outputs({"y": y, "z": z, "a": halves[:2], "b": halves[2:], "n": None}, {"x": x})
    assert (out["y"] is y, out["z"] is z, out["n"]) == (True, True, None)
    assert (out["a"].base is halves, out["b"].base is halves) == (True, True)
    again = owned_outputs({"a": halves[::2], "b": halves[1::2]}, {})  # interleaved: copied
    assert (again["a"].base is halves, again["b"].base) == (True, None)


def test_intermediates_are_freed_after_their_last_use() -> None:
    program = compile_program(_block(), fuse_ops=False)
    slot_of = {name: slot for name, slot in program.outputs}
    add, relu, reduce_sum, transpose = program.steps
    h, r = add.outputs[0], relu.outputs[0]
    assert add.frees == ()
    assert relu.frees == (h,)
    assert reduce_sum.frees == ()
    assert transpose.frees == (r,)
    assert slot_of["s"] not in {s for step in program.steps for s in step.frees}


def test_unread_outputs_are_freed_at_once() -> None:
    ops = (Op("Dropout", "d", ("x",), ("y", "mask")),)
    program = compile_program(Graph("g", ops, {"x": TensorType((2,), "float32")}, ("y",)))
    (step,) = program.steps
    assert step.frees == (step.outputs[1],)


def test_missing_input_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^inputs: expected \['x'\], got missing \['x'\]$"):
        execute(_block(), {})


def test_an_input_under_another_name_is_named_as_missing_and_unknown() -> None:
    x = np.zeros((2, 3), np.float32)
    message = r"^inputs: expected \['x'\], got missing \['x'\] and unknown \['y'\]$"
    with pytest.raises(ModelError, match=message):
        execute(_block(), {"y": x})


def test_unknown_input_is_an_error() -> None:
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ModelError, match=r"^inputs: expected \['x'\], got unknown \['y'\]$"):
        execute(_block(), {"x": x, "y": x})


def test_wrong_dtype_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^input 'x': expected float32 array, got float64$"):
        execute(_block(), {"x": np.zeros((2, 3))})


def test_non_array_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^input 'x': expected float32 array, got list$"):
        execute(_block(), {"x": [[0.0, 1.0, 2.0]]})  # type: ignore[dict-item]


def test_wrong_rank_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^input 'x': expected rank 2 \[n, 3\], got shape \[2, 3, 1\]$"
    ):
        execute(_block(), {"x": np.zeros((2, 3, 1), np.float32)})


def test_wrong_static_dim_is_an_error() -> None:
    graph = Graph(
        "g", (Op("Relu", "r", ("x",), ("y",)),), {"x": TensorType((2, 3), "float32")}, ("y",)
    )
    with pytest.raises(
        ModelError, match=r"^input 'x': expected shape \[2, 3\], got \[2, 4\] \(axis 1\)$"
    ):
        execute(graph, {"x": np.zeros((2, 4), np.float32)})


def test_unsupported_op_fails_at_compile() -> None:
    graph = Graph(
        "g", (Op("Relux", "r", ("x",), ("y",)),), {"x": TensorType((2,), "float32")}, ("y",)
    )
    with pytest.raises(
        ModelError, match=r"^op r \(Relux\): unsupported op Relux \(did you mean 'Relu'\?\); "
    ):
        compile_program(graph)


def test_an_op_s_name_with_control_characters_is_shown_escaped() -> None:
    # op_label printed it as it was: the newline broke the message, the escape reached a terminal
    op = Op("Relux", "r\n\x1b[2J", ("x",), ("y",))
    graph = Graph("g", (op,), {"x": TensorType((2,), "float32")}, ("y",))
    with pytest.raises(ModelError, match=r"^op r\\n\\x1b\[2J \(Relux\): unsupported op Relux "):
        compile_program(graph)


def _division_by_zero(*, folded: bool, rows: int = 1) -> Graph:
    """An integer Div by a divisor of zeros (a Sub of a tensor from itself), of the input or
    (`folded`) of a weight of `rows` rows, so that it fails in the program or when its constants
    are folded (shape propagation computes it, unless its output is over `SMALL_VALUE_SIZE`). A
    value no shape rule sees: its kernel fails (an out-of-range constant Gather index had been
    the example, until Gather's rule checked the indices it knows)."""
    source = "w" if folded else "x"
    ops = (
        Op("Sub", "zero", (source, source), ("z",)),
        Op("Div", "divide", (source, "z"), ("q",)),
        Op("Add", "add", ("x", "q"), ("y",)),
    )
    inits = {"w": np.ones((rows, 4), np.int64)}
    return Graph("g", ops, {"x": TensorType((1, 4), "int64")}, ("y",), inits)


DIVISION_FAILED = (
    "op divide (Div): expected its kernel to compute, got ZeroDivisionError: integer division "
    "by zero"
)


@pytest.mark.parametrize("folded", [False, True])
@pytest.mark.parametrize("fuse", [True, False])
def test_a_kernel_that_fails_names_its_op(folded: bool, fuse: bool) -> None:
    # numpy's IndexError alone, raised from inside the run, did not say which op
    graph = _division_by_zero(folded=folded)
    with pytest.raises(ModelError, match=f"^{re.escape(DIVISION_FAILED)}$") as caught:
        execute(graph, {"x": np.ones((1, 4), np.int64)}, fuse=fuse)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)  # kept for whoever debugs


@pytest.mark.parametrize("fuse", [True, False])
def test_a_kernel_this_machine_has_no_room_for_names_its_op(fuse: bool) -> None:
    # numpy's _ArrayMemoryError came out of `hetsim run` at sizes only timing mode can take
    ops = (Op("Expand", "grow", ("x", "shape"), ("y",)),)
    huge = np.array([10**8, 10**8], np.int64)  # 40 PB of float32: no machine allocates it
    graph = Graph("g", ops, {"x": TensorType((1,), "float32")}, ("y",), {"shape": huge})
    message = (
        r"^op grow \(Expand\): expected arrays this machine can allocate, got MemoryError: "
        r"Unable to allocate .* \(timing mode computes no values\)$"
    )
    with pytest.raises(SimulationError, match=message) as caught:
        execute(graph, {"x": np.ones(1, np.float32)}, fuse=fuse)
    assert isinstance(caught.value.__cause__, MemoryError)


def softmax_axis_last() -> Graph:
    """A Softmax whose axis is ``"last"``: its kernel and its shape rule both refuse it."""
    op = Op("Softmax", "s", ("x",), ("y",), {"axis": "last"})
    return Graph("g", (op,), {"x": TensorType((1, 4), "float32")}, ("y",))


AXIS_LAST_FAILED = "op s (Softmax): expected attribute 'axis' to be an integer, got 'last'"
"""`softmax_axis_last`'s error, from its kernel and its shape rule alike: both read the attribute
with the one typed reader (`int_attr`)."""


def test_an_attribute_the_kernel_cannot_read_names_its_op() -> None:
    message = AXIS_LAST_FAILED
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(softmax_axis_last(), {"x": np.ones((1, 4), np.float32)})


@pytest.mark.parametrize(
    ("graph", "inputs", "message"),
    [
        ("mlp", {}, "execute: expected a Graph (hetsim.load_model makes one of a zoo name or an "
                    ".onnx path), got str 'mlp'"),
        (None, [np.ones(3, np.float32)], "inputs: expected a mapping of input name -> array, "
                                         "got list"),
    ],
)  # fmt: skip
def test_plain_misuse_is_a_clear_error(graph: object, inputs: object, message: str) -> None:
    # these were an AttributeError deep in a cache, and a ValueError from dict()
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(graph if graph is not None else _block(), inputs)  # type: ignore[arg-type]


def test_zero_dim_results_are_arrays() -> None:
    # a ufunc on 0-d arrays gives a numpy scalar: it was handed out as an output, and a folded
    # 0-d constant was refused as an initializer
    graph = Graph(
        "scalars",
        inputs={"x": TensorType((), "float32")},
        outputs=("r",),
        ops=(
            Op("Constant", "c", (), ("c",), {"value": np.array(4.0, np.float32)}),
            Op("Sqrt", "s", ("c",), ("s",)),
            Op("Add", "r", ("x", "s"), ("r",)),
        ),
    )
    inputs = {"x": np.array(1.5, np.float32)}
    for outputs in (execute(graph, inputs), simulate(graph, "x86-h100", inputs=inputs).outputs):
        assert type(outputs["r"]) is np.ndarray
        assert (outputs["r"].dtype, outputs["r"].shape, float(outputs["r"])) == (
            np.float32,
            (),
            3.5,
        )


def test_an_omitted_output_before_a_named_one_keeps_the_positions() -> None:
    # LayerNormalization's ("y", "", "inv"): execute gave inv None (the kernel returned the
    # named outputs only) and a simulation wrote each result to the wrong slot
    op = Op("LayerNormalization", "ln", ("x", "s"), ("y", "", "inv"), {"axis": 1})
    graph = Graph(
        "ln", (op,), {"x": TensorType((2, 4), "float32"), "s": TensorType((4,), "float32")},
        ("y", "inv"),
    )  # fmt: skip
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    s = np.full(4, 2.0, np.float32)
    centered = x - x.mean(axis=1, keepdims=True)
    inv = 1 / np.sqrt((centered**2).mean(axis=1, keepdims=True) + np.float32(1e-5))
    for outputs in (
        execute(graph, {"x": x, "s": s}),
        simulate(graph, "x86-h100", inputs={"x": x, "s": s}).outputs,
    ):
        np.testing.assert_allclose(outputs["inv"], inv, rtol=1e-6)
        np.testing.assert_allclose(outputs["y"], 2 * centered * inv, rtol=1e-6)


def _relu(inputs: tuple[str, ...], outputs: tuple[str, ...]) -> Graph:
    op = Op("Relu", "r", inputs, outputs)
    return Graph("g", (op,), {"x": TensorType((2, 4), "float32")}, tuple(filter(None, outputs)))


def _refused_by_every_run(graph: Graph, message: str) -> None:
    """`execute`, a functional and a timing simulation all give `message`."""
    x = np.ones((2, 4), np.float32)
    runs = [
        lambda: execute(graph, {"x": x}),
        lambda: simulate(graph, "x86-cpu", inputs={"x": x}),
        lambda: simulate(graph, "x86-cpu", mode="timing"),
    ]
    for run in runs:
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_an_op_naming_more_outputs_than_it_gives_is_refused() -> None:
    # execute gave z None, and a simulation raised a bare KeyError: 'z' from its slots
    message = "op r (Relu): expected at most 1 output, got 2"
    _refused_by_every_run(_relu(("x",), ("y", "z")), message)


def test_a_batch_normalization_with_training_outputs_is_refused_in_every_mode() -> None:
    ops = (Op("BatchNormalization", "bn", ("x", "s", "b", "m", "v"), ("y", "rm", "rv")),)
    params = {k: np.ones(4, np.float32) for k in "sbmv"}
    graph = Graph("g", ops, {"x": TensorType((2, 4), "float32")}, ("y",), params)
    _refused_by_every_run(graph, "op bn (BatchNormalization): expected inference mode (one "
                                 "output), got 3 outputs")  # fmt: skip


def test_an_omitted_trailing_output_is_still_allowed() -> None:
    x = -np.ones((2, 4), np.float32)
    assert execute(_relu(("x",), ("y", "")), {"x": x})["y"].tolist() == [[0.0] * 4] * 2


def test_an_omitted_required_input_is_refused_before_the_rules_run() -> None:
    # the shape rule's assert said "expected attributes its shape rule can use, got
    # AssertionError", and under python -O the rule raised an AttributeError
    message = "op r (Relu): expected input 0 (a tensor), got none (an omitted input)"
    _refused_by_every_run(_relu(("",), ("y",)), message)


def test_too_few_inputs_are_refused_before_the_rules_run() -> None:
    op = Op("Add", "a", ("x",), ("y",))
    graph = Graph("g", (op,), {"x": TensorType((2, 4), "float32")}, ("y",))
    _refused_by_every_run(graph, "op a (Add): expected at least 2 inputs, got 1")


def test_a_constant_of_two_values_is_an_error() -> None:
    # ONNX allows exactly one; the kernel read 'value' and ignored the other
    attrs = {"value": np.ones(2, np.float32), "value_float": 3.0}
    graph = Graph("g", (Op("Constant", "c", (), ("y",), attrs),), {}, ("y",))
    message = (
        "op c (Constant): expected exactly one of value, value_float, value_floats, value_int, "
        "value_ints, got ['value', 'value_float']"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(graph, {})


def _two_input_graph(op_type: str, a: TensorType, b: TensorType, **attrs: object) -> Graph:
    return Graph("g", (Op(op_type, "y", ("a", "b"), ("y",), attrs),), {"a": a, "b": b}, ("y",))


@pytest.mark.parametrize(
    ("graph", "inputs", "message"),
    [
        (  # numpy promoted to float64
            _two_input_graph("Add", TensorType((2,), "float32"), TensorType((2,), "int32")),
            {"a": np.ones(2, np.float32), "b": np.ones(2, np.int32)},
            "op y (Add): expected inputs of one dtype, got float32 and int32",
        ),
        (  # numpy's floored remainder, where ONNX asks for fmod=1 on floats
            _two_input_graph("Mod", TensorType((2,), "float32"), TensorType((2,), "float32")),
            {"a": np.array([-1.5, 2.5], np.float32), "b": np.array([3.0, 2.0], np.float32)},
            "op y (Mod): expected fmod 1 for float32 inputs before opset 28, got 0",
        ),
        (  # a batched product came back
            _two_input_graph(
                "Gemm", TensorType((1, 2, 3), "float32"), TensorType((3, 4), "float32")
            ),
            {"a": np.ones((1, 2, 3), np.float32), "b": np.ones((3, 4), np.float32)},
            "op y (Gemm): expected 2-D A and B, got shapes [1, 2, 3] and [3, 4]",
        ),
    ],
    ids=["add-mixed-dtypes", "mod-float-fmod-0", "gemm-3d"],
)
def test_execute_refuses_what_simulate_refuses(
    graph: Graph, inputs: dict[str, np.ndarray], message: str
) -> None:
    # execute ran no shape rule, so numpy's rules computed a value simulate refused
    for run in (lambda: execute(graph, inputs), lambda: simulate(graph, "x86-h100", inputs=inputs)):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_a_tensor_may_have_any_name_an_omitted_output_is_written_apart() -> None:
    # the omitted outputs' slot was named "\0discard": an input of that name shared it, and a
    # Split's omitted second output overwrote it (y read [4, 6] where x[:2] + d is [101, 102])
    name = "\0discard"
    ops = (Op("Split", "s", ("x",), ("a", "")), Op("Add", "add", ("a", name), ("y",)))
    inputs = {"x": TensorType((4,), "float32"), name: TensorType((2,), "float32")}
    graph = Graph("g", ops, inputs, ("y",), opset=13)
    x, d = np.array([1, 2, 3, 4], np.float32), np.array([100, 100], np.float32)
    for fuse in (False, True):
        np.testing.assert_array_equal(execute(graph, {"x": x, name: d}, fuse=fuse)["y"], [101, 102])


def test_fuse_is_a_bool() -> None:
    # "no" read as true: the run fused, where simulate refuses it
    relu = (Op("Relu", "r", ("x",), ("y",)),)
    graph = Graph("g", relu, {"x": TensorType((2,), "float32")}, ("y",))
    with pytest.raises(ModelError, match=r"^execute: expected fuse True or False, got 'no'$"):
        execute(graph, {"x": np.ones(2, np.float32)}, fuse="no")  # type: ignore[arg-type]
    x = {"x": np.array([-1.0, 2.0], np.float32)}
    assert execute(graph, x, fuse=np.False_)["y"].tolist() == [0.0, 2.0]  # numpy's bool too
