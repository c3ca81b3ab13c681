"""Read TVM target configs: the one place hetsim reads TVM's target dialect.

This module owns the TVM -> hetsim direction, `tvm_to_spec`, and its registry of TVM kinds:

- TVM kinds: ``llvm`` is ``arm-cpu``, ``riscv-cpu`` or ``x86-cpu`` by its ``mtriple``, ``cuda`` is
  ``cuda``, ``ext_dev`` is ``npu`` and ``composite`` is ``hetero``; a TVM target with a ``host``
  is a ``hetero`` level with that host and one device. ``mtriple``, ``mcpu``, ``mattr``, ``arch``
  and ``num-cores`` (``cores``) carry over as attributes.
- hetsim tags: an ``mcpu``, an ``arch`` or a TVM tag name that names a device hetsim ships becomes
  that tag, and a node whose ``model`` says ``"hetsim:<tag>"`` reads back as that tag.

It translates only: `tvm_to_spec` returns a spec that `hetsim.target.Target` then resolves and
validates. TVM has no executors, runtimes, links or device names, and none of hetsim's cost
parameters: those come from tags and defaults. TVM options that only steer code generation
(``keys``, ``max_num_threads``, ``feature.*``, ...) are accepted and ignored. The name tables are
`tvm_names`; the way back is `tvm_writer`. ``tvm`` itself is never imported here: a real
``tvm.target.Target`` is read through its ``export()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.located import load_json
from hetsim.target.schema import closest, item_path, join_path
from hetsim.target.sources import nesting_problem
from hetsim.target.tree import Target
from hetsim.target.tvm_names import (
    CPU_FAMILIES,
    CUDA_ARCHS,
    LLVM_CPUS,
    MODEL_PREFIX,
    TVM_TAGS,
    CpuFamily,
)
from hetsim.target.tvm_writer import spec_to_tvm

__all__ = ["tvm_to_spec"]

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
        A hetsim target spec (not yet resolved or validated).

    Raises
    ------
    TargetError
        Every part that hetsim cannot map, each with its path in the TVM config.

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
    """
    problems: list[Problem] = []
    config = _config(obj, problems)
    too_deep = None if problems else nesting_problem(config)
    if too_deep is not None:
        problems.append(too_deep)
    spec = {} if problems else _read_node(config, "", problems)
    if problems:
        raise TargetError(problems)
    return spec


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
    if isinstance(value, str):
        return _read_node(_config_of_text(value, path, problems), path, problems)
    if isinstance(value, Mapping) or _is_tvm_target(value):
        return _read_node(_config(value, problems), path, problems)
    problems.append(Problem(path, "expected a TVM target config", repr(value)))
    return {}


def _read_node(config: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """One TVM target node, and the level its ``host`` makes, as a hetsim spec node."""
    tag, model = config.get("tag"), config.get("model")
    written = isinstance(model, str) and model.startswith(MODEL_PREFIX)
    if isinstance(tag, str) and tag:
        spec = _read_tvm_tag(config, path, problems)
    elif written and model != MODEL_PREFIX:
        spec = _read_hetsim_tag(config, path, problems)
        if config.get("kind") == "composite":
            spec |= _changes_to_tag(config, spec["tag"], path, problems)
    else:
        spec = _read_kind(config, path, problems, use_tags=not written)
    host = config.get("host")
    if host is None or config.get("kind") == "composite":
        return spec
    host_spec = _read_at(host, join_path(path, "host"), problems)
    return {"kind": "hetero", "host": host_spec, "devices": [spec]}


def _read_kind(
    config: Mapping[str, Any], path: str, problems: list[Problem], *, use_tags: bool
) -> dict[str, Any]:
    kind = config.get("kind")
    reader = _KINDS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        expected = f"expected a TVM kind that hetsim maps ({', '.join(sorted(_KINDS))})"
        got = "nothing" if kind is None else repr(kind)
        problems.append(Problem(join_path(path, "kind"), expected, got, closest(kind, _KINDS)))
        return {}
    _check_options(config, reader.options, path, problems)
    return reader.read(config, path, problems, use_tags)


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
    devices = config.get("devices", [])
    if not isinstance(devices, Sequence) or isinstance(devices, str):
        problems.append(Problem(join_path(path, "devices"), "expected a list", repr(devices)))
        devices = []
    where = join_path(path, "devices")
    spec["devices"] = [_read_at(d, item_path(where, i), problems) for i, d in enumerate(devices)]
    return spec


_KINDS: dict[str, _Kind] = {
    "llvm": _Kind(frozenset({"mtriple", "mcpu", "mattr", "num-cores"}), _read_llvm),
    "cuda": _Kind(frozenset({"arch", "mcpu"}), _read_cuda),
    "ext_dev": _Kind(frozenset(), _read_ext_dev),
    "composite": _Kind(frozenset({"devices"}), _read_composite),
}


def _read_tvm_tag(config: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """A TVM tag with overrides: the hetsim tag of the same device, its ``num-cores``, its host."""
    name = config["tag"]
    tag = TVM_TAGS.get(name)
    if tag is None:
        expected = f"expected a TVM tag hetsim ships a device for ({', '.join(sorted(TVM_TAGS))})"
        hint = closest(name, TVM_TAGS)
        problems.append(Problem(join_path(path, "tag"), expected, repr(name), hint))
        return {}
    for key, value in config.items():
        if key in ("tag", "kind", "model", "host", "num-cores") or _is_codegen_option(key):
            continue
        expected = f"expected only host or num-cores to override TVM tag {name!r}"
        problems.append(Problem(join_path(path, key), expected, repr(value)))
    return _with_cores(config, {"tag": tag})


def _read_hetsim_tag(
    config: Mapping[str, Any], path: str, problems: list[Problem]
) -> dict[str, Any]:
    """A node written by `spec_to_tvm` from a tag: its ``model`` names the tag, and its ``kind``
    the tag's kind, which resolving checks (a ``cuda`` node naming a whole platform's tag
    became that platform)."""
    known = {option for kind in _KINDS.values() for option in kind.options}
    _check_options(config, known, path, problems)
    spec = {"tag": config["model"].removeprefix(MODEL_PREFIX)}
    kind = _hetsim_kind(config)
    if kind is not None:
        spec["kind"] = kind
    return _with_cores(config, spec)


def _changes_to_tag(
    config: Mapping[str, Any], tag: str, path: str, problems: list[Problem]
) -> dict[str, Any]:
    """What a composite node written from tag `tag` changes of the tag: its host, and each
    device that differs from the tag's at its position (an override of that device, by the
    name the tag gives it), each compared as this reader reads both. A device added or removed
    is a problem: devices have no names in TVM to say which."""
    try:
        tagged = Target(tag)
    except TargetError:  # an unknown tag: resolving the spec says so
        return {}
    own = spec_to_tvm(tagged.export())
    changes: dict[str, Any] = {}
    host_path = join_path(path, "host")
    if config.get("host") != own.get("host"):  # as written: unread (a nested tag, resolved)
        host = _read_at(config.get("host"), host_path, problems)
        if host != (own_host := _read_at(own.get("host"), host_path, [])):
            changes["host"] = _change(host, own_host)
    listed = join_path(path, "devices")
    devices, theirs = list(config.get("devices") or ()), list(own.get("devices") or ())
    if len(devices) != len(theirs):
        expected = (
            f"expected the {len(theirs)} devices of tag {tag!r} (a device added or removed has "
            "no name in TVM)"
        )
        problems.append(Problem(listed, expected, str(len(devices))))
        return changes
    changed = {}
    for index, (device, name) in enumerate(
        zip(devices, (d.name for d in tagged.devices), strict=True)
    ):
        if device == theirs[index]:
            continue
        where = item_path(listed, index)
        spec = _read_at(device, where, problems)
        if spec != (own_device := _read_at(theirs[index], where, [])):
            changed[name] = _change(spec, own_device)
    if changed:
        changes["devices"] = changed
    return changes


def _change(spec: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """`spec` as an override of the node `own` reads as: a node of the same tag keeps it, and
    only its changes are merged (a tag given again would reset what the platform set on it,
    such as a node's link)."""
    if spec.get("tag") != own.get("tag"):
        return spec
    return {key: value for key, value in spec.items() if key not in ("tag", "kind")}


_HETSIM_KINDS = {"cuda": "cuda", "ext_dev": "npu", "composite": "hetero"}
"""The hetsim kind of each TVM kind but ``llvm``, whose kind is its mtriple's family."""


def _hetsim_kind(config: Mapping[str, Any]) -> str | None:
    """The hetsim kind a TVM node names, where it names one."""
    kind, triple = config.get("kind"), config.get("mtriple")
    if kind == "llvm" and isinstance(triple, str):
        family = next((f for f in CPU_FAMILIES.values() if f.matches(triple)), None)
        return family.kind if family is not None else None
    return _HETSIM_KINDS.get(kind) if isinstance(kind, str) else None
