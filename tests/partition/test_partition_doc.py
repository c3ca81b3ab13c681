"""docs/partition.md: its worked example runs and prints the plan it shows."""

from __future__ import annotations

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "partition.md"


def test_worked_example_in_the_partition_doc_holds() -> None:
    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 5, f"only {result.attempted} examples found in {DOC}"
    assert result.failed == 0, f"{result.failed} examples in {DOC} failed (see output above)"
