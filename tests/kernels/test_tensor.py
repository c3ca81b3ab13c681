"""Shape and tensor ops beyond the generic table: index arithmetic, views, and every error."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute, propagate
from hetsim.kernels.registry import lookup
from hetsim.kernels.shape import reshape_target
from hetsim.kernels.tensor import pad_widths, slices, split_sizes
from tests.kernels.case import Case, case_model

F32 = np.dtype("float32")


def _op(op_type: str, n_inputs: int = 1, n_outputs: int = 1, **attrs: object) -> Op:
    outputs = tuple(f"y{i}" for i in range(n_outputs))
    return Op(op_type, "n0", tuple(f"x{i}" for i in range(n_inputs)), outputs, attrs)


def _meta(*shape: int, value: np.ndarray | None = None) -> Meta:
    return Meta(shape, F32 if value is None else value.dtype, value)


def _const(*values: int) -> Meta:
    value = np.array(values, np.int64)
    return Meta(value.shape, value.dtype, value)


def test_reshape_target_copies_zero_and_infers_minus_one() -> None:
    assert reshape_target(_op("Reshape", 2), (2, 3, 4), [0, -1, 2], False) == (2, 6, 2)


def test_reshape_rejects_two_inferred_dims() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Reshape\): expected at most one -1 and no other negative dims, "
        r"got \[-1, -1\]$",
    ):
        reshape_target(_op("Reshape", 2), (2, 3), [-1, -1], False)


def test_reshape_rejects_a_shape_of_another_size() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Reshape\): expected a shape of 6 elements, got \[4, 2\]$"
    ):
        OPS["Reshape"].infer(_op("Reshape", 2), 17, [_meta(2, 3), _const(4, 2)])


def test_reshape_rejects_an_indivisible_inferred_dim() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Reshape\): expected a shape that fits \[2, 3\], got \[4, -1\]$"
    ):
        OPS["Reshape"].infer(_op("Reshape", 2), 17, [_meta(2, 3), _const(4, -1)])


def test_reshape_needs_a_known_shape() -> None:
    computed = Meta((2,), np.dtype("int64"))
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Reshape\): expected a known value for input 1 \(shape\), "
        r"got a computed tensor 'x1'$",
    ):
        OPS["Reshape"].infer(_op("Reshape", 2), 17, [_meta(2, 3), computed])


def test_reshape_returns_a_view() -> None:
    x = np.arange(6, dtype=np.float32)
    (y,) = OPS["Reshape"].compile(_op("Reshape", 2), 17)([x, np.array([2, 3])])
    assert np.shares_memory(x, y)


def test_squeeze_rejects_an_axis_of_size_above_one() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Squeeze\): expected size 1 on squeezed axis 1, got 3$"
    ):
        OPS["Squeeze"].infer(_op("Squeeze", axes=[1]), 11, [_meta(1, 3)])


def test_unsqueeze_requires_axes() -> None:
    with pytest.raises(ModelError, match=r"^op n0 \(Unsqueeze\): expected axes, got none$"):
        OPS["Unsqueeze"].infer(_op("Unsqueeze"), 11, [_meta(3)])


def test_axis_out_of_range_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Concat\): expected an axis in \[-2, 2\), got 2$"
    ):
        OPS["Concat"].infer(_op("Concat", 2, axis=2), 17, [_meta(2, 3), _meta(2, 3)])


def test_repeated_axes_are_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(ReduceSum\): expected distinct axes, got \[1, 1\]$"
    ):
        OPS["ReduceSum"].infer(_op("ReduceSum", axes=[1, -1]), 11, [_meta(2, 3)])


def test_concat_rejects_mismatched_shapes() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Concat\): expected shapes equal except on axis 0, "
        r"got \[2, 3\] and \[2, 4\]$",
    ):
        OPS["Concat"].infer(_op("Concat", 2, axis=0), 17, [_meta(2, 3), _meta(2, 4)])


def test_concat_requires_axis() -> None:
    with pytest.raises(ModelError, match=r"^op n0 \(Concat\): missing required attribute 'axis'$"):
        OPS["Concat"].compile(_op("Concat", 2), 17)


@pytest.mark.parametrize(
    ("dim", "sizes"),
    [
        (5, [2, 2]),
        (3, [4, -1]),  # sums to 3: it gave a [2, 4] shape (a [2, 3] value) and a [2, -1] one
    ],
)
def test_split_sizes_must_be_non_negative_and_sum_to_the_dim(dim: int, sizes: list[int]) -> None:
    message = f"op n0 (Split): expected 2 sizes >= 0 summing to {dim}, got {sizes}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        split_sizes(_op("Split", 1, 2), dim, sizes, 2)


def test_split_sizes_of_one_output_say_one_size() -> None:
    message = "op n0 (Split): expected 1 size >= 0 summing to 4, got [3]"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        split_sizes(_op("Split", 1, 1), 4, [3], 1)


def test_equal_split_needs_a_divisible_dim() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Split\): expected a dim divisible by 2 outputs, got 5$"
    ):
        split_sizes(_op("Split", 1, 2), 5, None, 2)


def test_split_num_outputs_must_be_the_number_of_outputs() -> None:
    # four parts into two outputs gave the first two parts and dropped the rest
    op = Op("Split", "s", ("x",), ("y", "z"), {"axis": 1, "num_outputs": 4})
    graph = Graph("g", (op,), {"x": TensorType((1, 4), "float32")}, ("y", "z"), {}, 18)
    message = "op s (Split): expected num_outputs 2 (the number of outputs), got 4"
    for run in (
        lambda: execute(graph, {"x": np.zeros((1, 4), np.float32)}),
        lambda: propagate(graph),
    ):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_slice_rejects_a_zero_step() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Slice\): expected a non-zero step on axis 0, got 0$"
    ):
        slices(_op("Slice"), (4,), [0], [4], [0], [0])


def test_slice_kernel_returns_a_view() -> None:
    x = np.arange(10, dtype=np.float32)
    kernel = OPS["Slice"].compile(_op("Slice", 3), 13)
    (y,) = kernel([x, np.array([2]), np.array([8])])
    assert np.shares_memory(x, y)
    assert y.tolist() == [2, 3, 4, 5, 6, 7]


@settings(max_examples=40, deadline=None)
@given(
    dim=st.integers(0, 6),
    start=st.integers(-9, 9),
    end=st.integers(-9, 9),
    step=st.integers(-3, 3).filter(lambda s: s != 0),
)
def test_slice_matches_onnxruntime_for_any_bounds(
    dim: int, start: int, end: int, step: int
) -> None:
    # onnxruntime, not onnx's ReferenceEvaluator: the latter hands negative bounds to numpy
    # slicing unclamped, so x[-2:-2:-1] of a size-1 axis comes out empty against the spec
    ort = pytest.importorskip("onnxruntime")
    x = np.arange(dim * 2, dtype=np.float32).reshape(dim, 2)
    inputs = {"x": x, "s": np.array([start]), "e": np.array([end]), "a": np.array([0])}
    inputs["t"] = np.array([step])
    case = Case("Slice", inputs, opset=13, constant=("s", "e", "a", "t"))
    session = ort.InferenceSession(
        case_model(case).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (expected,) = session.run(None, {"x": x})
    (got,) = OPS["Slice"].compile(_op("Slice", 5), 13)(list(inputs.values()))
    (meta,) = OPS["Slice"].infer(
        _op("Slice", 5), 13, [Meta.of(v, keep_value=k != "x") for k, v in inputs.items()]
    )
    np.testing.assert_array_equal(got, expected)
    assert meta.shape == got.shape


def test_gather_shape_rule_puts_index_dims_at_the_axis() -> None:
    indices = Meta((4, 5), np.dtype("int64"))
    (out,) = OPS["Gather"].infer(_op("Gather", 2, axis=-2), 17, [_meta(2, 3, 7), indices])
    assert out.shape == (2, 4, 5, 7)


@pytest.mark.parametrize("op_type", ["Expand", "Tile"])
def test_expand_and_tile_read_their_shape_input_too(op_type: str) -> None:
    # Expand counted X alone, where Tile (and Pad, Slice) count their parameter input too:
    # 24 B of X and 16 B of int64 shape read, 48 B written, as docs/cost-model.md says
    x, shape = _meta(1, 6), _const(2, 6) if op_type == "Expand" else _const(2, 1)
    (y,) = OPS[op_type].infer(_op(op_type, 2), 13, [x, shape])
    cost = OPS[op_type].cost(_op(op_type, 2), [x, shape], [y])
    assert (cost.bytes_read, cost.bytes_written) == (24 + 16, 48)


def test_tile_rejects_repeats_of_the_wrong_length() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Tile\): expected 2 non-negative repeats, got \[2\]$"
    ):
        OPS["Tile"].infer(_op("Tile", 2), 17, [_meta(2, 3), _const(2)])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_tile_before_opset_6_copies_the_input_tiles_times_along_axis(axis: int) -> None:
    # Tile-1: inputs (input, tiles, axis), tiles and axis typed as the data (floats)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    tiles, along = np.array(3.0, np.float32), np.array(float(axis), np.float32)
    graph = Graph(
        "tile1",
        (Op("Tile", "t", ("x", "n", "a"), ("y",)),),
        {"x": TensorType((2, 3), "float32")},
        ("y",),
        initializers={"n": tiles, "a": along},
        opset=5,
    )
    expected = np.concatenate([x] * 3, axis=axis)
    (got,) = execute(graph, {"x": x}).values()
    np.testing.assert_array_equal(got, expected)
    assert propagate(graph)["y"].shape == expected.shape


@pytest.mark.parametrize(
    ("tiles", "axis", "message"),
    [
        (2.5, 0.0, "expected input 1 (tiles) one whole number, got 2.5"),
        (float("nan"), 0.0, "expected input 1 (tiles) one whole number, got nan"),
        (2.0, 2.0, "expected an axis in [-2, 2), got 2"),
        (-1.0, 0.0, "expected 2 non-negative repeats, got [-1, 1]"),
    ],
)
def test_tile_before_opset_6_checks_tiles_and_axis(tiles: float, axis: float, message: str) -> None:
    inputs = [_meta(2, 3), Meta.of(np.array(tiles), keep_value=True)]
    inputs.append(Meta.of(np.array(axis), keep_value=True))
    with pytest.raises(ModelError, match=f"^op n0 \\(Tile\\): {re.escape(message)}$"):
        OPS["Tile"].infer(_op("Tile", 3), 5, inputs)


def test_tile_refuses_repeats_that_are_not_1d() -> None:
    # a scalar repeats had raised numpy's "iteration over a 0-d array"
    scalar = Meta.of(np.array(2, np.int64), keep_value=True)
    with pytest.raises(
        ModelError, match=r"^op n0 \(Tile\): expected input 1 \(repeats\) 1-D, got shape \(\)$"
    ):
        OPS["Tile"].infer(_op("Tile", 2), 17, [_meta(2, 3), scalar])


def test_pad_widths_spread_over_the_given_axes() -> None:
    assert pad_widths(_op("Pad"), 3, [1, 2, 3, 4], [0, 2]) == [(1, 3), (0, 0), (2, 4)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=3).flatmap(
        lambda shape: st.tuples(
            st.just(shape),
            st.lists(st.integers(-5, 4), min_size=2 * len(shape), max_size=2 * len(shape)),
        )
    )
)
def test_constant_pad_is_pad_then_cut(case: tuple[list[int], list[int]]) -> None:
    # the spec's output: pad the positive widths, then cut the negative ones; a begin cut
    # longer than the axis against a growing end (d 2, pads -3, +2) had given 2, not 1
    shape, pads = case
    rank = len(shape)
    widths = list(zip(pads[:rank], pads[rank:], strict=True))
    if any(d + b + e < 0 for d, (b, e) in zip(shape, widths, strict=True)):
        return  # refused by the shape rule
    x = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    grown = np.pad(x, [(max(b, 0), max(e, 0)) for b, e in widths], constant_values=-1.0)
    cut = tuple(
        slice(max(-b, 0), n - max(-e, 0)) for n, (b, e) in zip(grown.shape, widths, strict=True)
    )
    op = Op("Pad", "p", ("x", "pads", "value"), ("y",))
    kernel = OPS["Pad"].compile(op, 13)
    y = kernel([x, np.array(pads, np.int64), np.array(-1.0, np.float32)])[0]
    np.testing.assert_array_equal(y, grown[cut])


def test_pad_rejects_the_wrong_number_of_pads() -> None:
    with pytest.raises(ModelError, match=r"^op n0 \(Pad\): expected 4 pads, got 3$"):
        pad_widths(_op("Pad"), 2, [1, 2, 3], None)


def test_pad_rejects_unknown_mode() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Pad\): expected a mode in \['constant', 'edge', 'reflect', 'wrap'\], "
        r"got 'mirror'$",
    ):
        OPS["Pad"].compile(_op("Pad", 2, mode="mirror"), 13)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    ("shape", "axis", "keepdims", "expected"),
    [((0, 0, 1, 2), 0, 0, (0, 1, 2)), ((2, 0), 1, 1, (2, 1)), ((0, 0), -1, 1, (0, 1))],
)
def test_arg_over_an_empty_axis_is_empty_where_no_index_is_asked_for(
    op_type: str, shape: tuple[int, ...], axis: int, keepdims: int, expected: tuple[int, ...]
) -> None:
    # an empty axis was refused even where the output has no element either (onnxruntime gives
    # the empty int64 tensor); an output with elements would index into nothing: refused
    graph = Graph(
        "g",
        (Op(op_type, "a", ("x",), ("y",), {"axis": axis, "keepdims": keepdims}),),
        {"x": TensorType(shape, "float32")},
        ("y",),
    )
    if 0 not in expected:
        message = (
            f"op a ({op_type}): expected a non-empty axis {axis % len(shape)}, got {list(shape)}"
        )
        with pytest.raises(ModelError, match="^" + re.escape(message) + "$"):
            execute(graph, {"x": np.zeros(shape, np.float32)})
        return
    y = execute(graph, {"x": np.zeros(shape, np.float32)})["y"]
    assert (y.shape, y.dtype) == (expected, np.int64)
    assert propagate(graph, {})["y"] == Meta(expected, np.dtype(np.int64))


def test_pad_rejects_crops_larger_than_the_tensor() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Pad\): expected pads that fit \[2, 3\], got \[\(-3, 0\), \(0, 0\)\]$",
    ):
        OPS["Pad"].infer(_op("Pad", 2), 13, [_meta(2, 3), _const(-3, 0, 0, 0)])


@pytest.mark.parametrize(
    ("mode", "pads", "got"),
    [
        # d 2, grow 2 then cut 3: the rule said [1], the kernel cut past the start and gave 3
        ("edge", [2, -3], "pads 2 and -3"),
        ("reflect", [1, -5], "pads 1 and -5"),
        ("wrap", [-2, 1], "pads -2 and 1"),  # nothing left to extend
    ],
)
def test_pad_refuses_cuts_that_leave_a_mode_nothing_to_extend(
    mode: str, pads: list[int], got: str
) -> None:
    d = 4 if pads == [1, -5] else 2
    message = f"op n0 (Pad): expected cuts that leave {mode} mode values to extend on axis 0 "
    with pytest.raises(ModelError, match=f"^{re.escape(message)}\\(of {d}\\), got {got}$"):
        OPS["Pad"].infer(_op("Pad", 2, mode=mode), 19, [_meta(d), _const(*pads)])
    kept = OPS["Pad"].infer(_op("Pad", 2, mode=mode), 19, [_meta(4), _const(1, -2)])
    assert kept[0].shape == (3,)  # a cut that leaves values: fine


def test_transpose_rejects_a_non_permutation() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Transpose\): expected a permutation of range\(2\), got \[0, 0\]$",
    ):
        OPS["Transpose"].infer(_op("Transpose", perm=[0, 0]), 17, [_meta(2, 3)])


def test_range_rejects_zero_delta() -> None:
    metas = [Meta((), np.dtype("int64"), np.array(v)) for v in (0, 5, 0)]
    with pytest.raises(ModelError, match=r"^op n0 \(Range\): expected a non-zero delta, got 0$"):
        OPS["Range"].infer(_op("Range", 3), 17, metas)


def test_constant_needs_a_value() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Constant\): expected one of value, value_float\(s\), value_int\(s\), "
        r"got \['sparse_value'\]$",
    ):
        OPS["Constant"].compile(_op("Constant", 0, sparse_value=1), 17)


def test_constant_of_shape_needs_a_one_element_value() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(ConstantOfShape\): expected a one-element value, got \[2\]$"
    ):
        OPS["ConstantOfShape"].compile(_op("ConstantOfShape", value=np.zeros(2)), 17)


def test_shape_rule_of_shape_knows_its_value() -> None:
    (out,) = OPS["Shape"].infer(_op("Shape", start=1), 15, [_meta(2, 3, 4)])
    assert out.value is not None
    assert out.value.tolist() == [3, 4]


def test_view_ops_cost_nothing_and_copies_cost_bytes() -> None:
    x = _meta(4, 8)
    reshape, transpose = _op("Reshape", 2), _op("Transpose")
    shape = _const(8, 4)
    r = OPS["Reshape"].cost(reshape, [x, shape], OPS["Reshape"].infer(reshape, 17, [x, shape]))
    t = OPS["Transpose"].cost(transpose, [x], OPS["Transpose"].infer(transpose, 17, [x]))
    assert (r.flops, r.bytes_read, r.bytes_written) == (0.0, 0, 0)
    assert (t.flops, t.bytes_read, t.bytes_written, t.op_class) == (0.0, 128, 128, "data_movement")


def test_lookup_names_the_op_and_where_supported_ops_are_listed() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Rellu\): unsupported op Rellu \(did you mean 'Relu'\?\); "
        r"hetsim\.kernels\.OPS holds the supported op types \(docs/architecture\.md, Kernels, "
        r"lists them\)$",
    ):
        lookup(_op("Rellu"))


@pytest.mark.parametrize(
    ("op", "inputs", "message"),
    [
        (
            _op("GatherElements", 2, axis=1),
            [_meta(3, 4), Meta((3,), np.dtype("int64"))],
            "op n0 (GatherElements): expected indices of rank 2, got 1",
        ),
        (
            _op("GatherElements", 2, axis=2),
            [_meta(3, 4), Meta((3, 1), np.dtype("int64"))],
            "op n0 (GatherElements): expected an axis in [-2, 2), got 2",
        ),
        (
            _op("GatherElements", 2, axis=0),
            [_meta(3, 4), Meta((3, 5), np.dtype("int64"))],
            "op n0 (GatherElements): expected indices no longer than data off the axis "
            "(data [3, 4]), got shape [3, 5]",
        ),
        (  # it passed the rule and failed inside the kernel with an IndexError
            _op("ScatterElements", 3, axis=0),
            [_meta(3, 4), Meta((2, 5), np.dtype("int64")), _meta(2, 5)],
            "op n0 (ScatterElements): expected indices no longer than data off the axis "
            "(data [3, 4]), got shape [2, 5]",
        ),
        (_op("Trilu"), [_meta(4)], "op n0 (Trilu): expected an input of rank 2 or more, got 1"),
        (
            _op("ArgMax", axis=1),
            [_meta(3, 0)],
            "op n0 (ArgMax): expected a non-empty axis 1, got [3, 0]",
        ),
        (
            _op("Mod", 2),
            [_meta(2), _meta(2)],
            "op n0 (Mod): expected fmod 1 for float32 inputs before opset 28, got 0",
        ),
        (_op("Mod", 2, fmod=2), [_meta(2), _meta(2)], "op n0 (Mod): expected fmod 0 or 1, got 2"),
        (
            _op("DepthToSpace", blocksize=2),
            [_meta(1, 6, 2, 2)],
            "op n0 (DepthToSpace): expected an input of rank 4 whose channels divide by 4, "
            "got shape [1, 6, 2, 2]",
        ),
        (
            _op("DepthToSpace", blocksize=2, mode="RCD"),
            [_meta(1, 8, 2, 2)],
            "op n0 (DepthToSpace): expected mode 'DCR' or 'CRD', got 'RCD'",
        ),
        (
            _op("SpaceToDepth", blocksize=3),
            [_meta(1, 2, 6, 4)],
            "op n0 (SpaceToDepth): expected an input of rank 4 whose height and width divide "
            "by 3, got shape [1, 2, 6, 4]",
        ),
        (
            _op("GatherND", 2),
            [_meta(2, 3), Meta((4, 3), np.dtype("int64"))],
            "op n0 (GatherND): expected index tuples of 1 to 2 elements, got 3",
        ),
        (
            _op("GatherND", 2, batch_dims=1),
            [_meta(2, 3), Meta((3, 1), np.dtype("int64"))],
            "op n0 (GatherND): expected indices whose first 1 dims are data's [2], got [3]",
        ),
        (
            _op("ScatterND", 3),
            [_meta(4, 3), Meta((2, 1), np.dtype("int64")), _meta(2, 4)],
            "op n0 (ScatterND): expected updates of shape [2, 3] for index tuples of 1, got [2, 4]",
        ),
        (
            _op("ScatterElements", 3, reduction="sum"),
            [_meta(4, 3), Meta((2, 3), np.dtype("int64")), _meta(2, 3)],
            "op n0 (ScatterElements): expected reduction one of ['none', 'add', 'mul', 'max', "
            "'min'], got sum",
        ),
        (
            _op("ScatterElements", 3),
            [_meta(4, 3), Meta((2, 3), np.dtype("int64")), _meta(3, 2)],
            "op n0 (ScatterElements): expected indices and updates of one shape, of rank 2, "
            "got [2, 3] and [3, 2]",
        ),
        (_op("EyeLike"), [_meta(3)], "op n0 (EyeLike): expected an input of rank 2, got 1"),
        (
            _op("OneHot", 3),
            [Meta((4,), np.dtype("int64")), _const(0), _meta(2)],
            "op n0 (OneHot): expected one positive depth, got [0]",
        ),
        (
            _op("OneHot", 3),
            [Meta((4,), np.dtype("int64")), _const(3), _meta(3)],
            "op n0 (OneHot): expected values [off, on] of shape [2], got [3]",
        ),
        (
            _op("TopK", 2, 2),
            [_meta(3, 4), _const(5)],
            "op n0 (TopK): expected K from 0 to 4 (axis 1), got 5",
        ),
        (
            _op("TopK", 2, 2, largest=2),
            [_meta(3, 4), _const(2)],
            "op n0 (TopK): expected largest 0 or 1, got 2",
        ),
        (
            _op("BitShift", 2, direction="LEFT"),
            [Meta((2,), np.dtype("int8")), Meta((2,), np.dtype("int8"))],
            "op n0 (BitShift): expected unsigned integer inputs before opset 28, got int8",
        ),
        (
            _op("ReverseSequence", 2, time_axis=0, batch_axis=2),
            [_meta(4, 3), Meta((3,), np.dtype("int64"))],
            "op n0 (ReverseSequence): expected time_axis and batch_axis 0 and 1, got [0, 2]",
        ),
        (
            _op("ReverseSequence", 2),
            [_meta(4, 3), Meta((4,), np.dtype("int64"))],
            "op n0 (ReverseSequence): expected sequence_lens of shape [3] (batch axis 1), got [4]",
        ),
        (
            _op("CenterCropPad", 2, axes=[0]),
            [_meta(4, 3), _const(2, 2)],
            "op n0 (CenterCropPad): expected a shape of 1 values (one per axis), got [2, 2]",
        ),
        (
            _op("BitShift", 2, direction="UP"),
            [Meta((2,), np.dtype("uint8")), Meta((2,), np.dtype("uint8"))],
            "op n0 (BitShift): expected direction 'LEFT' or 'RIGHT', got 'UP'",
        ),
    ],
)
def test_added_ops_refuse_bad_inputs_naming_the_op(
    op: Op, inputs: list[Meta], message: str
) -> None:
    with pytest.raises(ModelError, match="^" + re.escape(message) + "$"):
        OPS[op.type].infer(op, 17, inputs)


@pytest.mark.parametrize("axis", [0, -2])
def test_gather_elements_output_has_the_shape_of_indices_shorter_than_data(axis: int) -> None:
    # np.take_along_axis broadcast indices (2, 1) against data (2, 3): a (2, 3) output where
    # the shape rule (and onnxruntime) give (2, 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    indices = np.array([[1], [0]], np.int64)
    graph = Graph(
        "g",
        (Op("GatherElements", "ge", ("x", "i"), ("y",), {"axis": axis}),),
        {"x": TensorType((2, 3), "float32"), "i": TensorType((2, 1), "int64")},
        ("y",),
    )
    y = execute(graph, {"x": x, "i": indices})["y"]
    expected = [[x[indices[r, 0], 0]] for r in range(2)]  # output[r][c] = x[indices[r][c]][c]
    assert y.tolist() == expected == [[3.0], [0.0]]


def test_gather_elements_index_out_of_range_names_the_op() -> None:
    op = Op("GatherElements", "ge", ("x", "i"), ("y",), {"axis": 0})
    graph = Graph(
        "g",
        (op,),
        {"x": TensorType((2, 2), "float32"), "i": TensorType((1, 2), "int64")},
        ("y",),
    )
    inputs = {"x": np.zeros((2, 2), np.float32), "i": np.array([[0, 2]], np.int64)}
    # numpy's "IndexError: index 2 is out of bounds ..." had been the message
    message = "op ge (GatherElements): expected indices in [-2, 2) (axis 0 of data [2, 2]), got 2"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(graph, inputs)


def _floats(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


INTEGER_INPUTS_OF_FLOATS = [
    pytest.param(
        Op("Reshape", "r", ("x", "s"), ("y",)), {"s": _floats(2.7, 4.2)}, "1 (shape)", id="reshape"
    ),
    pytest.param(
        Op("Expand", "r", ("x", "s"), ("y",)), {"s": _floats(2, 4)}, "1 (shape)", id="expand"
    ),
    pytest.param(
        Op("Tile", "r", ("x", "s"), ("y",)), {"s": _floats(1, 2)}, "1 (repeats)", id="tile"
    ),
    pytest.param(
        Op("Slice", "r", ("x", "a", "b"), ("y",)),
        {"a": _floats(0), "b": _floats(1.5)},
        "1 (starts)",
        id="slice",
    ),
    pytest.param(
        Op("Unsqueeze", "r", ("x", "a"), ("y",)), {"a": _floats(0)}, "1 (axes)", id="unsqueeze"
    ),
    pytest.param(
        Op("Pad", "r", ("x", "p"), ("y",)), {"p": _floats(0, 1, 0, 1)}, "1 (pads)", id="pad"
    ),
    pytest.param(
        Op("ReduceSum", "r", ("x", "a"), ("y",)), {"a": _floats(1)}, "1 (axes)", id="reduce"
    ),
    pytest.param(Op("TopK", "r", ("x", "k"), ("y", "i")), {"k": _floats(2)}, "1 (K)", id="top-k"),
    pytest.param(
        Op("ConstantOfShape", "r", ("s",), ("y",)),
        {"s": _floats(2, 3)},
        "0 (shape)",
        id="constant-of-shape",
    ),
    pytest.param(
        Op("Resize", "r", ("x", "", "", "s"), ("y",)),
        {"s": _floats(4, 8)},
        "3 (sizes)",
        id="resize",
    ),
]


@pytest.mark.parametrize(("op", "initializers", "which"), INTEGER_INPUTS_OF_FLOATS)
def test_an_integer_input_of_floats_is_refused_not_truncated(
    op: Op, initializers: dict[str, np.ndarray], which: str
) -> None:
    # a float Reshape shape [2.7, 4.2] was read as [2, 4]
    graph = Graph("g", (op,), {"x": TensorType((2, 4), "float32")}, ("y",), initializers)
    message = f"op r ({op.type}): expected input {which} of an integer dtype, got float32"
    for run in (
        lambda: execute(graph, {"x": np.zeros((2, 4), np.float32)}),
        lambda: propagate(graph),
    ):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_a_float_shape_input_without_a_value_is_refused_for_its_dtype() -> None:
    # timing mode knows no value of a graph input, but its dtype is enough to refuse it
    inputs = {"x": TensorType((2, 4), "float32"), "s": TensorType((2,), "float32")}
    graph = Graph("g", (Op("Reshape", "r", ("x", "s"), ("y",)),), inputs, ("y",))
    message = "op r (Reshape): expected input 1 (shape) of an integer dtype, got float32"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        propagate(graph)


@pytest.mark.parametrize("as_weight", [True, False])
def test_split_1_reads_its_split_input(as_weight: bool) -> None:
    # Split-1 takes the sizes as an optional second input; it was ignored (equal parts: [3, 3])
    x = np.arange(6, dtype=np.float32)
    sizes = np.array([2, 4], np.int64)
    declared = {"x": TensorType((6,), "float32")}
    if not as_weight:
        declared["sp"] = TensorType((2,), "int64")
    op = Op("Split", "s", ("x", "sp"), ("a", "b"))
    weights = {"sp": sizes} if as_weight else {}
    graph = Graph("g", (op,), declared, ("a", "b"), weights, opset=1)
    given = {"x": x} if as_weight else {"x": x, "sp": sizes}
    found = execute(graph, given)
    expected = np.split(x, [2])
    for name, want in zip(("a", "b"), expected, strict=True):
        np.testing.assert_array_equal(found[name], want)
    assert [m.shape for m in (propagate(graph, inputs=given)[n] for n in ("a", "b"))] == [
        (2,),
        (4,),
    ]


@pytest.mark.parametrize(("op_type", "what"), [("CumSum", "axis"), ("Trilu", "k")])
def test_a_one_element_1_d_axis_or_k_is_refused_as_not_a_scalar(op_type: str, what: str) -> None:
    # ONNX gives both a 0-D tensor; a [1] raised numpy's bare "only 0-dimensional arrays can be
    # converted to Python scalars" from the kernel, and the shape rule let it through
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    one = np.array([1], np.int64)
    graph = Graph("g", (Op(op_type, "y", ("x", "a"), ("y",)),),
                  {"x": TensorType((2, 3), "float32")}, ("y",), {"a": one})  # fmt: skip
    message = f"op y ({op_type}): expected input 1 ({what}) a scalar, got shape (1,)"
    for run in (lambda: execute(graph, {"x": x}), lambda: propagate(graph)):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()
    scalar = Graph("g", graph.ops, graph.inputs, ("y",), {"a": np.array(1, np.int64)})
    expected = np.cumsum(x, axis=1) if op_type == "CumSum" else np.triu(x, 1)
    np.testing.assert_array_equal(execute(scalar, {"x": x})["y"], expected)
