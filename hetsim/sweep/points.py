"""The points of a sweep: `SweepSpec` (a parsed sweep), its `Axis` values and its `Point`s.

A point is one model on one target, with its `hetsim.simulate` options. Override paths use the
config syntax of target errors (``devices[vdevice0].host.freq_ghz``); `override_tree` turns a
point's paths into one nested override mapping that `hetsim.target.Target.override` merges into
the base target, so a sweep overrides a target exactly as a user would, and `SweepSpec.points`
builds (and so validates) every point's target. Reading and checking sweep files is
`hetsim.sweep.spec`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, SweepError, TargetError, printable
from hetsim.frontend.proto import external_files, parse_model
from hetsim.located import locate
from hetsim.models import ZOO
from hetsim.target import TAGS, Target

__all__ = [
    "EXPANDERS",
    "OPTION_NAMES",
    "Axis",
    "Point",
    "SweepSpec",
    "base_target",
    "digest",
    "override_tree",
    "parse_path",
]

OPTION_NAMES = {"policies": "partition", "strategies": "cuda_graph"}
"""Sweep key -> the `hetsim.simulate` option each of its values is passed as."""


def param_name(path: str) -> str:
    """The key of varied path `path` in a point's params (`Point.params`): the path itself, or
    ``target.<path>`` where it would be taken for the model or an option (the ``model`` or
    ``cuda_graph`` of a target written as one device, whose paths lack ``devices[dev0]``: two
    points of different models had one id, and the second was dropped).

    >>> param_name("devices[gpu0].cores"), param_name("model"), param_name("cuda_graph")
    ('devices[gpu0].cores', 'target.model', 'target.cuda_graph')
    """
    return f"target.{path}" if path == "model" or path in OPTION_NAMES.values() else path


_SEGMENT = r"[A-Za-z_][\w-]*(?:\[[^\[\]]+\])?"
_PATH = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT})*")
_TOKEN = re.compile(r"([A-Za-z_][\w-]*)(?:\[([^\[\]]+)\])?")


@dataclass(frozen=True, slots=True)
class Axis:
    """One varied override path and its values, in file order."""

    path: str
    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Point:
    """One simulation of a sweep: a model on one overridden target, with its options.

    `id` is a hash of `params`, stable across runs and machines: the results file and
    ``--resume`` know a point by it. `model` is as the sweep writes it (a file name relative to
    the sweep file), `file` where it is loaded from (`SweepSpec.model_files`).
    """

    index: int
    model: str
    values: tuple[tuple[str, Any], ...]
    choices: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, Any], ...]
    target: Target = field(compare=False, repr=False)
    file: str = field(compare=False, repr=False)
    sized: tuple[tuple[str, int], ...] = ()
    """The sizes of the dims the sweep varies (``dims: {seq: [8, 16]}``) at this point; its
    ``options`` hold them too, with the fixed ones."""

    @property
    def params(self) -> dict[str, Any]:
        """What sets this point apart, as plain JSON values: model, override values, the sizes
        of varied dims (``dims.seq``), and the ``partition`` and ``cuda_graph`` options when
        the sweep names them."""
        values = {param_name(path): value for path, value in self.values}
        sized = {f"dims.{name}": size for name, size in self.sized}
        return {"model": self.model, **values, **sized, **dict(self.choices)}

    @property
    def id(self) -> str:
        """A 12-digit hex hash of `params`."""
        return digest(self.params)[:12]

    def __repr__(self) -> str:
        return f"<Point {self.index} {self.id} {self.params}>"


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A parsed, validated sweep: what to vary and how to run each point.

    Build one with `load_sweep`; `points()` expands it, `hash` identifies the runs it makes.
    """

    target: Any = field(hash=False)
    models: tuple[str, ...]
    """The models as the sweep writes them: zoo names, files relative to the sweep file. They
    name the points (`Point.params`), so a sweep run from another folder makes the same ones."""
    model_files: tuple[str, ...] = field(default=(), compare=False, hash=False, repr=False)
    """Where each of `models` is loaded from: a zoo name as it is, a file by its absolute path
    (`load_sweep` fills it)."""
    axes: tuple[Axis, ...] = ()
    expand: str = "grid"
    policies: tuple[str | None, ...] = (None,)
    strategies: tuple[str | None, ...] = (None,)
    mode: str = "timing"
    iterations: int = 1
    seed: int = 0
    dims: tuple[tuple[str, int], ...] = ()
    varied_dims: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Dims given a list of sizes (``dims: {seq: [8, 16]}``), each size crossed with the rest
    of the sweep: a point per size, ``dims.seq`` in its params."""
    metric: str = "makespan_us"
    name: str = "sweep"
    rules: tuple[tuple[str, str], ...] = ()
    """The ``(op, device)`` rules of the points whose policy is ``rules`` (read from the sweep's
    ``rules`` key: the file's contents, so that a worker elsewhere needs no file)."""
    source: Path | None = field(default=None, compare=False, hash=False, repr=False)
    """The sweep file it was read from, if any: its problems then name the file and line."""
    rules_file: Path | None = field(default=None, compare=False, hash=False, repr=False)
    """The rules file `rules` were read from, if any: a bad rule then names it and its line."""
    _points: dict[int, tuple[Point, ...]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    """`points()` once made, by the tag registry's version they were resolved at: validating
    a sweep builds every point's target (0.1 ms a point, docs/sweeps.md), and running it needs
    them again."""
    _hashes: dict[int, str] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    """`hash` once made, by the tag registry's version: it resolves the target and reads every
    model file (hundreds of megabytes, for some), and a results file asks for it again."""

    @property
    def hash(self) -> str:
        """A 16-digit hex hash of everything that decides the points and their results.

        The target counts as the canonical tree it resolves to, so an edited target file, tag
        file or tag folder changes the hash (and a target file moved elsewhere does not); a
        model file counts by its path and its contents. The name and the metric are left out:
        renaming a sweep or ranking it by another metric does not change its results.

        Raises
        ------
        SweepError
            The target does not build (`load_sweep` reports it first).
        """
        found = self._hashes.get(TAGS.version)
        if found is None:  # as `points()` keeps its points: for the registry's version only
            self._hashes.clear()
            found = self._hashes[TAGS.version] = self._digest()
        return found

    def _digest(self) -> str:
        keys = ("policies", "strategies", "expand", "mode", "iterations", "seed", "dims")
        data = {key: getattr(self, key) for key in keys}
        data["target"] = self.base_target().export()  # plain JSON: the same in every process
        data["models"] = [
            [model, _file_digest(file)]
            for model, file in zip(self.models, self.model_files, strict=True)
        ]
        data["axes"] = [[axis.path, list(axis.values)] for axis in self.axes]
        if self.varied_dims:  # only then, as before the key existed
            data["varied_dims"] = [[name, list(sizes)] for name, sizes in self.varied_dims]
        if self.rules:  # only then, as before the key existed
            data["rules"] = [list(rule) for rule in self.rules]
        return digest(data)[:16]

    @property
    def varied(self) -> tuple[str, ...]:
        """The swept override paths, in file order, as a point's params name them
        (`param_name`), then the varied dims (``dims.seq``)."""
        dims = tuple(f"dims.{name}" for name, _ in self.varied_dims)
        return (*(param_name(axis.path) for axis in self.axes), *dims)

    def dim_sizes(self) -> list[tuple[tuple[str, int], ...]]:
        """Each combination of the varied dims' sizes (one empty one where none varies)."""
        names = [name for name, _ in self.varied_dims]
        return [
            tuple(zip(names, sizes, strict=True))
            for sizes in product(*(sizes for _, sizes in self.varied_dims))
        ]

    @property
    def options(self) -> dict[str, Any]:
        """The `hetsim.simulate` options every point shares (``trace`` off: a sweep needs sums)."""
        options: dict[str, Any] = {"mode": self.mode, "seed": self.seed, "trace": False}
        if self.dims:
            options["dims"] = dict(self.dims)
        if self.iterations != 1:
            options["iterations"] = self.iterations
        return options

    def points(self) -> tuple[Point, ...]:
        """Every point, models outermost, then policies, strategies and the varied values.

        Raises
        ------
        SweepError
            A point whose target is invalid (every such problem, each once).

        Examples
        --------
        >>> from hetsim.sweep import load_sweep
        >>> spec = load_sweep({"target": "arm-riscv-soc", "models": ["mlp"],
        ...     "vary": {"devices[vdevice0].link.bandwidth_gbps": [4, 8]}})
        >>> [(p.index, p.params["devices[vdevice0].link.bandwidth_gbps"]) for p in spec.points()]
        [(0, 4), (1, 8)]
        >>> spec.points()[1].target.devices[0].attrs["link"]["bandwidth_gbps"]
        8.0
        """
        found = self._points.get(TAGS.version)
        if found is not None:
            return found
        targets = self._targets()
        models = zip(self.models, self.model_files, strict=True)
        sizes = self.dim_sizes()
        # one options tuple per (rules or not, sizes), shared by its points (a million of them)
        shared = {
            (is_rules, sized): self._point_options(is_rules, sized)
            for is_rules in (False, True)
            for sized in sizes
        }
        combos = product(models, self.policies, self.strategies, sizes, targets)
        found = tuple(
            Point(
                index,
                model,
                values,
                _choices(policy, strategy),
                shared[policy == "rules", sized],
                target,
                file,
                sized,
            )
            for index, ((model, file), policy, strategy, sized, (values, target)) in enumerate(
                combos
            )
        )
        self._points.clear()
        self._points[TAGS.version] = found
        return found

    def _point_options(
        self, is_rules: bool, sized: tuple[tuple[str, int], ...]
    ) -> tuple[tuple[str, Any], ...]:
        """The `simulate` options of a point (of policy ``rules`` or not) at varied dims
        `sized`."""
        options = self.options
        if sized:
            options["dims"] = dict(sorted({**options.get("dims", {}), **dict(sized)}.items()))
        if is_rules:
            options["rules"] = self.rules
        return tuple(options.items())

    def base_target(self) -> Target:
        """The target the sweep overrides; its problems name the sweep file, if any."""
        try:
            return base_target(self.target)
        except SweepError as err:
            if self.source is None:
                raise
            raise SweepError(locate(err.problems, self.source)) from None

    def _targets(self) -> list[tuple[tuple[tuple[str, Any], ...], Target]]:
        """Each combination of varied values with its target (values may be mappings)."""
        base = self.base_target()
        targets: list[tuple[tuple[tuple[str, Any], ...], Target]] = []
        problems: dict[Problem, None] = {}
        for values in EXPANDERS[self.expand](self.axes):
            try:
                targets.append((values, base.override(override_tree(values))))
            except TargetError as err:  # at the paths as written (a lone device's at its top)
                varied = [path for path, _ in values]
                for p in err.problems:
                    problems[_varied_problem(p, varied)] = None
        if problems:
            found = list(problems)
            raise SweepError(found if self.source is None else locate(found, self.source))
        return targets


def _varied_problem(problem: Problem, varied: list[str]) -> Problem:
    """A point's target `problem` as the sweep reports it: under ``vary.``, at the varied path it
    is about (or above: an unknown device a path names); a problem of a path no value sets (a
    rule across a level's fields: the runtime that must run a varied executor) is reported at
    the varied path nearest it (sharing a part of its path, or named by the rule: a lone
    device's fields are at the top), and names its own.

    >>> bad = Problem("devices[v].runtime", "expected a runtime that runs executor 'vm'", "'crt'")
    >>> _varied_problem(bad, ["devices[v].devices[n].cores", "devices[v].executor"]).message
    "vary.devices[v].executor: devices[v].runtime: expected a runtime that runs executor 'vm', \
got 'crt'"
    """
    path = problem.path
    parts = _parts(path)
    if not varied or any(_leads(parts, _parts(v)) or _leads(_parts(v), parts) for v in varied):
        return Problem(f"vary.{path}", problem.expected, problem.got, problem.hint)
    # the most parts of `path` shared, then one the expectation names (a rule across two
    # fields: ``expected at most launch_us``), then the fewest parts of its own (a level's
    # executor before a field of a device of that level)
    nearest = max(
        varied,
        key=lambda v: (
            _shared(parts, _parts(v)),
            _names(problem.expected, _parts(v)[-1]),
            -len(_parts(v)),
        ),
    )
    near = _parts(nearest)
    if _shared(parts, near) == 0 and not _names(problem.expected, near[-1]):
        return Problem(f"vary.{path}", problem.expected, problem.got, problem.hint)
    return Problem(f"vary.{nearest}", f"{path}: {problem.expected}", problem.got, problem.hint)


def _names(text: str, word: str) -> bool:
    """Whether `text` names `word` as a word of its own.

    >>> _names("expected at most launch_us (0.1)", "launch_us"), _names("x_launch_us", "launch_us")
    (True, False)
    >>> _names("devices[g].launch_us: expected a number", "launch_us")  # a path's part, not it
    False
    """
    return re.search(rf"(?<![\w.]){re.escape(word)}(?![\w])", text) is not None


def _parts(path: str) -> list[str]:
    """The parts of a target path: ``devices[v].runtime`` -> ``devices``, ``[v]``, ``runtime``."""
    return re.findall(r"\[[^\]]*\]|[^.\[]+", path)


def _leads(parts: list[str], prefix: list[str]) -> bool:
    """Whether path `parts` are `prefix` or below it."""
    return parts[: len(prefix)] == prefix


def _shared(a: list[str], b: list[str]) -> int:
    """How many leading parts paths `a` and `b` share."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def _choices(policy: str | None, strategy: str | None) -> tuple[tuple[str, str], ...]:
    named = (("policies", policy), ("strategies", strategy))
    return tuple((OPTION_NAMES[key], value) for key, value in named if value is not None)


def _grid(axes: tuple[Axis, ...]) -> Iterator[tuple[tuple[str, Any], ...]]:
    paths = [axis.path for axis in axes]
    for values in product(*(axis.values for axis in axes)):
        yield tuple(zip(paths, values, strict=True))


def _zipped(axes: tuple[Axis, ...]) -> Iterator[tuple[tuple[str, Any], ...]]:
    if not axes:  # nothing varied: one point per model and option, as a grid makes
        yield ()
        return
    paths = [axis.path for axis in axes]
    for values in zip(*(axis.values for axis in axes), strict=True):
        yield tuple(zip(paths, values, strict=True))


EXPANDERS: dict[str, Callable[[tuple[Axis, ...]], Iterator[tuple[tuple[str, Any], ...]]]] = {
    "grid": _grid,
    "list": _zipped,
}
"""``expand`` value -> the override value combinations it makes: ``grid`` crosses the varied
values (every combination), ``list`` zips them (the i-th point takes every path's i-th value)."""


def digest(data: Any) -> str:
    """The SHA-256 hex digest of `data` as canonical JSON (sorted keys).

    >>> digest({"b": 1, "a": [2]}) == digest({"a": [2], "b": 1})
    True
    """
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _file_digest(model: str) -> str | None:
    """The SHA-256 hex digest of the model file `model` names, and of the files its weights are
    kept in when they are external (``.onnx``); None for a zoo name (a name that is also a file
    is the zoo's model, as `hetsim.load_model` takes it) or no file."""
    path = Path(model)
    if model in ZOO or not path.is_file():
        return None
    found = hashlib.sha256(_digest_of(path).encode())
    if path.suffix == ".onnx":  # load_sweep loaded it: protobuf is there, and it parses
        proto = parse_model(path)
        for weights in external_files(proto, path.parent):
            if weights.is_file():  # a missing one is the model's error, when it loads
                found.update(f"{weights.name}:{_digest_of(weights)}".encode())
    return found.hexdigest()


def _digest_of(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def parse_path(path: object) -> tuple[str, ...]:
    """The keys of an override path: ``devices[vdevice0].host.freq_ghz`` -> its nested keys.

    A bracket names a device and may follow ``devices`` only.

    Raises
    ------
    ValueError
        A path that is not ``name[.name|devices[device]]...`` (or not a string).

    Examples
    --------
    >>> parse_path("devices[vdevice0].host.freq_ghz")
    ('devices', 'vdevice0', 'host', 'freq_ghz')
    >>> parse_path("host[0]")
    Traceback (most recent call last):
    ...
    ValueError: expected brackets only after 'devices', got 'host[0]'
    """
    if not isinstance(path, str) or not _PATH.fullmatch(path):
        raise ValueError(f"expected a path such as devices[vdevice0].host.freq_ghz, got {path!r}")
    keys: list[str] = []
    for name, device in _TOKEN.findall(path):
        if device and name != "devices":
            raise ValueError(f"expected brackets only after 'devices', got {path!r}")
        keys += [name, device] if device else [name]
    return tuple(keys)


def override_tree(values: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The nested override mapping that sets each path to its value.

    Examples
    --------
    >>> override_tree((("devices[vdevice0].host.freq_ghz", 1.2), ("executor.dispatch_us", 0.3)))
    {'devices': {'vdevice0': {'host': {'freq_ghz': 1.2}}}, 'executor': {'dispatch_us': 0.3}}
    """
    tree: dict[str, Any] = {}
    for path, value in values:
        *parents, last = parse_path(path)
        node = tree
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return tree


def base_target(spec: Any) -> Target:
    """The target `spec` builds; a problem in it is a `SweepError` under ``target``.

    >>> base_target("arm-riscv-soc").devices[0].name
    'vdevice0'
    """
    try:
        return Target(spec)
    except TargetError as err:
        problems = [_under_target(p, spec) for p in err.problems]
        raise SweepError(problems) from err


def _under_target(problem: Problem, spec: Any) -> Problem:
    """`problem` of the target `spec`, under the sweep's ``target`` key: a problem of the file
    `spec` names (``soc.yaml:3: kind``) follows ``target: ``, not ``target.``."""
    path = problem.path
    if isinstance(spec, str) and (path == spec or path.startswith(f"{spec}:")):
        return Problem(
            "target", f"{printable(path)}: {problem.expected}", problem.got, problem.hint
        )
    where = f"target.{path}" if path else "target"
    return Problem(where, problem.expected, problem.got, problem.hint)
