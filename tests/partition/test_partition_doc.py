"""docs/partition.md: its worked example runs and prints the plan it shows."""

from __future__ import annotations

import doctest
from pathlib import Path

from hetsim import simulate

DOC = Path(__file__).resolve().parents[2] / "docs" / "partition.md"


def test_worked_example_in_the_partition_doc_holds() -> None:
    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 5, f"only {result.attempted} examples found in {DOC}"
    assert result.failed == 0, f"{result.failed} examples in {DOC} failed (see output above)"


def test_the_int8_paragraph_states_this_build_s_makespans() -> None:
    # "puts the zoo's int8 CNN's convs and pools on the Ethos-U65 (93 µs), where the float `cnn`
    # runs wholly on the Cortex-A55s (424 µs)"
    text = " ".join(DOC.read_text().split())
    int8 = simulate("cnn_int8", "nxp-imx93", mode="timing").makespan_us
    float32 = simulate("cnn", "nxp-imx93", mode="timing").makespan_us
    assert f"Ethos-U65 ({int8:.0f} µs)" in text
    assert f"Cortex-A55s ({float32:.0f} µs)" in text
