"""TVM target configs as plain data: every form TVM takes a target in, read into one dict.

This module owns the TVM input before it means anything to hetsim: `config_of` reads a config
dict, a JSON string, a TVM kind name (`TVM_KINDS`), a TVM tag name or a real
``tvm.target.Target`` (through its ``export()``, its FFI containers made plain by `plain`) into a
config mapping, and `config_at` does so for a target nested at a path (a host, a composite's
device). `is_written` says whether `tvm_writer` wrote a node (its ``model`` says so).

What the config says is `tvm_reader`'s business, the types TVM gives its options `tvm_types`'s.
``tvm`` itself is never imported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from hetsim.errors import Problem
from hetsim.located import load_json
from hetsim.target.schema import closest
from hetsim.target.tvm_names import MODEL_PREFIX, TVM_TAGS

__all__ = ["TVM_KINDS", "config_at", "config_of", "is_list", "is_written", "plain"]

TVM_KINDS = ("llvm", "cuda", "ext_dev", "composite")
"""The TVM kinds hetsim maps, each of which `tvm_reader` reads: a name alone is that kind."""


def config_of(obj: object, problems: list[Problem]) -> Mapping[str, Any]:
    """The plain config dict of any TVM input form."""
    if _is_tvm_target(obj):
        return plain(obj)  # type: ignore[return-value]
    if isinstance(obj, Mapping):
        return obj
    if isinstance(obj, str):
        return _config_of_text(obj, "", problems)
    expected = "expected a TVM target (a dict, a JSON string, a name or a tvm.target.Target)"
    problems.append(Problem("target", expected, type(obj).__name__))
    return {}


def is_list(value: object) -> TypeGuard[Sequence[Any]]:
    """Whether `value` is a list as TVM's config has one (an ``export()``'s own, a TVM Array)."""
    return isinstance(value, Sequence) and not isinstance(value, str)


def _is_tvm_target(obj: object) -> bool:
    return type(obj).__module__.startswith("tvm") and callable(getattr(obj, "export", None))


def _config_of_text(text: str, path: str, problems: list[Problem]) -> Mapping[str, Any]:
    """A config from a JSON object, a TVM kind name or a TVM tag name."""
    where = path or "target"
    if text.lstrip().startswith("{"):
        try:
            config = load_json(text)  # a key twice is an error, as in target files
        except json.JSONDecodeError as err:
            problems.append(Problem(where, "expected valid JSON", f"{err.msg} at {err.pos}"))
            return {}
        except (ValueError, RecursionError) as err:  # a key twice; an int of 4,300+ digits
            problems.append(Problem(where, "expected valid JSON", str(err)))
            return {}
        if isinstance(config, Mapping):
            return config
        problems.append(Problem(where, "expected a JSON object", repr(config)))
        return {}
    if text in TVM_KINDS:
        return {"kind": text}
    if "/" in text:
        return {"tag": text}
    expected = "expected a TVM kind or tag name (TVM 0.27 no longer parses 'llvm -mcpu=...')"
    hint = closest(text.split(" ", 1)[0], [*TVM_KINDS, *TVM_TAGS])
    problems.append(Problem(where, expected, repr(text), hint))
    return {}


def plain(value: object) -> object:
    """Plain Python data from TVM's FFI containers; a nested Target is read through export()."""
    if _is_tvm_target(value):
        return plain(value.export())  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Sequence):
        return [plain(v) for v in value]
    return value


def config_at(value: object, path: str, problems: list[Problem]) -> Mapping[str, Any] | None:
    """The config of a nested TVM target found at `path`; None, with a problem, for no config."""
    if isinstance(value, str):
        return _config_of_text(value, path, problems)
    if isinstance(value, Mapping) or _is_tvm_target(value):
        return config_of(value, problems)
    problems.append(Problem(path, "expected a TVM target config", repr(value)))
    return None


def is_written(config: Mapping[str, Any]) -> bool:
    """Whether `spec_to_tvm` wrote the node: its ``model`` says where it came from."""
    model = config.get("model")
    return isinstance(model, str) and model.startswith(MODEL_PREFIX)
