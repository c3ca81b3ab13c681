"""What the model zoo refuses, and how it says so: a name or path that is no model, something
other than a Graph for `make_inputs`, and transformer sizes that cannot make a block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetsim.errors import ModelError
from hetsim.models import ZOO, load_model, zoo
from hetsim.models.inputs import make_inputs
from hetsim.models.zoo import transformer

EXPECTED = "load_model: expected a zoo name or a path to an .onnx file, got "
NAMES = f"; zoo names: {', '.join(ZOO)}"


def _exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


def test_empty_name_is_no_model() -> None:
    # read as Path(""), the current folder: ".: expected an ONNX model file, got a directory"
    with pytest.raises(ModelError, match=_exactly(EXPECTED + "''" + NAMES)):
        load_model("")


def test_name_in_another_case_suggests_the_zoo_name() -> None:
    # no suggestion: difflib's matching is case-sensitive
    with pytest.raises(ModelError, match=_exactly(EXPECTED + "'MLP' (did you mean 'mlp'?)")):
        load_model("MLP")


def test_path_named_like_a_zoo_model_is_a_missing_file() -> None:
    # "got 'mlp' (did you mean 'mlp'?)"
    with pytest.raises(
        ModelError, match=_exactly(EXPECTED + "the path 'mlp' (no such file)" + NAMES)
    ):
        load_model(Path("mlp"))


def test_missing_path_says_it_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "model"
    with pytest.raises(
        ModelError, match=_exactly(EXPECTED + f"the path '{path}' (no such file)" + NAMES)
    ):
        load_model(path)


@pytest.mark.parametrize(("graph", "got"), [("mlp", "str 'mlp'"), (None, "None"), (5, "int 5")])
def test_make_inputs_wants_a_graph(graph: object, got: str) -> None:
    # AttributeError: 'str' object has no attribute 'inputs'
    expected = (
        "make_inputs: expected a Graph (hetsim.load_model makes one of a zoo name or an .onnx "
        "path), got "
    )
    with pytest.raises(ModelError, match=_exactly(expected + got)):
        make_inputs(graph)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ({"d_model": 0}, "d_model: expected a positive integer, got 0"),
        ({"d_model": -64}, "d_model: expected a positive integer, got -64"),
        ({"d_model": 64.0}, "d_model: expected a positive integer, got 64.0"),
        ({"heads": 0}, "heads: expected a positive integer, got 0"),
        ({"heads": -4}, "heads: expected a positive integer, got -4"),
        ({"heads": 2.5}, "heads: expected a positive integer, got 2.5"),
        ({"heads": True}, "heads: expected a positive integer, got True"),
        ({"d_ff": 0}, "d_ff: expected a positive integer, got 0"),
        ({"d_ff": "256"}, "d_ff: expected a positive integer, got '256'"),
        ({"heads": 5}, "heads: expected a divisor of d_model (64), got 5"),
        ({"heads": 128}, "heads: expected a divisor of d_model (64), got 128"),
    ],
)
def test_transformer_refuses_sizes_that_make_no_block(
    sizes: dict[str, object], message: str
) -> None:
    # ZeroDivisionError, numpy's "negative dimensions", or (heads 5, 2.5, 128) a graph whose
    # Reshape into heads fails only when it runs
    with pytest.raises(ModelError, match=_exactly(f"transformer: {message}")):
        transformer(**sizes)  # type: ignore[arg-type]


def test_transformer_takes_heads_that_divide_d_model() -> None:
    graph = transformer(d_model=64, heads=64, d_ff=1)
    assert graph.initializers["heads.shape"].tolist() == [0, -1, 64, 1]


def test_transformer_without_room_for_its_weights_names_the_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numpy's MemoryError named an array of the weights' making, not the sizes that asked for it
    def no_room(*_args: object) -> None:
        raise MemoryError("Unable to allocate 8.00 TiB for an array")

    monkeypatch.setattr(zoo, "_weight", no_room)
    message = (
        "transformer: expected sizes whose weights this machine can allocate, got "
        "d_model=1024, d_ff=4096 (48.0 MiB of weights: no room)"
    )
    with pytest.raises(ModelError, match=_exactly(message)):
        transformer(d_model=1024, heads=8, d_ff=4096)


def test_a_name_too_long_for_the_file_system_is_a_model_error() -> None:
    # looking it up raised OSError "File name too long" from deep inside
    long = "a" * 300
    with pytest.raises(ModelError, match=r": expected an ONNX model file, got File name too long$"):
        load_model(long + ".onnx")
    with pytest.raises(ModelError, match=r"^load_model: expected a zoo name or a path to an "):
        load_model(long)
