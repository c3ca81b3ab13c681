"""Read TVM target configs: the one place hetsim reads TVM's target dialect.

This module owns the TVM -> hetsim direction, `tvm_to_spec`, and its registry of TVM kinds:

- TVM kinds: ``llvm`` is ``arm-cpu``, ``riscv-cpu`` or ``x86-cpu`` by its ``mtriple``, ``cuda`` is
  ``cuda``, ``ext_dev`` is ``npu`` and ``composite`` is ``hetero``; a TVM target with a ``host``
  is a ``hetero`` level with that host and one device. ``mtriple``, ``mcpu``, ``mattr``, ``arch``
  and ``num-cores`` (``cores``) carry over as attributes.
- hetsim tags: an ``mcpu``, an ``arch`` or a TVM tag name that names a device hetsim ships becomes
  that tag (the options TVM gives its own tag are no overrides), and a node whose ``model`` says
  ``"hetsim:<tag>"`` reads back as that tag with what it changes of the tag, level by level.

It translates: `tvm_to_spec` returns a spec that `hetsim.target.Target` resolves and validates,
and resolves it once itself only to say its problems in the TVM input's terms (`_tvm_path`: the
path and option names the input wrote, ``num-cores`` for ``cores``, ``model`` for a tag it
names). TVM has no executors, runtimes, links or device names, and none of hetsim's cost
parameters: those come from tags and defaults. TVM options that only steer code generation
(``keys``, ``max_num_threads``, ``feature.*``, ...) are ignored, once every option has the type
TVM gives it (`TVM_OPTION_TYPES`): what TVM refuses is refused. The name tables are `tvm_names`;
the way back is `tvm_writer`. ``tvm`` itself is never imported here: a real ``tvm.target.Target``
is read through its ``export()``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any, TypeGuard

from hetsim.errors import Problem, TargetError
from hetsim.located import load_json
from hetsim.target.resolve import device_name, resolved_device, written_device
from hetsim.target.schema import closest, item_path, join_path
from hetsim.target.sources import nesting_problem
from hetsim.target.tags import TAGS
from hetsim.target.tree import Target
from hetsim.target.tvm_names import (
    BOARD_CPUS,
    CPU_FAMILIES,
    CUDA_ARCHS,
    LLVM_CPUS,
    MODEL_PREFIX,
    TVM_TAG_OPTIONS,
    TVM_TAGS,
    CpuFamily,
)
from hetsim.target.tvm_writer import spec_to_tvm

__all__ = ["TVM_OPTION_TYPES", "tvm_to_spec"]

# Options that steer TVM's code generation and mean nothing to the simulation.
_CODEGEN_OPTIONS = frozenset(
    {
        "keys", "device", "libs", "from_device", "target_device_type", "mfloat-abi",
        "mabi", "march", "fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz",
        "fast-math-arcp", "fast-math-contract", "fast-math-reassoc", "opt-level", "cl-opt", "jit",
        "vector-width", "max_shared_memory_per_block", "max_threads_per_block", "thread_warp_size",
        "registers_per_block", "l2_cache_size_bytes", "max_num_threads",
        "workspace-byte-alignment", "constants-byte-alignment",
    }
)  # fmt: skip
_FEATURE_PREFIX = "feature."

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


# TVM type -> what a message calls it, and whether a value has it (TVM takes 1 for a bool, and
# True for an int)
_TYPE_CHECKS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "str": ("a string", lambda value: isinstance(value, str)),
    "int": ("an integer", lambda value: isinstance(value, Integral)),
    "bool": ("a boolean", lambda value: isinstance(value, Integral)),
    "Array<str>": ("a list of strings", _is_strings),
}

_Reader = Callable[[Mapping[str, Any], str, list[Problem], bool], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Kind:
    """How one TVM kind reads: the options it maps and the function that maps them.

    `read(config, path, problems, use_tags)` returns the spec node; `use_tags` is False for a node
    that hetsim wrote from a plain kind, so that its ``mcpu`` or ``arch`` does not turn into a tag.
    """

    options: frozenset[str]
    read: _Reader


def tvm_to_spec(obj: object) -> dict[str, Any]:
    """The hetsim spec of a TVM target: a config dict, a JSON string, a tag or kind name, or a
    real ``tvm.target.Target``.

    The spec is what `hetsim.target.Target` accepts: tags where hetsim ships the device, kinds
    with their ``mtriple``/``mcpu``/``arch`` otherwise, and a ``hetero`` level wherever TVM has a
    ``host`` or a ``composite``.

    Parameters
    ----------
    obj
        The TVM target in any of TVM's config forms.

    Returns
    -------
    dict
        A hetsim target spec, which resolves.

    Raises
    ------
    TargetError
        Every part that hetsim cannot map, every problem resolving the spec finds and every
        option of a type TVM refuses, each with its path and option name in the TVM config.

    Examples
    --------
    >>> tvm_to_spec({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"})
    {'tag': 'arm/cortex-a72'}
    >>> tvm_to_spec('{"kind": "cuda", "arch": "sm_90a", "host": {"kind": "llvm",'
    ...             ' "mtriple": "x86_64-linux-gnu", "num-cores": 8}}')
    {'kind': 'hetero', 'host': {'kind': 'x86-cpu', 'cores': 8}, 'devices': [{'tag': 'nvidia/h100'}]}
    >>> tvm_to_spec("nvidia/nvidia-a100")
    {'tag': 'nvidia/a100'}
    >>> try:
    ...     tvm_to_spec({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "cortex-a72"})
    ... except TargetError as err:
    ...     print(err)
    mcpu: expected an mcpu for x86-cpu (the mtriple is 'x86_64-linux-gnu'), got 'cortex-a72'
    >>> try:
    ...     tvm_to_spec({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "num-cores": 0})
    ... except TargetError as err:
    ...     print(err)
    num-cores: expected an integer >= 1, got 0
    """
    problems: list[Problem] = []
    config = _config(obj, problems)
    too_deep = None if problems else nesting_problem(config)
    if too_deep is not None:
        problems.append(too_deep)
    if problems:
        raise TargetError(problems)
    spec = _read_node(config, "", problems)
    if not problems:
        problems += _resolving_problems(spec, config)
    # TVM's type of an option where hetsim said nothing of it: one it ignores (keys: 'gpu') or
    # reads as absent (num-cores: null); of a value it takes, hetsim's own check says more
    problems += [p for p in _type_problems(config, "") if not _is_said(p.path, problems)]
    if problems:
        raise TargetError(problems)
    return spec


def _resolving_problems(spec: dict[str, Any], config: Mapping[str, Any]) -> list[Problem]:
    """The problems of resolving `spec`, read from TVM config `config`, said in its terms."""
    try:
        Target(spec)
    except TargetError as err:
        return list(dict.fromkeys(_in_tvm_terms(p, spec, config) for p in err.problems))
    return []


def _is_said(path: str, problems: list[Problem]) -> bool:
    """Whether a problem of `problems` is at `path` or inside it (``mattr[1]`` is in ``mattr``)."""
    return any(p.path == path or p.path.startswith((f"{path}.", f"{path}[")) for p in problems)


def _config(obj: object, problems: list[Problem]) -> Mapping[str, Any]:
    """The plain config dict of any TVM input form."""
    if _is_tvm_target(obj):
        return _plain(obj)  # type: ignore[return-value]
    if isinstance(obj, Mapping):
        return obj
    if isinstance(obj, str):
        return _config_of_text(obj, "", problems)
    expected = "expected a TVM target (a dict, a JSON string, a name or a tvm.target.Target)"
    problems.append(Problem("target", expected, type(obj).__name__))
    return {}


def _type_problems(config: Mapping[str, Any], path: str) -> list[Problem]:
    """A problem for each option of `config`, its host's and its devices', of a type TVM refuses
    (`TVM_OPTION_TYPES`); reading says what is wrong with a part that is no config."""
    problems: list[Problem] = []
    for key, value in config.items():
        tvm_type = TVM_OPTION_TYPES.get(key) if isinstance(key, str) else None
        if tvm_type is None:
            continue
        name, has_type = _TYPE_CHECKS[tvm_type]
        value = _plain(value)  # an export()'s Map as it came holds TVM's Arrays
        if not has_type(value):
            expected = f"expected {name} (TVM's type {tvm_type!r})"
            problems.append(Problem(join_path(path, key), expected, repr(value)))
    for part, where in _parts(config, path):
        nested = _config_at(part, where, [])
        if nested is not None:
            problems += _type_problems(nested, where)
    return problems


def _parts(config: Mapping[str, Any], path: str) -> list[tuple[object, str]]:
    """The TVM targets nested in `config`, each with its path: its host, a composite's devices."""
    parts: list[tuple[object, str]] = []
    if config.get("host") is not None:
        parts.append((config["host"], join_path(path, "host")))
    devices = config.get("devices") if config.get("kind") == "composite" else None
    if _is_list(devices):
        where = join_path(path, "devices")
        parts += [(device, item_path(where, i)) for i, device in enumerate(devices)]
    return parts


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
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
    if text in _KINDS:
        return {"kind": text}
    if "/" in text:
        return {"tag": text}
    expected = "expected a TVM kind or tag name (TVM 0.27 no longer parses 'llvm -mcpu=...')"
    hint = closest(text.split(" ", 1)[0], [*_KINDS, *TVM_TAGS])
    problems.append(Problem(where, expected, repr(text), hint))
    return {}


def _plain(value: object) -> object:
    """Plain Python data from TVM's FFI containers; a nested Target is read through export()."""
    if _is_tvm_target(value):
        return _plain(value.export())  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return value


def _read_at(value: object, path: str, problems: list[Problem]) -> dict[str, Any]:
    """The spec of a nested TVM config found at `path` (a dict, or a JSON, kind or tag string)."""
    config = _config_at(value, path, problems)
    return {} if config is None else _read_node(config, path, problems)


def _config_at(value: object, path: str, problems: list[Problem]) -> Mapping[str, Any] | None:
    """The config of a nested TVM target found at `path`; None, with a problem, for no config."""
    if isinstance(value, str):
        return _config_of_text(value, path, problems)
    if isinstance(value, Mapping) or _is_tvm_target(value):
        return _config(value, problems)
    problems.append(Problem(path, "expected a TVM target config", repr(value)))
    return None


def _read_node(config: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """One TVM target node, and the level its ``host`` makes, as a hetsim spec node."""
    tag, model = config.get("tag"), config.get("model")
    if isinstance(tag, str) and tag:
        return _read_tvm_tag(config, path, problems)
    if not _is_written(config) and (named := _tvm_tag_stated(config)) is not None:
        return _read_tvm_tag({**config, "tag": named}, path, problems)
    if _is_written(config) and model != MODEL_PREFIX:
        spec = _read_hetsim_tag(config, path, problems)
    else:
        spec = _read_kind(config, path, problems, use_tags=not _is_written(config))
    host = config.get("host")
    if host is None or config.get("kind") == "composite":
        return spec
    return _with_host(spec, _read_at(host, join_path(path, "host"), problems))


def _tvm_kind_of(options: Mapping[str, Any]) -> str:
    """The TVM kind of a tag of `TVM_TAG_OPTIONS`: cuda for a GPU's (it has an ``arch``)."""
    return "cuda" if "arch" in options else "llvm"


def _stated(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a TVM node states of its device, host included: not its tag, its ``model`` (a
    board's name) or the options that only steer code generation."""
    return {
        key: _stated(value) if isinstance(value, Mapping) else _plain(value)
        for key, value in config.items()
        if key not in ("tag", "model") and not _is_codegen_option(key)
    }


def _tvm_tag_stated(config: Mapping[str, Any]) -> str | None:
    """The TVM tag whose options `config` states exactly, if any: ``export()`` of a
    ``tvm.target.Target`` made from a tag name keeps its options, not its name (``tag: ""``),
    and read as options it was another platform than the name (a Jetson's host and GPU as a
    plain level, its GPU named ``dev0``, not ``jetson-agx-orin``)."""
    stated = _stated(config)
    return next((name for name, options in _TAG_STATES.items() if options == stated), None)


def _is_written(config: Mapping[str, Any]) -> bool:
    """Whether `spec_to_tvm` wrote the node: its ``model`` says where it came from."""
    model = config.get("model")
    return isinstance(model, str) and model.startswith(MODEL_PREFIX)


def _with_host(spec: dict[str, Any], host: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "hetero", "host": host, "devices": [spec]}


def _read_kind(
    config: Mapping[str, Any], path: str, problems: list[Problem], *, use_tags: bool
) -> dict[str, Any]:
    reader = _kind_of(config, path, problems)
    if reader is None:
        return {}
    _check_options(config, reader.options, path, problems)
    return reader.read(config, path, problems, use_tags)


def _kind_of(config: Mapping[str, Any], path: str, problems: list[Problem]) -> _Kind | None:
    """How the TVM kind of `config` reads; None, with a problem, for a kind hetsim does not map."""
    kind = config.get("kind")
    reader = _KINDS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        expected = f"expected a TVM kind that hetsim maps ({', '.join(sorted(_KINDS))})"
        got = "nothing" if kind is None else repr(kind)
        problems.append(Problem(join_path(path, "kind"), expected, got, closest(kind, _KINDS)))
    return reader


def _check_options(
    config: Mapping[str, Any], known: Iterable[str], path: str, problems: list[Problem]
) -> None:
    allowed = {"kind", "tag", "model", "host", *known}
    for key in config:
        if key in allowed or _is_codegen_option(key):
            continue
        hint = closest(key, sorted(allowed | _CODEGEN_OPTIONS))
        problems.append(Problem(join_path(path, key), "unknown TVM option", hint=hint))


def _is_codegen_option(key: object) -> bool:
    return key in _CODEGEN_OPTIONS or str(key).startswith(_FEATURE_PREFIX)


def _with_cores(config: Mapping[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "num-cores" in config:
        spec["cores"] = config["num-cores"]
    return spec


def _read_llvm(
    config: Mapping[str, Any], path: str, problems: list[Problem], use_tags: bool
) -> dict[str, Any]:
    triple, mcpu = config.get("mtriple"), config.get("mcpu")
    mcpu = None if mcpu in ("", "generic") else mcpu
    if mcpu is None and use_tags:  # a board TVM names by its SoC only (`BOARD_CPUS`)
        model = config.get("model")
        mcpu = BOARD_CPUS.get(model) if isinstance(model, str) else None
    family = _family_of(triple, mcpu, path, problems)
    if family is None:
        return {}
    cpu = LLVM_CPUS.get(mcpu) if isinstance(mcpu, str) else None
    if cpu is not None and cpu.kind != family.kind:
        expected = f"expected an mcpu for {family.kind} (the mtriple is {triple!r})"
        names = [m for m, c in LLVM_CPUS.items() if c.kind == family.kind]
        hint = closest(mcpu, names)
        problems.append(Problem(join_path(path, "mcpu"), expected, repr(mcpu), hint))
        return {}
    tag = cpu.tag if use_tags and cpu is not None else None
    spec: dict[str, Any] = {"tag": tag} if tag else {"kind": family.kind}
    if triple and triple != family.triple:
        spec["mtriple"] = triple
    if mcpu and "kind" in spec:
        spec["mcpu"] = mcpu
    mattr = config.get("mattr")
    if mattr:  # a list (TVM's Array); anything else as it came, for the schema to name
        spec["mattr"] = list(mattr) if isinstance(mattr, list | tuple) else mattr
    return _with_cores(config, spec)


def _family_of(
    triple: object, mcpu: object, path: str, problems: list[Problem]
) -> CpuFamily | None:
    """The CPU family an llvm target names: by its mtriple, else by a known mcpu."""
    if isinstance(triple, str) and triple:
        family = next((f for f in CPU_FAMILIES.values() if f.matches(triple)), None)
        if family is None:
            prefixes = ", ".join(f"{p}*" for f in CPU_FAMILIES.values() for p in f.prefixes)
            expected = f"expected an LLVM triple hetsim maps ({prefixes})"
            problems.append(Problem(join_path(path, "mtriple"), expected, repr(triple)))
        return family
    cpu = LLVM_CPUS.get(mcpu) if isinstance(mcpu, str) else None
    if cpu is not None:
        return CPU_FAMILIES[cpu.kind]
    # TVM would fill in the triple of the machine it runs on: hetsim never guesses that.
    expected = "expected an mtriple or an mcpu hetsim knows (TVM's default is the build machine's)"
    got = "nothing" if triple is None else repr(triple)
    problems.append(Problem(join_path(path, "mtriple"), expected, got))
    return None


def _read_cuda(
    config: Mapping[str, Any], path: str, problems: list[Problem], use_tags: bool
) -> dict[str, Any]:
    arch = config.get("arch", config.get("mcpu"))
    tag = CUDA_ARCHS.get(arch) if use_tags and isinstance(arch, str) else None
    if tag is not None:
        return {"tag": tag}
    return {"kind": "cuda"} if arch is None else {"kind": "cuda", "arch": arch}


def _read_ext_dev(
    config: Mapping[str, Any], path: str, problems: list[Problem], use_tags: bool
) -> dict[str, Any]:
    return {"kind": "npu"}


def _read_composite(
    config: Mapping[str, Any], path: str, problems: list[Problem], use_tags: bool
) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": "hetero"}
    if config.get("host") is not None:
        spec["host"] = _read_at(config["host"], join_path(path, "host"), problems)
    devices = _devices_of(config, path, problems) or []
    where = join_path(path, "devices")
    spec["devices"] = [_read_at(d, item_path(where, i), problems) for i, d in enumerate(devices)]
    return spec


def _devices_of(config: Mapping[str, Any], path: str, problems: list[Problem]) -> list[Any] | None:
    """The device configs of a level as TVM writes it: a composite's list, or a device with a
    ``host`` alone; None, with a problem, for a composite without ``devices`` (TVM takes one
    without, which is no hetsim level) or a ``devices`` that is no list."""
    if config.get("kind") != "composite":
        return [{key: value for key, value in config.items() if key != "host"}]
    if "devices" not in config:
        problems.append(
            Problem(join_path(path, "devices"), "expected a list of device targets", "none")
        )
        return None
    devices = config["devices"]
    if not _is_list(devices):
        problems.append(Problem(join_path(path, "devices"), "expected a list", repr(devices)))
        return None
    return list(devices)


_TAG_STATES: dict[str, dict[str, Any]] = {
    name: _stated({"kind": _tvm_kind_of(options), **options})
    for name, options in TVM_TAG_OPTIONS.items()
}
"""Each TVM tag's options as its ``export()`` states them (`_stated`), its kind included."""

_KINDS: dict[str, _Kind] = {
    "llvm": _Kind(frozenset({"mtriple", "mcpu", "mattr", "num-cores"}), _read_llvm),
    "cuda": _Kind(frozenset({"arch", "mcpu"}), _read_cuda),
    "ext_dev": _Kind(frozenset(), _read_ext_dev),
    "composite": _Kind(frozenset({"devices"}), _read_composite),
}


def _read_tvm_tag(config: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """A TVM tag with overrides: the hetsim tag of the same device, its ``num-cores``, its host.

    The options TVM gives the tag itself (which its ``export()`` repeats) override nothing. A
    host makes a level around a device's tag, and changes the host of a platform's tag."""
    name = config["tag"]
    tag = TVM_TAGS.get(name)
    if tag is None:
        expected = f"expected a TVM tag hetsim ships a device for ({', '.join(sorted(TVM_TAGS))})"
        hint = closest(name, TVM_TAGS)
        problems.append(Problem(join_path(path, "tag"), expected, repr(name), hint))
        return {}
    own = TVM_TAG_OPTIONS.get(name, {})
    # what may change a TVM tag: its host, and num-cores where its kind (llvm) takes it (TVM
    # refuses num-cores on a cuda tag, which had set an H100's 132 SMs to 4)
    overrides = ("host", "num-cores") if _tvm_kind_of(own) == "llvm" else ("host",)
    for key, value in config.items():
        if key in ("tag", "kind", "model", *overrides) or _is_codegen_option(key):
            continue
        if key in own and _plain(value) == own[key]:
            continue
        expected = f"expected only {' or '.join(overrides)} to override TVM tag {name!r}"
        problems.append(Problem(join_path(path, key), expected, repr(value)))
    spec: dict[str, Any] = {"tag": tag}
    if config.get("num-cores", own.get("num-cores")) != own.get("num-cores"):
        spec["cores"] = config["num-cores"]
    host, host_path = config.get("host"), join_path(path, "host")
    if host is None:
        return spec
    found: list[Problem] = []
    given = _read_at(host, host_path, found)
    if found:  # a host it cannot map is refused, as without the tag (it read as no host)
        problems += found
        return spec
    if given == _read_at(own.get("host"), host_path, []):
        return spec
    node = _tag_node(tag)
    if node is None or not node.is_composite:
        return _with_host(spec, given)
    change = _change(host, node.host, host_path, problems)  # type: ignore[arg-type]
    return spec if change is None else spec | {"host": change}


def _read_hetsim_tag(
    config: Mapping[str, Any], path: str, problems: list[Problem]
) -> dict[str, Any]:
    """A node written by `spec_to_tvm` from a tag: its ``model`` names the tag, its ``kind``
    the tag's kind, which resolving checks (a ``cuda`` node naming a whole platform's tag
    became that platform), and the rest what it changes of the tag."""
    # a kind hetsim does not map read as the tag, or crashed where the tag is a level's part
    reader = _kind_of(config, path, problems)
    if reader is None:
        return {}
    # its TVM kind's options (a cuda node took llvm's num-cores and mtriple)
    _check_options(config, reader.options, path, problems)
    spec = {"tag": config["model"].removeprefix(MODEL_PREFIX)}
    kind = _hetsim_kind(config, path, problems)
    if kind is not None:
        spec["kind"] = kind
    node = _tag_node(spec["tag"])
    if node is not None and node.kind == kind:  # else resolving says what is wrong
        spec |= _changes(config, node, path, problems)
    return _with_cores(config, spec)


def _tag_node(tag: str) -> Target | None:
    """The canonical node tag `tag` makes (a device's tag is wrapped in a level at the root);
    None for a name that is no tag, which resolving the spec reports."""
    try:
        root = Target(tag)
    except TargetError:
        return None
    return root if root.tag == tag else root.devices[0]


def _changes(
    config: Mapping[str, Any], node: Target, path: str, problems: list[Problem]
) -> dict[str, Any]:
    """What the TVM config `config` of a node that `spec_to_tvm` wrote changes of `node`, the
    canonical node it was written from, as an override of `node`."""
    own = spec_to_tvm(node.export())
    if not node.is_composite:
        return _option_changes(config, own, path, problems)
    changes: dict[str, Any] = {}
    host_path = join_path(path, "host")
    if config.get("host") != own.get("host"):  # as written: unread (a nested tag, resolved)
        host = _change(config.get("host"), node.host, host_path, problems)  # type: ignore[arg-type]
        if host is not None:
            changes["host"] = host
    devices = _devices_of(config, path, problems)
    if devices is None:
        return changes
    listed, theirs = join_path(path, "devices"), _devices_of(own, path, []) or []
    if len(devices) != len(theirs):
        expected = (
            f"expected the {len(theirs)} devices of {_named(node)} (a device added or removed "
            "has no name in TVM)"
        )
        problems.append(Problem(listed, expected, str(len(devices))))
        return changes
    changed = {}
    for index, (device, own_device, target) in enumerate(
        zip(devices, theirs, node.devices, strict=True)
    ):
        if device != own_device:
            change = _change(device, target, item_path(listed, index), problems)
            if change is not None:
                changed[target.name] = change
    if changed:
        changes["devices"] = changed
    return changes


def _named(node: Target) -> str:
    return f"tag {node.tag!r}" if node.tag else f"level {node.name!r}"


def _option_changes(
    config: Mapping[str, Any], own: Mapping[str, Any], path: str, problems: list[Problem]
) -> dict[str, Any]:
    """The attributes a written device's config sets otherwise than `own`, the config of the
    node it changes, each read as for a plain kind; ``None`` where it dropped one (an empty
    ``mattr``, the family's ``mtriple``) that `own` sets."""
    reader = _KINDS[config["kind"]]
    # its problems are its own (an mcpu of another family had read as a kind of None)
    mine = reader.read(config, path, problems, False)
    theirs = reader.read(own, path, [], False)
    keys = [*mine, *(key for key in theirs if key not in mine)]
    return {key: mine.get(key) for key in keys if mine.get(key) != theirs.get(key)}


def _change(
    value: object, node: Target, path: str, problems: list[Problem]
) -> dict[str, Any] | str | None:
    """The TVM config `value`, found where the canonical tree has `node`, as an override of
    `node`: a node of its tag and kind keeps it, and only its changes merge (a tag given again
    would reset what the platform set on it, such as a node's link); None for no change, or
    after a problem. Any other node replaces it (`_replacement`)."""
    found: list[Problem] = []
    config = _config_at(value, path, found)
    spec = {} if config is None else _read_node(config, path, found)
    if found or config is None:
        problems += found
        return None
    if spec.get("tag") != node.tag or spec.get("kind", node.kind) != node.kind:
        return _replacement(spec, node, path, problems, is_written=_is_written(config))
    if node.is_composite or _is_written(config):
        return _changes(config, node, path, problems) or None
    # TVM's own config: what it says merges into the node, as in a hetsim override
    return {key: value for key, value in spec.items() if key not in ("tag", "kind")} or None


def _replacement(
    spec: dict[str, Any], node: Target, path: str, problems: list[Problem], *, is_written: bool
) -> dict[str, Any] | str | None:
    """`spec`, of another tag or kind, in place of `node`. A plain node of the kind of `node`'s
    tag would merge into that tag (canonicalization rule 1): one that `spec_to_tvm` wrote
    becomes its kind's name, which replaces, where it has its kind's defaults, and a problem
    otherwise (the spec has no way to say it)."""
    kind = spec.get("kind")
    if not is_written or "tag" in spec or kind != node.kind:
        return spec
    if spec == _default_spec(kind):
        return kind  # type: ignore[no-any-return]
    expected = (
        f"expected a tag, another kind or {kind!r} with its defaults in place of tag "
        f"{node.tag!r} (a {kind} that sets more merges into the tag)"
    )
    problems.append(Problem(path, expected, repr(spec)))
    return None


def _default_spec(kind: str) -> dict[str, Any] | None:
    """How the written form of kind `kind` with its defaults reads; None for a kind that is no
    device alone (``hetero``)."""
    try:
        device = Target(kind).devices[0]
    except TargetError:
        return None
    return _read_at(spec_to_tvm(device.export()), "", [])


_HETSIM_KINDS = {"cuda": "cuda", "ext_dev": "npu", "composite": "hetero"}
"""The hetsim kind of each TVM kind but ``llvm``, whose kind is its mtriple's family."""


def _hetsim_kind(config: Mapping[str, Any], path: str, problems: list[Problem]) -> str | None:
    """The hetsim kind a TVM node names; None, with a problem, for an ``llvm`` node of no CPU
    family hetsim maps (it had read as its tag, whatever its ``mtriple``)."""
    kind = config.get("kind")
    if kind == "llvm":
        family = _family_of(config.get("mtriple"), config.get("mcpu"), path, problems)
        return family.kind if family is not None else None
    return _HETSIM_KINDS.get(kind) if isinstance(kind, str) else None


# --- problems in the TVM input's terms ---------------------------------------------------------

_PATH_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[([^\]]*)\]")
"""One part of a config path (`join_path`, `item_path`): a key, or a device's name in brackets."""


def _in_tvm_terms(problem: Problem, spec: object, config: Mapping[str, Any]) -> Problem:
    """`problem`, found resolving `spec`, the spec that TVM config `config` reads as, said where
    the config has it (`_tvm_path`)."""
    path = _tvm_path(problem.path, spec, config)
    return Problem(path, problem.expected, problem.got, problem.hint)


def _tvm_path(path: str, spec: object, config: Mapping[str, Any]) -> str:
    """The path in TVM config `config` of `path` in the tree of `spec`: ``devices[dev1].arch`` of a
    composite is ``devices[1].arch``, ``devices[dev0].cores`` of a lone device is ``num-cores``.
    A path that is no config path (a tag file's ``file:line``) is kept.

    >>> spec = {"kind": "hetero", "host": {"kind": "x86-cpu"},
    ...         "devices": [{"kind": "cuda"}, {"kind": "cuda", "arch": 90}]}
    >>> config = {"kind": "composite", "host": {"kind": "llvm", "mtriple": "x86_64-linux-gnu"},
    ...           "devices": [{"kind": "cuda"}, {"kind": "cuda", "arch": 90}]}
    >>> _tvm_path("devices[dev1].arch", spec, config), _tvm_path("host.cores", spec, config)
    ('devices[1].arch', 'host.num-cores')
    """
    parts = [(key, name) for key, name in _PATH_PART.findall(path)]
    if "".join(f".{k}" if k else f"[{n}]" for k, n in parts).removeprefix(".") != path:
        return path
    device = written_device(spec, TAGS)  # a lone device is its level's, under its name
    if device is not None and parts[:2] == _PATH_PART.findall(device):
        parts = parts[2:]
    return _walk(parts, spec, config, "", _tag_node_of(spec))


def _walk(
    parts: list[tuple[str, str]],
    spec: object,
    config: Mapping[str, Any],
    where: str,
    node: Target | None,
) -> str:
    """`where` (the path of `config`) and then `parts`, each the way `config` writes it: a host
    or a device as the config nests it, an attribute by the TVM option it came from."""
    if not parts:
        return where
    (key, _), rest = parts[0], parts[1:]
    spec = spec if isinstance(spec, Mapping) else {}
    if key == "host" and isinstance(config.get("host"), Mapping | str):
        host = _config_at(config["host"], "", [])
        if host is not None:
            inner = _tag_node_of(spec.get("host")) or (node.host if node is not None else None)
            return _walk(rest, spec.get("host"), host, join_path(where, "host"), inner)
    if key == "devices" and rest and not rest[0][0]:
        found = _device_part(spec, config, rest[0][1], where, node)
        if found is not None:
            return _walk(rest[1:], *found)
    return _rest(join_path(where, _option_of(key, config)), rest)


def _device_part(
    spec: Mapping[str, Any],
    config: Mapping[str, Any],
    name: str,
    where: str,
    node: Target | None,
) -> tuple[object, Mapping[str, Any], str, Target | None] | None:
    """The spec, config, path and tag node of the device `name` of a level: a composite's by its
    index, the device of a device with a host in place; None where the spec has no such device."""
    devices = spec.get("devices")
    # a tag's devices changed by name: their order is the tag's
    own = node.devices if node is not None and isinstance(devices, Mapping) else ()
    if isinstance(devices, list):
        names = [device_name(_resolved(d), i) for i, d in enumerate(devices)]
    elif own:
        names = [d.name for d in own]
    else:
        return None
    if name not in names:
        return None
    index = names.index(name)
    device = devices[index] if isinstance(devices, list) else spec["devices"].get(name)
    inner = _tag_node_of(device) or (own[index] if own else None)
    if config.get("kind") != "composite":
        return device, config, where, inner
    listed = config.get("devices")
    if not _is_list(listed) or index >= len(listed):
        return None
    at = item_path(join_path(where, "devices"), index)
    found = _config_at(listed[index], at, [])
    return None if found is None else (device, found, at, inner)


def _resolved(device: object) -> object:
    """A listed device as resolved, which its name is of (a tag may name it)."""
    if not isinstance(device, Mapping):
        return device
    return resolved_device(device, TAGS) or device


def _tag_node_of(spec: object) -> Target | None:
    tag = spec.get("tag") if isinstance(spec, Mapping) else None
    return _tag_node(tag) if isinstance(tag, str) else None


# hetsim attribute -> the TVM options it is read from, the first one the config has
_SOURCES = {"cores": ("num-cores",), "arch": ("arch", "mcpu"), "tag": ("tag", "mcpu", "arch")}


def _option_of(attr: str, config: Mapping[str, Any]) -> str:
    """The TVM option of `config` that hetsim attribute `attr` came from."""
    if attr == "tag" and _is_written(config):
        return "model"
    sources = _SOURCES.get(attr, (attr,))
    return next((option for option in sources if config.get(option)), sources[0])


def _rest(where: str, parts: list[tuple[str, str]]) -> str:
    for key, name in parts:
        where = join_path(where, key) if key else item_path(where, name)
    return where
