"""Models by name or by file: the zoo (`hetsim.models.zoo`), `load_model`, and the summary that
``hetsim model show`` prints (`hetsim.models.summary`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetsim.errors import ModelError, Problem, close_name
from hetsim.frontend import load_onnx, require_onnx
from hetsim.ir import Graph
from hetsim.models.summary import OpTypeSummary, Summary, summarize
from hetsim.models.zoo import LIGHT_MODELS, ZOO, light_model_path

__all__ = [
    "LIGHT_MODELS",
    "ZOO",
    "OpTypeSummary",
    "Summary",
    "light_model_path",
    "load_model",
    "summarize",
]


def load_model(source: Any) -> Graph:
    """A model as a `Graph`, from a zoo name, a path to an .onnx file, or an onnx.ModelProto.

    A `Graph` is returned as it is.

    Raises
    ------
    ModelError
        An unknown name (with the closest zoo name), or anything the ONNX frontend rejects.

    Examples
    --------
    >>> load_model("mlp")
    <Graph mlp ops=5 inputs=['x']>
    >>> load_model("resnt50")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: load_model: expected a zoo name or a path to an .onnx file, \
got 'resnt50' (did you mean 'resnet50'?)
    """
    if isinstance(source, Graph):
        return source
    if isinstance(source, str) and source in ZOO:
        return ZOO[source]()
    if isinstance(source, str | Path):
        # "" is no path: as Path("") it is the current folder, which load_onnx called a directory
        if str(source).strip() and (Path(source).suffix == ".onnx" or _exists(Path(source))):
            return load_onnx(source)
        raise _unknown_model(source)
    onnx = require_onnx("load_model")
    if isinstance(source, onnx.ModelProto):
        return load_onnx(source)
    raise ModelError(
        "load_model: expected a zoo name, a path to an .onnx file or an onnx.ModelProto, "
        f"got {type(source).__name__}"
    )


def _exists(path: Path) -> bool:
    """Whether `path` exists; False for a name the file system cannot even look up (too long)."""
    try:
        return path.exists()
    except OSError:
        return False


def _unknown_model(source: str | Path) -> ModelError:
    """The error for a name of no zoo model (with the closest, in any case) or a missing path."""
    close = close_name(source, ZOO) if isinstance(source, str) else None
    got = repr(source) if isinstance(source, str) else f"the path {str(source)!r} (no such file)"
    expected = "expected a zoo name or a path to an .onnx file"
    names = "" if close else f"; zoo names: {', '.join(ZOO)}"
    return ModelError(Problem("load_model", expected, got, close).message + names)
