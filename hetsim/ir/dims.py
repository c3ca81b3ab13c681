"""The sizes a caller gives a graph's symbolic dims (``dims={"seq": 128}``), checked.

`check_dims` holds the rule for the sizes themselves; `check_graph_dims` adds that every name is
one of the graph's symbolic dims, so that a misspelt or unused name is an error rather than
ignored (a model run at a size the user did not mean). Every entry point that takes dims uses
them: `simulate`, `make_inputs`, `compare`, ``hetsim plan`` and ``hetsim model show``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import MappingProxyType

from hetsim.errors import ModelError, Problem, is_count
from hetsim.ir.graph import Graph

__all__ = ["check_dims", "check_graph_dims", "dim_pairs", "format_dims"]


def check_dims(dims: object) -> Mapping[str, int]:
    """`dims` checked and frozen: a mapping of dim name -> size, each an integer >= 0 (``None``:
    no dims).

    Raises
    ------
    ModelError
        Anything else (the message says what a sweep file's ``dims`` would).

    Examples
    --------
    >>> check_dims({"seq": 8})
    mappingproxy({'seq': 8})
    >>> check_dims("seq=8")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: dims: expected a mapping of dim name -> size, got 'seq=8'
    >>> check_dims({"seq": 0})  # empty tensors, as a zero-length input array gives
    mappingproxy({'seq': 0})
    >>> check_dims({"seq": -1})
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: dims.seq: expected an integer >= 0, got -1
    """
    if dims is None:
        return MappingProxyType({})
    if not isinstance(dims, Mapping) or not all(isinstance(name, str) for name in dims):
        expected = "expected a mapping of dim name -> size"
        raise ModelError(Problem("dims", expected, repr(dims)).message)
    for name, size in dims.items():
        if not is_count(size):  # 0 gives empty tensors, as a zero-length input array does
            raise ModelError(
                Problem(f"dims.{name}", "expected an integer >= 0", repr(size)).message
            )
    return MappingProxyType({name: int(size) for name, size in dims.items()})


def check_graph_dims(graph: Graph, dims: object) -> Mapping[str, int]:
    """`dims` checked (`check_dims`) for `graph`: each name one of its symbolic dims.

    Raises
    ------
    ModelError
        Bad sizes, or a name the graph does not have (with the closest one).

    Examples
    --------
    >>> from hetsim.ir import TensorType
    >>> g = Graph("g", (), {"x": TensorType(("seq",), "float32")}, ())
    >>> check_graph_dims(g, {"seq": 8})
    mappingproxy({'seq': 8})
    >>> check_graph_dims(g, {"sq": 8})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: model g: expected one of its symbolic dims (seq), got 'sq'
    (did you mean 'seq'?)

    A name that joins the graph's dims with commas is several dims, one without its size (a
    name may hold a comma: ``--dims batch,seq=128`` sizes a dim ``batch,seq``):

    >>> g = Graph("g", (), {"x": TensorType(("batch", "seq"), "float32")}, ())
    >>> check_graph_dims(g, {"batch,seq": 128})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: model g: expected one of its symbolic dims (batch, seq), got
    'batch,seq': several dims, each with a size (batch=N, seq=N)?
    """
    checked = check_dims(dims)
    for name in checked:
        if name not in graph.symbols:
            expected = f"expected one of its symbolic dims ({', '.join(graph.symbols) or 'none'})"
            where, got = f"model {graph.name}", repr(name)
            parts = [part.strip() for part in name.split(",")]
            if len(parts) > 1 and all(part in graph.symbols for part in parts):
                # ``--dims batch,seq=128``: a dim left without its size reads as part of a name
                sizes = ", ".join(f"{part}=N" for part in parts)
                said = Problem(where, expected, got).message
                raise ModelError(f"{said}: several dims, each with a size ({sizes})?")
            close = difflib.get_close_matches(name, graph.symbols, n=1)
            raise ModelError(Problem(where, expected, got, *close).message)
    return checked


def dim_pairs(text: str) -> list[str]:
    """The ``name=size`` pairs of `text`, comma-separated as ``--dims`` takes them
    (`hetsim.cli.dims`): a size holds no ``=`` and a name may hold ``=`` and ``,``, so a part
    between commas without ``=`` joins the next, its comma in a dim's name (``Min(s0, 10)=4``);
    one left at the end is a pair without a size. A pair is split at its last ``=``.

    >>> dim_pairs("Min(s0, 10)=4, seq=8,batch")
    ['Min(s0, 10)=4', 'seq=8', 'batch']
    """
    parts = text.split(",")
    pairs: list[str] = []
    start = 0
    for end, part in enumerate(parts, start=1):
        if "=" in part:
            pairs.append(",".join(parts[start:end]).strip())
            start = end
    if start < len(parts):
        pairs.append(",".join(parts[start:]).strip())
    return pairs


def format_dims(dims: Mapping[str, int]) -> str:
    """Dims as messages and listings show them.

    >>> format_dims({"seq": 128, "batch": 2})
    'seq=128, batch=2'
    """
    return ", ".join(f"{name}={size}" for name, size in dims.items())
