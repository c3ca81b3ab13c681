"""Read TVM target configs: the one place hetsim reads TVM's target dialect.

This module owns the TVM -> hetsim direction, `tvm_to_spec`, and its registry of TVM kinds:

- TVM kinds: ``llvm`` is ``arm-cpu``, ``riscv-cpu`` or ``x86-cpu`` by its ``mtriple``, ``cuda`` is
  ``cuda``, ``ext_dev`` is ``npu`` and ``composite`` is ``hetero``; a TVM target with a ``host``
  is a ``hetero`` level with that host and one device. ``mtriple``, ``mcpu``, ``mattr``, ``arch``
  and ``num-cores`` (``cores``) carry over as attributes.
- hetsim tags: an LLVM ``mcpu``, a CUDA ``arch`` or a TVM tag name that names a device hetsim
  ships becomes that tag (the options TVM gives its own tag are no overrides; a TVM tag beside a
  ``kind`` only with those options, as TVM applies them to a config without one; a ``cuda``
  node's ``mcpu``, which TVM does not read, is refused), and a node whose ``model`` says
  ``"hetsim:<tag>"`` reads back as that tag with what it changes of the tag, level by level.

It translates: `tvm_to_spec` returns a spec that `hetsim.target.Target` resolves and validates,
and resolves it once itself only to say its problems in the TVM input's terms (`tvm_paths`: the
path and option names the input wrote, ``num-cores`` for ``cores``, ``model`` for a tag it
names). TVM has no executors, runtimes, links or device names, and none of hetsim's cost
parameters: those come from tags and defaults. TVM options that only steer code generation
(``keys``, ``max_num_threads``, ``feature.*``, ...) are ignored, once every option has the type
TVM gives it (`tvm_types.TVM_OPTION_TYPES`): what TVM refuses is refused. Each input form is read
into a plain config by `tvm_config`; the name tables are `tvm_names`; the way back is
`tvm_writer`. ``tvm`` itself is never imported here: a real ``tvm.target.Target`` is read through
its ``export()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.target.schema import closest, item_path, join_path
from hetsim.target.sources import nesting_problem
from hetsim.target.tree import Target
from hetsim.target.tvm_config import TVM_KINDS, config_at, config_of, is_list, is_written, plain
from hetsim.target.tvm_names import (
    BOARD_CPUS,
    CPU_FAMILIES,
    CUDA_ARCHS,
    CUDA_TAG_L2_BYTES,
    LLVM_CPUS,
    MODEL_PREFIX,
    TVM_TAG_OPTIONS,
    TVM_TAGS,
    CpuFamily,
)
from hetsim.target.tvm_paths import in_tvm_terms, tag_node
from hetsim.target.tvm_types import TVM_OPTION_TYPES, type_problems
from hetsim.target.tvm_writer import spec_to_tvm

__all__ = ["TVM_OPTION_TYPES", "tvm_to_spec"]

# Options that steer TVM's code generation and mean nothing to the simulation, per TVM kind: the
# options TVM 0.27 gives that kind (``TargetKind.options_from_name``) that hetsim does not read.
# An option of another kind is refused, as TVM refuses it (``march`` is no TVM 0.27 option).
_COMMON_CODEGEN = frozenset({"keys", "device", "libs", "from_device", "target_device_type"})
_KIND_CODEGEN: dict[str, frozenset[str]] = {
    "llvm": _COMMON_CODEGEN | {
        "mfloat-abi", "mabi", "fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz",
        "fast-math-arcp", "fast-math-contract", "fast-math-reassoc", "opt-level", "cl-opt", "jit",
        "vector-width",
    },
    "cuda": _COMMON_CODEGEN | {
        "max_shared_memory_per_block", "max_threads_per_block", "thread_warp_size",
        "registers_per_block", "l2_cache_size_bytes", "max_num_threads",
    },
    "ext_dev": _COMMON_CODEGEN,
    "composite": _COMMON_CODEGEN,
}  # fmt: skip
_CODEGEN_OPTIONS = frozenset().union(*_KIND_CODEGEN.values())
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
    config = config_of(obj, problems)
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
    problems += [p for p in type_problems(config, "") if not _is_said(p.path, problems)]
    if problems:
        raise TargetError(problems)
    return spec


def _resolving_problems(spec: dict[str, Any], config: Mapping[str, Any]) -> list[Problem]:
    """The problems of resolving `spec`, read from TVM config `config`, said in its terms."""
    try:
        Target(spec)
    except TargetError as err:
        return list(dict.fromkeys(in_tvm_terms(p, spec, config) for p in err.problems))
    return []


def _is_said(path: str, problems: list[Problem]) -> bool:
    """Whether a problem of `problems` is at `path` or inside it (``mattr[1]`` is in ``mattr``)."""
    return any(p.path == path or p.path.startswith((f"{path}.", f"{path}[")) for p in problems)


def _read_at(value: object, path: str, problems: list[Problem]) -> dict[str, Any]:
    """The spec of a nested TVM config found at `path` (a dict, or a JSON, kind or tag string)."""
    config = config_at(value, path, problems)
    return {} if config is None else _read_node(config, path, problems)


def _read_node(config: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """One TVM target node, and the level its ``host`` makes, as a hetsim spec node."""
    tag, model = config.get("tag"), config.get("model")
    if isinstance(tag, str) and tag:
        return _read_tvm_tag(config, path, problems)
    if not is_written(config) and (named := _tvm_tag_stated(config)) is not None:
        return _read_tvm_tag({**config, "tag": named}, path, problems)
    if is_written(config) and model != MODEL_PREFIX:
        spec = _read_hetsim_tag(config, path, problems)
    else:
        spec = _read_kind(config, path, problems, use_tags=not is_written(config))
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
        key: _stated(value) if isinstance(value, Mapping) else plain(value)
        for key, value in config.items()
        if key not in ("tag", "model") and not _is_codegen_option(key)
    }


def _tvm_tag_stated(config: Mapping[str, Any]) -> str | None:
    """The TVM tag whose options `config` states exactly, if any: ``export()`` of a
    ``tvm.target.Target`` made from a tag name keeps its options, not its name (``tag: ""``),
    and read as options it was another platform than the name (a Jetson's host and GPU as a
    plain level, its GPU named ``dev0``, not ``jetson-agx-orin``)."""
    stated = _stated(config)
    name = next((name for name, options in _TAG_STATES.items() if options == stated), None)
    if name is not None and _another_product(config, TVM_TAGS[name]):
        return None  # its code-generation options are another GPU's: read by its arch
    return name


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
    kind = config.get("kind")
    codegen = _KIND_CODEGEN.get(kind, frozenset()) if isinstance(kind, str) else frozenset()
    allowed = {"kind", "tag", "model", "host", *known}
    for key in config:
        if key in allowed or _is_codegen_option(key, codegen):
            continue
        hint = closest(key, sorted(allowed | codegen))
        problems.append(Problem(join_path(path, key), "unknown TVM option", hint=hint))


def _is_codegen_option(key: object, codegen: frozenset[str] = _CODEGEN_OPTIONS) -> bool:
    return key in codegen or str(key).startswith(_FEATURE_PREFIX)


def _with_cores(config: Mapping[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "num-cores" in config:
        spec["cores"] = config["num-cores"]
    return spec


def _read_llvm(
    config: Mapping[str, Any], path: str, problems: list[Problem], use_tags: bool
) -> dict[str, Any]:
    triple, mcpu = config.get("mtriple"), config.get("mcpu")
    mcpu = None if mcpu in ("", "generic") else mcpu
    given = "mcpu"  # the option the core came from, for a message
    if mcpu is None and use_tags:  # a board TVM names by its SoC only (`BOARD_CPUS`)
        model = config.get("model")
        mcpu = BOARD_CPUS.get(model) if isinstance(model, str) else None
        given = "model"
    family = _family_of(triple, mcpu, path, problems)
    if family is None:
        return {}
    cpu = LLVM_CPUS.get(mcpu) if isinstance(mcpu, str) else None
    if cpu is not None and cpu.kind != family.kind:
        if given == "model":  # the input wrote no mcpu: its board's core is the problem
            expected = (
                f"expected a board with a core of kind {family.kind} (the mtriple is {triple!r})"
            )
            got = f"{config['model']!r}, whose core is {mcpu!r}"
            problems.append(Problem(join_path(path, "model"), expected, got))
            return {}
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
    arch = config.get("arch")
    mcpu = config.get("mcpu")
    if arch is None and mcpu is not None:
        # TVM 0.27 compiles a cuda target for its arch and keeps an mcpu unread: the node builds
        # for the machine's GPU, else sm_50, where hetsim had read the mcpu as the arch
        expected = (
            "expected an arch to name a cuda target's GPU (TVM 0.27 compiles cuda for its arch, "
            "the machine's GPU or sm_50 without one, and does not read mcpu)"
        )
        problems.append(Problem(join_path(path, "mcpu"), expected, f"mcpu {mcpu!r} and no arch"))
        return {}
    tag = CUDA_ARCHS.get(arch) if use_tags and isinstance(arch, str) else None
    if tag is not None and _another_product(config, tag):
        # a TVM tag's export of another GPU of the arch: read as the shipped one, an A30's
        # had become nvidia/a100, with its 108 SMs and 2039 GB/s
        own = CUDA_TAG_L2_BYTES[tag]
        expected = (
            f"expected the {arch} GPU hetsim ships, {tag} (its TVM tag states "
            f"l2_cache_size_bytes {own}), or a node without the device options TVM's tags write"
        )
        l2 = plain(config.get("l2_cache_size_bytes"))
        got = (
            f"one stating l2_cache_size_bytes {'none' if l2 is None else l2}: another {arch} GPU "
            "(as TVM's nvidia/nvidia-a30 exports); describe it as a hetsim cuda device with its "
            "own figures"
        )
        problems.append(Problem(join_path(path, "arch"), expected, got))
        return {}
    if tag is not None:
        return {"tag": tag}
    return {"kind": "cuda"} if arch is None else {"kind": "cuda", "arch": arch}


def _another_product(config: Mapping[str, Any], tag: str) -> bool:
    """Whether `config`, a cuda node its arch maps to `tag`, states device options of another GPU:
    an ``l2_cache_size_bytes`` other than the tag's, or the options a TVM tag's export writes
    (``registers_per_block``) without it. A node stating none of them is read as the arch's
    shipped device, as documented."""
    own = CUDA_TAG_L2_BYTES.get(tag)
    if own is None:  # an arch whose products TVM's exports do not tell apart (Orin's sm_87)
        return False
    stated = plain(config.get("l2_cache_size_bytes"))
    if stated is not None:
        return bool(stated != own)
    return "registers_per_block" in config


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
    if not is_list(devices):
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
assert tuple(_KINDS) == TVM_KINDS, "tvm_config.TVM_KINDS names the kinds read here, in order"


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
    tvm_kind = _tvm_kind_of(own)
    kind = config.get("kind", tvm_kind)
    if kind != tvm_kind:  # TVM reads it as that kind, without the tag's options
        expected = f"expected {tvm_kind!r}, the kind of TVM tag {name!r}"
        problems.append(Problem(join_path(path, "kind"), expected, repr(kind)))
        return {}
    unstated = [key for key in own if key != "host" and key not in config]
    if "kind" in config and unstated:
        # TVM 0.27 applies a tag's options only to a config that names no kind: beside one, the
        # tag is a label (`{"kind": "cuda", "tag": "nvidia/nvidia-a100"}` compiles for the
        # machine's GPU, else sm_50), which had read as the tag's device. An export states them.
        expected = (
            f"expected no kind beside TVM tag {name!r}, or the tag's own options with it (TVM "
            "0.27 applies a tag's options only to a config without a kind: beside one the tag "
            "is a label)"
        )
        got = f"{kind!r} without {', '.join(unstated)}"
        problems.append(Problem(join_path(path, "kind"), expected, got))
        return {}
    # what may change a TVM tag: its host, and num-cores where its kind (llvm) takes it (TVM
    # refuses num-cores on a cuda tag, which had set an H100's 132 SMs to 4)
    overrides = ("host", "num-cores") if tvm_kind == "llvm" else ("host",)
    for key, value in config.items():
        if key in ("tag", "kind", "model", *overrides) or _is_codegen_option(
            key, _KIND_CODEGEN[tvm_kind]
        ):
            continue
        if key in own and plain(value) == own[key]:
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
    node = tag_node(tag)
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
    node = tag_node(spec["tag"])
    if node is not None and node.kind == kind:  # else resolving says what is wrong
        spec |= _changes(config, node, path, problems)
    return _with_cores(config, spec)


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
    config = config_at(value, path, found)
    spec = {} if config is None else _read_node(config, path, found)
    if found or config is None:
        problems += found
        return None
    if spec.get("tag") != node.tag or spec.get("kind", node.kind) != node.kind:
        return _replacement(spec, node, path, problems, was_written=is_written(config))
    if node.is_composite or is_written(config):
        return _changes(config, node, path, problems) or None
    # TVM's own config: what it says merges into the node, as in a hetsim override
    return {key: value for key, value in spec.items() if key not in ("tag", "kind")} or None


def _replacement(
    spec: dict[str, Any], node: Target, path: str, problems: list[Problem], *, was_written: bool
) -> dict[str, Any] | str | None:
    """`spec`, of another tag or kind, in place of `node`. A plain node of the kind of `node`'s
    tag would merge into that tag (canonicalization rule 1): one that `spec_to_tvm` wrote
    becomes its kind's name, which replaces, where it has its kind's defaults, and a problem
    otherwise (the spec has no way to say it)."""
    kind = spec.get("kind")
    if not was_written or "tag" in spec or kind != node.kind:
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
