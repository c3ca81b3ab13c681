"""Running sweeps: in-process and on a local Dask cluster of 2 worker processes.

One cluster serves the module (a start costs seconds). The points are real simulations; the
stand-in point functions below wrap them to fail or to kill their worker.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import re
import socket
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import SweepError
from hetsim.sweep import (
    Point,
    SweepProgress,
    execute_batch,
    execute_points,
    load_sweep,
    local_cluster,
    read_results,
    run_sweep,
    runner,
    simulate_point,
)

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

SWEEP: dict[str, Any] = {
    "name": "small",
    "target": "arm-riscv-soc",
    "models": ["mlp", "cnn"],
    "vary": {
        "executor.dispatch_us": [0.25, 0.5, 1.0],
        "devices[vdevice0].link.bandwidth_gbps": [4],
    },
}
VOLATILE = ("wall_s", "worker")  # the only fields that depend on where and when a point ran


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k not in VOLATILE} for r in records),
        key=lambda r: r["index"],
    )


def _failing_on_cnn(point: Point) -> dict[str, Any]:
    if point.model == "cnn" and dict(point.values)["executor.dispatch_us"] == 0.5:
        raise RuntimeError("cnn at 0.5 us breaks")
    return simulate_point(point)


def _dying_once(point: Point, marker: str) -> dict[str, Any]:
    """Kill the worker process running the first point that gets here; the marker says it did."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return simulate_point(point)
    os.close(fd)
    os._exit(1)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    # Workers must unpickle this module's point functions without importing the test module.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with local_cluster(2) as cluster:
        yield cluster.scheduler_address
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_in_process_sweep_matches_simulate_point_by_point() -> None:
    records = run_sweep(SWEEP, workers=0)
    spec = load_sweep(SWEEP)
    assert [r["params"] for r in records] == [p.params for p in spec.points()]
    for record, point in zip(records, spec.points(), strict=True):
        target = {
            "tag": "arm-riscv-soc",
            "executor": {"dispatch_us": record["params"]["executor.dispatch_us"]},
            "devices": {"vdevice0": {"link": {"bandwidth_gbps": 4}}},
        }
        expected = simulate(point.model, target, mode="timing", trace=False).to_dict()
        assert (record["status"], record["result"], record["worker"]) == ("ok", expected, "local")


def test_a_task_runs_the_points_its_client_pickled() -> None:
    """What a Dask task is given and gives back: bytes, which Dask passes on unread."""
    points = load_sweep(SWEEP).points()[2:5]  # mlp, then cnn at 0.25 and 0.5 us
    batch = pickle.dumps(points)
    assert _stable(pickle.loads(execute_batch(batch))) == _stable(execute_points(points))
    records = pickle.loads(execute_batch(batch, _failing_on_cnn))
    assert _stable(records) == _stable(execute_points(points, _failing_on_cnn))
    assert [r["status"] for r in records] == ["ok", "ok", "failed"]


def test_dask_sweep_gives_the_results_of_points_one_by_one(scheduler: str, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    records = run_sweep(SWEEP, out=out, scheduler=scheduler)
    assert _stable(records) == _stable(run_sweep(SWEEP, workers=0))
    header, written = read_results(out)
    assert header["sweep"] == load_sweep(SWEEP).hash
    assert _stable(written) == _stable(records)
    assert {r["worker"] for r in records} <= {w for w in _worker_addresses(scheduler)}


def _worker_addresses(scheduler: str) -> list[str]:
    with distributed.Client(scheduler) as client:
        return list(client.scheduler_info()["workers"])


def _ignores_interrupts() -> bool:
    import signal

    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_local_workers_ignore_a_terminal_s_interrupt(scheduler: str) -> None:
    # a Ctrl-C reaches every process of the command: each worker printed its KeyboardInterrupt
    # traceback under "interrupted" (the command closes the workers itself)
    with distributed.Client(scheduler) as client:
        assert set(client.run(_ignores_interrupts).values()) == {True}
    assert not _ignores_interrupts()  # the command's own process still stops on it


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(scheduler: str) -> None:
    records = run_sweep(SWEEP, scheduler=scheduler, run_point=_failing_on_cnn)
    failed = [(r["index"], r["error"], r["result"]) for r in records if r["status"] != "ok"]
    assert failed == [(4, "RuntimeError: cnn at 0.5 us breaks", None)]
    assert sum(r["status"] == "ok" for r in records) == 5


def test_a_killed_worker_loses_no_point_and_repeats_none(scheduler: str, tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    run_point = functools.partial(_dying_once, marker=str(marker))
    out = tmp_path / "results.jsonl"
    # Two points per task: the dead worker's whole task reruns elsewhere, and is written once.
    records = run_sweep(SWEEP, out=out, scheduler=scheduler, run_point=run_point, batch=2)
    assert marker.exists()
    lines = out.read_text().splitlines()[1:]
    assert sorted(json.loads(line)["index"] for line in lines) == list(range(6))
    assert _stable(records) == _stable(run_sweep(SWEEP, workers=0))


def test_interrupted_sweep_resumed_equals_uninterrupted(scheduler: str, tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    run_sweep(SWEEP, out=whole, workers=0)

    def stop_after_two(state: SweepProgress) -> None:
        if state.done == 2:
            raise KeyboardInterrupt

    part = tmp_path / "part.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(SWEEP, out=part, scheduler=scheduler, progress=stop_after_two)
    assert len(part.read_text().splitlines()) == 3
    seen: list[SweepProgress] = []
    run_sweep(SWEEP, out=part, scheduler=scheduler, resume=True, progress=seen.append)
    assert (seen[0].skipped, seen[0].done, seen[-1].done, seen[-1].total) == (2, 2, 6, 6)
    first, rest = whole.read_text().split("\n", 1), part.read_text().split("\n", 1)
    assert first[0] == rest[0]
    assert _stable(read_results(whole)[1]) == _stable(read_results(part)[1])


def test_resuming_a_complete_sweep_starts_no_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "done.jsonl"
    records = run_sweep(SWEEP, out=out, workers=0)
    before = out.read_text()

    def no_cluster(workers: int) -> None:
        raise AssertionError(f"a cluster of {workers} workers started with nothing to run")

    monkeypatch.setattr(runner, "local_cluster", no_cluster)
    assert run_sweep(SWEEP, out=out, workers=2, resume=True) == records
    assert out.read_text() == before


def test_resume_drops_a_line_cut_short(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    run_sweep(SWEEP, out=out, workers=0)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][:25])
    records = run_sweep(SWEEP, out=out, workers=0, resume=True)
    again = out.read_text().splitlines()
    assert len(again) == 7
    assert sorted(json.loads(line)["index"] for line in again[1:]) == list(range(6))
    assert len(records) == 6


def test_retry_failed_runs_the_failed_points_of_a_file_again(tmp_path: Path) -> None:
    # a plain --resume skips a point recorded failed for good, whatever failed it (a worker
    # that kept dying, a bug since mended): this runs it again and keeps the rest as it is
    out = tmp_path / "results.jsonl"
    run_sweep(SWEEP, out=out, workers=0, run_point=_failing_on_cnn)
    before = out.read_text().splitlines()
    failed_line = next(line for line in before[1:] if '"status":"failed"' in line)
    assert run_sweep(SWEEP, out=out, workers=0, resume=True)[4]["status"] == "failed"
    seen: list[SweepProgress] = []
    records = run_sweep(
        SWEEP, out=out, workers=0, resume=True, retry_failed=True, progress=seen.append
    )
    assert (seen[0].skipped, seen[-1].done, seen[-1].failed) == (5, 6, 0)
    after = out.read_text().splitlines()
    assert after[:-1] == [line for line in before if line != failed_line]  # as they were
    assert json.loads(after[-1])["index"] == 4
    assert _stable(records) == _stable(run_sweep(SWEEP, workers=0))
    assert _stable(read_results(out)[1]) == _stable(records)
    assert not list(tmp_path.glob("*.retry"))
    # nothing failed: the file stays as it is
    run_sweep(SWEEP, out=out, workers=0, resume=True, retry_failed=True)
    assert out.read_text().splitlines() == after


def test_resume_refuses_results_of_another_sweep(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    run_sweep({**SWEEP, "models": ["mlp"]}, out=out, workers=0)
    other = load_sweep({**SWEEP, "models": ["mlp"]}).hash
    ours = load_sweep(SWEEP).hash
    message = (
        f"{out}: expected results of this sweep (hash {ours}), "
        f"got results of another sweep (hash {other}, 'small')"
    )
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_an_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("precious\n")
    message = (
        f"{out}: expected a new results file (--resume completes an existing one), "
        "got an existing file"
    )
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        run_sweep(SWEEP, out=out, workers=0)
    assert out.read_text() == "precious\n"


def test_resume_refuses_a_file_that_is_not_a_results_file(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("precious\n")
    message = f"{out}: expected a hetsim-sweep/1 results file, got 'precious'"
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_a_sweep_of_numpy_values_runs_as_one_of_python_values(tmp_path: Path) -> None:
    # it raised "Object of type int64 is not JSON serializable" from the first record
    numbers = {**SWEEP, "vary": {"executor.dispatch_us": [np.float32(0.25), np.float64(0.5)]}}
    numbers["vary"]["host.cores"] = list(np.arange(1, 3))
    plain = {**SWEEP, "vary": {"executor.dispatch_us": [0.25, 0.5], "host.cores": [1, 2]}}
    out = tmp_path / "numbers.jsonl"
    records = run_sweep(numbers, out=out, workers=np.int64(0), batch=np.int64(2))
    assert _stable(records) == _stable(run_sweep(plain, workers=0))
    assert _stable(read_results(out)[1]) == _stable(records)


def test_bad_worker_count_is_refused() -> None:
    with pytest.raises(SweepError, match=r"^workers: expected an integer >= 0, got -1$"):
        run_sweep(SWEEP, workers=-1)


def test_bad_batch_is_refused() -> None:
    with pytest.raises(SweepError, match=r"^batch: expected an integer >= 1 or None, got 0$"):
        run_sweep(SWEEP, workers=0, batch=0)


def test_local_cluster_workers_keep_glibc_heap_trimming_default(scheduler: str) -> None:
    # Dask's MALLOC_TRIM_THRESHOLD_=65536 made each simulation 2.5x slower (docs/sweeps.md).
    with distributed.Client(scheduler) as client:
        found = client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_")
    assert found, "a worker is up (a restarted one may not be back yet)"
    assert set(found.values()) == {None}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retries": -1}, "retries: expected an integer >= 0, got -1"),
        ({"resume": "no"}, "resume: expected true or false, got 'no'"),
        ({"retry_failed": 1}, "retry_failed: expected true or false, got 1"),
        (
            {"retry_failed": True},
            "retry_failed: expected resume=True (it retries the failed points of a file it "
            "completes), got resume=False",
        ),
        ({"progress": 3}, "progress: expected a callable or None, got 3"),
        ({"out": 3}, "out: expected a file path, got 3"),
        ({"run_point": None}, "run_point: expected a callable, got None"),
    ],
)
def test_bad_run_options_are_named(options: dict[str, Any], message: str) -> None:
    # they raised TypeError when used, or ("no") resumed
    with pytest.raises(SweepError, match=f"^{re.escape(message)}$"):
        run_sweep(SWEEP, workers=0, **options)


def test_a_results_path_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "r.jsonl"
    message = f"{missing}: expected a file in an existing folder, got no folder '{missing.parent}'"
    with pytest.raises(SweepError, match=f"^{re.escape(message)}$"):
        run_sweep(SWEEP, out=missing, workers=0)
    with pytest.raises(
        SweepError, match=f"^{re.escape(f'{tmp_path}: expected a results file, got a directory')}$"
    ):
        run_sweep(SWEEP, out=tmp_path, workers=0)


@pytest.mark.parametrize(
    ("line", "got"),
    [
        ("not json", "'not json'"),
        ("[1, 2]", "'[1, 2]'"),
        ('{"index": 1}', """'{"index": 1}'"""),
        ('{"id": "42f5c2eb98db", "index": 1}', """'{"id": "42f5c2eb98db", "index": 1}'"""),
    ],
)
def test_resuming_a_damaged_results_file_names_the_line(
    tmp_path: Path, line: str, got: str
) -> None:
    # each raised JSONDecodeError, TypeError or KeyError without the file
    out = tmp_path / "r.jsonl"
    run_sweep(SWEEP, out=out, workers=0)
    header, first, *rest = out.read_text().splitlines()
    out.write_text("\n".join([header, first, line, *rest]) + "\n")
    expected = "expected a point's record (a JSON object with an id and a status)"
    with pytest.raises(SweepError, match=f"^{re.escape(f'{out}:3: {expected}, got {got}')}$"):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def test_resuming_a_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b'{"format": "x"}\n\x8d\xff\n')
    with pytest.raises(
        SweepError, match=r"expected a .* results file, got bytes that are not UTF-8"
    ):
        run_sweep(SWEEP, out=out, workers=0, resume=True)


def _unsendable_on_cnn(point: Point) -> dict[str, Any]:
    """A result of cnn's 0.5 µs point neither pickle nor JSON can hold."""
    import threading

    result = simulate_point(point)
    if point.model == "cnn" and dict(point.values)["executor.dispatch_us"] == 0.5:
        return {**result, "lock": threading.Lock()}
    return result


def test_a_result_a_worker_cannot_send_back_fails_its_point_only() -> None:
    # the batch was pickled whole: one lock in one result failed (and retried) all its points
    points = load_sweep(SWEEP).points()
    records = pickle.loads(execute_batch(pickle.dumps(points), _unsendable_on_cnn))
    failed = [(r["index"], r["error"]) for r in records if r["status"] != "ok"]
    assert failed == [
        (4, "TypeError: result: expected values a worker can send back (pickle), got "
            "TypeError: cannot pickle '_thread.lock' object"),
    ]  # fmt: skip
    assert len(records) == 6


def test_progress_counts_a_result_kept_as_a_failure() -> None:
    # the log kept a failed copy of a result JSON cannot hold; progress saw the "ok" original
    seen: list[SweepProgress] = []
    records = run_sweep(SWEEP, workers=0, run_point=_unsendable_on_cnn, progress=seen.append)
    assert [r["status"] for r in records].count("failed") == 1
    assert seen[-1].failed == 1
    assert [s.record["status"] for s in seen if s.record is not None].count("failed") == 1


class _Future:
    """A Dask future as `runner._finished` reads it: its status, result and exception."""

    def __init__(self, status: str, result: Any = None, error: BaseException | None = None):
        self.status, self._result, self._error = status, result, error

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._result

    def exception(self) -> BaseException | None:
        return self._error if self.status == "error" else None


def test_a_result_lost_with_its_worker_is_waited_for_not_failed() -> None:
    # a worker that died after its task finished left the future "lost" (Dask computes it
    # again): read as an error, exception() None, its good points were recorded failed,
    # "NoneType: None", and --resume skipped them for good
    points = load_sweep(SWEEP).points()[:2]
    records = execute_points(points)
    lost = _Future("lost", pickle.dumps(records))
    assert runner._finished(lost, points) == records
    for future, error in [
        (_Future("error", error=RuntimeError("worker died")), "RuntimeError: worker died"),
        (_Future("lost", error=RuntimeError("killed again")), "RuntimeError: killed again"),
    ]:
        failed = runner._finished(future, points)
        assert [(r["status"], r["error"]) for r in failed] == [("failed", error)] * 2


def test_local_cluster_takes_no_fixed_http_port() -> None:
    # The scheduler always serves HTTP (health routes, even with no dashboard); on Dask's
    # default 8787 a second sweep, or the user's own cluster, printed "Port 8787 is already in
    # use ... Hosting the HTTP server on port N instead" as the sweep started.
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        held.bind(("127.0.0.1", 8787))
    except OSError:
        pytest.skip("port 8787 is taken already: the warning would come either way")
    held.listen()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with local_cluster(1) as cluster:
                port = cluster.scheduler.http_server.port
    finally:
        held.close()
    assert port != 8787
    assert not [w for w in caught if "already in use" in str(w.message)]
