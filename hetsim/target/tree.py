"""`Target` and `Config`: the canonical target tree as frozen values.

`Target(x)` takes every config form (a kind or tag name, a mapping, a JSON string, a file path, a
`Target`) and builds the canonical tree; `Target.load(path)` reads a file and `Target.from_tvm`
a TVM target. A `Target` keeps the user's spec (`spec`) and derives everything else from it, so
`override` resolves again from the edited spec and nothing goes stale. Checking and defaults are
`hetsim.target.canonical`; drawing trees is `hetsim.target.display`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.memo import Recent, plain_key
from hetsim.target.canonical import (
    as_written,
    canonicalize,
    canonicalize_config,
    locate_in_file,
)
from hetsim.target.catalog import config_category
from hetsim.target.display import describe
from hetsim.target.frozen import FrozenMap, freeze, thaw
from hetsim.target.kinds import category_of, find_kind
from hetsim.target.override import is_level_spec, merge_spec, set_attrs, sets_under_null
from hetsim.target.resolve import written_device
from hetsim.target.sources import (
    SUFFIXES,
    is_dir,
    is_file,
    is_file_name,
    load_file,
    nesting_problem,
    parse_json,
)
from hetsim.target.tags import TAGS, split_description
from hetsim.target.values import show_value

__all__ = ["Config", "Target", "read_spec", "target_argument"]


def read_spec(spec: object) -> Any:
    """Plain data from a spec: a JSON string or a file is read; a tag file becomes its tag name.

    >>> read_spec('{"kind": "npu"}'), read_spec("cuda")
    ({'kind': 'npu'}, 'cuda')
    """
    path = _file_of(spec)
    if path is not None:
        data = load_file(path)
        if not isinstance(data, dict):
            return data
        # a file may say what it is, as a tag file does (`hetsim calibrate --out` writes one):
        # the description is not part of the tree
        try:
            data, _ = split_description(data, path)
        except TargetError as err:  # with the rest's problems: all at once
            rest = {key: value for key, value in data.items() if key != "description"}
            raise TargetError([*err.problems, *_problems_of(rest, path)]) from None
        name = TAGS.name_for_file(path)
        # a registered tag file keeps its tag name, unless it was edited since it was read
        # by type too (`plain_key`): an edited `cores: true` is not the `cores: 1` it was
        is_same = name is not None and _same_data(data, TAGS.get(name).data)
        return name if is_same else data
    if isinstance(spec, str) and spec.lstrip().startswith(("{", "[")):
        return _without_description(parse_json(spec))
    if isinstance(spec, str):
        return spec.strip()
    return _without_description(spec)


def _same_data(a: Any, b: Any) -> bool:
    """Whether two plain data trees are equal in value and type (`hetsim.memo.plain_key`)."""
    try:
        return plain_key(a) == plain_key(b)
    except TypeError:  # not plain data: as == says
        return bool(a == b)


def _without_description(data: Any) -> Any:
    """A mapping without the ``description`` a file may have (`split_description`: the forms of
    a target reach one tree; a dict or JSON string with one was refused as an unknown attribute).

    >>> _without_description({"description": "a GPU", "kind": "cuda"})
    {'kind': 'cuda'}
    """
    if not isinstance(data, Mapping) or "description" not in data:
        return data
    return split_description(data)[0]


def _problems_of(data: Mapping[str, Any], path: Path) -> list[Problem]:
    """What is wrong with the target or config `data`, read from the file `path`, led by file
    and line."""
    category = config_category(data)
    try:
        canonicalize(data) if category is None else canonicalize_config(data, category)
    except TargetError as err:
        return locate_in_file(err.problems, path, data)
    return []


NAMED_TARGETS_KEPT = 16
"""Targets given by a tag or kind name that `Target` keeps, with the tag registry's version."""

_named: Recent[tuple[str, int], Target] = Recent(NAMED_TARGETS_KEPT)


def _is_name(spec: str) -> bool:
    """Whether `spec` is a tag or kind name: not a file, not JSON. Such a spec resolves the same
    while the tag registry does not change (`TagRegistry.version`), so `Target` keeps the tree
    it made: resolving ``"x86-h100"`` took 0.33 ms, about half of a warm timing-mode ResNet-50
    `simulate` given the tag (0.70-0.73 ms, and 0.38-0.40 with the tree kept)."""
    return _file_of(spec) is None and not spec.lstrip().startswith(("{", "["))


def _file_of(spec: object) -> Path | None:
    """The file a spec names, if it names one."""
    if isinstance(spec, Path):
        return spec
    if isinstance(spec, str) and is_file_name(spec.strip()):
        return Path(spec.strip())
    return None


def _not_a_target_file(spec: object) -> Problem | None:
    """What a spec taken for a kind or tag name, and that is none, names instead: a folder, or
    a file whose suffix no reader takes (``soc.txt``), which "unknown kind or tag" hid."""
    if not isinstance(spec, str) or not spec.strip():
        return None
    name = spec.strip()
    path = Path(name)
    if category_of(name) is not None or name in TAGS:
        return None
    if is_dir(path):
        return Problem(name, "expected a target file", "a directory")
    if path.suffix and is_file(path):  # a file without one may be a misspelt tag's name
        expected = "expected a target file ending in " + ", ".join(SUFFIXES)
        return Problem(name, expected, repr(path.suffix))
    return None


@dataclass(frozen=True, slots=True)
class Config:
    """An executor or runtime config: its kind, attributes (defaults filled), and tag.

    >>> Target("cuda").executor
    <Config vm dispatch_us=0.27 is_static=False>
    """

    kind: str
    attrs: FrozenMap
    tag: str | None = None

    def export(self) -> dict[str, Any]:
        """The plain mapping of this config."""
        head: dict[str, Any] = {"kind": self.kind}
        if self.tag:
            head["tag"] = self.tag
        return head | dict(thaw(self.attrs))

    def __repr__(self) -> str:
        values = " ".join(f"{k}={v!r}" for k, v in self.attrs.items())
        return f"<Config {self.kind} {values}>".replace(" >", ">")


class Target:
    """A node of a canonical target tree; `Target(x)` builds the tree from any config form.

    The root is always a ``hetero`` level. Two targets are equal when their values are (kind,
    name, tag, attributes, host, executor, runtime, devices); the spec they came from is kept
    (`spec`) but not compared.

    Examples
    --------
    >>> t = Target("cuda")
    >>> t.kind, t.is_composite, t.host.kind, [d.name for d in t.devices], t.devices[0].keys
    ('hetero', True, 'x86-cpu', ['dev0'], ('gpu', 'cuda'))
    >>> Target(t.export()) == t, Target({"kind": "cuda"}) == t
    (True, True)
    >>> str(Target({"kind": "npu", "name": "npu"}))
    'hetero(host=riscv-cpu, executor=vm, runtime=cpp, devices=[npu: npu])'
    """

    __slots__ = (
        "_hash",
        "_version",
        "attrs",
        "devices",
        "executor",
        "host",
        "is_composite",
        "keys",
        "kind",
        "name",
        "runtime",
        "spec",
        "tag",
    )
    kind: str
    name: str
    tag: str | None
    attrs: FrozenMap
    host: Target | None
    executor: Config | None
    runtime: Config | None
    devices: tuple[Target, ...]
    is_composite: bool
    keys: tuple[str, ...]
    spec: Any
    _hash: int
    _version: int  # the tag registry's version it was resolved at; -1: unknown (unpickled)

    def __new__(cls, spec: object) -> Target:
        if isinstance(spec, Target):
            # a device below a root is no canonical tree (whose root is a level): its export is
            # wrapped into one, as the same device written as a spec is
            return spec if spec.is_composite else cls._of(spec.export())
        if isinstance(spec, str) and _is_name(spec):
            return _named.get((spec, TAGS.version), lambda: cls._of(spec))
        return cls._of(spec)

    @classmethod
    def _of(cls, spec: object) -> Target:
        data = read_spec(spec)
        try:
            return _build(canonicalize(data), copy.deepcopy(data))
        except TargetError as err:
            file = _file_of(spec)
            if file is not None:  # file:line: path: ..., the path as the file writes it
                # read again: a registered tag file's `data` is its tag's name, not what it writes
                raise TargetError(locate_in_file(err.problems, file, load_file(file))) from None
            named = _not_a_target_file(spec)
            if named is not None:
                raise TargetError([named]) from None
            written = as_written(err.problems, data)
            if tuple(written) != err.problems:  # a target written as one device: its top
                raise TargetError(written) from None
            raise

    def __init__(self, spec: object) -> None:
        """Nothing to do: `__new__` built the tree."""

    @classmethod
    def load(cls, path: str | Path) -> Target:
        """The target in a YAML, JSON or TOML file (a tag file keeps its tag name)."""
        if not isinstance(path, str | Path):
            raise TargetError([Problem("load", "expected a file path", show_value(path))])
        return cls(Path(path))

    @classmethod
    def from_tvm(cls, target: object) -> Target:
        """The target described by a TVM target (a ``tvm.target.Target`` or its config dict)."""
        # TVM interop (tvm_reader, tvm_writer) is owned apart; importing it here keeps hetsim lean.
        from hetsim.target.tvm_reader import tvm_to_spec

        return cls(tvm_to_spec(target))

    def to_tvm(self) -> dict[str, Any]:
        """A TVM target config dict that ``tvm.target.Target`` accepts."""
        from hetsim.target.tvm_writer import spec_to_tvm

        return spec_to_tvm(self.export())

    def export(self) -> dict[str, Any]:
        """The plain-JSON canonical mapping of this tree; `Target` parses it back to an equal tree.

        >>> Target("cuda").export()["devices"][0]["arch"]
        'sm_90'
        """
        data: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.tag:
            data["tag"] = self.tag
        data |= thaw(self.attrs)
        if self.is_composite:
            assert self.host is not None, "a level has a host"
            assert self.executor is not None, "a level has an executor"
            assert self.runtime is not None, "a level has a runtime"
            data["host"] = self.host.export()
            data["executor"] = self.executor.export()
            data["runtime"] = self.runtime.export()
            data["devices"] = [d.export() for d in self.devices]
        return data

    def override(self, changes: Mapping[str, Any]) -> Target:
        """A new tree from this tree's spec with `changes` merged in, resolved again.

        Changes that only set attribute values of nodes the tree has give the same tree without
        resolving it again: the changed nodes are checked as resolving checks them, and the
        others are shared (`hetsim.target.override`).

        >>> t = Target({"kind": "cuda", "launch_us": 4.0})
        >>> t.override({"launch_us": None}).devices[0].attrs["launch_us"]
        3.24
        >>> soc = Target("arm-riscv-soc")
        >>> faster = soc.override({"executor": {"dispatch_us": 0.1}})
        >>> faster.executor.attrs["dispatch_us"], faster.devices[0] is soc.devices[0]
        (0.1, True)
        """
        if not isinstance(changes, Mapping):
            got = show_value(changes)
            raise TargetError([Problem("override", "expected a mapping of changes", got)])
        too_deep = nesting_problem(changes)
        if too_deep is not None:
            raise TargetError([too_deep])
        spec = self.spec if isinstance(self.spec, Mapping) else {"tag": self.spec}
        if isinstance(self.spec, str) and find_kind("target", self.spec) is not None:
            spec = {"kind": self.spec}
        if "devices" in changes:
            _check_devices_change(spec, changes["devices"])
        merged = merge_spec(spec, dict(changes))
        if (
            self._version == TAGS.version
            and is_level_spec(spec)
            and not sets_under_null(spec, changes)
        ):
            found = set_attrs(self, changes, merged)
            if found is not None:
                return found
        return Target(merged)

    def _replace(self, **fields: Any) -> Target:
        """This node with `fields` (``attrs``, ``devices``, ``spec``, ...) replaced, unchecked:
        for `hetsim.target.override`, which checks what it changes."""
        now = (*self._values(), self.is_composite, self.keys, self.spec)
        values = dict(zip(_FIELDS, now, strict=True))
        return _restore(**(values | fields), version=self._version)

    def walk(self) -> Iterator[tuple[str, Target]]:
        """Every target node with its path, depth first, host first (``host``, ``a/host``, ...)."""
        yield from _walk(self, "")

    def _values(self) -> tuple[Any, ...]:
        return (
            self.kind,
            self.name,
            self.tag,
            self.attrs,
            self.host,
            self.executor,
            self.runtime,
            self.devices,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return self is other or self._values() == other._values()

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Target is immutable: cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        # the frozen fields as they are (a sweep sends every point's tree to a worker: exporting
        # and building it again thawed and froze every value); the hash is made anew where the
        # tree is loaded, as a string's differs from one process to the next, and so is the tag
        # registry's version (another process's registry: unknown)
        fields = (*self._values(), self.is_composite, self.keys, self.spec)
        return (_restore, fields)

    def __str__(self) -> str:
        return describe(self)

    def __repr__(self) -> str:
        tag = f" tag={self.tag}" if self.tag else ""
        return f"<Target {self.name or '(root)'} kind={self.kind}{tag}>"


def _walk(node: Target, prefix: str) -> Iterator[tuple[str, Target]]:
    if node.host is not None:
        yield f"{prefix}host", node.host
    for device in node.devices:
        yield f"{prefix}{device.name}", device
        yield from _walk(device, f"{prefix}{device.name}/")


def target_argument(spec: object, argument: str) -> Target:
    """`Target(spec)` for a function's or a command's `argument`: a problem at the spec's root
    is said of the argument (``target: expected a target name or a mapping, got None``,
    ``--target: unknown kind or tag 'nope'``), as other arguments' are; a problem with a path
    (``kind: unknown kind 'x'``, a file's line) keeps it.

    >>> target_argument(None, "target")
    Traceback (most recent call last):
    ...
    hetsim.errors.TargetError: target: expected a target name or a mapping, got None
    """
    try:
        return Target(spec)
    except TargetError as err:
        if all(p.path for p in err.problems):
            raise
        problems = [p if p.path else dataclasses.replace(p, path=argument) for p in err.problems]
        raise TargetError(problems) from err


def _config(data: Mapping[str, Any] | None) -> Config | None:
    if data is None:
        return None
    attrs = {k: v for k, v in data.items() if k not in ("kind", "tag")}
    return Config(data["kind"], freeze(attrs), data.get("tag"))


def _check_devices_change(spec: Mapping[str, Any], devices: Any) -> None:
    """A target written as one device (``cuda``, ``nvidia/h100``) has that device's attributes
    at its top, as written: its canonical ``devices[dev0]`` is not a path of the spec, and a
    change under it would be read as the device's own (unknown) ``devices`` attribute."""
    device = written_device(spec, TAGS)
    if device is None:
        return
    inner = next(iter(devices.values()), None) if isinstance(devices, Mapping) else None
    attr = next(iter(inner), "launch_us") if isinstance(inner, Mapping) and inner else "launch_us"
    raise TargetError(
        [
            Problem(
                "devices",
                f"expected the attributes of the one device this target is written as, at its "
                f"top ({attr}, not {device}.{attr})",
            )
        ]
    )


def _restore(
    kind: str,
    name: str,
    tag: str | None,
    attrs: FrozenMap,
    host: Target | None,
    executor: Config | None,
    runtime: Config | None,
    devices: tuple[Target, ...],
    is_composite: bool,
    keys: tuple[str, ...],
    spec: Any,
    version: int = -1,
) -> Target:
    """The `Target` of these fields, its hash made here: `_build`'s, or a pickled one's as it was
    (no kind looked up). `version`: the tag registry's version the tree was resolved at."""
    node = object.__new__(Target)
    for field, value in (
        ("kind", kind), ("name", name), ("tag", tag), ("attrs", attrs), ("host", host),
        ("executor", executor), ("runtime", runtime), ("devices", devices),
        ("is_composite", is_composite), ("keys", keys), ("spec", spec), ("_version", version),
    ):  # fmt: skip
        object.__setattr__(node, field, value)
    object.__setattr__(node, "_hash", hash(node._values()))
    return node


_FIELDS = (
    "kind", "name", "tag", "attrs", "host", "executor", "runtime", "devices", "is_composite",
    "keys", "spec",
)  # fmt: skip
"""`_restore`'s parameters before ``version``, in order."""


def _build(data: Mapping[str, Any], spec: Any) -> Target:
    """The `Target` of a canonical mapping (trusted: `canonicalize` made it)."""
    kind = find_kind("target", data["kind"])
    assert kind is not None, f"canonical kind {data['kind']!r} is registered"
    structure = {"kind", "name", "tag", "host", "executor", "runtime", "devices"}
    return _restore(
        kind.name,
        data["name"],
        data.get("tag"),
        freeze({k: v for k, v in data.items() if k not in structure}),
        _build(data["host"], data["host"]) if data.get("host") else None,
        _config(data.get("executor")),
        _config(data.get("runtime")),
        tuple(_build(d, d) for d in data.get("devices", ())),
        kind.is_composite,
        kind.keys,
        spec,
        TAGS.version,
    )
