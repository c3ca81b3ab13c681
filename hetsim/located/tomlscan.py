"""TOML text scanned into YAML nodes, so that `hetsim.located` finds a path's line in a TOML
file as it does in a YAML one: tomllib gives values without lines.

The scan covers tables, arrays of tables, dotted and quoted keys, inline tables and multi-line
strings. It trusts the grammar: only text tomllib has parsed is scanned.
"""

from __future__ import annotations

import bisect
import re
import tomllib
from typing import Any

import yaml

__all__ = ["STR_TAG", "compose_toml", "scan_toml"]


def compose_toml(text: str) -> Any:
    """The node tree of TOML `text`, made to read as YAML's (None when it does not parse)."""
    try:
        tomllib.loads(text)  # the scan trusts the text's grammar: only valid TOML is scanned
    except (ValueError, RecursionError):  # tomllib's errors are ValueErrors
        return None
    return scan_toml(text)


def scan_toml(text: str) -> Any:
    """The node tree of TOML `text` whose grammar tomllib checked, or whose only fault is one
    it does not scan: an integer too long for int() (a value's text is kept, unread); None
    where the scan fails."""
    try:
        return _TomlScan(text).document()
    except (ValueError, RecursionError):  # the scan's errors are ValueErrors
        return None


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BLANKS = re.compile(r"[ \t]*")
_SPACE = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")  # blanks, newlines and comments
_SCALAR_END = re.compile(r"[,\]}#\n]")


class _TomlScan:
    """One scan of valid TOML text into YAML nodes: every key, table and array item with the
    line it starts on. Values other than strings keep their text, unread (tagged `_UNREAD`): only
    a ``name`` is ever compared (`_name_of`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.newlines = [i for i, c in enumerate(text) if c == "\n"]

    def document(self) -> Any:
        root = table = _mapping(self.mark())
        while self.skip(_SPACE) < len(self.text):
            if self.text.startswith("[[", self.pos):
                self.pos += 2
                table = self.array_table(root, self.keys())
                self.expect("]]")
            elif self.text.startswith("[", self.pos):
                self.pos += 1
                table = self.table(root, self.keys())
                self.expect("]")
            else:
                self.pair(table)
        return root

    def mark(self) -> Any:
        line = bisect.bisect_left(self.newlines, self.pos)
        return yaml.Mark("<toml>", self.pos, line, 0, None, None)

    def skip(self, pattern: re.Pattern[str]) -> int:
        match = pattern.match(self.text, self.pos)
        assert match is not None, "the skipped patterns match the empty string"
        self.pos = match.end()
        return self.pos

    def expect(self, token: str) -> None:
        self.skip(_BLANKS)
        if not self.text.startswith(token, self.pos):
            raise ValueError(f"expected {token!r} at {self.pos}")
        self.pos += len(token)

    def keys(self) -> list[tuple[str, Any]]:
        """A dotted key's parts, each with its mark."""
        parts = []
        while True:
            self.skip(_BLANKS)
            mark = self.mark()
            if self.text.startswith(('"', "'"), self.pos):
                name = str(tomllib.loads(f"k = {self.string()}")["k"])
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if match is None:
                    raise ValueError(f"expected a key at {self.pos}")
                name, self.pos = match[0], match.end()
            parts.append((name, mark))
            self.skip(_BLANKS)
            if not self.text.startswith(".", self.pos):
                return parts
            self.pos += 1

    def table(self, node: Any, keys: list[tuple[str, Any]]) -> Any:
        for name, mark in keys:
            node = _child(node, name, mark)
        return node

    def array_table(self, root: Any, keys: list[tuple[str, Any]]) -> Any:
        (name, mark), node = keys[-1], self.table(root, keys[:-1])
        items = next((v for k, v in node.value if k.value == name), None)
        if items is None:
            items = yaml.SequenceNode("tag:yaml.org,2002:seq", [], mark, mark)
            node.value.append((_scalar(name, mark), items))
        items.value.append(_mapping(mark))
        return items.value[-1]

    def pair(self, table: Any) -> None:
        keys = self.keys()
        self.expect("=")
        (name, mark), node = keys[-1], self.table(table, keys[:-1])
        node.value.append((_scalar(name, mark), self.value()))

    def value(self) -> Any:
        self.skip(_BLANKS)
        mark = self.mark()
        if self.text.startswith(('"', "'"), self.pos):
            return _scalar(str(tomllib.loads(f"v = {self.string()}")["v"]), mark)
        if self.text.startswith("[", self.pos):
            return yaml.SequenceNode("tag:yaml.org,2002:seq", self.items("]"), mark, mark)
        if self.text.startswith("{", self.pos):
            node = _mapping(mark)
            self.pos += 1
            while self.skip(_SPACE) < len(self.text) and self.text[self.pos] != "}":
                self.pair(node)
                self.skip(_SPACE)
                if self.text.startswith(",", self.pos):
                    self.pos += 1
            self.expect("}")
            return node
        end = _SCALAR_END.search(self.text, self.pos)
        start, self.pos = self.pos, end.start() if end else len(self.text)
        return _scalar(self.text[start : self.pos].strip(), mark, _UNREAD)

    def items(self, close: str) -> list[Any]:
        self.pos += 1
        found = []
        while self.skip(_SPACE) < len(self.text) and self.text[self.pos] != close:
            found.append(self.value())
            self.skip(_SPACE)
            if self.text.startswith(",", self.pos):
                self.pos += 1
        self.expect(close)
        return found

    def string(self) -> str:
        """The text of the string at the scan's place, quotes included, passed over."""
        quote = self.text[self.pos]
        delimiter = quote * 3 if self.text.startswith(quote * 3, self.pos) else quote
        end = self.pos + len(delimiter)
        while not self.text.startswith(delimiter, end):
            if end >= len(self.text):
                raise ValueError(f"expected {delimiter} after {self.pos}")
            end += 2 if quote == '"' and self.text[end] == "\\" else 1
        end += len(delimiter)
        for _ in range(2 if len(delimiter) == 3 else 0):  # a multi-line string may end in
            if self.text.startswith(quote, end):  # one or two quotes of its own: """a"""""
                end += 1
        start, self.pos = self.pos, end
        return self.text[start:end]


def _mapping(mark: Any) -> Any:
    return yaml.MappingNode("tag:yaml.org,2002:map", [], mark, mark)


STR_TAG = "tag:yaml.org,2002:str"
"""The tag of a YAML string scalar (a quoted one, or one no other type reads); the nodes made
here carry it as YAML's do."""
_UNREAD = "tag:hetsim.toml,2026:unread"
"""The tag of a value that is no string (a number, a bool, a date), kept as its text: a device
``name = 7`` is not named '7' (`hetsim.located._name_of` reads only strings)."""


def _scalar(value: str, mark: Any, tag: str = STR_TAG) -> Any:
    return yaml.ScalarNode(tag, value, mark, mark)


def _child(node: Any, name: str, mark: Any) -> Any:
    """Table `name` in `node` (made when missing); an array of tables' last one."""
    for key, value in node.value:
        if key.value == name:
            return value.value[-1] if isinstance(value, yaml.SequenceNode) else value
    child = _mapping(mark)
    node.value.append((_scalar(name, mark), child))
    return child
