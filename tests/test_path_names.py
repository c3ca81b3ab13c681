"""A path no file can have (a NUL in it, a lone surrogate), or of the wrong type, is refused as
the path it is, by every function that reads or writes one: open() raised ValueError, or
UnicodeEncodeError, from deep inside, where `Path.is_dir` had said False and let it pass."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hetsim.api import simulate
from hetsim.errors import HetsimError
from hetsim.sweep import read_results
from hetsim.target import Target, add_tag_dir, remove_tag_dir

NAMES = [("a\0.json", "a name with a NUL"), ("\ud800.json", "a name this system cannot encode")]


@pytest.fixture(scope="module")
def run() -> Any:
    return simulate("mlp", "x86-h100", mode="timing")


@pytest.mark.parametrize(("name", "why"), NAMES)
def test_a_file_to_write_named_so_is_refused(run: Any, name: str, why: str) -> None:
    writes: list[tuple[str, Callable[[str], Any]]] = [
        ("to_chrome_trace", run.to_chrome_trace),
        ("plot_gantt", lambda n: run.plot_gantt(n.replace(".json", ".png"))),
    ]
    for what, write in writes:
        shown = repr(name if what == "to_chrome_trace" else name.replace(".json", ".png"))
        message = f"{what}: expected a file it can write, got {shown} ({why})"
        with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
            write(name)


@pytest.mark.parametrize(("name", "why"), NAMES)
def test_a_file_to_read_named_so_is_refused(name: str, why: str) -> None:
    yaml_name = name.replace(".json", ".yaml")
    reads: list[tuple[Callable[[], Any], str]] = [
        (lambda: Target(yaml_name), f"{yaml_name!r}: expected a target file, got {why}"),
        (
            lambda: simulate("mlp", "x86-h100", mode="timing", partition="rules", rules=yaml_name),
            f"rules: expected a YAML file or a list of rules, got {yaml_name!r} ({why})",
        ),
        (
            lambda: read_results(name),
            f"{name!r}: expected a hetsim-sweep/1 results file, got {why}",
        ),
    ]
    for read, message in reads:
        with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
            read()


def test_a_tag_folder_of_the_wrong_type_or_name_is_refused(tmp_path: Path) -> None:
    for call, folder, got in [
        (add_tag_dir, b"tags", "b'tags': expected a folder path (a str or a Path), got a bytes"),
        (remove_tag_dir, None, "None: expected a folder path (a str or a Path), got a NoneType"),
        (add_tag_dir, "a\0b", "'a\\x00b': expected a folder of tag files, got a name with a NUL"),
    ]:
        with pytest.raises(HetsimError, match=f"^{re.escape(got)}$"):
            call(folder)
    long = str(tmp_path / ("x" * 5000))
    with pytest.raises(HetsimError, match=r"expected a folder of tag files, got File name too"):
        add_tag_dir(long)
