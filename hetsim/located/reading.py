"""Reading a config file's text as data: YAML, JSON and TOML, each strict where its library is
lax.

A key given twice in one mapping is an error in YAML (`safe_load`) and JSON (`load_json`) alike,
at the line of the second one; PyYAML and json alone keep the last one silently. YAML nested
deeper than Python recurses is a `yaml.YAMLError` too, for every reader of YAML (target, tag,
sweep and rules files), where PyYAML raised `RecursionError`. An integer too long for Python to
read is an error at its line (a `HugeIntegerError` in JSON and TOML, PyYAML's own in YAML), and
`text_of` reads a file's text or says why it could not. `compose_yaml` and `compose_json` give
the text's node tree, whose marks hold the lines `hetsim.located` finds a path's line in.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from hetsim.errors import Problem
from hetsim.located.paths import name_problem
from hetsim.located.tomlscan import STR_TAG, scan_toml

__all__ = [
    "LEADING_ZERO",
    "STR_TAG",
    "DuplicateKeyError",
    "HugeIntegerError",
    "compose_json",
    "compose_yaml",
    "huge_integer_error",
    "load_json",
    "load_toml",
    "safe_load",
    "text_of",
    "yaml_error_at",
    "yaml_problem",
]


def text_of(path: str | Path, what: str = "a text file") -> str | Problem:
    """The UTF-8 text of the file at `path`, or the `Problem` that says why it cannot be read
    (an empty path, missing, a directory, not UTF-8 text, unreadable), for the caller to raise
    as its error. Give it `path` as the user gave it: ``Path("")`` is the current folder.

    >>> print(text_of(Path("no-such-file.yaml"), "a rules file").message)
    no-such-file.yaml: expected a rules file, got no such file
    """
    bad_name = name_problem(path)
    if bad_name is not None:  # open() raises ValueError
        return Problem(repr(str(path)), f"expected {what}", bad_name)
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Problem(str(path), f"expected {what}", "no such file")
    except IsADirectoryError:
        return Problem(str(path), f"expected {what}", "a directory")
    except OSError as err:
        return Problem(str(path), f"expected {what}", repr(err.strerror or str(err)))
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0  # YAML skipped it,
    try:  # JSON and TOML refused it; newlines as text mode reads them (read_text did)
        return data[bom:].decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as err:  # at its byte in the file, the BOM counted
        at = bom + err.start
        return Problem(str(path), f"expected {what}", f"bytes that are not UTF-8 (at byte {at})")


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML
    keeps the last one silently: ``kind: npu`` then ``kind: cuda`` made a GPU)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _check_unique_keys(node, set())
        return super().construct_mapping(node, deep)

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expanded_size(node)
        return super().construct_document(node)


_MERGE = "tag:yaml.org,2002:merge"


def _check_unique_keys(node: yaml.MappingNode, checked: set[int]) -> None:
    """Raise for a key given twice in `node`, or in a mapping it merges (``<<: {...}``: PyYAML
    copies a merged mapping's keys in without constructing it, so its own duplicates went
    unseen); a key of the mapping itself may override a merged one, as YAML means it to."""
    if id(node) in checked:  # an alias merged twice, or into itself
        return
    checked.add(id(node))
    seen: set[tuple[str, str]] = set()
    for key, value in node.value:
        if key.tag == _MERGE:
            if (_MERGE, "<<") in seen:  # the last would win, as a key given twice does
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark,
                    "found the key '<<' twice", key.start_mark,
                )  # fmt: skip
            seen.add((_MERGE, "<<"))
            merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for item in merged:
                if isinstance(item, yaml.MappingNode):
                    _check_unique_keys(item, checked)
        elif isinstance(key, yaml.ScalarNode):
            if (key.tag, key.value) in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark,
                    f"found the key {key.value!r} twice", key.start_mark,
                )  # fmt: skip
            seen.add((key.tag, key.value))


_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
# YAML 1.1, which PyYAML reads, takes 010 for octal (8) and 1:30 for base 60 (90): a number the
# writer did not mean, silently (``cores: 010`` made an 8-core host). Here an int is decimal
# (0 alone, or no leading zero), hexadecimal or binary, and a float is decimal, so those two
# stay strings, which a schema refuses by name. Every other implicit type is PyYAML's.
LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")
"""An integer written with a leading zero (``010``): octal to YAML 1.1, a string here (the int
resolver below takes 0 alone or no leading zero); a schema's hint reads it as decimal."""
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(
    _INT,
    re.compile(r"^[-+]?(?:0|[1-9][0-9_]*|0b[0-1_]+|0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"),
)
_UniqueKeyLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


class HugeIntegerError(ValueError):
    """An integer of more digits than Python's int() reads (`sys.get_int_max_str_digits`), at
    `line` of the text (None where it was not found): json, tomllib and PyYAML each refused one
    with Python's own words (and its advice to call ``sys.set_int_max_str_digits``) and no line.
    It has the ``problem`` and ``problem_mark`` of PyYAML's errors, so `yaml_error_at` reads it
    as it reads theirs."""

    def __init__(self, line: int | None, digits: int) -> None:
        limit = sys.get_int_max_str_digits()
        self.problem = f"an integer of {digits} digits, more than Python reads ({limit})"
        self.problem_mark = None if line is None else yaml.Mark("", 0, line - 1, 0, None, None)
        self.line = line
        super().__init__(self.problem)


_DECIMAL = re.compile(r"[-+]?[0-9][0-9_]*")
"""A decimal integer as JSON and TOML write one: int() limits its digits (not a hex, octal or
binary one's)."""


def huge_integer_error(err: Exception, tree: yaml.Node | None) -> HugeIntegerError | None:
    """`err`, a reader's error, as a `HugeIntegerError` when it is int()'s refusal of an integer
    too long to read: the first value of the text's node `tree` (`compose_json`'s,
    `tomlscan.scan_toml`'s) that is such an integer, not a key, a string or a float (without a
    line where none is found); else None.

    >>> try:
    ...     int("9" * 5000)
    ... except ValueError as err:
    ...     long, huge = "1" * 5000, "9" * 4400
    ...     text = f'{{"a": "{long}",\\n "b": 0.{long},\\n "c": {huge}}}'
    ...     found = huge_integer_error(err, compose_json(text))
    >>> found.line, str(found)
    (3, 'an integer of 4400 digits, more than Python reads (4300)')
    """
    if not _is_too_long(err):
        return None
    limit = sys.get_int_max_str_digits()
    for node in _values(tree):
        if node.tag != STR_TAG and _DECIMAL.fullmatch(node.value):
            digits = sum(c.isdigit() for c in node.value)
            if digits > limit:
                return HugeIntegerError(node.start_mark.line + 1, digits)
    # none found: no tree (a key of 1024+ characters is more than YAML composes): int()'s count
    said = re.search(r"value has (\d+) digits", str(err))
    return HugeIntegerError(None, int(said.group(1))) if said else None


def _is_too_long(err: Exception) -> bool:
    """Whether `err` is int()'s refusal of more digits than it reads (a ValueError, by words)."""
    return isinstance(err, ValueError) and "integer string conversion" in str(err)


def _values(node: yaml.Node | None) -> Iterator[yaml.ScalarNode]:
    """The scalar values of `node`'s tree, in document order (keys left out)."""
    if isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            yield from _values(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _values(item)
    elif isinstance(node, yaml.ScalarNode):
        yield node


def load_toml(text: str) -> Any:
    """`tomllib.loads`; an integer too long for Python to read is a `HugeIntegerError` at its
    line, as `load_json` gives it."""
    try:
        return tomllib.loads(text)
    except ValueError as err:
        huge = huge_integer_error(err, scan_toml(text))
        if huge is None:
            raise
        raise huge from err


_NOT_READ = (ValueError, TypeError, IndexError, AttributeError)
"""What PyYAML's int() and date() constructors raise for a scalar they cannot read (``!!int
abc``, ``!!int ''``, ``!!timestamp foo``, ``2023-02-30``, 4,301 digits): none names its line."""


def _construct_int(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> Any:
    """An int, or an error at its line for a scalar that is none, or one too long to read."""
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except _NOT_READ as err:
        digits = sum(c.isdigit() for c in str(node.value))
        problem = (
            str(HugeIntegerError(node.start_mark.line + 1, digits))
            if _is_too_long(err)
            else f"{node.value!r}, not an integer"
        )
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from err


def _construct_timestamp(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> Any:
    """A date or time, or an error at its line for one that does not exist (2023-02-30)."""
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except _NOT_READ as err:
        why = f" ({err})" if isinstance(err, ValueError) else ""
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r}, not a date{why}", node.start_mark
        ) from err


_UniqueKeyLoader.add_constructor(_INT, _construct_int)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


MAX_YAML_NODES = 1_000_000
"""The most values a YAML file may hold with its aliases expanded. PyYAML builds an alias as a
second reference to one object, so a file of nine nested ten-fold aliases (a "billion laughs")
loads in a moment, but whatever then walks the data (a schema, a sweep's grid) walks 10^9
values: `hetsim targets show` of such a file ran for minutes. Hand-written files are far
smaller (the largest shipped target file holds a few hundred)."""


def _check_expanded_size(root: yaml.Node) -> None:
    """Refuse a node tree whose aliases expand to more than `MAX_YAML_NODES` values, or that
    holds an alias inside its own anchor (``ops: &a [*a]``, which no walk of the data would
    finish): a `yaml.YAMLError` marked at the node (`yaml_error_at` reads its line)."""
    sizes: dict[int, int] = {}  # id(node) -> its expanded size; an alias is the same node again
    open_nodes: set[int] = set()  # nodes whose children are being sized: an ancestor of the top
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        children = (
            [part for pair in node.value for part in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if children_done:
            open_nodes.discard(id(node))
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_YAML_NODES:
                problem = (
                    f"found {size:,} values here with aliases expanded (at most {MAX_YAML_NODES:,})"
                )
                raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                problem = "found an alias inside its own anchor (a value that holds itself)"
                raise yaml.constructor.ConstructorError(None, None, problem, child.start_mark)
            if id(child) not in sizes:
                stack.append((child, False))


def safe_load(text: str) -> Any:
    """`yaml.safe_load`, refusing a key given twice in one mapping: a `yaml.YAMLError` whose
    ``problem_mark`` is the second key, as PyYAML's own errors mark where they are; and YAML
    nested deeper than Python recurses: a `yaml.YAMLError` without a mark (PyYAML raised
    `RecursionError`, which readers of YAML errors let through as a traceback).

    Examples
    --------
    >>> safe_load("kind: npu\\nops: [Conv]\\n")
    {'kind': 'npu', 'ops': ['Conv']}
    >>> try:
    ...     safe_load("kind: npu\\nkind: cuda\\n")
    ... except yaml.YAMLError as err:
    ...     print(err.problem, "at line", err.problem_mark.line + 1)
    found the key 'kind' twice at line 2
    >>> try:
    ...     safe_load("[" * 5000 + "]" * 5000)
    ... except yaml.YAMLError as err:
    ...     print(err.problem, err.problem_mark)
    maximum recursion depth exceeded None
    """
    return _parse(yaml.load, text, _UniqueKeyLoader)  # a SafeLoader: no arbitrary objects


def _parse(parse: Callable[..., Any], text: str, loader: type[yaml.SafeLoader]) -> Any:
    """`parse` (`yaml.load` or `yaml.compose`) of `text`, with YAML nested deeper than Python
    recurses (PyYAML composes a node per level of recursion) as a `yaml.YAMLError` with no mark
    and the `RecursionError`'s words, which every reader reports as the file's YAML error."""
    try:
        return parse(text, Loader=loader)
    except RecursionError:  # its words as target files showed them before (docs/targets.md)
        raise yaml.composer.ComposerError(None, None, "maximum recursion depth exceeded") from None


class DuplicateKeyError(ValueError):
    """A key given twice in one JSON object, with the ``problem`` and ``problem_mark`` (its line,
    when found) that PyYAML's errors have, so `yaml_error_at` reads it as it reads theirs."""

    def __init__(self, key: str, mark: Any = None) -> None:
        self.problem = f"found the key {key!r} twice"
        self.problem_mark = mark
        super().__init__(self.problem)


def load_json(text: str) -> Any:
    """`json.loads`, refusing a key given twice in one object (json keeps the last one silently,
    as PyYAML did): a `DuplicateKeyError` marking the line of the second key; an integer too
    long for Python to read is a `HugeIntegerError` at its line.

    Examples
    --------
    >>> load_json('{"kind": "npu", "ops": ["Conv"]}')
    {'kind': 'npu', 'ops': ['Conv']}
    >>> try:
    ...     load_json('{"kind": "npu",\\n "kind": "cuda"}')
    ... except DuplicateKeyError as err:
    ...     print(err.problem, "at line", err.problem_mark.line + 1)
    found the key 'kind' twice at line 2
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except DuplicateKeyError:
        # json keeps no lines; JSON text is YAML's flow style, so its YAML nodes have them
        try:
            found = next(_keys_twice(compose_json(text)), None)
        except RecursionError:  # nested deeper than Python recurses: the key without its line
            found = None
        if found is None:
            raise
        raise DuplicateKeyError(*found) from None
    except ValueError as err:  # int()'s refusal of an integer of 4,300+ digits: at its line
        huge = huge_integer_error(err, compose_json(text))
        if huge is None:
            raise
        raise huge from err


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKeyError(key)
        seen.add(key)
    return dict(pairs)


def _keys_twice(node: Any) -> Iterator[tuple[str, Any]]:
    """Each key given twice in one mapping of `node`'s tree, with its mark, in document order."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    yield str(key.value), key.start_mark
                seen.add(key.value)
            yield from _keys_twice(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _keys_twice(item)


def yaml_error_at(path: Path, err: Exception) -> tuple[str, str | None]:
    """Where in file `path` a YAML parse error is (``file:line``, or the file when PyYAML gave no
    mark) and PyYAML's words for it (``None`` when it gave none): one form for every reader.

    >>> try:
    ...     safe_load("a: 1\\na: 2\\n")
    ... except yaml.YAMLError as err:
    ...     yaml_error_at(Path("soc.yaml"), err)
    ('soc.yaml:2', "found the key 'a' twice")
    """
    mark = getattr(err, "problem_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    return where, getattr(err, "problem", None)


def yaml_problem(path: Path, err: Exception) -> Problem:
    """A YAML file's parse error as the readers of sweep and rules files say it: ``file:line``
    (`yaml_error_at`), PyYAML's words or else the first line of its message (a NUL byte in a
    binary file: ``unacceptable character #x0000: ...``).

    >>> try:
    ...     safe_load("a: 1\\na: 2\\n")
    ... except yaml.YAMLError as err:
    ...     print(yaml_problem(Path("s.yaml"), err).message)
    s.yaml:2: expected YAML, got found the key 'a' twice
    """
    where, what = yaml_error_at(path, err)
    return Problem(where, "expected YAML", what or str(err).splitlines()[0])


def compose_yaml(text: str) -> yaml.Node | None:
    """The YAML node tree of `text` (None when it does not parse): read once per file, its
    scalars typed as `safe_load` types them (``010`` a string), for its lines only.

    PyYAML counts U+2028, U+2029 and U+0085 as line breaks, where an editor and ``grep -n``
    count newlines: in a string they had every later line reported one line down. Where the
    text holds one, each node's line is counted again, in newlines up to its start.
    """
    try:
        node = _parse(yaml.compose, text, _UniqueKeyLoader)
    except yaml.YAMLError:
        return None
    if node is not None and any(c in text for c in _UNICODE_BREAKS):
        _reline(node, text, set())
    return node


_UNICODE_BREAKS = ("\u2028", "\u2029", "\u0085")
"""Characters PyYAML takes for line breaks that no editor shows as one."""


def _reline(node: yaml.Node, text: str, seen: set[int]) -> None:
    """Set each mark's line below `node` to the newlines before it (aliases visited once)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    mark = node.start_mark
    mark.line = text.count("\n", 0, mark.index)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _reline(key, text, seen)
            _reline(value, text, seen)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reline(item, text, seen)


def compose_json(text: str) -> yaml.Node | None:
    """The YAML node tree of JSON `text`: JSON is YAML's flow style, but for tabs, which JSON
    has only as blanks (a tab in a string is written ``\\t``)."""
    return compose_yaml(text.replace("\t", " "))
