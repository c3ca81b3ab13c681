"""Reading config text: a JSON string, or a YAML, JSON or TOML file, into plain data.

Every reader error becomes a `TargetError` naming the file (or ``spec``) and what was expected.
Data that nests lists and mappings deeper than `MAX_NESTING` is refused here, from a file, and by
`nesting_problem` wherever data comes from Python. What the data means (kinds, tags, overrides)
is the business of `resolve` and `canonical`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from hetsim.errors import Problem, TargetError
from hetsim.located import (
    load_json,
    load_toml,
    locate,
    safe_load,
    text_of,
    yaml_error_at,
)
from hetsim.located.paths import name_problem
from hetsim.target.schema import item_path, join_path

__all__ = [
    "MAX_NESTING",
    "SUFFIXES",
    "is_dir",
    "is_file",
    "is_file_name",
    "load_file",
    "nesting_problem",
    "parse_json",
]


def _yaml(text: str) -> Any:
    return safe_load(text)  # a key given twice is an error, not the last one kept


# suffix -> parser; each raises its library's error on bad input, translated in load_file.
SUFFIXES: dict[str, Callable[[str], Any]] = {
    ".yaml": _yaml,
    ".yml": _yaml,
    ".json": load_json,  # a key given twice is an error here too
    ".toml": load_toml,
}
# ValueError covers JSON's and TOML's own errors (an integer too long for int(): a
# HugeIntegerError at its line, as YAML's is)
PARSE_ERRORS = (yaml.YAMLError, ValueError, RecursionError)


MAX_NESTING = 100
"""The most lists and mappings a spec, a tag or a set of changes may nest: a tree of the most
nested levels (`hetsim.target.resolve.MAX_DEPTH`) nests about 40; Python's recursion limit
(1000 frames, of which copying and merging a value take a few per level) is far deeper."""


def nesting_problem(data: object, path: str = "") -> Problem | None:
    """The problem with `data` when its lists and mappings nest deeper than `MAX_NESTING`,
    found without recursing: what resolving and merging it would do past Python's limit.

    >>> deep = "cuda"
    >>> for _ in range(101):
    ...     deep = {"a": deep}
    >>> nesting_problem({"kind": "cuda"}) is None, nesting_problem(deep).expected
    (True, 'expected lists and mappings nested at most 100 deep')
    """
    # each value with its depth and its trail of keys, (key, parent's trail): the path is
    # made only for the value that is too deep
    stack: list[tuple[object, int, tuple[Any, ...]]] = [(data, 0, ())]
    while stack:
        value, depth, trail = stack.pop()
        if isinstance(value, Mapping):
            items: Any = value.items()
        elif isinstance(value, list | tuple):
            items = enumerate(value)
        else:
            continue
        if depth >= MAX_NESTING:
            expected = f"expected lists and mappings nested at most {MAX_NESTING} deep"
            return Problem(_trail_path(trail, path), expected, "deeper")
        is_list = not isinstance(value, Mapping)
        stack += [
            (v, depth + 1, ((is_list, k), trail))
            for k, v in items
            if v.__class__ not in _ATOMS  # most values: not pushed (an op list has hundreds)
        ]
    return None


_ATOMS = frozenset({str, int, float, bool, type(None)})


def _trail_path(trail: tuple[Any, ...], path: str) -> str:
    keys = []
    while trail:
        keys.append(trail[0])
        trail = trail[1]
    for is_list, key in reversed(keys):
        path = item_path(path, key) if is_list else join_path(path, key)
    return path


def is_dir(path: Path) -> bool:
    """Whether `path` is a directory; False for a name the system refuses (too long: pathlib
    raises OSError for that, where it answers False for one that does not exist).

    >>> is_dir(Path(".")), is_dir(Path("x" * 5000))
    (True, False)
    """
    try:
        return path.is_dir()
    except OSError:
        return False


def is_file(path: Path) -> bool:
    """Whether `path` is a regular file; False for a name the system refuses, as `is_dir`.

    >>> is_file(Path("x" * 5000 + ".txt"))
    False
    """
    try:
        return path.is_file()
    except OSError:
        return False


def is_file_name(text: str) -> bool:
    """Whether `text` names a config file by its suffix.

    >>> is_file_name("soc.yaml"), is_file_name("arm/cortex-a72"), is_file_name("a.TOML")
    (True, False, True)
    """
    return Path(text).suffix.lower() in SUFFIXES


def load_file(path: str | Path, what: str = "a target file") -> Any:
    """The data in a YAML, JSON or TOML file (`what` says what the file should be).

    Raises
    ------
    TargetError
        When the file is missing, a directory, has another suffix, does not parse, or nests
        deeper than `MAX_NESTING`.
    """
    if not isinstance(path, str | os.PathLike):
        raise TargetError([Problem(repr(path), f"expected a path to {what} (a str or a Path)",
                                   f"a {type(path).__name__}")])  # fmt: skip
    path = Path(path)
    bad_name = name_problem(path)  # no file is named so; open() raises ValueError
    if bad_name is not None:
        raise TargetError([Problem(repr(str(path)), f"expected {what}", bad_name)])
    if is_dir(path):
        raise TargetError([Problem(str(path), f"expected {what}", "a directory")])
    parser = SUFFIXES.get(path.suffix.lower())
    if parser is None:
        expected = "expected a file ending in " + ", ".join(SUFFIXES)
        raise TargetError([Problem(str(path), expected, repr(path.suffix))])
    text = text_of(path, what)  # missing, unreadable, not UTF-8: as every reader says it
    if isinstance(text, Problem):
        raise TargetError([text])
    try:
        data = parser(text)
    except PARSE_ERRORS as err:
        where, got = yaml_error_at(path, err)  # YAML's: the file's line and PyYAML's words
        if got is None:  # JSON's, TOML's, or a YAML error without its words: the file, whole
            where, got = str(path), " ".join(str(err).split())
        raise TargetError([Problem(where, f"expected valid {path.suffix[1:]}", got)]) from err
    too_deep = nesting_problem(data)
    if too_deep is not None:  # led by the file alone: finding the line recurses as deep
        raise TargetError(locate([too_deep], path, text=""))
    return data


def parse_json(text: str) -> Any:
    """The data in a JSON string given as a spec.

    >>> parse_json('{"kind": "cuda"}')
    {'kind': 'cuda'}
    >>> parse_json('{"kind": "npu", "kind": "cuda"}')
    Traceback (most recent call last):
    ...
    hetsim.errors.TargetError: spec: expected valid JSON, got found the key 'kind' twice
    """
    try:
        return load_json(text)
    except (ValueError, RecursionError) as err:  # ValueError: an int of over 4,300 digits too
        raise TargetError([Problem("spec", "expected valid JSON", str(err))]) from err
