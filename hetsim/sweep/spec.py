"""Sweep files: read a sweep (YAML, or its contents as a mapping), check it, make its `SweepSpec`.

A sweep names a base target, the override paths it varies (each with a list or a range of values:
`hetsim.sweep.vary`), the models, and optionally partition policies (with the rules of ``rules``)
and CUDA-graph strategies; ``grid`` crosses the varied values, ``list`` zips them. Everything is
checked here, before anything runs: the file's keys and values (every problem at once, as a
`SweepError` naming the key's path in the file), the metric (one of `hetsim.sweep.results.METRICS`),
every model and its symbolic dims, the rules, and, through `SweepSpec.points`, the target of every
point. The points themselves are `hetsim.sweep.points`; running them is `hetsim.sweep.runner`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hetsim.errors import HetsimError, PartitionError, Problem, SweepError, is_count
from hetsim.ir import Op
from hetsim.located import locate, safe_load, text_of, yaml_problem
from hetsim.partition import (
    POLICIES,
    Rule,
    check_case,
    load_rules,
    read_rules,
)
from hetsim.platform import Platform, build_platform
from hetsim.runtime.cuda_graph import STRATEGIES
from hetsim.sim import MODES
from hetsim.sweep.loaded import model_identity, point_model
from hetsim.sweep.points import EXPANDERS, Axis, SweepSpec, parse_path
from hetsim.sweep.results import METRIC_ROOTS, metric_problem
from hetsim.sweep.vary import MAX_POINTS, read_axes, read_values
from hetsim.target import Target
from hetsim.target.schema import closest
from hetsim.target.sources import nesting_problem
from hetsim.target.values import show_value

__all__ = ["KEYS", "METRIC_ROOTS", "load_sweep", "parse_sweep"]

KEYS = (
    "name",
    "target",
    "models",
    "vary",
    "expand",
    "policies",
    "strategies",
    "mode",
    "iterations",
    "seed",
    "dims",
    "metric",
    "rules",
)
"""Every key a sweep file may have; ``target`` and ``models`` are required."""


def load_sweep(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """Parse and validate a sweep: a YAML (or JSON) file's path, its contents as a mapping, or a
    `SweepSpec`.

    Checks every key and value (reporting every problem at once), loads every model, and builds
    the target of every point, so a bad sweep fails before anything runs. Relative ``.onnx``
    model paths and a relative target file are read from the sweep file's folder.

    Raises
    ------
    SweepError
        A ``.toml`` file (TOML has no null); each problem with its path in the file (and, read
        from a file, the file and line): an unknown key (with the closest name), a bad value, a
        model that does not load, a point whose target is invalid, a metric that is not a
        number of a result, a model with a symbolic dim that ``dims`` does not size,
        ``iterations`` other than 1, an ``ops`` entry (varied or in the target) that is not an
        op type hetsim runs.

    Examples
    --------
    >>> load_sweep({"target": "arm-riscv-soc", "models": ["mlp"], "mdoe": "timing"})
    Traceback (most recent call last):
    ...
    hetsim.errors.SweepError: mdoe: unknown key (did you mean 'mode'?)
    """
    if isinstance(source, SweepSpec):
        source.points()
        return source
    spec, problems, expandable = _checked(source)
    target: Target | None = None  # one with the points' devices (overrides change attributes)
    if expandable:  # so a bad key does not hide a bad override or target: all at once
        try:
            points = spec.points()  # kept by the spec for the run (none without models)
            target = points[0].target if points else None
        except SweepError as err:  # read from a file, these name it and the line already
            problems.extend(err.problems)
    if target is None and spec.target is not None:  # no points: their base target still is
        try:
            target = spec.base_target()
        except SweepError as err:
            if not expandable:  # else the points said it
                problems.extend(err.problems)
    problems.extend(_rule_device_problems(spec, target))
    _raise(problems, spec.source)
    return spec


def parse_sweep(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """`load_sweep` without building the points' targets (`SweepSpec.points` checks those).

    Raises
    ------
    SweepError
        A bad key or value, a model that does not load, or one with an unsized symbolic dim.
    """
    if isinstance(source, SweepSpec):
        return source
    spec, problems, _ = _checked(source)
    _raise(problems, spec.source)
    return spec


def _checked(source: Mapping[str, Any] | str | Path) -> tuple[SweepSpec, list[Problem], bool]:
    """The sweep `source` holds, every problem of its keys, values and models, and whether its
    points can be made to check their targets (a target is given, the varied paths are apart
    and, to be zipped, of one length), whatever else is wrong.

    Raises
    ------
    SweepError
        Only for what leaves no sweep to check: a file that cannot be read, YAML that does not
        parse, data that is not a mapping.
    """
    if not isinstance(source, str | Path):
        return _parse(source, None)
    path = Path(source)
    data = _read_file(source)  # its problems name the file (an empty path, '', is no '.')
    try:
        # its folder is the file's own: a symlink to it reads the files beside the file (the
        # same sweep, by any path, has the same points), not those beside the link
        return _parse(data, path.resolve().parent, path)
    except SweepError as err:
        raise SweepError(locate(err.problems, path)) from None  # file:line: path: ...


def _raise(problems: list[Problem], file: Path | None) -> None:
    """Raise `problems` (if any) as one `SweepError`, each led by ``file:line`` when read from a
    file (those already so led are kept as they are)."""
    if problems:
        raise SweepError(problems if file is None else locate(problems, file))


def _read_file(source: str | Path) -> Any:
    path = Path(source)
    if path.suffix.lower() == ".toml":  # read as YAML, its text was one string: "no mapping"
        got = "a TOML file (TOML has no null, which a sweep's policies and strategies take)"
        raise SweepError([Problem(str(path), "expected a YAML or JSON sweep file", got)])
    text = text_of(source, "a sweep file")  # as given: "" is no folder
    if isinstance(text, Problem):
        raise SweepError([text])
    try:
        return safe_load(text)  # a key given twice is an error, not the last one kept
    except yaml.YAMLError as err:
        raise SweepError([yaml_problem(path, err)]) from err


_NOTHING = object()
"""`_Parser.add`'s `got` when the problem has no value to show (a required key missing)."""


@dataclass
class _Parser:
    """One pass over a sweep mapping, collecting every problem."""

    data: Mapping[str, Any]
    folder: Path | None
    problems: list[Problem] = field(default_factory=list)
    expandable: bool = True  # False: the axes cannot be crossed or zipped as they are

    def add(self, path: str, expected: str, got: Any = _NOTHING, hint: str | None = None) -> None:
        """A problem at `path`; `got` (None too: ``seed: null``) shown as the user wrote it."""
        shown = None if got is _NOTHING else show_value(got)
        self.problems.append(Problem(path, expected, shown, hint))

    def names(self, key: str, *, allow_none: bool, known: tuple[str, ...] = ()) -> tuple[Any, ...]:
        """The list of names at `key`; with `known`, each must be one of them (a name no run
        knows would fail every point of the sweep, after all of them ran)."""
        value = self.data.get(key, [None] if allow_none else None)
        if value is None and not allow_none:
            return ()  # a required key: its absence is reported once, by _parse
        what = "names (null for the default)" if allow_none else "names"
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            self.add(key, f"expected a non-empty list of {what}", value)
            return ()
        for i, item in enumerate(value):
            if not (isinstance(item, str) or (allow_none and item is None)):
                self.add(f"{key}[{i}]", f"expected a name{' or null' if allow_none else ''}", item)
            elif known and isinstance(item, str) and item not in known:
                expected = f"expected one of {', '.join(known)}{' or null' if allow_none else ''}"
                self.add(f"{key}[{i}]", expected, item, closest(item, known))
        if len(set(map(repr, value))) != len(value):
            self.add(key, "expected distinct names", value)
        return tuple(value)

    def integer(self, key: str, default: int, minimum: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.add(key, f"expected an integer >= {minimum}", value)
            return default
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str) or value not in choices:
            expected = "expected one of " + ", ".join(map(repr, choices))
            self.add(key, expected, value, closest(value, choices))
            return default
        return str(value)


def _parse(
    data: Any, folder: Path | None, file: Path | None = None
) -> tuple[SweepSpec, list[Problem], bool]:
    # a problem of the whole sweep: a file's is led by its first line (`locate`), as others
    # by theirs; a mapping given as data has no line, and says ``sweep``
    root = "sweep" if file is None else ""
    if not isinstance(data, Mapping):
        raise SweepError([Problem(root, "expected a mapping of keys", repr(data))])
    too_deep = nesting_problem(data)  # before anything recurses into it
    if too_deep is not None:
        raise SweepError([too_deep])
    parser = _Parser(_python_scalars(data), folder)
    for key in data:
        if key not in KEYS:
            parser.problems.append(Problem(str(key), "unknown key", hint=closest(key, KEYS)))
    for key in ("target", "models"):
        if key not in data:
            parser.add(key, "expected a value (required)")
    expand = parser.choice("expand", "grid", tuple(EXPANDERS))
    policies = parser.names("policies", allow_none=True, known=tuple(POLICIES))
    written = parser.names("models", allow_none=False)
    files = tuple(_model_file(m, folder) for m in written)
    parser.problems.extend(_files_named_twice(written, files))
    rules, rules_file = _rules(parser, policies)
    spec = SweepSpec(
        target=_local_file(data.get("target"), folder),
        models=written,
        model_files=files,
        axes=_axes(parser, expand),
        expand=expand,
        policies=policies,
        strategies=parser.names("strategies", allow_none=True, known=tuple(STRATEGIES)),
        mode=parser.choice("mode", "timing", MODES),
        iterations=_iterations(parser),
        seed=parser.integer("seed", 0, 0),
        dims=(dims := _dims(parser))[0],  # read in its turn: problems keep the keys' order
        varied_dims=dims[1],
        metric=_metric(parser),
        name=_name(parser),
        rules=rules,
        source=file,
        rules_file=rules_file,
    )
    count = _point_count(spec)
    if count > MAX_POINTS:
        expected = f"expected at most {MAX_POINTS} points"
        parser.problems.append(Problem(root, expected, f"{count} (models x policies x ...)"))
        parser.expandable = False
    problems = [*parser.problems, *_model_problems(spec)]
    return spec, problems, parser.expandable and "target" in data


def _python_scalars(value: Any) -> Any:
    """`value` with each numpy bool, integer or float in it (in mappings and lists, at any
    depth) as the Python one it holds, as `hetsim.simulate` takes them: the checks then see
    ``np.int64(4)`` as the integer 4, and a point's params are JSON (a ``vary`` list of
    ``np.arange`` values passed the checks, then failed the whole run as it wrote a record).

    >>> _python_scalars({"vary": {"host.cores": [np.int64(1)], "x": np.float32(0.5)}})
    {'vary': {'host.cores': [1], 'x': 0.5}}
    """
    if isinstance(value, np.bool_ | np.integer | np.floating):
        return value.item()
    if isinstance(value, Mapping):
        return {_python_scalars(key): _python_scalars(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_python_scalars(item) for item in value]
    if type(value) is tuple:
        return tuple(_python_scalars(item) for item in value)
    return value


def _point_count(spec: SweepSpec) -> int:
    """How many points `spec` makes, counted without making them."""
    lengths = [len(axis.values) for axis in spec.axes]
    combos = math.prod(lengths) if spec.expand == "grid" else max(lengths, default=1)
    sizes = math.prod(len(sizes) for _, sizes in spec.varied_dims)
    return len(spec.models) * len(spec.policies) * len(spec.strategies) * sizes * combos


def _local_file(value: Any, folder: Path | None, *, is_file: bool = False) -> Any:
    """A relative file name found next to the sweep file (a directory too: its reader says so,
    where "no such file" sent the user to look elsewhere), as that file's path; with `is_file`
    (a model: zoo names hold no dot), also one missing both there and here, so that its error
    names where it was looked for."""
    if folder is None or not isinstance(value, str) or "." not in Path(value).name:
        return value
    candidate = folder / value
    if Path(value).is_absolute():
        return value
    if candidate.exists() or (is_file and not Path(value).exists()):
        return str(candidate)
    return value


def _model_file(model: Any, folder: Path | None) -> Any:
    """Where model `model`, as the sweep writes it, is loaded from: a zoo name as it is, a file
    (found next to the sweep file first, as `_local_file` finds it) by its absolute path, so
    that a worker in another folder (a cluster given by ``--scheduler``) finds it too."""
    found = _local_file(model, folder, is_file=True)
    if not isinstance(found, str) or "." not in Path(found).name:  # a zoo name has no dot
        return found
    try:
        return str(Path(found).absolute())
    except (OSError, ValueError):  # a name no file has (a NUL in it): load_model reports it
        return found


def _files_named_twice(written: tuple[Any, ...], models: tuple[Any, ...]) -> list[Problem]:
    """Each model file that the models `written` name two ways (``m.onnx``, ``./m.onnx``),
    shown as written: its points had one id, so a results file kept one of each pair, and
    ``--resume`` refused the file. Names written twice are `_Parser.names`' to report."""
    if len(set(map(repr, written))) != len(written):
        return []
    spellings: dict[str, list[str]] = {}
    for name, model in zip(written, models, strict=True):
        if isinstance(model, str):
            spellings.setdefault(model_identity(model), []).append(repr(name))
    return [
        Problem("models", "expected distinct models", f"one file named {_joined(names)}")
        for names in spellings.values()
        if len(names) > 1
    ]


def _joined(names: list[str]) -> str:
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _rules(
    parser: _Parser, policies: tuple[str | None, ...]
) -> tuple[tuple[tuple[str, str], ...], Path | None]:
    """The rules of the ``rules`` points, read now (`hetsim.partition.read_rules`), and the
    file they were read from: a rules file (next to the sweep file) or None for a list of
    ``{op, device}``. Given without that policy, or that policy without them, every such point
    would fail or the key would be ignored."""
    value = parser.data.get("rules")
    swept = "rules" in policies
    if value is None:
        if swept:
            expected = "expected a rules file or a list of {op, device} for policy 'rules'"
            parser.add("rules", expected + " (required with it)")
        return (), None
    if not swept:
        parser.add("rules", "expected policy 'rules' in policies (no other policy reads rules)")
    found = _local_file(value, parser.folder)
    try:
        rules = read_rules(found)
    except PartitionError as err:
        if isinstance(value, str):
            parser.problems.extend(_rules_file_problems(err))
        else:
            parser.problems.extend(err.problems)  # ``rules[i]...``: the key's own list
        return (), None
    return rules, Path(found) if isinstance(found, str) else None


def _rules_file_problems(err: PartitionError) -> list[Problem]:
    """The problems of the rules file the ``rules`` key names, as `hetsim.partition` says them,
    each with its file and line: ``rules: place.yaml:6: rules[1].device: ...``."""
    return [Problem("rules", p.message.removeprefix("rules: ")) for p in err.problems]


def _rule_device_problems(spec: SweepSpec, target: Target | None) -> list[Problem]:
    """A rule's device that `target`, one with the devices of every point, lacks (none without
    a target), as `hetsim.partition.load_rules` says it: in a rules file, with that file and the
    rule's line."""
    if "rules" not in spec.policies or target is None:
        return []
    listed = [{"op": op, "device": device} for op, device in spec.rules]
    source = spec.rules_file or listed
    try:  # a rules file read again, for the line of the rule
        load_rules(source, build_platform(target))
    except PartitionError as err:
        return _rule_problems(spec, err) + _renamed_problems(spec, target)
    return []


def _renamed_problems(spec: SweepSpec, target: Target) -> list[Problem]:
    """Where a rule's device is one the base target has and `target`, the first point's, has not,
    a problem at each varied name that renamed it or a level above it (``devices[gpu0].name:
    [g1]``): the rule's own problem says the platform, named as the base target is, lacks a
    device it has."""
    base, first = build_platform(spec.base_target()), build_platform(target)

    def has(platform: Platform, device: str) -> bool:
        return device in platform.processors or device in platform.levels

    named = dict.fromkeys(device for _, device in spec.rules)
    lost = [d for d in named if has(base, d) and not has(first, d)]
    problems = []
    for path in spec.varied:
        renamed = _renamed_device(path)
        if renamed is None:
            continue
        hit = [d for d in lost if d == renamed or d.startswith(f"{renamed}/")]
        if hit:
            kept = ", ".join(map(repr, hit))
            expected = (
                f"expected names that keep the devices the rules name ({kept}): rules are "
                "checked against the first point's platform"
            )
            problems.append(Problem(f"vary.{path}", expected))
    return problems


def _renamed_device(path: str) -> str | None:
    """The device whose name varied path `path` sets, by its path in the tree (``node0/gpu0``
    for ``devices[node0].devices[gpu0].name``, ``host`` for ``host.name``); None for a path
    that sets no name.

    >>> _renamed_device("devices[node0].devices[gpu0].name"), _renamed_device("host.name")
    ('node0/gpu0', 'host')
    >>> _renamed_device("devices[gpu0].link.bandwidth_gbps") is None
    True
    """
    keys = parse_path(path)
    if keys[-1] != "name":
        return None
    device = [key for before, key in itertools.pairwise(("", *keys[:-1])) if before == "devices"]
    device += ["host"] if keys[-2:] == ("host", "name") else []
    return "/".join(device) or None


def _rule_problems(spec: SweepSpec, err: PartitionError) -> list[Problem]:
    """`err`'s problems of the sweep's rules: led by the rules file and line when they came
    in one, else by the sweep's own ``rules[i]`` list."""
    return _rules_file_problems(err) if spec.rules_file is not None else list(err.problems)


def _case_problems(spec: SweepSpec, ops: Sequence[Op]) -> list[Problem]:
    """A rule in another case than every op of a model's (``relu`` for ``Relu``), as
    `hetsim.partition.check_case` says it: it failed every point as it ran, naming no file."""
    rules = [Rule(op, device, i) for i, (op, device) in enumerate(spec.rules)]
    listed = [{"op": op, "device": device} for op, device in spec.rules]
    try:
        check_case(rules, ops, spec.rules_file or listed)
    except PartitionError as err:
        return _rule_problems(spec, err)
    return []


def _axes(parser: _Parser, expand: str) -> tuple[Axis, ...]:
    axes, problems, expandable = read_axes(parser.data.get("vary", {}), expand)
    parser.problems.extend(problems)
    parser.expandable &= expandable
    return axes


def _dims(
    parser: _Parser,
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, tuple[int, ...]], ...]]:
    """The fixed dims (a size each) and the varied ones (a list or a range of sizes, as
    ``vary`` takes them: ``{seq: [8, 16]}``, ``{seq: {start: 8, stop: 64, step: 8}}``), each
    sorted by name."""
    dims = parser.data.get("dims", {})
    if not isinstance(dims, Mapping):
        parser.add("dims", "expected a mapping of dim name -> size (or a list of sizes)", dims)
        return (), ()
    fixed, varied = [], []
    for name, size in dims.items():
        where = f"dims.{name}"
        if isinstance(size, list | Mapping):
            found: list[Problem] = []
            sizes = read_values(found, where, size)
            parser.problems.extend(found)
            wrong = [s for s in sizes if not _is_size(s)]
            if wrong:
                parser.add(where, "expected integers >= 0", wrong[0])
            # sized all the same, if badly (as a bad fixed size is): one problem, not two
            varied.append((str(name), tuple(s if s in wrong else int(s) for s in sizes)))
        else:
            if not _is_size(size):
                parser.add(where, "expected an integer >= 0 (or a list of them)", size)
            fixed.append((str(name), size))  # sized all the same: one problem, not two
    return tuple(sorted(fixed)), tuple(sorted(varied))


def _is_size(value: object) -> bool:
    """An integer >= 0 (`is_count`; a range's ``num`` makes floats: an integral one counts)."""
    return is_count(int(value) if isinstance(value, float) and value.is_integer() else value)


def _name(parser: _Parser) -> str:
    """The label: a string, or a number YAML read as one (``name: 2024``); null, a list or a
    bool became a label such as 'None', silently."""
    name = parser.data.get("name", "sweep")
    if isinstance(name, str):
        return name
    if isinstance(name, int | float) and not isinstance(name, bool):
        return str(name)
    parser.add("name", "expected a string", name)
    return "sweep"


def _iterations(parser: _Parser) -> int:
    """1: `simulate` runs a model once (``hetsim compare`` runs it over iterations)."""
    value = parser.data.get("iterations", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value != 1:
        expected = "expected 1 (a point simulates its model once; hetsim compare runs iterations)"
        parser.add("iterations", expected, value)
    return 1


def _metric(parser: _Parser) -> str:
    metric = parser.data.get("metric", "makespan_us")
    problem = metric_problem(metric)
    if problem is not None:
        parser.problems.append(problem)
        return "makespan_us"
    return str(metric)


def _model_problems(spec: SweepSpec) -> list[Problem]:
    """Each model that does not load or has a symbolic input dim that the spec's dims do not
    size, each of those dims that no model has (a misspelt name leaves its model's dim
    unsized), and a rule in another case than a model's ops (`_case_problems`), each model
    looked at once, as it is loaded."""
    models = spec.models
    dims = (*(name for name, _ in spec.dims), *(name for name, _ in spec.varied_dims))
    problems = []
    symbols: dict[str, None] = {}  # of every model, in order of first appearance
    sized = set(dims)
    loaded = 0
    for i, (model, file) in enumerate(zip(models, spec.model_files, strict=True)):
        if not isinstance(model, str):
            continue  # reported by the parser as not a name
        try:
            graph = point_model(file)  # kept for the points this process runs
        except (HetsimError, OSError) as err:
            problems.append(Problem(f"models[{i}]", str(err)))
            continue
        loaded += 1
        if spec.rules:
            problems += _case_problems(spec, graph.ops)
        symbols |= dict.fromkeys(graph.symbols)
        unsized = [symbol for symbol in graph.symbols if symbol not in sized]
        if unsized:
            expected = f"expected a size in dims for each symbolic dim of {model!r}"
            got = f"none for {', '.join(map(repr, unsized))}"
            problems.append(Problem(f"models[{i}]", expected, got))
    if loaded == len(models):  # a model that did not load may have any dim
        problems += _unknown_dims(dims, tuple(symbols))
    return problems


def _unknown_dims(dims: tuple[str, ...], symbols: tuple[str, ...]) -> list[Problem]:
    expected = f"expected a symbolic dim of the models ({', '.join(symbols) or 'none'})"
    return [
        Problem(f"dims.{name}", expected, repr(name), closest(name, symbols))
        for name in dims
        if name not in symbols
    ]
