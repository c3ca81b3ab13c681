"""``--dims NAME=N[,NAME=N...]``, repeatable: the values of symbolic dims, in every command that
takes them (``run``, ``plan``, ``model show``).

A pair is read when the command line is (`parse_dims`, argparse's ``type``), and the occurrences
are merged as they are read (`add_dims_option`). A dim given twice is a usage error, in one
``--dims`` or across several: a silent last value would run a model at a size the user did not
mean. So is a size below 0 (0 gives empty tensors), as in a sweep file's ``dims``, a
``--dims`` with no pair at all
(``--dims ''``, from an unset shell variable), which ran the model at its default sizes, and an
empty pair among others (``seq=4,``: `hetsim.cli.lists.split_list`). Whether
the names are the model's symbolic dims is checked by the command once the model is loaded
(`hetsim.ir.check_graph_dims`).

An ONNX dim name is any string, and exporters write ``,`` and ``=`` in some (``Min(s0, 10)``). A
size is an integer, so a pair splits at its last ``=`` (``a=b=2`` sizes dim ``a=b``), and a part
between commas that holds no ``=`` is the start of a name, not a pair (``Min(s0, 10)=4`` sizes
one dim): only a name with an ``=`` before a ``,`` reads as two pairs, and cannot be given here
(`hetsim.simulate`'s ``dims`` and a sweep file's take any name, and ``hetsim run --inputs``
takes a dim's size from its input's array).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from contextlib import AbstractContextManager

from hetsim.cli.counts import integer
from hetsim.cli.lists import split_list
from hetsim.errors import input_values_untaken
from hetsim.ir.dims import dim_pairs

__all__ = ["add_dims_option", "no_input_values", "parse_dims"]


def parse_dims(text: str) -> dict[str, int]:
    """Values of symbolic dims from ``name=value`` pairs separated by commas (argparse puts
    ``argument --dims:`` in front of an error); a name may hold ``=`` and ``,``
    (`hetsim.ir.dims.dim_pairs`).

    Examples
    --------
    >>> parse_dims("seq=128,batch=2")
    {'seq': 128, 'batch': 2}
    >>> parse_dims("Min(s0, 10)=4,a=b=2")
    {'Min(s0, 10)': 4, 'a=b': 2}
    >>> parse_dims("seq")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected name=value pairs such as seq=128, got 'seq'
    >>> parse_dims("seq=4,seq=8")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected each dim once, got 'seq' twice
    >>> parse_dims("seq=-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: seq: expected an integer >= 0, got -1
    >>> parse_dims(" , ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one or more name=value pairs such as seq=128, got ' , '
    >>> parse_dims("seq=4,")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated values, none empty, got 'seq=4,' (...)
    """
    if not split_list(text):
        raise argparse.ArgumentTypeError(
            f"expected one or more name=value pairs such as seq=128, got {text!r}"
        )
    dims: dict[str, int] = {}
    for pair in dim_pairs(text):
        name, sep, value = pair.rpartition("=")  # a size holds no "=": a name may
        name = name.strip()
        size = integer(value)  # a negative one too, to say it is below 0
        if not sep or not name or size is None:
            raise argparse.ArgumentTypeError(
                f"expected name=value pairs such as seq=128, got {pair!r}"
            )
        if size < 0:  # a sweep file's dims say the same; -1 read as no pair at all
            raise argparse.ArgumentTypeError(f"{name}: expected an integer >= 0, got {size}")
        if name in dims:
            raise argparse.ArgumentTypeError(f"expected each dim once, got {name!r} twice")
        dims[name] = size
    return dims


class _MergedDims(argparse.Action):
    """``--dims``, repeatable: each occurrence's pairs merged into one mapping as the command
    line is read, so that a dim given in two of them is the same usage error as one given twice
    in one (it was an error of another form, after the command line was read)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        dims = dict(getattr(namespace, self.dest) or {})
        assert isinstance(values, Mapping), "parse_dims makes a mapping"
        for name, size in values.items():
            if name in dims:
                raise argparse.ArgumentError(self, f"expected each dim once, got {name!r} twice")
            dims[name] = size
        setattr(namespace, self.dest, dims)


def add_dims_option(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--dims`` (repeatable; ``args.dims`` is every occurrence's pairs in one mapping)."""
    parser.add_argument(
        "--dims", type=parse_dims, action=_MergedDims, default={}, metavar="NAME=N[,NAME=N]",
        help=help,
    )  # fmt: skip


def no_input_values(command: str) -> AbstractContextManager[None]:
    """Where `command` (``hetsim plan``, ``hetsim model show``) propagates shapes without input
    arrays: a shape read from a graph input (a Reshape's) says so in the command's terms, not
    the API's "pass it in inputs", an argument the command does not have.

    >>> from hetsim.errors import UnknownValueError
    >>> with no_input_values("hetsim plan"):
    ...     raise UnknownValueError("op r (Reshape): expected a known value", "s").of_graph_input()
    Traceback (most recent call last):
    ...
    hetsim.errors.UnknownValueError: op r (Reshape): expected a known value, got graph input 's', \
whose value hetsim plan cannot take (hetsim run --inputs FILE reads it)
    """
    return input_values_untaken(command, "hetsim run --inputs FILE reads it")
