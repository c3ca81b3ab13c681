"""Where in a config file a problem is: the line of the path an error names.

Target and sweep errors name what is wrong by its path in the data (``host.kind``,
``devices[gpu0].link.bandwidth_gbps``, ``vary.executor.dispatch_us``). For data read from a YAML,
JSON or TOML file, `locate` puts the file and the line in front of that path (``soc.yaml:4:
host.kind: unknown kind 'llvm'``), so a user goes to the line. A path is followed key by key
through the file's YAML nodes (TOML text is scanned into such nodes, since tomllib keeps no lines):
a key may itself hold dots (a sweep's override paths), ``[name]`` picks a mapping's key,
a list's item by index, the list item whose ``name`` it is, or the unnamed item ``dev<index>``
names; a path that ends inside a dotted key (a sweep's unknown device ``vary.devices[npu1]``, of the
key ``devices[npu1].ops``) is that key's line; a single-device target's ``devices[dev0]`` is the
file. The line is that of the deepest part of the path the file holds, since a problem about
something missing (an attribute a tag brings, a required key) belongs to the mapping that lacks it;
a path the file does not hold at all (it came from a tag's own file) gets the file alone.

Reading the file's text as data (YAML, JSON, TOML; a key given twice refused) is
`hetsim.located.reading`'s; its readers (`safe_load`, `load_json`, `load_toml`, `text_of`, the
YAML error's forms) are exported here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from hetsim.errors import Problem
from hetsim.located.reading import (
    LEADING_ZERO,
    STR_TAG,
    DuplicateKeyError,
    HugeIntegerError,
    compose_json,
    compose_yaml,
    huge_integer_error,
    load_json,
    load_toml,
    safe_load,
    text_of,
    yaml_error_at,
    yaml_problem,
)
from hetsim.located.tomlscan import compose_toml

__all__ = [
    "LEADING_ZERO",
    "DuplicateKeyError",
    "HugeIntegerError",
    "got_as_read",
    "huge_integer_error",
    "line_of",
    "load_json",
    "load_toml",
    "locate",
    "safe_load",
    "text_of",
    "yaml_error_at",
    "yaml_problem",
]


def line_of(text: str, path: str, *, toml: bool = False) -> int | None:
    """The 1-based line of the deepest part of `path` that the YAML (or JSON) `text` holds, or
    the TOML `text` when `toml`.

    Examples
    --------
    >>> text = "tag: x86-h100\\ndevices:\\n  gpu0:\\n    link: {bandwith_gbps: 3}\\n"
    >>> line_of(text, "devices[gpu0].link.bandwith_gbps"), line_of(text, "host.kind")
    (4, None)
    >>> line_of("vary:\\n  executor.dispatch_us: [1, 2]\\n", "vary.executor.dispatch_us")
    2
    >>> line_of("vary:\\n  executor.dispatch_us: [1]\\n  devices[npu].ops: [[Relu]]\\n",
    ...         "vary.devices[npu]")  # a problem with what a dotted key reaches into
    3
    >>> line_of("devices:\\n  - name: npu\\n    kind: npu\\n", "devices[npu].kind")
    3
    >>> line_of("devices:\\n  - npu\\n  - {kind: cuda}\\n", "devices[dev1].kind")
    3
    >>> line_of("kind: npu\\nops: Conv\\n", "devices[dev0].ops")  # a single-device target
    2
    >>> line_of('link:\\n  latency_us: 1\\n  "": 3\\n', "link.''")  # an empty key
    3
    >>> line_of("# a comment\\n- kind: cuda\\n", ""), line_of("", "")  # the root, where it starts
    (2, 1)
    >>> text = 'kind = "hetero"\\n[[devices]]\\nname = "npu"\\nlink = {latency_us = -1}\\n'
    >>> line_of(text, "devices[npu].link.latency_us", toml=True)
    4
    """
    return _line(compose_toml(text) if toml else compose_yaml(text), path)


_COMPOSERS: dict[str, Callable[[str], Any]] = {".json": compose_json, ".toml": compose_toml}
"""The node tree of a file's text, by its suffix; YAML's (`compose_yaml`) for any other."""


def _line(node: yaml.Node | None, path: str) -> int | None:
    return _found(node, path)[0]


def _found(node: yaml.Node | None, path: str) -> tuple[int | None, yaml.Node | None]:
    """The line of the deepest part of `path` in the tree under `node`, and the node `path`
    leads to when the whole of it is there (else None). The root's (``""``) is the line its
    node starts on, the first for a file with none (empty, or comments alone)."""
    if not path:  # a list or a scalar where a mapping belongs, a key missing at the top
        return (1, None) if node is None else (node.start_mark.line + 1, node)
    line, reached = _follow(node, path)
    if line is None and path.startswith(SINGLE_DEVICE):
        # a single-device target, written without a level around it: its device is the file
        line, reached = _follow(node, path.removeprefix(SINGLE_DEVICE).removeprefix("."))
    return line, reached


SINGLE_DEVICE = "devices[dev0]"
"""Where a single-device target's device sits once canonicalized (docs/targets.md)."""


def _follow(node: yaml.Node | None, path: str) -> tuple[int | None, yaml.Node | None]:
    line = None
    rest = path
    while node is not None and rest:
        found = _step(node, rest) or _wrapped(node, rest)
        if found is None:
            return line, None
        node, line, rest = found
    return line, node if line is not None else None


def _wrapped(node: yaml.Node, rest: str) -> tuple[yaml.Node, int, str] | None:
    """A device written with its own host is, in the tree, a level of its name around it
    (``devices[g].devices[g]``): `rest` goes on in the written device itself."""
    if not (rest.startswith("devices[") and isinstance(node, yaml.MappingNode)):
        return None
    if any(str(key.value) == "devices" for key, _ in node.value):
        return None
    name, _, after = rest.removeprefix("devices[").partition("]")
    if name != (_name_of(node) or "dev0"):
        return None
    return node, node.start_mark.line + 1, after.removeprefix(".")


def _step(node: yaml.Node, rest: str) -> tuple[yaml.Node, int, str] | None:
    """The node one part of `rest` leads to, that part's line, and what remains of `rest`."""
    if rest.startswith("["):
        name, _, after = rest[1:].partition("]")
        after = after.removeprefix(".")
        if isinstance(node, yaml.MappingNode):
            return _key(node, name, after)
        if isinstance(node, yaml.SequenceNode):
            item = _item(node, name)
            return None if item is None else (item, item.start_mark.line + 1, after)
        return None
    if not isinstance(node, yaml.MappingNode):
        return None
    keys = sorted((str(k.value) for k, _ in node.value), key=len, reverse=True)
    for key in keys:  # the longest key that is a whole part of `rest`: keys may hold dots
        written = key or "''"  # a path writes an empty key so (`hetsim.target.schema.join_path`)
        if rest == written or rest.startswith((f"{written}.", f"{written}[")):
            return _key(node, key, rest[len(written) :].removeprefix("."))
    for key, value in node.value:  # `rest` is a whole part of a key: the first such key
        if str(key.value).startswith((f"{rest}.", f"{rest}[")):
            return value, key.start_mark.line + 1, ""
    return None


def _key(node: yaml.MappingNode, name: str, after: str) -> tuple[yaml.Node, int, str] | None:
    for key, value in node.value:
        if str(key.value) == name:
            return value, key.start_mark.line + 1, after
    return None


def _item(node: yaml.SequenceNode, name: str) -> yaml.Node | None:
    """The list item `name` picks: by index, by its ``name``, or an unnamed ``dev<index>``."""
    if name.isdigit() and int(name) < len(node.value):
        return node.value[int(name)]
    for item in node.value:
        if _name_of(item) == name:
            return item
    auto = re.fullmatch(r"dev(\d+)", name)  # an unnamed device is dev<index>
    if auto is not None and int(auto[1]) < len(node.value):
        item = node.value[int(auto[1])]
        return item if _name_of(item) is None else None
    return None


def _name_of(item: yaml.Node) -> str | None:
    """The ``name`` of list item `item`, if it is a string (a device named ``no``, a bool to
    YAML, or ``7`` is ``dev<index>``, as `hetsim.target.resolve.device_name` names it)."""
    if isinstance(item, yaml.MappingNode):
        for key, value in item.value:
            if str(key.value) == "name":
                is_text = isinstance(value, yaml.ScalarNode) and value.tag == STR_TAG
                return str(value.value) if is_text else None
    return None


def locate(problems: Iterable[Problem], path: Path, text: str | None = None) -> list[Problem]:
    """`problems` about data read from the file `path`, each led by ``file:line`` (or the file).

    A problem about the file itself (its path is the file's) is left as it is. `text` is the
    file's text (read here when not given); a file that is gone gets no lines.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = Path(folder) / "soc.yaml"
    ...     _ = file.write_text("kind: cuda\\nhost:\\n  kind: llvm\\n")
    ...     [p.message.replace(folder, "...") for p in
    ...      locate([Problem("host.kind", "unknown kind 'llvm'")], file)]
    [".../soc.yaml:3: host.kind: unknown kind 'llvm'"]
    """
    compose: Callable[[str], Any] = _COMPOSERS.get(path.suffix.lower(), compose_yaml)
    if text is None and path.suffix.lower() in (".yaml", ".yml", ".json", ".toml"):
        read = text_of(path)  # as the file was read: past a BOM (TOML's lines were lost to it)
        text = read if isinstance(read, str) else None
    node = compose(text) if text is not None else None
    is_yaml = compose is compose_yaml
    located = []
    for problem in problems:
        if problem.path.startswith(str(path)):
            located.append(problem)
            continue
        line, reached = _found(node, problem.path) if text is not None else (None, None)
        where = f"{path}:{line}" if line is not None else str(path)
        joined = f"{where}: {problem.path}" if problem.path else where
        got = _read_as_a_boolean(reached, problem.got) if is_yaml else problem.got
        located.append(Problem(joined, problem.expected, got, problem.hint))
    return located


def got_as_read(text: str, path: str, got: str | None) -> str | None:
    """`got` for the value at `path` in the YAML `text`, with why where a check refused it as
    True or False and the file writes an unquoted yes, no, on or off (`locate` does this for
    the problems it leads with a line; a reader that places its own lines calls this).

    >>> got_as_read("- {op: Conv, device: off}\\n", "[0].device", "False")
    "False (an unquoted off, which YAML reads as false; quoted, 'off' is text)"
    """
    return _read_as_a_boolean(_found(compose_yaml(text), path)[1], got)


YAML_1_1_BOOLEANS = frozenset({"yes", "no", "on", "off"})
"""Words YAML 1.1 (PyYAML's, which reads every YAML file here) takes for true and false when
unquoted, in any of its cases (``Yes``, ``OFF``), besides ``true`` and ``false``."""


def _read_as_a_boolean(node: yaml.Node | None, got: str | None) -> str | None:
    """`got`, with why: a value refused as True or False that the file writes as an unquoted
    yes, no, on or off (a device named ``off``, ``vendor: no``), which YAML 1.1 reads as a
    boolean; quoted, the word is text.

    >>> node = compose_yaml("name: off\\n").value[0][1]
    >>> _read_as_a_boolean(node, "False")
    "False (an unquoted off, which YAML reads as false; quoted, 'off' is text)"
    >>> _read_as_a_boolean(compose_yaml("name: 'off'\\n").value[0][1], "'off'")
    "'off'"
    """
    if (
        got not in ("True", "False")
        or not isinstance(node, yaml.ScalarNode)
        or node.style is not None  # quoted: a string, never refused as a boolean
        or str(node.value).lower() not in YAML_1_1_BOOLEANS
    ):
        return got
    word = str(node.value)
    return (
        f"{got} (an unquoted {word}, which YAML reads as {got.lower()}; quoted, '{word}' is text)"
    )
