"""The blocks of the docs that code generates (between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->``), read for the tests that keep them current."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def generated_block(doc: str, name: str) -> str:
    """The text of block `name` of ``docs/<doc>``, between its markers' lines."""
    text = (DOCS / doc).read_text()
    begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->\n"
    return text[text.index(begin) + len(begin) : text.index(end)]
