"""docs/cost-model.md: every worked example on the page runs and gives the number it shows, and
the parameters the page copies from the shipped tags still match them."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pytest

from hetsim.target import Target

DOC = Path(__file__).resolve().parents[2] / "docs" / "cost-model.md"


@pytest.fixture(scope="module")
def doc_globals() -> dict[str, Any]:
    """Run every example of the page; return the names they defined."""
    text = DOC.read_text()
    test = doctest.DocTestParser().get_doctest(text, {}, DOC.name, str(DOC), 0)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(test, clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 20, f"only {result.attempted} examples found in {DOC}"
    assert result.failed == 0, f"{result.failed} examples in {DOC} failed (see output above)"
    return test.globs


def test_every_worked_example_in_the_cost_model_doc_holds(doc_globals: dict[str, Any]) -> None:
    assert {"gpu", "cpu", "kernel_us"} <= set(doc_globals)


@pytest.mark.parametrize(("name", "tag"), [("H100", "nvidia/h100"), ("A72", "arm/cortex-a72")])
def test_doc_parameters_match_the_shipped_tag(
    doc_globals: dict[str, Any], name: str, tag: str
) -> None:
    device = Target(tag).devices[0]  # a lone device tag is wrapped: hetero(devices=[it])
    assert device.tag == tag
    attrs = device.attrs
    copied = doc_globals[name]
    assert {key: attrs[key] for key in copied} == copied
