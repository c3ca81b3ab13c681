"""The ``rules`` policy: user rules ``{op: <op type or glob over op names>, device: <path>}``.

Owns reading rules (a list, or a YAML file holding a list or ``{rules: [...]}``), checking them
against the platform (a device that does not exist is an error naming it, with a did-you-mean)
and applying them: the first rule whose ``op`` equals the op's type or matches its name as a
glob (``fnmatch``, case-sensitive) wins. ``device`` is a processor path (``vdevice0/npu``,
``host``) or a nested level path (``vdevice0``); at each level the op goes to the choice on the
way to that device, so the recursion reaches it. An op no rule matches is placed by
``capability``. A rule that sends an op where it cannot run (an op type missing from the
device's ``ops``, a dynamic op to a static graph executor) is an error, never a silent fallback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NoReturn

import yaml

from hetsim.errors import PartitionError, Problem, close_name
from hetsim.ir import Op, op_label
from hetsim.located import got_as_read, line_of, safe_load, text_of, yaml_problem
from hetsim.partition.context import LevelContext, index_towards, path_refusals
from hetsim.platform import Platform
from hetsim.target.schema import closest, join_path

__all__ = [
    "Rule",
    "check_case",
    "folded_rule_notes",
    "glob_escaped",
    "load_rules",
    "place_by_rules",
    "read_rules",
    "ruled_ops",
]

RULE_KEYS = ("op", "device")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: ops whose type is `op` or whose name matches the glob `op` go to `device`;
    `file`: the rules file it was read from, whose line an error about it names.

    Examples
    --------
    >>> rule = Rule("conv*", "vdevice0/npu", 0)
    >>> rule, rule.matches(Op("Conv", "conv1", ("x",), ("y",)))
    (<Rule rules[0] conv* -> vdevice0/npu>, True)
    """

    op: str
    device: str
    index: int
    file: Path | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"<Rule rules[{self.index}] {self.op} -> {self.device}>"

    def matches(self, op: Op) -> bool:
        """Whether the rule applies to `op` (its type, or its name as a glob)."""
        return op.type == self.op or fnmatchcase(op.name, self.op)


def _read(rules: str | Path) -> Any:
    path = Path(rules)
    text = text_of(rules, "a YAML file or a list of rules")  # as given: "" is no folder
    if isinstance(text, Problem):
        raise PartitionError([replace(text, path="rules", got=f"{str(rules)!r} ({text.got})")])
    try:
        loaded = safe_load(text)
    except yaml.YAMLError as err:  # as a sweep file's
        raise PartitionError([yaml_problem(path, err)]) from err
    return loaded


def _items(loaded: Any, *, from_file: bool) -> Any:
    """The list of rules in `loaded`: itself, or a file's ``rules:`` key (its only key)."""
    if from_file and isinstance(loaded, Mapping) and loaded:
        for key in loaded:
            if key != "rules":
                close = difflib.get_close_matches(str(key), ["rules"], n=1)
                expected = "expected only the key 'rules' (or a list of rules) in a rules file"
                raise PartitionError([Problem(str(key), expected, None, *close)])
        loaded = loaded["rules"]
    if not isinstance(loaded, Sequence) or isinstance(loaded, str | bytes):
        raise PartitionError(f"rules: expected a list of rules, got {loaded!r}")
    return loaded


def _shape(index: int, item: Any) -> tuple[str, str] | list[Problem]:
    """Rule `index`'s ``(op, device)``, or its problems: each unknown key's (with the closest
    known one), each missing key's and each key's value's, as a sweep file's keys are told."""
    where = f"rules[{index}]"
    if not isinstance(item, Mapping):
        expected = "expected a mapping with keys 'op' and 'device'"
        return [Problem(where, expected, repr(item))]
    problems = [
        Problem(join_path(where, key), "unknown key", hint=closest(key, RULE_KEYS))
        for key in item
        if key not in RULE_KEYS
    ]
    for key in RULE_KEYS:
        value = item.get(key)
        if key not in item:
            problems.append(Problem(f"{where}.{key}", "expected a value (required)"))
        elif not isinstance(value, str) or not value:
            problems.append(Problem(f"{where}.{key}", "expected a non-empty string", repr(value)))
    return problems or (item["op"], item["device"])


def _device_problem(rule: Rule, known: Sequence[str], name: str) -> Problem | None:
    """The problem of `rule`'s device when it is none of `known` (platform `name`'s)."""
    if rule.device in known:
        return None
    # paths are matched exactly: 'VDEVICE0' is 'vdevice0' in another case
    expected = f"expected a processor or level of platform {name}"
    hint = close_name(rule.device, known)
    return Problem(f"rules[{rule.index}].device", expected, repr(rule.device), hint)


def _refuse(
    problems: Sequence[Problem], rules: Sequence[Mapping[str, Any]] | str | Path
) -> NoReturn:
    """Raise every problem of `rules`, each with its file and line when they came in a file."""
    if isinstance(rules, str | Path):
        raise PartitionError([_located_problem(p, Path(rules)) for p in problems])
    raise PartitionError(list(problems))


def read_rules(rules: Sequence[Mapping[str, Any]] | str | Path) -> tuple[tuple[str, str], ...]:
    """The ``(op, device)`` pairs of `rules` (a list of ``{op, device}`` mappings or a YAML file
    path), checked in form but not against a platform (`load_rules` does that).

    Raises
    ------
    PartitionError
        A missing or unreadable file, or a malformed rule (a file's rule with its line).

    Examples
    --------
    >>> read_rules([{"op": "Conv", "device": "vdevice0/npu"}])
    (('Conv', 'vdevice0/npu'),)
    >>> read_rules([{"op": "Conv", "devices": "host"}])  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    hetsim.errors.PartitionError: rules[0].devices: unknown key (did you mean 'device'?)
    rules[0].device: expected a value (required)
    """
    return tuple((rule.op, rule.device) for rule in _checked(rules, None))


def load_rules(
    rules: Sequence[Mapping[str, Any]] | str | Path,
    platform: Platform,
    ops: Sequence[Op] | None = None,
) -> tuple[Rule, ...]:
    """Read and check `rules` (a list of ``{op, device}`` mappings or a YAML file path): their
    form (`read_rules`), that every device is one of `platform`'s and, given the model's `ops`,
    that no rule matches them only in another case (`check_case`).

    Raises
    ------
    PartitionError
        A missing file, a malformed rule, a device the platform does not have, or an ``op`` in
        another case than the model's: every rule's problems at once, in rule order.

    Examples
    --------
    >>> from hetsim.platform import build_platform
    >>> from hetsim.target import Target
    >>> soc = build_platform(Target("arm-riscv-soc"))
    >>> load_rules([{"op": "Conv", "device": "vdevice0/npu"}], soc)
    (<Rule rules[0] Conv -> vdevice0/npu>,)
    >>> load_rules([{"op": "Conv", "device": "vdevice0/nup"}], soc)
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    hetsim.errors.PartitionError: rules[0].device: expected a processor or level of platform
    arm-riscv-soc, got 'vdevice0/nup' (did you mean 'vdevice0/npu'?)
    """
    return _checked(rules, platform, ops)


def _checked(
    rules: Sequence[Mapping[str, Any]] | str | Path,
    platform: Platform | None,
    ops: Sequence[Op] | None = None,
) -> tuple[Rule, ...]:
    """The rules of `rules`, each checked in form and, given a `platform`, against its devices
    and, given `ops`, for its case; every problem is raised at once, in rule order, as a target
    or sweep file's are (the first alone had hidden the rest: a device's, the case's)."""
    file = Path(rules) if isinstance(rules, str | Path) else None
    loaded = _read(rules) if isinstance(rules, str | Path) else rules
    try:
        items = _items(loaded, from_file=file is not None)
    except PartitionError as err:
        _refuse(err.problems, rules)
    known = [] if platform is None else [*platform.processors, *(p for p in platform.levels if p)]
    found: list[Rule] = []
    problems: list[Problem] = []
    for index, item in enumerate(items):
        shaped = _shape(index, item)
        if isinstance(shaped, list):
            problems += shaped
            continue
        rule = Rule(*shaped, index, file)
        found.append(rule)
        if ops is not None and (case := _case_problem(rule, ops)) is not None:
            problems.append(case)
        if platform is not None and (missing := _device_problem(rule, known, platform.name)):
            problems.append(missing)
    if problems:
        _refuse(problems, rules)
    return tuple(found)


def ruled_ops(rules: Sequence[Rule], ops: Sequence[Op]) -> frozenset[str]:
    """The names of the ops among `ops` that one of `rules` (`load_rules`') matches (the rest
    are placed by capability): what an idle device's note says a rule, not an earlier choice,
    took.

    >>> ops = [Op("Relu", "r", ("x",), ("y",)), Op("Neg", "n", ("y",), ("z",))]
    >>> sorted(ruled_ops([Rule("Relu", "host", 0)], ops))
    ['r']
    """
    return frozenset(op.name for op in ops if any(rule.matches(op) for rule in rules))


def folded_rule_notes(
    rules: Sequence[Rule], ops: Sequence[Op], folded: Collection[str]
) -> tuple[str, ...]:
    """A note for each rule that matches ops of `ops` but only ones `folded` at load time (the
    root host computes them from constants before the run): the rule cannot place them, which
    went without a word. A rule that matches nothing stays silent (one file may serve several
    models), as `check_case` says.

    >>> ops = [Op("Relu", "w_relu", ("w",), ("v",)), Op("Add", "a", ("x", "v"), ("y",))]
    >>> (note,) = folded_rule_notes([Rule("Relu", "gpu0", 0)], ops, {"w_relu"})
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    rules[0] (Relu -> gpu0) matches only ops folded at load time, which the root host computes
    from constants before the run: w_relu
    """
    if not folded:
        return ()
    notes = []
    for rule in rules:
        matched = [op.name for op in ops if rule.matches(op)]
        if matched and all(name in folded for name in matched):
            shown = ", ".join(matched[:3]) + (
                f" and {len(matched) - 3} more" if len(matched) > 3 else ""
            )
            notes.append(
                f"rules[{rule.index}] ({rule.op} -> {rule.device}) matches only ops folded at "
                f"load time, which the root host computes from constants before the run: {shown}"
            )
    return tuple(notes)


def check_case(
    rules: Sequence[Rule], ops: Sequence[Op], source: Sequence[Mapping[str, Any]] | str | Path
) -> None:
    """Raise for a rule that matches no op but would if case did not matter (``gemm`` for the
    type ``Gemm``): matching is case-sensitive, and such a rule would leave its ops to
    ``capability``, silently. A rule that matches nothing otherwise stays allowed (one rules
    file may serve several models). `source`: the rules as given (a file adds its line).

    Examples
    --------
    >>> gemm = Op("Gemm", "fc1", ("x", "w"), ("y",))
    >>> check_case([Rule("gemm", "host", 0)], [gemm], [{"op": "gemm", "device": "host"}])
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    hetsim.errors.PartitionError: rules[0].op: expected an op type or a glob over op names, got
    'gemm', which matches no op; rules match case-sensitively (did you mean 'Gemm'?)
    """
    problems = [p for p in (_case_problem(rule, ops) for rule in rules) if p is not None]
    if problems:  # every one, as `load_rules` gives its own
        _refuse(problems, source)


def glob_escaped(name: str) -> str:
    """A glob that matches op name `name` alone: each ``*``, ``?``, ``[`` and ``]`` in a class
    of its own (docs/partition.md: ``blk[[]1]`` for the op ``blk[1]``).

    >>> glob_escaped("Blk[1]*")
    'Blk[[]1[]][*]'
    >>> glob = glob_escaped("Blk[1]*")
    >>> fnmatchcase("Blk[1]*", glob), fnmatchcase("Blk1", glob)
    (True, False)
    """
    return re.sub(r"([*?\[\]])", r"[\1]", name)


def _case_problem(rule: Rule, ops: Sequence[Op]) -> Problem | None:
    """The problem of `rule` when it matches none of `ops` but would in another case."""
    if any(rule.matches(op) for op in ops):
        return None
    lowered = rule.op.lower()
    close = next((op.type for op in ops if op.type.lower() == lowered), None)
    named = [op.name for op in ops if fnmatchcase(op.name.lower(), lowered)]
    if close is None and named:
        # the glob in lower case where it matches every op it would in any case (``CONV*``:
        # ``conv*``); else one of them, escaped (the hint had named one op for a glob of many)
        every = all(fnmatchcase(name, lowered) for name in named)
        close = lowered if every else glob_escaped(named[0])
    if close is None:
        return None
    return Problem(
        f"rules[{rule.index}].op",
        "expected an op type or a glob over op names",
        f"{rule.op!r}, which matches no op; rules match case-sensitively",
        close,
    )


def _located(message: str, file: Path, where: str | None = None) -> str:
    """`message` led by the rules file and the line of `where` in it (by default the message's
    own path, ``rules[i]...``)."""
    where = where or message.partition(": ")[0]
    text = file.read_text()
    # the rules are the file's list, or its `rules:` key's
    line = line_of(text, where) or line_of(text, where.removeprefix("rules"))
    return f"{file}:{line}: {message}" if line is not None else f"{file}: {message}"


def _located_problem(problem: Problem, file: Path) -> Problem:
    """`problem` with the rules file and its line before its path (`_located`), and why its
    value was read as a boolean where the file writes an unquoted yes, no, on or off."""
    text = file.read_text()
    got = problem.got
    for where in (problem.path, problem.path.removeprefix("rules")):  # as `_located` finds it
        got = got_as_read(text, where, got)
    return Problem("", _located(replace(problem, got=got).message, file))


def _choice_towards(context: LevelContext, device: str) -> str | None:
    """The level's choice on the way to `device`, or None when it lies outside the level."""
    choices = context.choices
    index = index_towards(choices, device)
    return None if index is None else choices[index]


def _rule_refusals(context: LevelContext, device: str, op: Op) -> list[tuple[str, str]]:
    """Why `op` cannot go where a rule names, `device`: a processor, or a nested level, which
    places what it is given by capability, its host included (a Softmax sent to ``vdevice0``
    runs on ``vdevice0/host`` when the NPU lacks it); empty when it can."""
    platform = context.platform
    is_dynamic, dtypes = op.name in context.dynamic, context.dtypes_of(op)
    refused = path_refusals(platform, device, op, is_dynamic, dtypes)
    level = platform.levels.get(device)
    if refused and level is not None:
        by_host = path_refusals(platform, level.host, op, is_dynamic, dtypes)
        refused = list(dict.fromkeys(refused + by_host)) if by_host else []
    return refused


def place_by_rules(context: LevelContext) -> dict[str, str]:
    """Op name -> the choice the first matching rule leads to; capability's for unmatched ops.

    Raises
    ------
    PartitionError
        A rule sends an op where it cannot run; an unmatched op that no device can run.
    """
    placed = {}
    for op in context.ops:
        rule = next((r for r in context.rules if r.matches(op)), None)
        choice = _choice_towards(context, rule.device) if rule else None
        if rule is None or choice is None:
            placed[op.name] = context.candidates(op)[0]
            continue
        refused = _rule_refusals(context, rule.device, op)
        if refused:
            reasons = ", ".join(f"{path} ({reason})" for path, reason in refused)
            message = (
                f"{op_label(op)}: rules[{rule.index}] places it on {rule.device}, "
                f"which cannot run it; {reasons}"
            )
            # a rule from a file is named by its line there, as its other problems are
            where = f"rules[{rule.index}]"
            raise PartitionError(
                message if rule.file is None else _located(message, rule.file, where)
            )
        placed[op.name] = choice
    return placed
