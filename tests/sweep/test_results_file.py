"""Results files that --resume or a ranking cannot trust: each refused with its file and line.

Every sweep here runs in process (``workers=0``); each case once raised a built-in error from
deep inside, or was read silently wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hetsim.errors import SweepError
from hetsim.sweep import Point, best_points, read_results, run_sweep

SWEEP: dict[str, Any] = {
    "name": "small",
    "target": "arm-riscv-soc",
    "models": ["mlp"],
    "vary": {"executor.dispatch_us": [0.25, 0.5]},
}


def _full(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A complete results file of `SWEEP`: a header and two records."""
    path = tmp_path / "r.jsonl"
    run_sweep(SWEEP, out=path, workers=0)
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n")


def test_resume_without_a_results_file_is_refused() -> None:
    # it ran every point again and kept none
    message = "resume: expected a results file to complete (out), got none"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, workers=0, resume=True)


def test_resume_keeps_a_header_that_lost_its_newline(out: Path) -> None:
    # the header was taken for a line cut short and truncated away: the file had no header
    header = _lines(out)[0]
    out.write_text(header)
    records = run_sweep(SWEEP, out=out, workers=0, resume=True)
    assert _lines(out)[0] == header
    assert read_results(out)[1] == records


def test_a_point_written_twice_is_refused(out: Path) -> None:
    # the first was kept silently, whatever the second said
    header, first, second = _lines(out)
    again = json.loads(first) | {"result": {"makespan_us": 1.0}}
    _write(out, [header, first, second, json.dumps(again)])
    point = json.loads(first)["id"]
    message = f"{out}:4: expected each point once, got point {point!r} again (line 2)"
    with pytest.raises(SweepError, match=_full(message)):
        read_results(out)
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_resume_refuses_a_point_the_sweep_does_not_have(out: Path) -> None:
    # it was returned, and ranked, with the sweep's own points
    header, first, _ = _lines(out)
    foreign = json.loads(first) | {"id": "ffffffffffff", "index": 9}
    _write(out, [header, first, json.dumps(foreign)])
    message = (
        f"{out}:3: expected a point of this sweep, got point 'ffffffffffff', which it does not have"
    )
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_resume_refuses_a_point_at_another_index(out: Path) -> None:
    header, first, second = _lines(out)
    moved = json.loads(second) | {"index": 0}
    _write(out, [header, first, json.dumps(moved)])
    message = f"{out}:3: index: expected 1 (of point {moved['id']!r}), got 0"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


@pytest.mark.parametrize(
    "change", [{"model": "no-such-model"}, {"executor.dispatch_us": 0.75}], ids=["model", "value"]
)
def test_resume_refuses_a_point_whose_params_were_edited(out: Path, change: dict[str, Any]) -> None:
    # its id stayed, and it was ranked as the best point of a model it never ran
    header, first, second = _lines(out)
    record = json.loads(first)
    edited = record | {"params": record["params"] | change}
    _write(out, [header, json.dumps(edited), second])
    message = (
        f"{out}:2: params: expected those of point {record['id']!r}, {record['params']}, got "
        f"{edited['params']}"
    )
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # TypeError from sorting the records by index
        ({"index": "x"}, "index: expected an integer >= 0, got 'x'"),
        # KeyError from best_points
        ({"params": None}, "params: expected a mapping that names the model, got None"),
        ({"params": {"x": 1}}, "params: expected a mapping that names the model, got {'x': 1}"),
        # a SweepError that blamed the metric
        ({"result": None}, "result: expected a mapping (the point is ok), got None"),
    ],
)
def test_a_record_with_a_bad_field_names_its_line_and_key(
    out: Path, change: dict[str, Any], message: str
) -> None:
    header, first, second = _lines(out)
    _write(out, [header, json.dumps(json.loads(first) | change), second])
    with pytest.raises(SweepError, match=_full(f"{out}:2: {message}")):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


@pytest.mark.parametrize("line", [0, 1])
@pytest.mark.parametrize(
    "text", ["[" * 100_000 + "]" * 100_000, "9" * 5_000], ids=["nested", "huge-integer"]
)
def test_a_line_json_cannot_read_is_refused_at_its_line(out: Path, line: int, text: str) -> None:
    # json.loads raised RecursionError (nested past Python's recursion) or ValueError (an
    # integer of more digits than int() reads), which left read_results and --resume as a
    # traceback (found by a sweep audit and its review)
    lines = _lines(out)
    lines[line] = text
    _write(out, lines)
    shown = repr(lines[line][:60])
    if line == 0:
        message = f"{out}: expected a hetsim-sweep/1 results file, got {shown}"
    else:
        expected = "expected a point's record (a JSON object with an id and a status)"
        message = f"{out}:2: {expected}, got {shown}"
    with pytest.raises(SweepError, match=_full(message)):
        read_results(out)
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_a_file_of_another_format_version_says_so(out: Path) -> None:
    header, *records = _lines(out)
    _write(out, [json.dumps(json.loads(header) | {"format": "hetsim-sweep/2"}), *records])
    message = (
        f"{out}: expected a hetsim-sweep/1 results file, got format 'hetsim-sweep/2' "
        "(of another version of hetsim)"
    )
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_a_results_file_that_cannot_be_reopened_is_named(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PermissionError from Path.open("r+"), a traceback (monkeypatched: root may write anything)
    opened = Path.open

    def read_only(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "r+":
            raise PermissionError(13, "Permission denied")
        return opened(path, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", read_only)
    message = f"{out}: expected a writable results file, got 'Permission denied'"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def _not_a_mapping(point: Point) -> Any:
    return 3.0


def test_a_point_function_that_returns_no_mapping_fails_its_point() -> None:
    # TypeError from dict(3.0), outside the point's try: the sweep stopped
    records = run_sweep(SWEEP, workers=0, run_point=_not_a_mapping)
    assert [r["error"] for r in records] == [
        "TypeError: run_point: expected a mapping (a result's to_dict()), got 3.0"
    ] * 2
    assert best_points(records) == {}


def _numpy_result(point: Point) -> Any:
    import numpy as np

    return {"makespan_us": np.float32(2.5) if point.index == 0 else 3.0}


def test_a_result_json_cannot_hold_fails_its_point_and_the_sweep_goes_on(tmp_path: Path) -> None:
    # json.dumps raised TypeError in the writer: the sweep stopped, the points after it unwritten
    out = tmp_path / "results.jsonl"
    records = run_sweep(SWEEP, out=out, workers=0, run_point=_numpy_result)
    assert [r["status"] for r in records] == ["failed", "ok"]
    assert records[0]["error"] == (
        "TypeError: result: expected JSON values (a result's to_dict()), got TypeError: Object "
        "of type float32 is not JSON serializable"
    )
    _, written = read_results(out)
    assert [r["status"] for r in written] == ["failed", "ok"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_results_file_on_a_full_disk_is_named() -> None:
    # the OSError came out alone: "error: No space left on device", naming no file
    message = "/dev/full: expected a writable results file, got 'No space left on device'"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out="/dev/full", workers=0)


class _FullDisk:
    """A results file whose disk fills after `room` writes: as a buffered file does, a write
    is kept and the flush fails, and so does every flush after it (close's too)."""

    def __init__(self, file: Any, room: int) -> None:
        self.file, self.room, self.pending = file, room, False

    def write(self, text: str) -> int:
        self.pending = self.room <= 0
        self.room -= 1
        return 0 if self.pending else self.file.write(text)

    def flush(self) -> None:
        if self.pending:
            raise OSError(28, "No space left on device")
        self.file.flush()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.file.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


def _filling(monkeypatch: pytest.MonkeyPatch, name: str, room: int) -> None:
    """Files named `name` that `hetsim.sweep.results` opens fill after `room` writes."""
    import hetsim.sweep.results as results

    opened = results._opened

    def filling(path: Path, mode: Any) -> Any:
        file = opened(path, mode)
        return _FullDisk(file, room) if path.name == name else file

    monkeypatch.setattr(results, "_opened", filling)


def test_a_results_file_that_fills_mid_sweep_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the header fitted and a record did not: close() flushed the record again, and its bare
    # OSError ("error: No space left on device") replaced the error naming the file
    _filling(monkeypatch, "r.jsonl", room=1)
    out = tmp_path / "r.jsonl"
    message = f"{out}: expected a writable results file, got 'No space left on device'"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0)


def test_a_retry_rewrite_that_cannot_be_written_is_named(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --retry-failed writes the file anew beside itself, outside the file's own writes
    header, first, second = _lines(out)
    failed = json.loads(first) | {"status": "failed", "result": None, "error": "E: e"}
    _write(out, [header, json.dumps(failed), second])
    _filling(monkeypatch, "r.jsonl.retry", room=0)
    message = f"{out}.retry: expected a writable results file, got 'No space left on device'"
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(SWEEP, out=out, workers=0, resume=True, retry_failed=True)
    assert _lines(out)[1] == json.dumps(failed)  # the file as it was
    assert not out.with_name("r.jsonl.retry").exists()  # half written, it kept the disk's space
