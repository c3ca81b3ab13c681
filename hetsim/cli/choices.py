"""Options that take one name of a fixed set (``--partition``, ``--cuda-graph``), checked when the
command line is read.

`choice_type` builds the argparse ``type`` of such an option: an unknown name is a usage error
that names the option and the closest known name (argparse's own ``choices`` suggests none before
Python 3.14), before the command reads its model or target. The sets are written out here, as
the parser is built without importing the engine; tests/cli/test_choices.py holds them equal to
the engine's (`hetsim.partition.POLICIES`, `hetsim.runtime.cuda_graph.STRATEGIES`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from hetsim.errors import HetsimError, close_name

__all__ = ["POLICY_NAMES", "STRATEGY_NAMES", "check_choice", "check_rules_given", "choice_type"]

POLICY_NAMES = ("capability", "cost", "rules")
"""The partition policies (`hetsim.partition.POLICIES`), in the order ``--help`` lists them."""

STRATEGY_NAMES = ("none", "whole", "regions", "buckets")
"""The CUDA-graph strategies (`hetsim.runtime.cuda_graph.STRATEGIES`), in the order ``--help``
lists them."""


def check_choice(text: str, names: Sequence[str]) -> str:
    """`text`, if it is one of `names`.

    Raises
    ------
    argparse.ArgumentTypeError
        Another name, with the closest of `names` (argparse puts ``argument --OPTION:`` in front).

    Examples
    --------
    >>> check_choice("cost", POLICY_NAMES)
    'cost'
    >>> check_choice("Rules", POLICY_NAMES)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one of capability, cost, rules, got 'Rules' (did you...
    >>> check_choice("xyz", POLICY_NAMES)  # no name close to it: no hint
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one of capability, cost, rules, got 'xyz'
    """
    if text in names:
        return text
    hint = close_name(text, names)
    also = f" (did you mean {hint!r}?)" if hint is not None else ""
    raise argparse.ArgumentTypeError(f"expected one of {', '.join(names)}, got {text!r}{also}")


def choice_type(names: Sequence[str]) -> Callable[[str], str]:
    """The argparse ``type`` of an option that takes one of `names` (`check_choice`)."""

    def parse(text: str) -> str:
        return check_choice(text, names)

    return parse


def check_rules_given(partition: str, rules: object) -> None:
    """Refuse ``--partition rules`` without ``--rules`` in the options' own words (the API's
    "rules: expected a list of rules or a YAML file for policy 'rules', got None" named an
    argument the command line does not have).

    >>> check_rules_given("rules", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: --partition rules: expected --rules FILE (the placement rules), ...
    """
    if partition == "rules" and rules is None:
        raise HetsimError(
            "--partition rules: expected --rules FILE (the placement rules), got none"
        )
