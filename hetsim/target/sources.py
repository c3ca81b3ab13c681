"""Reading config text: a JSON string, or a YAML, JSON or TOML file, into plain data.

Every reader error becomes a `TargetError` naming the file (or ``spec``) and what was expected.
What the data means (kinds, tags, overrides) is the business of `resolve` and `canonical`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from hetsim.errors import Problem, TargetError
from hetsim.located import load_json, safe_load, text_of, yaml_error_at

__all__ = ["SUFFIXES", "is_file_name", "load_file", "parse_json"]


def _yaml(text: str) -> Any:
    return safe_load(text)  # a key given twice is an error, not the last one kept


# suffix -> parser; each raises its library's error on bad input, translated in load_file.
SUFFIXES: dict[str, Callable[[str], Any]] = {
    ".yaml": _yaml,
    ".yml": _yaml,
    ".json": load_json,  # a key given twice is an error here too
    ".toml": tomllib.loads,
}
# ValueError covers JSON's and TOML's own errors, and what every reader's int() raises for an
# integer of more than 4,300 digits (and PyYAML's date() for a day like 2023-02-30)
PARSE_ERRORS = (yaml.YAMLError, ValueError, RecursionError)


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
        When the file is missing, a directory, has another suffix, or does not parse.
    """
    path = Path(path)
    if path.is_dir():
        raise TargetError([Problem(str(path), f"expected {what}", "a directory")])
    parser = SUFFIXES.get(path.suffix.lower())
    if parser is None:
        expected = "expected a file ending in " + ", ".join(SUFFIXES)
        raise TargetError([Problem(str(path), expected, repr(path.suffix))])
    text = text_of(path, what)  # missing, unreadable, not UTF-8: as every reader says it
    if isinstance(text, Problem):
        raise TargetError([text])
    try:
        return parser(text)
    except PARSE_ERRORS as err:
        where, got = yaml_error_at(path, err)  # YAML's: the file's line and PyYAML's words
        if got is None:  # JSON's, TOML's, or a YAML error without its words: the file, whole
            where, got = str(path), " ".join(str(err).split())
        raise TargetError([Problem(where, f"expected valid {path.suffix[1:]}", got)]) from err


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
