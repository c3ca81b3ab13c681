"""Each config in tests/data/bad/ fails with exactly the problems of its ``# expect:`` lines.

An expect line is ``LINE: message``: the problem is reported as ``FILE:LINE: message``, LINE being
where the file holds what the message's path names (``-``: reported with the file alone).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsim.errors import TargetError
from hetsim.target import Target

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
FILES = sorted(p for p in BAD.iterdir() if p.suffix in (".yaml", ".yml", ".toml"))


def _expected(path: Path) -> list[str]:
    prefix = "# expect: "
    found = []
    for line in path.read_text().splitlines():
        if line.startswith(prefix):
            number, _, message = line.removeprefix(prefix).partition(": ")
            found.append(f"{path}: {message}" if number == "-" else f"{path}:{number}: {message}")
    return found


def test_the_bad_folder_has_configs() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_bad_config_reports_every_problem_with_its_path(path: Path) -> None:
    expected = _expected(path)
    assert expected, f"{path.name} has no '# expect:' line"
    with pytest.raises(TargetError) as err:
        Target.load(path)
    assert [p.message for p in err.value.problems] == expected
