"""Results files of sweeps: one JSON line per point, after a header naming the sweep.

The header line holds the sweep's hash (`SweepSpec.hash`), so ``--resume`` completes only a file
that the same sweep wrote. Each later line is one point's record: ``id``, ``index``, ``params``,
``status`` (``ok`` or ``failed``), ``result`` (`Result.to_dict()`), ``error``, ``wall_s`` and
``worker``. A record is written and flushed as its point finishes, and each point id is written
once. Reading a file, the metrics a record can be ranked by (`METRICS`, the numbers of
`Result.to_dict()`), ranking records by one and finding the best point per model also live here;
running points is `hetsim.sweep.runner`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, TextIO

from hetsim.errors import Problem, SweepError, is_count, is_items
from hetsim.located import text_of
from hetsim.located.paths import name_problem
from hetsim.report import BREAKDOWN_KEYS, LinkStats
from hetsim.sweep.points import SweepSpec, digest
from hetsim.target.schema import closest
from hetsim.target.values import finite_float, show_value

__all__ = [
    "FORMAT",
    "METRICS",
    "METRIC_ROOTS",
    "ResultsLog",
    "best_points",
    "is_tie",
    "metric_problem",
    "metric_value",
    "no_effect",
    "read_results",
]

FORMAT = "hetsim-sweep/1"
"""The ``format`` of a results file's header line."""

_STATS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "processors": ("path", ("busy_us", "utilization")),  # its breakdown_us: a mapping
    "links": ("link", tuple(f.name for f in fields(LinkStats))),
}
"""The result's keys of named stats: what names them, and their numbers (`Result.to_dict`)."""
PROCESSOR_BREAKDOWN = "breakdown_us"
"""A processor's µs per category in its stats (`hetsim.report.ProcessorStats.breakdown_us`)."""
METRICS = (
    "makespan_us",
    "breakdown_us.<category>",
    *(f"processors.<path>.{stat}" for stat in _STATS["processors"][1]),
    f"processors.<path>.{PROCESSOR_BREAKDOWN}.<category>",
    *(f"links.<link>.{stat}" for stat in _STATS["links"][1]),
    "peak_memory_bytes.<memory>",
)
"""The numbers of a result (`Result.to_dict()`) a sweep can rank its points by, as dotted paths;
``<category>`` is one of `hetsim.report.BREAKDOWN_KEYS`, the others are names in the platform
(a processor's path, a link's or a memory's name, which may hold dots)."""
METRIC_ROOTS = tuple(dict.fromkeys(metric.split(".")[0] for metric in METRICS))
"""The keys of a result's ``to_dict()`` that a metric starts with (``breakdown_us.dispatch``)."""


def unkept_result(record: Mapping[str, Any], expected: str, err: Exception) -> dict[str, Any]:
    """`record` failed for a result that cannot be kept as it is (`expected` what it must be:
    JSON values for the results file, values a Dask worker can pickle back), saying why."""
    error = f"TypeError: result: expected {expected}, got {type(err).__name__}: {err}"
    return {**record, "status": "failed", "result": None, "error": error}


def read_results(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the records of a results file, each point once, in file order.

    A last line cut short (the writer was killed mid-line) is left out.

    Raises
    ------
    SweepError
        A file that is not text, whose first line is not a sweep header (or one of another
        format version), or with a line before the last that is not a point's record, or
        holds a point already read (named by ``file:line``).
    """
    if not isinstance(path, str | os.PathLike):
        expected = "expected a results file path (a str or a Path)"
        raise SweepError([Problem("read_results", expected, show_value(path))])
    header, records = _read(Path(path))
    return header, [record for _, record in records]


def _read(path: Path) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """`read_results`, each record with its line number."""
    text = text_of(path, f"a {FORMAT} results file")
    if isinstance(text, Problem):
        raise SweepError([text])
    lines = text.split("\n")
    header = _header(path, lines[0])
    records: list[tuple[int, dict[str, Any]]] = []
    first: dict[str, int] = {}  # point id -> its line
    for number, line in enumerate(lines[1:-1], start=2):  # split() leaves "" after the last
        record = _record(f"{path}:{number}", line)  # newline, or the line cut short
        if record["id"] in first:  # hetsim writes a point once: two runs' lines, or an edit
            got = f"point {record['id']!r} again (line {first[record['id']]})"
            raise SweepError([Problem(f"{path}:{number}", "expected each point once", got)])
        first[record["id"]] = number
        records.append((number, record))
    return header, records


def _record(where: str, line: str) -> dict[str, Any]:
    """The record a results file's line holds; a `SweepError` at `where` if it is not one (a
    bad index, params or result raised deep inside a resumed run or a ranking)."""
    record = _json_or_none(line)
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("id"), str)
        or record.get("status") not in ("ok", "failed")
    ):
        expected = "expected a point's record (a JSON object with an id and a status)"
        raise SweepError([Problem(where, expected, repr(line[:60]))])
    if not is_count(record.get("index")):
        raise SweepError([_field(where, "index", "an integer >= 0", record)])
    params = record.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("model"), str):
        raise SweepError([_field(where, "params", "a mapping that names the model", record)])
    if record["status"] == "ok" and not isinstance(record.get("result"), dict):
        raise SweepError([_field(where, "result", "a mapping (the point is ok)", record)])
    return record


def _json_or_none(line: str) -> Any:
    """The JSON value of a results file's line; None where it holds none: not JSON, an integer
    of more digits than int() reads (a ValueError), or nesting past Python's recursion (both
    had left read_results and --resume as a traceback)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None


def _field(where: str, key: str, expected: str, record: Mapping[str, Any]) -> Problem:
    return Problem(f"{where}: {key}", f"expected {expected}", show_value(record.get(key)))


def _header(path: Path, line: str) -> dict[str, Any]:
    header = _json_or_none(line)
    found = header.get("format") if isinstance(header, dict) else None
    if isinstance(found, str) and found != FORMAT and found.startswith("hetsim-sweep/"):
        got = f"format {found!r} (of another version of hetsim)"
        raise SweepError([Problem(str(path), f"expected a {FORMAT} results file", got)])
    if not isinstance(header, dict) or found != FORMAT:
        raise SweepError([Problem(str(path), f"expected a {FORMAT} results file", repr(line[:60]))])
    return header


def _opened(path: Path, mode: Literal["w", "r+"]) -> TextIO:
    """The results file at `path`, opened in `mode`; a `SweepError` that says why not."""
    bad_name = name_problem(path)
    if bad_name is not None:
        raise SweepError([Problem(repr(str(path)), "expected a results file", bad_name)])
    if not path.parent.is_dir():
        expected, got = "expected a file in an existing folder", f"no folder {str(path.parent)!r}"
        raise SweepError([Problem(str(path), expected, got)])
    try:
        return path.open(mode)
    except OSError as err:
        raise _unwritable(path, err) from err


def _write_or_say(file: TextIO, path: Path, text: str) -> None:
    """Write `text` to `file` (at `path`) and flush it; a `SweepError` naming the file where it
    cannot be written (a full disk said only "No space left on device")."""
    try:
        file.write(text)
        file.flush()
    except OSError as err:
        raise _unwritable(path, err) from err


def _unwritable(path: Path, err: OSError) -> SweepError:
    """The error of a results file at `path` that could not be opened or written: `err`'s words."""
    got = repr(err.strerror or str(err))
    return SweepError([Problem(str(path), "expected a writable results file", got)])


def _close_failed(file: TextIO) -> None:
    """Close `file`, whose write failed: its flush fails again (the text is still buffered),
    and that bare OSError would replace the `SweepError` that names the file; the file is
    closed still."""
    with contextlib.suppress(OSError):
        file.close()


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
    retry_failed
        With `resume`: the file's failed records do not count as done; they are taken out of
        the file (rewritten whole, then moved into place, so a kill leaves the old file or the
        new one), and their points run again.

    Raises
    ------
    SweepError
        An existing file without `resume`, a resumed file written by another sweep, or damaged
        (`read_results`; a point the sweep does not have, or at another index), or a path that
        cannot be written (a directory, a missing folder, no permission).
    """

    def __init__(
        self,
        path: str | Path | None,
        spec: SweepSpec,
        *,
        resume: bool = False,
        retry_failed: bool = False,
    ) -> None:
        if path is not None and not isinstance(path, str | Path):
            raise SweepError([Problem("out", "expected a file path", repr(path))])
        self.path = None if path is None else Path(path)
        self.spec = spec
        self.records: dict[str, dict[str, Any]] = {}
        self._file: TextIO | None = None
        if self.path is None:
            return
        if self.path.is_dir():
            raise SweepError([Problem(str(self.path), "expected a results file", "a directory")])
        if self.path.exists() and self.path.stat().st_size > 0:
            self._reopen(resume, retry_failed)
        else:
            self._file = _opened(self.path, "w")
            header = {"format": FORMAT, "sweep": spec.hash, "name": spec.name}
            self._write(header | {"varied": list(spec.varied), "metric": spec.metric})

    def _reopen(self, resume: bool, retry_failed: bool) -> None:
        assert self.path is not None, "only a file is reopened"
        if not resume:
            expected = "expected a new results file (--resume completes an existing one)"
            raise SweepError([Problem(str(self.path), expected, "an existing file")])
        header, records = _read(self.path)
        if header.get("sweep") != self.spec.hash:
            expected = f"expected results of this sweep (hash {self.spec.hash})"
            got = f"results of another sweep (hash {header.get('sweep')}, {header.get('name')!r})"
            raise SweepError([Problem(str(self.path), expected, got)])
        self._check_points(records)
        data = self.path.read_bytes()  # bytes: what truncate() counts
        if retry_failed and any(r["status"] == "failed" for _, r in records):
            records, data = self._drop_failed(records, data)
        self.records = {r["id"]: r for _, r in records}
        end = data.rfind(b"\n") + 1
        self._file = _opened(self.path, "r+")
        if end:
            self._file.truncate(end)  # drop a line cut short by a kill
        self._file.seek(0, 2)
        if not end:  # the header alone, without its newline: truncating erased it
            self._put("\n")

    def _drop_failed(
        self, records: list[tuple[int, dict[str, Any]]], data: bytes
    ) -> tuple[list[tuple[int, dict[str, Any]]], bytes]:
        """Rewrite the file, `data`, without its failed records (its header and other lines as
        they are; a last line cut short goes too); the records kept, and the file's new bytes."""
        assert self.path is not None, "only a file is rewritten"
        lines = data.split(b"\n")
        kept = [(number, r) for number, r in records if r["status"] != "failed"]
        data = b"\n".join([lines[0], *(lines[n - 1] for n, _ in kept), b""])
        new = self.path.with_name(self.path.name + ".retry")
        out = _opened(new, "w")
        try:
            _write_or_say(out, new, data.decode())  # bytes as read: JSON lines, ASCII or UTF-8
        except SweepError:
            _close_failed(out)
            new.unlink(missing_ok=True)  # half written: it would keep the full disk's space
            raise
        out.close()
        os.replace(new, self.path)
        return kept, data

    def _check_points(self, records: list[tuple[int, dict[str, Any]]]) -> None:
        """Each record is one of this sweep's points, at its index (a line of another sweep
        was ranked with these, and skipped none)."""
        points = {point.id: point for point in self.spec.points()}
        for number, record in records:
            where = f"{self.path}:{number}"
            point = points.get(record["id"])
            if point is None:
                got = f"point {record['id']!r}, which it does not have"
                raise SweepError([Problem(where, "expected a point of this sweep", got)])
            if record["index"] != point.index:
                expected = f"expected {point.index} (of point {record['id']!r})"
                raise SweepError([Problem(f"{where}: index", expected, repr(record["index"]))])
            if digest(record["params"]) != digest(point.params):  # edited: ranked as another
                expected = f"expected those of point {record['id']!r}, {point.params}"
                raise SweepError([Problem(f"{where}: params", expected, repr(record["params"]))])

    def __contains__(self, point_id: object) -> bool:
        return point_id in self.records

    def add(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """Keep and write `record`, and return what was kept; None (and nothing written) when
        its point is already in.

        A record whose result JSON cannot hold (a custom ``run_point`` giving numpy numbers or
        arrays) is kept as a failed one that says so: its `TypeError` had stopped the sweep
        mid-way, with the points after it unwritten.
        """
        if record["id"] in self.records:
            return None
        try:
            line = json.dumps(record, separators=(",", ":"))
        except (TypeError, ValueError) as err:
            record = unkept_result(record, "JSON values (a result's to_dict())", err)
            line = json.dumps(record, separators=(",", ":"))
        kept = self.records[record["id"]] = dict(record)
        if self._file is not None:
            self._put(line + "\n")
        return kept

    def _write(self, data: Mapping[str, Any]) -> None:
        self._put(json.dumps(data, separators=(",", ":")) + "\n")

    def _put(self, text: str) -> None:
        """Write `text` to the file now (`_write_or_say`); a file that fails is closed
        (`_close_failed`), so that `close` does not flush it again."""
        assert self._file is not None, "a file is open"
        assert self.path is not None, "only a file is written"
        try:
            _write_or_say(self._file, self.path, text)
        except SweepError:
            file = self._file
            self._file = None
            _close_failed(file)
            raise

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


def metric_problem(metric: object) -> Problem | None:
    """What is wrong with `metric` as one of `METRICS`, if anything (a name in the platform is
    not checked: each point's platform has its own).

    Examples
    --------
    >>> metric_problem("breakdown_us.dispatch") is None, metric_problem("links.a.b--c.d.bytes")
    (True, None)
    >>> print(metric_problem("processors.host.busy"))  # doctest: +ELLIPSIS
    metric: expected a number of the result: makespan_us, ..., got 'processors.host.busy' (did ...
    >>> metric_problem("processors.host.busy").hint
    'processors.host.busy_us'
    """
    if isinstance(metric, str) and _metric_keys(metric) is not None:
        return None
    return _not_a_metric(metric)


def _not_a_metric(metric: object) -> Problem:
    forms = f"{', '.join(METRICS[:-1])} or {METRICS[-1]}"
    expected = f"expected a number of the result: {forms} (a category: {', '.join(BREAKDOWN_KEYS)})"
    return Problem("metric", expected, repr(metric), _metric_hint(metric))


def _metric_keys(metric: object) -> tuple[str, ...] | None:
    """The keys of `metric` in a result, by `METRICS` (a name may hold dots); None if not one."""
    if not isinstance(metric, str):
        return None
    root, _, rest = metric.partition(".")
    if root == "processors":  # a processor's µs in one category: a path may hold dots too
        within, _, category = rest.rpartition(".")
        name, _, stat = within.rpartition(".")
        if name and stat == PROCESSOR_BREAKDOWN and category in BREAKDOWN_KEYS:
            return (root, name, stat, category)
    if root in _STATS:
        name, _, stat = rest.rpartition(".")
        return (root, name, stat) if name and stat in _STATS[root][1] else None
    if root == "breakdown_us":
        return (root, rest) if rest in BREAKDOWN_KEYS else None
    if root == "peak_memory_bytes":
        return (root, rest) if rest else None
    return (root,) if root == "makespan_us" and not rest else None


def _metric_hint(metric: object) -> str | None:
    """The metric `metric` may have meant: its misspelt part (a root, a category, a stat) fixed."""
    if not isinstance(metric, str):
        return None
    root, _, rest = metric.partition(".")
    if root not in METRIC_ROOTS:
        found = closest(root, METRIC_ROOTS)
        meant = f"{found}.{rest}" if rest else found
        return meant if meant is not None and _metric_keys(meant) is not None else None
    if root == "breakdown_us":
        found = closest(rest, BREAKDOWN_KEYS)
        return None if found is None else f"{root}.{found}"
    name, _, stat = rest.rpartition(".")
    if root not in _STATS or not name:
        return None
    within, _, kept = name.rpartition(".")
    if root == "processors" and kept == PROCESSOR_BREAKDOWN and within:  # a category misspelt
        found = closest(stat, BREAKDOWN_KEYS)
        return None if found is None else f"{root}.{name}.{found}"
    found = closest(stat, _STATS[root][1])
    return None if found is None else f"{root}.{name}.{found}"


def metric_value(record: Mapping[str, Any], metric: str = "makespan_us") -> float:
    """The number at dotted path `metric` (one of `METRICS`) in a record's result; NaN for a
    failed point.

    Raises
    ------
    SweepError
        A `metric` that is not one of `METRICS`, a name the result does not hold, or a value
        there that is not a finite number >= 0 (NaN was ranked as a failed point, silently,
        and -inf won; a negative time, which no run gives, won too); a record with an index is
        named by it.

    Examples
    --------
    >>> record = {"status": "ok", "result": {"breakdown_us": {"dispatch": 2.5},
    ...           "peak_memory_bytes": {"host.mem": 64}}}
    >>> metric_value(record, "breakdown_us.dispatch")
    2.5
    >>> metric_value(record, "peak_memory_bytes.host.mem")  # a name may hold dots
    64.0
    >>> npu = {"status": "ok", "result": {"processors": {"a/npu": {"breakdown_us": {"idle": 4.0}}}}}
    >>> metric_value(npu, "processors.a/npu.breakdown_us.idle")
    4.0
    >>> metric_value({"status": "failed", "result": None})
    nan
    >>> metric_value(record, "peak_memory_bytes.host.mme")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    hetsim.errors.SweepError: metric peak_memory_bytes.host.mme: expected a name in the result's
    peak_memory_bytes ('host.mem'), got 'host.mme' (did you mean 'host.mem'?)
    >>> metric_value({"index": 3, "status": "ok", "result": {"makespan_us": float("nan")}})
    Traceback (most recent call last):
    ...
    hetsim.errors.SweepError: metric makespan_us of point 3: expected a finite number >= 0, got nan
    """
    keys = _metric_keys(metric)
    if keys is None:
        raise SweepError([_not_a_metric(metric)])
    if not isinstance(record, Mapping):
        raise SweepError([Problem("record", "expected a mapping (a results record)", repr(record))])
    if record.get("status") != "ok":
        return math.nan
    where = f"metric {metric}"
    if "index" in record:  # a name or a number some points lack: which one
        where += f" of point {record['index']}"
    value: Any = record["result"]
    for depth, key in enumerate(keys):
        if not isinstance(value, Mapping) or key not in value:
            raise SweepError([_missing(where, keys[:depth], key, value)])
        value = value[key]
    number = finite_float(value)
    if number is None or number < 0:  # every metric is a time, a share or a count of bytes
        raise SweepError([Problem(where, "expected a finite number >= 0", show_value(value))])
    return number


def _missing(where: str, within: tuple[str, ...], key: str, value: object) -> Problem:
    names = list(value) if isinstance(value, Mapping) else []
    inside = f"the result's {'.'.join(within)}" if within else "the result"
    expected = f"expected a name in {inside} ({', '.join(map(repr, names))})"
    return Problem(where, expected, repr(key), closest(key, names))


TIE_REL_TOL = 1e-9
"""How close two metrics (or results' numbers) are to count as equal (`is_tie`)."""


def is_tie(first: float, second: float) -> bool:
    """Whether two metric values are equal but for rounding, within `TIE_REL_TOL` relative: the
    same spans summed in another order can differ in the last bit (cnn's compute on
    ``arm-riscv-soc``, its link at 16 GB/s, read 32.82687500000001 at a dispatch cost of 0.25 µs
    and 32.826875 at 1 µs).

    >>> is_tie(32.82687500000001, 32.826875), is_tie(1.0, 1.001), is_tie(0.0, 0.0)
    (True, False, True)
    """
    return math.isclose(first, second, rel_tol=TIE_REL_TOL)


def best_points(
    records: Iterable[Mapping[str, Any]], metric: str = "makespan_us"
) -> dict[str, dict[str, Any]]:
    """The successful record with the lowest `metric` per model (ties, `is_tie`: the lowest
    point index).

    Examples
    --------
    >>> runs = [{"index": i, "status": "ok", "params": {"model": m}, "result": {"makespan_us": t}}
    ...         for i, (m, t) in enumerate([("mlp", 3.0), ("mlp", 2.0), ("cnn", 5.0)])]
    >>> {m: r["index"] for m, r in best_points(runs).items()}
    {'mlp': 1, 'cnn': 2}
    """
    if not is_items(records):
        expected = "expected records (a list of results records)"
        raise SweepError([Problem("best_points", expected, show_value(records))])
    valued: dict[str, list[tuple[float, int, Mapping[str, Any]]]] = {}
    for record in records:
        value = metric_value(record, metric)
        if not math.isnan(value):
            entry = (value, record["index"], record)
            valued.setdefault(record["params"]["model"], []).append(entry)
    best: dict[str, dict[str, Any]] = {}
    for model, entries in valued.items():
        lowest = min(value for value, _, _ in entries)
        _, _, record = min((e for e in entries if is_tie(e[0], lowest)), key=lambda e: e[1])
        best[model] = dict(record)
    return best


def no_effect(records: Iterable[Mapping[str, Any]], varied: Iterable[str]) -> list[str]:
    """The varied names (of `varied`, in its order) whose values changed no successful point's
    result: each point's result equals those of the points that differ from it in that name
    alone (its floats but for rounding, `is_tie`), and some points do. A path no run reads (a
    ``hetero`` root's ``link``) is one; so is a memory's size that every point fits in, as the
    result holds no capacity. Points that differ in another name too (a ``list`` sweep zips its
    values) are never compared.

    Examples
    --------
    >>> def run(i, latency, bandwidth, makespan):
    ...     params = {"model": "mlp", "link.latency_us": latency, "bw": bandwidth}
    ...     return {"index": i, "status": "ok", "params": params, "result": {"m": makespan}}
    >>> runs = [run(0, 1, 2, 5.0), run(1, 2, 2, 5.0), run(2, 1, 4, 3.0), run(3, 2, 4, 3.0)]
    >>> no_effect(runs, ["link.latency_us", "bw"])
    ['link.latency_us']
    """
    ok = [r for r in records if r.get("status") == "ok"]
    found = []
    for name in varied:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for record in ok:
            rest = {k: v for k, v in record["params"].items() if k != name}
            groups.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(record)
        compared = [g for g in groups.values() if len(g) > 1]
        if compared and all(_alike(r["result"], g[0]["result"]) for g in compared for r in g[1:]):
            found.append(name)
    return found


def _alike(first: Any, second: Any) -> bool:
    """Whether two results are equal, their floats but for rounding (`is_tie`)."""
    if isinstance(first, float) and isinstance(second, float):
        return is_tie(first, second)
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        return first.keys() == second.keys() and all(_alike(first[k], second[k]) for k in first)
    if isinstance(first, list | tuple) and isinstance(second, list | tuple):
        return len(first) == len(second) and all(map(_alike, first, second))
    return bool(first == second)
