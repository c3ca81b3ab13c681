"""TVM's option types: the type TVM gives each option, and the check of a config against them.

This module owns `TVM_OPTION_TYPES`, the type apache-tvm (0.27) gives each option of the kinds
hetsim maps, and `type_problems`, which finds every option of a config, its host's and its
devices', of a type TVM refuses: what TVM refuses is refused, though hetsim ignores the value of
an option that only steers code generation. Which options hetsim reads, and what they mean, is
`tvm_reader`; reading the config itself is `tvm_config`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Integral
from typing import Any

from hetsim.errors import Problem
from hetsim.target.schema import item_path, join_path
from hetsim.target.tvm_config import config_at, is_list, plain

__all__ = ["TVM_OPTION_TYPES", "is_int64", "type_problems"]

TVM_OPTION_TYPES: dict[str, str] = {
    "tag": "str", "model": "str", "device": "str", "keys": "Array<str>", "libs": "Array<str>",
    "from_device": "int", "target_device_type": "int",
    "mtriple": "str", "mcpu": "str", "mattr": "Array<str>", "num-cores": "int",
    "mfloat-abi": "str", "mabi": "str", "jit": "str", "cl-opt": "Array<str>", "opt-level": "int",
    "vector-width": "int", "fast-math": "bool", "fast-math-nnan": "bool",
    "fast-math-ninf": "bool", "fast-math-nsz": "bool", "fast-math-arcp": "bool",
    "fast-math-contract": "bool", "fast-math-reassoc": "bool",
    "arch": "str", "max_num_threads": "int", "max_threads_per_block": "int",
    "max_shared_memory_per_block": "int", "thread_warp_size": "int",
    "registers_per_block": "int", "l2_cache_size_bytes": "int",
}  # fmt: skip
"""The type TVM 0.27 gives each option of the kinds hetsim maps (``TargetKind.options_from_name``),
but ``kind``, ``host`` and ``devices``, which reading checks: an option of another type is refused,
as TVM refuses it, though hetsim ignores its value."""


def _is_strings(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def is_int64(value: object) -> bool:
    """Whether TVM takes `value` as an int: a larger one is its ``ffi.BigInt``, which it refuses."""
    return isinstance(value, Integral) and -(2**63) <= int(value) < 2**63


# TVM type -> what a message calls it, and whether a value has it (TVM takes 1 for a bool, and
# True for an int)
_TYPE_CHECKS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "str": ("a string", lambda value: isinstance(value, str)),
    "int": ("an integer", is_int64),
    "bool": ("a boolean", is_int64),
    "Array<str>": ("a list of strings", _is_strings),
}


def type_problems(config: Mapping[str, Any], path: str) -> list[Problem]:
    """A problem for each option of `config`, its host's and its devices', of a type TVM refuses
    (`TVM_OPTION_TYPES`); reading says what is wrong with a part that is no config."""
    problems: list[Problem] = []
    for key, value in config.items():
        tvm_type = TVM_OPTION_TYPES.get(key) if isinstance(key, str) else None
        if tvm_type is None:
            continue
        name, has_type = _TYPE_CHECKS[tvm_type]
        value = plain(value)  # an export()'s Map as it came holds TVM's Arrays
        if not has_type(value):
            # an integer past 64 bits is TVM's ffi.BigInt, which it refuses
            if tvm_type in ("int", "bool") and isinstance(value, Integral):
                name = "an integer of at most 64 bits"
            expected = f"expected {name} (TVM's type {tvm_type!r})"
            problems.append(Problem(join_path(path, key), expected, repr(value)))
    for part, where in _parts(config, path):
        nested = config_at(part, where, [])
        if nested is not None:
            problems += type_problems(nested, where)
    return problems


def _parts(config: Mapping[str, Any], path: str) -> list[tuple[object, str]]:
    """The TVM targets nested in `config`, each with its path: its host, a composite's devices."""
    parts: list[tuple[object, str]] = []
    if config.get("host") is not None:
        parts.append((config["host"], join_path(path, "host")))
    devices = config.get("devices") if config.get("kind") == "composite" else None
    if is_list(devices):
        where = join_path(path, "devices")
        parts += [(device, item_path(where, i)) for i, device in enumerate(devices)]
    return parts
