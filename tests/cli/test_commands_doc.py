"""docs/commands.md holds every command's synopsis and options as the parsers give them."""

from __future__ import annotations

from hetsim.cli.reference import commands_markdown
from tests.generated_blocks import generated_block


def test_the_command_reference_in_the_docs_is_up_to_date() -> None:
    assert generated_block("commands.md", "commands") == commands_markdown(), (
        "docs/commands.md is stale: replace the block between the commands markers with the "
        "output of `python -m hetsim.cli.reference`"
    )


def test_the_reference_names_every_option_of_every_command() -> None:
    block = commands_markdown()
    for option in ("--retry-failed", "--save-outputs OUT.npz", "--png FILE", "--markdown"):
        assert f"| `{option}` |" in block
    assert "### `hetsim model list`" in block
    assert "### `hetsim bench dispatch`" in block
