"""docs/targets.md holds the schema of every registered kind, generated from the registry."""

from __future__ import annotations

from hetsim.target import kinds_markdown
from tests.generated_blocks import DOCS, generated_block

DOC = DOCS / "targets.md"


def test_kind_schemas_in_the_docs_are_up_to_date() -> None:
    assert generated_block("targets.md", "kinds") == kinds_markdown(), (
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
