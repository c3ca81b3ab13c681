"""`point_model`: a process loads a sweep's model once for the points that follow."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.models import load_model
from hetsim.sweep import (
    MODELS_KEPT,
    clear_models,
    load_sweep,
    loaded,
    point_model,
    run_sweep,
    simulate_point,
)


@pytest.fixture(autouse=True)
def _no_kept_models() -> Iterator[None]:
    clear_models()
    yield
    clear_models()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The sources `point_model` loads, in order."""
    seen: list[Any] = []

    def counting(source: Any) -> Any:
        seen.append(source)
        return load_model(source)

    monkeypatch.setattr(loaded, "load_model", counting)
    return seen


def test_consecutive_points_share_one_loaded_graph(loads: list[Any]) -> None:
    spec = load_sweep(
        {"target": "arm-riscv-soc", "models": ["mlp", "cnn"], "vary": {"host.freq_ghz": [1, 2]}}
    )
    assert loads == ["mlp", "cnn"]  # validating the sweep loads its models
    loads.clear()
    records = [simulate_point(point) for point in spec.points()]
    assert loads == ["mlp", "cnn"]  # models outermost: each loaded once (cnn is still kept)
    for record, point in zip(records, spec.points(), strict=True):
        assert record == simulate(point.model, point.target, **dict(point.options)).to_dict()


def test_a_one_model_sweep_loads_its_model_once_in_process(loads: list[Any]) -> None:
    spec = {"target": "arm-riscv-soc", "models": ["mlp"], "vary": {"host.freq_ghz": [1, 2, 3]}}
    records = run_sweep(spec, workers=0)
    assert [r["status"] for r in records] == ["ok"] * 3
    assert loads == ["mlp"]  # validated, then reused by every point


def test_only_the_last_models_are_kept(loads: list[Any]) -> None:
    assert MODELS_KEPT == 1
    first = point_model("mlp")
    assert point_model("mlp") is first
    point_model("cnn")
    again = point_model("mlp")
    assert again is not first
    assert loads == ["mlp", "cnn", "mlp"]
    clear_models()
    assert point_model("mlp") is not again


def test_a_rewritten_model_file_is_loaded_anew(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    from hetsim.models import light_model_path

    path = tmp_path / "model.onnx"
    shutil.copyfile(light_model_path("alexnet"), path)
    alexnet = point_model(str(path))
    assert point_model(str(path)) is alexnet
    shutil.copyfile(light_model_path("squeezenet"), path)
    os.utime(path, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    squeezenet = point_model(str(path))
    assert [op.type for op in squeezenet.ops] == [
        op.type for op in load_model(light_model_path("squeezenet")).ops
    ]
    assert [op.type for op in squeezenet.ops] != [op.type for op in alexnet.ops]


def test_a_model_that_does_not_load_is_not_kept(tmp_path: Path) -> None:
    kept = point_model("mlp")
    missing = str(tmp_path / "missing.onnx")
    message = f"{missing}: expected an ONNX model file, got no such file"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        point_model(missing)
    assert point_model("mlp") is kept


def test_each_model_gets_the_sweep_dims_it_has() -> None:
    # simulate refuses a dim its model does not have: mlp has none, transformer has seq
    records = run_sweep(
        {"target": "arm-riscv-soc", "models": ["mlp", "transformer"], "dims": {"seq": 8}},
        workers=0,
    )
    assert [r["status"] for r in records] == ["ok", "ok"]
    expected = simulate("transformer", "arm-riscv-soc", mode="timing", trace=False, dims={"seq": 8})
    assert records[1]["result"] == expected.to_dict()
