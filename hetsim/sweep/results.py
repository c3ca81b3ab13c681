"""Results files of sweeps: one JSON line per point, after a header naming the sweep.

The header line holds the sweep's hash (`SweepSpec.hash`), so ``--resume`` completes only a file
that the same sweep wrote. Each later line is one point's record: ``id``, ``index``, ``params``,
``status`` (``ok`` or ``failed``), ``result`` (`Result.to_dict()`), ``error``, ``wall_s`` and
``worker``. A record is written and flushed as its point finishes, and each point id is written
once. Reading a file, ranking its records by a metric and finding the best point per model also
live here; running points is `hetsim.sweep.runner`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from hetsim.errors import Problem, SweepError
from hetsim.sweep.points import SweepSpec

__all__ = ["FORMAT", "ResultsLog", "best_points", "metric_value", "read_results"]

FORMAT = "hetsim-sweep/1"
"""The ``format`` of a results file's header line."""


def read_results(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the records of a results file, each point once, in file order.

    A last line cut short (the writer was killed mid-line) is left out.

    Raises
    ------
    SweepError
        A file whose first line is not a sweep header.
    """
    path = Path(path)
    lines = path.read_text().split("\n")
    header = _header(path, lines[0])
    records: dict[str, dict[str, Any]] = {}
    for line in lines[1:-1]:  # split() leaves "" after the last newline, or the cut-short line
        record = json.loads(line)
        records.setdefault(record["id"], record)
    return header, list(records.values())


def _header(path: Path, line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SweepError([Problem(str(path), f"expected a {FORMAT} results file", repr(line[:60]))])
    return header


class ResultsLog:
    """The records of one sweep run, kept in memory and, given a path, appended to its file.

    Parameters
    ----------
    path
        The results file, or None to keep records in memory only.
    spec
        The sweep; its hash goes into a new file's header and must match a resumed file's.
    resume
        Continue an existing file: its records count as done. Without it, an existing
        non-empty file is refused rather than overwritten.

    Raises
    ------
    SweepError
        An existing file without `resume`, or a resumed file written by another sweep.
    """

    def __init__(self, path: str | Path | None, spec: SweepSpec, *, resume: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self.spec = spec
        self.records: dict[str, dict[str, Any]] = {}
        self._file: TextIO | None = None
        if self.path is None:
            return
        if self.path.exists() and self.path.stat().st_size > 0:
            self._reopen(resume)
        else:
            self._file = self.path.open("w")
            header = {"format": FORMAT, "sweep": spec.hash, "name": spec.name}
            self._write(header | {"varied": list(spec.varied), "metric": spec.metric})

    def _reopen(self, resume: bool) -> None:
        assert self.path is not None, "only a file is reopened"
        if not resume:
            expected = "expected a new results file (--resume completes an existing one)"
            raise SweepError([Problem(str(self.path), expected, "an existing file")])
        header, records = read_results(self.path)
        if header.get("sweep") != self.spec.hash:
            expected = f"expected results of this sweep (hash {self.spec.hash})"
            got = f"results of another sweep (hash {header.get('sweep')}, {header.get('name')!r})"
            raise SweepError([Problem(str(self.path), expected, got)])
        self.records = {r["id"]: r for r in records}
        text = self.path.read_text()
        self._file = self.path.open("r+")
        self._file.seek(0)
        self._file.truncate(text.rfind("\n") + 1)  # drop a line cut short by a kill
        self._file.seek(0, 2)

    def __contains__(self, point_id: object) -> bool:
        return point_id in self.records

    def add(self, record: Mapping[str, Any]) -> bool:
        """Keep and write `record`; False (and nothing written) when its point is already in."""
        if record["id"] in self.records:
            return False
        self.records[record["id"]] = dict(record)
        if self._file is not None:
            self._write(record)
        return True

    def _write(self, data: Mapping[str, Any]) -> None:
        assert self._file is not None, "a file is open"
        self._file.write(json.dumps(data, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file (records stay readable)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def sorted(self) -> list[dict[str, Any]]:
        """Every record, in point order."""
        return sorted(self.records.values(), key=lambda r: r["index"])

    def __repr__(self) -> str:
        where = self.path or "in memory"
        return f"<ResultsLog {where} sweep={self.spec.hash} {len(self.records)} points>"


def metric_value(record: Mapping[str, Any], metric: str = "makespan_us") -> float:
    """The number at dotted path `metric` in a record's result; NaN for a failed point.

    Examples
    --------
    >>> record = {"status": "ok", "result": {"breakdown_us": {"dispatch": 2.5}}}
    >>> metric_value(record, "breakdown_us.dispatch")
    2.5
    >>> metric_value({"status": "failed", "result": None})
    nan
    """
    if record.get("status") != "ok":
        return math.nan
    value: Any = record["result"]
    for key in metric.split("."):
        if not isinstance(value, Mapping) or key not in value:
            raise SweepError([Problem(f"metric {metric}", "expected a key of the result", key)])
        value = value[key]
    return float(value)


def best_points(
    records: Iterable[Mapping[str, Any]], metric: str = "makespan_us"
) -> dict[str, dict[str, Any]]:
    """The successful record with the lowest `metric` per model (ties: the lower point index).

    Examples
    --------
    >>> runs = [{"index": i, "status": "ok", "params": {"model": m}, "result": {"makespan_us": t}}
    ...         for i, (m, t) in enumerate([("mlp", 3.0), ("mlp", 2.0), ("cnn", 5.0)])]
    >>> {m: r["index"] for m, r in best_points(runs).items()}
    {'mlp': 1, 'cnn': 2}
    """
    best: dict[str, dict[str, Any]] = {}
    for record in records:
        value = metric_value(record, metric)
        if math.isnan(value):
            continue
        model = record["params"]["model"]
        held = best.get(model)
        key = (value, record["index"])
        if held is None or key < (metric_value(held, metric), held["index"]):
            best[model] = dict(record)
    return best
