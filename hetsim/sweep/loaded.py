"""The models a process has loaded for a sweep's points: `point_model`.

Validating a sweep (`hetsim.sweep.spec`) and running its points (`hetsim.sweep.runner`) in one
process both load its models through it, so the process loads each model once for the points
that follow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetsim.ir import Graph
from hetsim.memo import Recent
from hetsim.models import ZOO, load_model

__all__ = ["MODELS_KEPT", "clear_models", "model_identity", "point_model"]

MODELS_KEPT = 1
"""Loaded models a process keeps for the next points (`point_model`)."""

_models: Recent[tuple[Any, ...], Graph] = Recent(MODELS_KEPT)


def point_model(model: str) -> Graph:
    """The `Graph` of a point's `model` (a zoo name or an .onnx path), loaded once per process
    for the points that follow.

    Points come models outermost (`SweepSpec.points`) and a Dask task runs consecutive points,
    so a process mostly runs one model's points in a row: keeping the last `MODELS_KEPT` models
    saves loading the model at every point (a zoo ResNet-50 makes its weights in 50-90 ms, where
    a timing-mode point of it simulates in about 10) and lets `simulate`'s caches keyed by the
    graph (shapes and op costs) serve every point. More are not kept: a model's weights can
    take hundreds of megabytes. A file is known by its resolved path, size and modification
    time, so a file rewritten during a sweep is loaded anew. Graphs are immutable, so points
    that share one cannot affect each other.

    Examples
    --------
    >>> point_model("mlp") is point_model("mlp")
    True
    """
    return _models.get(_model_key(model), lambda: load_model(model))


def model_identity(model: str) -> str:
    """The model `model` names: a zoo name as it is, a file by its resolved path, so that one
    file named two ways (``m.onnx``, ``./m.onnx``, a link to it) is one model.

    >>> model_identity("mlp"), model_identity("m.onnx") == model_identity("./m.onnx")
    ('mlp', True)
    """
    if model in ZOO:
        return model
    try:
        return str(Path(model).resolve())
    except (OSError, ValueError):  # a name no file has (a NUL in it): load_model reports it
        return model


def _model_key(model: str) -> tuple[Any, ...]:
    if model in ZOO:
        return (model,)
    try:
        stat = Path(model).stat()
    except (OSError, ValueError):  # load_model reports it (ValueError: a NUL in the name)
        return (model,)
    return (model_identity(model), stat.st_size, stat.st_mtime_ns)


def clear_models() -> None:
    """Forget the models `point_model` keeps."""
    _models.clear()
