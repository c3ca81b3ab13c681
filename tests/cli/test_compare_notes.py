"""``hetsim compare``'s notes under its table and in its JSON."""

from __future__ import annotations

import json

import pytest

from hetsim.cli import main

PAST = (
    "2 of 2 iterations past the largest bucket (2048), so their kernels run eagerly, without "
    "padding (the first: iteration 0, seq=3000)"
)


def test_compare_notes_once_the_iterations_past_the_largest_bucket(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `hetsim run --dims seq=3000 --cuda-graph buckets` noted it; compare printed no note
    argv = ["compare", "transformer", "--target", "x86-h100", "--seq-dist", "fixed:3000",
            "--cuda-graph", "none,buckets", "--iterations", "2"]  # fmt: skip
    assert main(argv) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [f"note: buckets: {PAST}"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["strategies"]
    assert [row["notes"] for row in rows] == [[], [PAST]]
    assert rows[1]["eager_runs"] == 2
