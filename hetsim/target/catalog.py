"""Registering tags and kinds, all or nothing: each new tag or kind is checked before it lands.

`add_tag_dir` reads a folder of tag files, resolves and checks every new tag against a staged copy
of the registry, and commits them only when all are valid; `register_tag` does the same for one
tag given as data. `register_kind` adds a kind from Python and `load_kinds` from a data file
(`kind_from_data` builds one). Reading files is `tags` and `sources`; what a valid tag is, is
`canonical`, and what a valid kind is, `kind_check`; the registries themselves are `kinds` and
`tags`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.located import locate
from hetsim.target.canonical import (
    as_written,
    canonicalize,
    canonicalize_config,
    locate_in_file,
)
from hetsim.target.kind_check import check_kind
from hetsim.target.kinds import DEFAULT_HOST, REGISTRIES, category_of, find_kind
from hetsim.target.resolve import Resolver
from hetsim.target.schema import CATEGORIES, Attr, Kind, closest, item_path, join_path
from hetsim.target.sources import SUFFIXES, load_file, nesting_problem
from hetsim.target.tags import (
    TAG_PATTERN,
    TAGS,
    Tag,
    TagRegistry,
    folder_path,
    read_tag_dir,
    valid_tag_name,
)
from hetsim.target.values import ATTR_TYPES, show_value

__all__ = [
    "add_tag_dir",
    "check_kind",
    "check_tag",
    "config_category",
    "kind_from_data",
    "list_tags",
    "load_kinds",
    "register_kind",
    "register_tag",
    "remove_tag_dir",
    "unregister_tag",
]


def check_tag(name: str, registry: TagRegistry) -> list[Problem]:
    """Problems with tag `name` in `registry`: it must resolve to a valid target or config.

    A tag read from a file has its problems led by the file and line, as for a target file
    (`locate_in_file`); one registered as data has paths rooted at ``tags[name]``.
    """
    resolver = Resolver(registry)
    node = resolver.expand(name, "", "target", (), 0) if name in registry else None
    if resolver.problems:
        return _retarget(resolver.problems, name, registry)
    category = _config_category(node)
    try:
        if category is not None:
            canonicalize_config(name, category, registry)
        else:
            canonicalize(name, registry)
    except TargetError as err:
        return _retarget(list(err.problems), name, registry)
    return []


def config_category(spec: object, registry: TagRegistry = TAGS) -> str | None:
    """``"executor"`` or ``"runtime"`` where `spec` is such a config, else None: a target, or
    nothing known (resolving says which). A tag or kind name by what it names (a tag may be a
    config, or build on one); a mapping by its ``kind``, or by the ``tag`` it extends when it
    has no kind.

    >>> config_category("tvm/relax-vm"), config_category("crt"), config_category("x86-h100")
    ('executor', 'runtime', None)
    >>> config_category({"tag": "tvm/relax-vm", "dispatch_us": 1.0})
    'executor'
    """
    name = spec.get("kind", spec.get("tag")) if isinstance(spec, Mapping) else spec
    if not isinstance(name, str):
        return None
    if name not in registry:
        return _config_category({"kind": name})
    resolver = Resolver(registry)
    return _config_category(resolver.expand(name, "", "target", (), 0))


def _config_category(node: object) -> str | None:
    category = category_of(node.get("kind")) if isinstance(node, dict) else None
    return category if category in ("executor", "runtime") else None


def _retarget(problems: list[Problem], name: str, registry: TagRegistry) -> list[Problem]:
    """Problems found inside tag `name`, where its source writes them: the registry's own
    (``tags: cycle ...``) and other tags' files' (led by theirs) stay as they are."""
    kept = {p for n in registry for p in registry.get(n).problems}
    own = [p for p in problems if p not in kept and p.path != "tags"]
    others = [p for p in problems if p not in own]
    found = registry.find(name)
    tag = registry.get(found) if found is not None else None
    if tag is not None and _is_file(tag.source):
        return locate_in_file(own, Path(tag.source), tag.data, registry) + others
    if tag is not None:  # a tag written as one device: its attributes at its top
        own = as_written(own, tag.data, registry)
    prefix = item_path("tags", name)
    return [
        Problem(f"{prefix}.{p.path}" if p.path else prefix, p.expected, p.got, p.hint) for p in own
    ] + others


def _is_file(source: str) -> bool:
    """Whether a tag's `source` is a file (else it was registered from Python)."""
    return Path(source).suffix.lower() in SUFFIXES


def _in_source(problem: Problem, tag: Tag) -> Problem:
    """`problem` about `tag`, led by its file when it came from one."""
    return locate([problem], Path(tag.source))[0] if _is_file(tag.source) else problem


def _name_problems(tags: list[Tag], registry: TagRegistry) -> tuple[list[Problem], set[str]]:
    """Every problem of the tags' names and files, and the names that are themselves wrong."""
    problems: list[Problem] = []
    misnamed: set[str] = set()
    seen: dict[str, Tag] = {}
    for tag in tags:
        problem = _name_problem(tag, seen, registry)
        if problem is not None:
            problems.append(_in_source(problem, tag))
            misnamed.add(tag.name)
        if isinstance(tag.name, str):  # else misnamed, and said so
            seen.setdefault(tag.name.lower(), tag)
        problems += tag.problems
    return problems, misnamed


def _name_problem(tag: Tag, seen: dict[str, Tag], registry: TagRegistry) -> Problem | None:
    """What is wrong with `tag`'s name, given the new tags `seen` before it (by folded name)."""
    where = item_path("tags", tag.name)
    if not valid_tag_name(tag.name):
        return Problem(where, f"expected a name matching {TAG_PATTERN!r}", repr(tag.name))
    if _is_file(tag.name):  # `Target("board.yaml")` reads a file: such a tag was unusable by name
        expected = f"expected a tag name without a target file suffix {sorted(SUFFIXES)}"
        return Problem(where, expected, repr(tag.name))
    # kind names are lowercase (`NAME_PATTERN`) and tag names match ignoring case: a tag 'VM'
    # was found for the kind 'vm' wherever a tag is looked up before that kind
    folded = tag.name.lower()
    if (kind := category_of(folded)) is not None:
        expected = "expected a tag name that is not a kind name"
        return Problem(where, expected, f"the {kind} kind {folded!r}")
    first = seen.get(folded)
    if first is not None:
        source = first.source
    elif (old := registry.find(tag.name)) is not None:
        source = registry.get(old).source
    else:
        return None
    return Problem(where, "expected a new tag name", f"one defined in {source}")


def _names_in(data: object) -> set[str]:
    """Every string value in a tag's data, folded to lowercase: the tags it can build on."""
    if isinstance(data, str):
        return {data.lower()}
    if isinstance(data, Mapping):
        data = list(data.values())
    if isinstance(data, list | tuple):
        return set().union(*(_names_in(item) for item in data))
    return set()


def _users(registry: TagRegistry, names: set[str]) -> list[str]:
    """The tags of `registry` outside `names` (folded) that build on one of them, directly or
    through one another: they name one (ignoring case) anywhere in their data."""
    named = {name: _names_in(registry.get(name).data) for name in registry}
    reached = set(names)
    users: list[str] = []
    grew = True
    while grew:  # tags build on tags: to a fixed point
        grew = False
        for name, mentions in named.items():
            if name.lower() not in reached and mentions & reached:
                reached.add(name.lower())
                users.append(name)
                grew = True
    return sorted(users)


def _broken_users(
    before: TagRegistry, after: TagRegistry, names: set[str], expected: str
) -> list[Problem]:
    """The problems that a change to the tags `names` (folded; changed or removed), from the
    registry `before` to `after`, makes in the registered tags built on them, each broken one
    led by a line naming it, its source and what it builds on. A tag broken before the change
    (by a kind replaced since) is left to say so when used."""
    problems: list[Problem] = []
    for user in _users(after, names):
        found = check_tag(user, after)
        if found and not check_tag(user, before):
            tag = after.get(user)
            uses = sorted(_names_in(tag.data) & names)
            got = f"tag {user} ({tag.source}), which builds on {', '.join(uses) or 'them'}"
            problems += [Problem("", expected, got), *found]
    return problems


def _register(
    tags: list[Tag],
    folder: Path | None,
    replacing: tuple[tuple[str, ...], TagRegistry] | None = None,
) -> tuple[str, ...]:
    """Check `tags` (and, where they replace a folder's tags read again, ``replacing``: those
    tags' names and the registry before, the registered tags built on them, which were valid
    then), then commit them, all or nothing."""
    problems, misnamed = _name_problems(tags, TAGS)
    # the values of every well-named tag are checked too, so that one error lists them all
    named = [tag for tag in tags if tag.name not in misnamed]
    staged = TAGS.staged(named)
    for tag in named:
        if not tag.problems:  # a file that did not read has said so
            problems += check_tag(tag.name, staged)
    if not problems and replacing is not None and replacing[0]:
        replaced, before = replacing
        expected = "expected the folder's tags read again to leave the tags built on them valid"
        problems += _broken_users(before, staged, {n.lower() for n in replaced}, expected)
    if problems:
        raise TargetError(list(dict.fromkeys(problems)))
    TAGS.commit(tags, folder)
    return tuple(t.name for t in tags)


def add_tag_dir(folder: str | Path) -> tuple[str, ...]:
    """Register every tag file in `folder` (its path below `folder` is its name).

    All or nothing: when any tag is invalid (bad file, bad value, unknown reference, cycle, a name
    that is taken or is a kind's), none is registered and one `TargetError` lists every problem.
    Adding a folder that is already registered reads it again; that too is refused where the
    tags read now would break a registered tag built on the folder's (one it no longer has, or
    whose value no longer fits).

    Returns
    -------
    tuple[str, ...]
        The names registered.
    """
    folder = folder_path(folder)
    tags = read_tag_dir(folder)
    previous = TAGS.folder_tags(folder)
    before = TAGS.staged(())  # a copy, to tell a tag this breaks from one broken already
    TAGS.remove_folder(folder)
    try:
        return _register(tags, folder, (tuple(tag.name for tag in previous), before))
    except TargetError:
        if previous:  # the tags it had, as checked then: the edited files were refused
            TAGS.commit(previous, folder)
        raise


def remove_tag_dir(folder: str | Path) -> tuple[str, ...]:
    """Forget the tags of a registered folder; return their names.

    Refused (a `TargetError`, nothing forgotten) while a registered tag of another folder, or
    one registered from Python, builds on one of them: remove that one first.
    """
    folder = folder_path(folder)
    names = tuple(tag.name for tag in TAGS.folder_tags(folder))
    _check_removal(names)
    return TAGS.remove_folder(folder)


def _check_removal(names: tuple[str, ...]) -> None:
    """Refuse to forget the tags `names` while another registered tag builds on them."""
    if not names:
        return
    expected = "expected no registered tag to build on the tags it forgets"
    problems = _broken_users(TAGS, TAGS.without(names), {n.lower() for n in names}, expected)
    if problems:
        raise TargetError(problems)


def register_tag(name: str, data: Mapping[str, Any], description: str = "") -> str:
    """Register one tag from Python data (checked first; a bad tag is not registered).

    Examples
    --------
    >>> register_tag("doc/fast-gpu", {"kind": "cuda", "launch_us": 3.0}, "a fast GPU")
    'doc/fast-gpu'
    >>> from hetsim.target.tree import Target
    >>> Target("doc/fast-gpu").devices[0].tag
    'doc/fast-gpu'
    >>> unregister_tag("doc/fast-gpu")
    """
    if not isinstance(name, str | int | float | bool | None):  # a list, looked up as a key
        raise TargetError([Problem("tags", "expected a tag name (a str)", show_value(name))])
    where = item_path("tags", name)
    if not isinstance(data, Mapping):
        expected = "expected a mapping (a tag holds one target or config)"
        raise TargetError([Problem(where, expected, show_value(data))])
    if not isinstance(description, str):
        got = show_value(description)
        raise TargetError([Problem(join_path(where, "description"), "expected a string", got)])
    too_deep = nesting_problem(data, where)
    if too_deep is not None:
        raise TargetError([too_deep])
    # a copy of its own: the caller's nested mappings, changed later, changed a checked tag
    _register([Tag(name, copy.deepcopy(dict(data)), " ".join(description.split()))], None)
    return name


def unregister_tag(name: str) -> None:
    """Forget a tag (its name matched ignoring case): one registered with `register_tag`, or a
    folder's, whose file is then read as a plain target file.

    Refused (a `TargetError`) while another registered tag builds on it: forget that one first.
    """
    found = TAGS.find(name)
    if found is not None:
        _check_removal((found,))
    TAGS.remove(name)


def list_tags() -> list[tuple[str, str]]:
    """Every registered tag with its one-line description, sorted by name."""
    return [(name, TAGS.get(name).description) for name in TAGS]


def load_kinds(path: str | Path) -> tuple[Kind, ...]:
    """Register the kinds in a data file (``kinds: [{name, category, base, attrs, ...}]``).

    All or nothing, like tags: each kind is checked, and none is registered if one is bad.
    """
    data = load_file(path, "a kinds file")
    entries = data.get("kinds") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise TargetError(
            [Problem(str(path), "expected a mapping with a list 'kinds'", type(entries).__name__)]
        )
    kinds: list[Kind] = []
    problems: list[Problem] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            expected = "expected a mapping (a kind definition)"
            problems.append(Problem(item_path("kinds", i), expected, show_value(entry)))
            continue
        if not isinstance(entry.get("name"), str):
            where = join_path(item_path("kinds", i), "name")
            problems.append(Problem(where, "expected a string", show_value(entry.get("name"))))
            continue
        try:
            kind = kind_from_data(entry, "kinds")
        except TargetError as err:
            problems += err.problems
            continue
        problems += check_kind(kind) + _tag_name_problems(kind)
        kinds.append(kind)
    if problems:
        raise TargetError(problems)
    return tuple(register_kind(k) for k in kinds)


def register_kind(kind: Kind, *, replace: bool = False) -> Kind:
    """Add `kind` to its registry after checking it; a bad kind is never registered.

    Raises
    ------
    TargetError
        When the name is taken (unless `replace`), malformed, or a default fails its own check.
    """
    problems = check_kind(kind, replace=replace) + _tag_name_problems(kind)
    if problems:
        raise TargetError(problems)
    REGISTRIES[kind.category][kind.name] = kind
    TAGS.changed()  # a name resolved before may resolve to this kind now
    return kind


def _tag_name_problems(kind: Kind) -> list[Problem]:
    """A kind named as a registered tag would hide the tag (names are unique across both)."""
    if not isinstance(kind, Kind) or kind.name not in TAGS:  # not a Kind: check_kind says so
        return []
    return [Problem(item_path("kinds", kind.name), "expected a kind name that is not a tag name",
                    "a tag")]  # fmt: skip


def _attr_from_data(name: str, data: object, base: Attr | None, path: str) -> Attr:
    if not isinstance(data, Mapping):
        expected = "expected a mapping (an attribute definition)"
        raise TargetError([Problem(path, expected, show_value(data))])
    known = {
        "type",
        "doc",
        "default",
        "minimum",
        "maximum",
        "exclusive_minimum",
        "pattern",
        "choices",
        "items",
    }
    unknown = [k for k in data if k not in known]
    if unknown:
        raise TargetError(
            [
                Problem(join_path(path, k), "unknown attribute", hint=closest(k, known))
                for k in unknown
            ]
        )
    values = {k: _as_tuple(v) if k == "choices" else v for k, v in data.items()}
    if base is not None:
        fields = {f: getattr(base, f) for f in known if f != "items"} | values
        return Attr(**{**fields, "name": name, "items": base.items, "fields": base.fields})
    kind = data.get("type")
    if kind not in (*ATTR_TYPES, "list"):
        choices = ", ".join([*ATTR_TYPES, "list"])
        raise TargetError(
            [Problem(join_path(path, "type"), f"expected one of {choices}", repr(kind))]
        )
    items = None
    if kind == "list":
        items = _attr_from_data(
            "item", data.get("items", {"type": "str"}), None, join_path(path, "items")
        )
    args = {k: v for k, v in values.items() if k != "items"}
    return Attr(name=name, items=items, **{"doc": "", **args})


def _as_tuple(value: Any) -> Any:
    """A list read from a file as the tuple a `Kind` holds; anything else as it is, for
    `check_kind` to name (``tuple("accel")`` would split a string into letters)."""
    return tuple(value) if isinstance(value, list | tuple) else value


def kind_from_data(data: Mapping[str, Any], path: str = "kinds") -> Kind:
    """Build a `Kind` from data (a mapping read from YAML/TOML/JSON); ``base`` extends a kind.

    The values are checked by `check_kind`, except what building needs: a known ``category``
    and ``base``, and ``attrs`` a mapping of attribute definitions.

    Examples
    --------
    >>> dsp = kind_from_data({"name": "dsp", "base": "npu", "keys": ["accel", "dsp"],
    ...                       "attrs": {"freq_ghz": {"default": 0.8}}})
    >>> dsp.attr("freq_ghz").default, dsp.attr("cores").default, dsp.keys
    (0.8, 1, ('accel', 'dsp'))
    """
    name = data.get("name")
    where = item_path(path, name)
    known = {
        "name",
        "category",
        "doc",
        "base",
        "keys",
        "can_host",
        "can_capture",
        "executors",
        "default_host",
        "attrs",
    }
    unknown = [k for k in data if k not in known]
    if unknown:
        raise TargetError(
            [
                Problem(join_path(where, k), "unknown attribute", hint=closest(k, known))
                for k in unknown
            ]
        )
    if not isinstance(name, str):
        raise TargetError([Problem(join_path(where, "name"), "expected a string", repr(name))])
    category = data.get("category", "target")
    if category not in CATEGORIES:
        expected = "expected one of " + ", ".join(CATEGORIES)
        raise TargetError([Problem(join_path(where, "category"), expected, repr(category))])
    base = find_kind(category, data["base"]) if "base" in data else None
    if "base" in data and base is None:
        raise TargetError(
            [
                Problem(
                    join_path(where, "base"),
                    f"expected a registered {category} kind",
                    repr(data["base"]),
                )
            ]
        )
    specs = data.get("attrs", {})
    if not isinstance(specs, Mapping):
        expected = "expected a mapping of attribute names to definitions"
        raise TargetError([Problem(join_path(where, "attrs"), expected, show_value(specs))])
    attrs = {a.name: a for a in (base.attrs if base else ())}
    for attr_name, spec in specs.items():
        attrs[attr_name] = _attr_from_data(
            attr_name, spec, attrs.get(attr_name), join_path(join_path(where, "attrs"), attr_name)
        )
    return Kind(
        name=name,
        category=category,
        doc=data.get("doc", base.doc if base else ""),
        attrs=tuple(attrs.values()),
        keys=_as_tuple(data.get("keys", base.keys if base else ())),
        can_host=data.get("can_host", base.can_host if base else False),
        can_capture=data.get("can_capture", base.can_capture if base else False),
        executors=_as_tuple(data.get("executors", base.executors if base else ())),
        default_host=data.get("default_host", base.default_host if base else DEFAULT_HOST),
        rules=base.rules if base else (),
    )
