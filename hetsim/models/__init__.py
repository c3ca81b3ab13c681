"""Models by name or by file: the zoo (`hetsim.models.zoo`), `load_model`, and the summary that
``hetsim model show`` prints (`hetsim.models.summary`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from hetsim.errors import (
    HetsimError,
    ModelError,
    OpError,
    Problem,
    UnknownValueError,
    close_name,
    printable,
)
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
    "named_by_file",
    "naming_model_file",
    "summarize",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")


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
        if str(source).strip() and (
            Path(source).suffix.lower() == ".onnx" or _exists(Path(source))
        ):
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


def named_by_file(err: HetsimError, model: Any) -> HetsimError:
    """`err` led by the model's file when `model` names one (a path, not a zoo name) and `err`
    is an op's error found as the model ran (a shape its rule refuses, a value it needs), as
    the loader leads its own errors; else `err` itself. Of the same type, still naming its op
    or tensor, so that a caller catching `OpError` still does.

    >>> err = OpError("op y (MatMul): expected ...", "y")
    >>> str(named_by_file(err, "m.onnx")), named_by_file(err, "m.onnx").op
    ('m.onnx: op y (MatMul): expected ...', 'y')
    >>> named_by_file(err, "mlp") is err  # a zoo model: no file
    True
    """
    if not isinstance(model, str | Path) or (isinstance(model, str) and model in ZOO):
        return err
    where = printable(model)  # as the loader leads its own
    if str(err).startswith(f"{where}: "):
        return err
    if isinstance(err, UnknownValueError):
        return UnknownValueError(
            f"{where}: {err.expected}", err.tensor, err.got, is_graph_input=err.is_graph_input
        )
    if isinstance(err, OpError):
        return OpError(f"{where}: {err}", err.op)
    return err


def naming_model_file(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """`function` (whose first argument is a model, as `load_model` takes it) with an op's
    error led by the model's file (`named_by_file`), as the command line leads it: a model's
    error reads the same from ``hetsim run m.onnx`` and from ``hetsim.simulate("m.onnx", ...)``.
    """

    @functools.wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return function(*args, **kwargs)
        except (OpError, UnknownValueError) as err:
            model = args[0] if args else kwargs.get("model")
            led = named_by_file(err, model)
            if led is err:
                raise
            raise led from err

    return wrapper
