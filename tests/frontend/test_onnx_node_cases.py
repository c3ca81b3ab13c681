"""ONNX's node conformance suite: every case of ``onnx.backend.test.case.node`` (one op, its
attributes, its inputs and the outputs ONNX's reference computes) that hetsim loads is run by
`execute` against the expected outputs, at the case's own tolerance, and by a functional
`simulate` on a host+GPU target, bit for bit equal to `execute`.

A case whose op, dtype or value kind (sequences, optionals) hetsim does not support is skipped
with the frontend's `ModelError`, which names it; `test_refusals_are_only_unsupported_features`
keeps the skips honest. The wheel does not ship these cases as files, so they are built by
ONNX's own generators when this module is collected (about five seconds).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from hetsim.api import simulate  # noqa: E402
from hetsim.errors import ModelError  # noqa: E402
from hetsim.frontend.onnx import load_onnx  # noqa: E402
from hetsim.kernels import execute  # noqa: E402


def _collect() -> list:
    """The node cases, built quietly: their generators print, warn and overflow on purpose."""
    with (
        contextlib.redirect_stderr(io.StringIO()),
        contextlib.redirect_stdout(io.StringIO()),
        warnings.catch_warnings(),
        np.errstate(all="ignore"),
    ):
        warnings.simplefilter("ignore")
        from onnx.backend.test.case import node

        return node.collect_testcases("")


CASES = _collect()
TARGET = "x86-h100"
#: What hetsim's kernels refuse of an op it supports, by case-name prefix, with the message.
REFUSED = {
    "test_batchnorm_epsilon_training_mode": "expected training_mode 0 (inference), got training",
    "test_batchnorm_example_training_mode": "expected training_mode 0 (inference), got training",
    "test_maxpool_with_argmax_2d_precomputed": "expected 1 output (Indices is not supported)",
    "test_training_dropout": "expected training_mode false (inference), got True",
}
#: The frontend's refusals of what hetsim does not model at all.
UNSUPPORTED = re.compile(r"unsupported op|expected a supported dtype|expected a tensor, got")


def _refusal(name: str) -> str | None:
    return next((message for prefix, message in REFUSED.items() if name.startswith(prefix)), None)


def _array(value) -> np.ndarray:
    """A case's input or output: an array, a numpy scalar, or a TensorProto (the Cast cases)."""
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    assert isinstance(value, np.ndarray), f"a {type(value).__name__} in a loaded case"
    return value


FLOAT16_SUMMED = {"test_attention_4d_causal_fp16": 2.5e-3}
"""Cases (with their `_expanded` forms) whose float16 softmax hetsim sums in float32, as
onnxruntime does (`hetsim.kernels.arrays.accumulating`), where onnx's expected outputs are
float16 throughout, and the tolerance that allows: two float16 steps (2**-10 each, relative)
and a half (two elements end two steps off, 0.00123 relative)."""


def _assert_matches(have: np.ndarray, want: np.ndarray, *, rtol: float, atol: float, at: str):
    assert isinstance(have, np.ndarray), f"{at}: got a {type(have).__name__}, not an array"
    assert (have.dtype, have.shape) == (want.dtype, want.shape), at
    summed = FLOAT16_SUMMED.get(at.split(" ")[0].removesuffix("_expanded"))
    if summed is not None:
        rtol = max(rtol, summed)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=at)
    else:
        np.testing.assert_array_equal(have, want, err_msg=at)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_node_case_matches_onnx_expected_outputs(case) -> None:
    refusal = _refusal(case.name)
    if refusal is not None:
        graph = load_onnx(case.model)
        arrays = [_array(value) for value in case.data_sets[0][0]]
        names = [name for name in graph.inputs if name not in graph.initializers]
        with pytest.raises(ModelError, match=re.escape(refusal)):
            execute(graph, dict(zip(names, arrays, strict=True)))
        return
    try:
        graph = load_onnx(case.model)
    except ModelError as err:
        if UNSUPPORTED.search(str(err)):
            pytest.skip(str(err).split(";")[0])
        raise
    names = [name for name in graph.inputs if name not in graph.initializers]
    for number, data_set in enumerate(case.data_sets):
        arrays, expected = ([_array(value) for value in values] for values in data_set)
        inputs = dict(zip(names, arrays, strict=True))
        with np.errstate(all="ignore"):  # cases divide by zero and take logs of negatives
            eager = execute(graph, inputs, fuse=False)
        for name, want in zip(graph.outputs, expected, strict=True):
            at = f"{case.name} data set {number}: {name}"
            _assert_matches(eager[name], want, rtol=case.rtol, atol=case.atol, at=at)
        with np.errstate(all="ignore"):
            simulated = simulate(graph, TARGET, inputs=inputs, fuse=False)
        for name in graph.outputs:
            have, want = simulated.outputs[name], eager[name]
            at = f"{case.name} data set {number}: simulated {name}"
            assert (have.dtype, have.shape) == (want.dtype, want.shape), at
            np.testing.assert_array_equal(have, want, err_msg=at)


def test_refusals_are_only_unsupported_features() -> None:
    # what keeps the test above from passing by skipping: the cases hetsim loads, and that every
    # refusal names an unsupported op, dtype or value kind
    loaded, refused = 0, []
    for case in CASES:
        try:
            load_onnx(case.model)
            loaded += 1
        except ModelError as err:
            if not UNSUPPORTED.search(str(err)):
                refused.append(f"{case.name}: {err}")
    assert refused == []
    assert loaded >= 1391, f"only {loaded} of {len(CASES)} node cases load"
