"""docs/targets.md holds the schema of every registered kind, generated from the registry."""

from __future__ import annotations

from pathlib import Path

from hetsim.target import kinds_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"
BEGIN, END = "<!-- kinds:begin -->\n", "<!-- kinds:end -->\n"


def test_kind_schemas_in_the_docs_are_up_to_date() -> None:
    text = DOC.read_text()
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert block == kinds_markdown(), (
        "docs/targets.md is stale: replace the block between the kinds markers with the output "
        "of `hetsim targets kinds --markdown`"
    )


def test_the_docs_name_every_rule_of_the_issue() -> None:
    text = DOC.read_text()
    for phrase in (
        "tags: cycle soc/a -> soc/b -> soc/a",
        "cannot host (a host needs can_host)",
        "did you mean 'bandwidth_gbps'?",
        "`Target(t.export()) == t`",
    ):
        assert phrase in text
