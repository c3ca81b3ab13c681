"""Every command's synopsis and options as markdown, made from the parsers themselves: the
block of ``docs/commands.md`` between its markers, which a test keeps equal to this.

``python -m hetsim.cli.reference`` prints the block.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from hetsim.cli import build_parser
from hetsim.cli.calibrate import user_tag_dir

__all__ = ["TAG_FOLDER", "commands_markdown"]

WIDTH = 100
"""The width usage lines are wrapped at (argparse's default follows the terminal's)."""
TAG_FOLDER = "<tag folder>"
"""What the reference says for the user's tag folder, which ``--help`` names as it is on the
machine (`hetsim.cli.calibrate.user_tag_dir`)."""


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...], summary: str = ""
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Each command that runs something (a parser without subcommands), with its words and the
    one line its group's help gives it."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield words, parser, summary
    for group in groups:
        helps = {choice.dest: choice.help or "" for choice in group._choices_actions}
        for name, sub in group.choices.items():
            yield from _commands(sub, (*words, name), helps.get(name, ""))


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _rows(parser: argparse.ArgumentParser) -> Iterator[str]:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        invocation = formatter._format_action_invocation(action)
        yield f"| `{invocation}` | {_cell(action.help or '')} |"


def commands_markdown() -> str:
    """One section per command: its usage, description and a table of its arguments."""
    parts = []
    for words, parser, summary in _commands(build_parser(), ("hetsim",)):
        parts.append(f"### `{' '.join(words)}`\n")
        parts.append(f"```\n{_usage(parser)}\n```\n")
        about = parser.description or summary
        if about:
            parts.append(f"{_cell(about)}\n")
        rows = list(_rows(parser))
        if rows:
            parts.append("| argument | meaning |\n|---|---|\n" + "\n".join(rows) + "\n")
    return "\n".join(parts).replace(str(user_tag_dir()), TAG_FOLDER)


if __name__ == "__main__":
    print(commands_markdown(), end="")
