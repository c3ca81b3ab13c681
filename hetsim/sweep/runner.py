"""Running a sweep's points on Dask distributed (or in this process), fault-tolerant and resumable.

`run_sweep` validates the sweep (`hetsim.sweep.spec`), skips the points a resumed results file
already holds, sends the rest to Dask (a `distributed.LocalCluster` of worker processes with one
thread each, or a scheduler by address) and records each point as it finishes
(`hetsim.sweep.results`). A point that raises is recorded as failed with its message; a point whose
worker dies is rerun by the scheduler on another worker; each point id is written once. A point's
record does not depend on the worker, except for ``wall_s`` and ``worker``.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

from hetsim.api import simulate
from hetsim.errors import Problem, SweepError, is_count
from hetsim.sweep.loaded import point_model
from hetsim.sweep.points import Point, SweepSpec
from hetsim.sweep.results import ResultsLog, unkept_result
from hetsim.sweep.spec import load_sweep

__all__ = [
    "CLUSTER_CONFIG",
    "CONNECT_TIMEOUT_S",
    "MAX_BATCH",
    "RETRIES",
    "TASKS_PER_WORKER",
    "SweepProgress",
    "batch_size",
    "connect",
    "execute_batch",
    "execute_point",
    "execute_points",
    "local_cluster",
    "run_sweep",
    "simulate_point",
]

TASKS_PER_WORKER = 4
"""`batch_size` aims at this many Dask tasks per worker: each task costs the client's process
(which runs a local cluster's scheduler too) about 2 ms of CPU on the cores the workers use, and
with 8 tasks per worker a 200-point SqueezeNet sweep on 2 workers spent 50 ms of it in 160
(docs/sweeps.md, "Scaling")."""
MAX_BATCH = 32
"""The most points in one Dask task."""
CLUSTER_CONFIG = {
    # Each worker holds two tasks, the one it runs and the next, and the scheduler keeps the
    # rest: with the default (one per thread) a worker idles a round trip between tasks, and
    # with every task handed out at once (inf) one worker could sit idle while the other still
    # held several. A dead worker's tasks still move to another one.
    "distributed.scheduler.worker-saturation": 2.0,
    # The sampling profiler feeds the dashboard, which a sweep does not start; on busy cores
    # its thread also holds up the simulation thread.
    "distributed.worker.profile.enabled": False,
    # Dask sets MALLOC_TRIM_THRESHOLD_=65536 in its workers to hand memory back to the OS;
    # glibc then trims its heap after nearly every simulation, which runs 2x slower. None unsets it.
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    # A terminal's Ctrl-C reaches the workers too, each of which printed a traceback; the
    # command closes them itself (`hetsim.sweep.worker`).
    "distributed.worker.preload": ["hetsim.sweep.worker"],
}
"""Dask settings of the local cluster (`local_cluster`)."""
RETRIES = 2
"""Times Dask reruns a point whose task raised outside the point (a worker's death is retried by
the scheduler itself, up to ``distributed.scheduler.allowed-failures`` times)."""

CONNECT_TIMEOUT_S = 30.0
"""How long `run_sweep` waits for a scheduler given by address to answer (Dask's own default
connect timeout). A server there that is not a Dask scheduler (its dashboard's HTTP port, 8787,
for the scheduler's 8786) never completes Dask's handshake: the client waited forever, or read
an HTTP reply as a message length and ran out of memory."""

PointFn = Callable[[Point], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class SweepProgress:
    """Where a sweep stands, after each point: counts, elapsed and estimated remaining seconds."""

    total: int
    done: int
    failed: int
    skipped: int
    elapsed_s: float
    eta_s: float | None
    record: Mapping[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<SweepProgress {self.done}/{self.total} failed={self.failed}>"


def simulate_point(point: Point) -> dict[str, Any]:
    """Simulate one point and return its `Result.to_dict()`.

    The model comes from `point_model`, and of the sweep's ``dims`` it gets those it has (a
    sweep's models share them; `simulate` refuses a dim its model does not have): the result
    equals that of `hetsim.simulate` called with the model's name and its dims.

    Examples
    --------
    >>> spec = load_sweep({"target": "arm-riscv-soc", "models": ["mlp"]})
    >>> result = simulate("mlp", "arm-riscv-soc", mode="timing", trace=False)
    >>> simulate_point(spec.points()[0]) == result.to_dict()
    True
    """
    graph = point_model(point.file)
    options: dict[str, Any] = dict(point.options) | dict(point.choices)
    if "dims" in options:
        options["dims"] = {k: v for k, v in options["dims"].items() if k in graph.symbols}
    if "rules" in options:  # (op, device) pairs, hashable in the point: as simulate takes them
        options["rules"] = [{"op": op, "device": device} for op, device in options["rules"]]
    return simulate(graph, point.target, **options).to_dict()


def execute_point(point: Point, run_point: PointFn = simulate_point) -> dict[str, Any]:
    """Run one point and return its record; an exception it raises becomes a failed record."""
    start = time.perf_counter()
    result: Mapping[str, Any] | None = None
    error = None
    try:
        result = run_point(point)
        if not isinstance(result, Mapping):  # dict() of it raised outside this try
            raise TypeError(f"run_point: expected a mapping (a result's to_dict()), got {result!r}")
    except Exception as err:  # a failing point is a result of the sweep: record it and go on
        result = None
        error = f"{type(err).__name__}: {err}"
    return _record(point, result, error, time.perf_counter() - start, _worker_name())


def _record(
    point: Point, result: Mapping[str, Any] | None, error: str | None, wall_s: float, worker: str
) -> dict[str, Any]:
    return {
        "id": point.id,
        "index": point.index,
        "params": point.params,
        "status": "ok" if error is None else "failed",
        "result": None if result is None else dict(result),
        "error": error,
        "wall_s": round(wall_s, 6),
        "worker": worker,
    }


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):  # not inside a Dask worker
        return "local"


def run_sweep(
    spec: SweepSpec | Mapping[str, Any] | str | Path,
    *,
    out: str | Path | None = None,
    workers: int = 2,
    scheduler: str | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    progress: Callable[[SweepProgress], object] | None = None,
    run_point: PointFn = simulate_point,
    retries: int = RETRIES,
    batch: int | None = None,
) -> list[dict[str, Any]]:
    """Run every point of a sweep and return their records, in point order.

    Parameters
    ----------
    spec
        A sweep file path, its contents as a mapping, or a `SweepSpec`; validated, with every
        point's target, before anything runs.
    out
        The results file (JSON lines), written as points finish; None keeps results in memory.
    workers
        Worker processes of the local cluster (one thread each); ``0`` runs the points one by
        one in this process, without Dask.
    scheduler
        Address of a running Dask scheduler (``tcp://host:8786``): used instead of a local cluster.
    resume
        Complete an existing results file of the same sweep, skipping the points it holds.
    retry_failed
        With `resume`, run again the points the file holds as failed (a worker that kept
        dying, a point that failed for a reason since mended): their records leave the file,
        and the new ones are written as any.
    progress
        Called with a `SweepProgress` once at the start and after each point.
    run_point
        What runs one point (default: `simulate_point`); it must be importable by the workers.
    retries
        Dask reruns of a task that raised outside `run_point`.
    batch
        Points per Dask task (their records arrive together); None picks `batch_size`.

    Raises
    ------
    SweepError
        A bad sweep, a bad `workers`, `batch`, `retries`, `progress` or `run_point` (not a
        callable), an existing `out` without `resume`, `resume` without `out`, `retry_failed`
        without `resume`, or a resumed file of another sweep (or one that is damaged).
    """
    spec = load_sweep(spec)  # every problem at once; the spec keeps its points
    if not is_count(workers):  # a numpy integer too, as `simulate` takes one
        raise SweepError([Problem("workers", "expected an integer >= 0", repr(workers))])
    if batch is not None and not is_count(batch, 1):
        raise SweepError([Problem("batch", "expected an integer >= 1 or None", repr(batch))])
    if not is_count(retries):
        raise SweepError([Problem("retries", "expected an integer >= 0", repr(retries))])
    workers, retries = int(workers), int(retries)
    batch = None if batch is None else int(batch)
    if not isinstance(resume, bool):
        raise SweepError([Problem("resume", "expected true or false", repr(resume))])
    if resume and out is None:  # ran every point again, and kept none
        raise SweepError([Problem("resume", "expected a results file to complete (out)", "none")])
    if not isinstance(retry_failed, bool):
        raise SweepError([Problem("retry_failed", "expected true or false", repr(retry_failed))])
    if retry_failed and not resume:
        expected = "expected resume=True (it retries the failed points of a file it completes)"
        raise SweepError([Problem("retry_failed", expected, "resume=False")])
    if progress is not None and not callable(progress):
        raise SweepError([Problem("progress", "expected a callable or None", repr(progress))])
    if not callable(run_point):  # every point failed with "'NoneType' object is not callable"
        raise SweepError([Problem("run_point", "expected a callable", repr(run_point))])
    points = spec.points()
    log = ResultsLog(out, spec, resume=resume, retry_failed=retry_failed)
    try:
        todo = [p for p in points if p.id not in log]
        tracker = _Tracker(len(points), len(points) - len(todo), progress)
        tracker.report(None)
        if (workers == 0 and scheduler is None) or not todo:  # nothing for a cluster to do
            runs = _in_process(todo, run_point)
        else:
            options = {"batch": batch, "retries": retries}
            runs = _on_dask(todo, run_point, workers, scheduler, options)
        with contextlib.closing(runs):
            for record in runs:
                kept = log.add(record)  # a result JSON cannot hold is kept as a failure
                if kept is not None:
                    tracker.report(kept)
    finally:
        log.close()
    return log.sorted()


class _Tracker:
    """Counts finished points and reports progress with an ETA from this run's rate."""

    def __init__(
        self, total: int, skipped: int, progress: Callable[[SweepProgress], object] | None
    ) -> None:
        self.total, self.skipped, self.progress = total, skipped, progress
        self.ran = self.failed = 0
        self.start = time.perf_counter()

    def report(self, record: Mapping[str, Any] | None) -> None:
        if record is not None:
            self.ran += 1
            self.failed += record["status"] != "ok"
        if self.progress is None:
            return
        elapsed = time.perf_counter() - self.start
        left = self.total - self.skipped - self.ran
        eta = elapsed / self.ran * left if self.ran else None
        done = self.skipped + self.ran
        state = SweepProgress(self.total, done, self.failed, self.skipped, elapsed, eta, record)
        self.progress(state)


def _in_process(
    points: Sequence[Point], run_point: PointFn
) -> Generator[dict[str, Any], None, None]:
    for point in points:
        yield execute_point(point, run_point)


def execute_points(
    points: Sequence[Point], run_point: PointFn = simulate_point
) -> list[dict[str, Any]]:
    """`execute_point` for each of `points`: the records of one Dask task."""
    return [execute_point(point, run_point) for point in points]


def execute_batch(batch: bytes, run_point: PointFn = simulate_point) -> bytes:
    """`execute_points` of the points pickled in `batch`, their records pickled: a Dask task.

    Both cross Dask as bytes, which the scheduler and the worker pass on as they are. Given the
    points as objects, the scheduler unpickled every point's target tree too (it loads a task's
    arguments): a 200-point sweep of ``len`` over the points took the client and scheduler
    74-139 ms of CPU, and 30-35 ms with the same batches as bytes. Given the records as objects,
    the worker's event loop walked each to estimate its size (`dask.sizeof`) and pickled it,
    holding the interpreter's lock that the next points' simulation was waiting for
    (``docs/sweeps.md``, "Tasks and batching").
    """
    records = execute_points(pickle.loads(batch), run_point)
    try:
        return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a result a worker cannot send back fails its point, not its batch
        return pickle.dumps([_sendable(r) for r in records], protocol=pickle.HIGHEST_PROTOCOL)


def _sendable(record: dict[str, Any]) -> dict[str, Any]:
    """`record`, or a failed one saying why, when pickle cannot send it back (a custom
    ``run_point``'s result holding a lock: the whole batch had failed, and been retried)."""
    try:
        pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as err:
        return unkept_result(record, "values a worker can send back (pickle)", err)
    return record


def batch_size(points: int, workers: int) -> int:
    """Points per Dask task: about `TASKS_PER_WORKER` tasks per worker, at most `MAX_BATCH` points.

    A task costs the scheduler and the client milliseconds, as much as a small simulation; a
    few tasks per worker keep that cost small and the workers' finishing times close.

    >>> batch_size(200, 2), batch_size(10, 2), batch_size(100_000, 8)
    (25, 1, 32)
    """
    return max(1, min(MAX_BATCH, points // (max(workers, 1) * TASKS_PER_WORKER)))


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A `distributed.LocalCluster` of `workers` processes, one thread each, set up for sweeps.

    Its settings are `CLUSTER_CONFIG`; the nanny hands them to a restarted worker too.
    """
    import dask
    from distributed import LocalCluster

    with (
        dask.config.set(CLUSTER_CONFIG),
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # the scheduler serves HTTP even without a dashboard; on Dask's default port, 8787,
            # a second sweep (or the user's own cluster) printed "Port 8787 is already in use"
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        ) as cluster,
    ):
        yield cluster


def connect(address: str) -> Any:
    """A `distributed.Client` of the scheduler at `address`, or, when none answers there within
    `CONNECT_TIMEOUT_S`, a SweepError that says so.

    The client is made on a thread of its own, watched with a deadline: `distributed`'s own
    timeout covers reaching the address, not a server there that never answers its handshake.
    A thread still stuck after the deadline is a daemon and is left behind.
    """
    from distributed import Client

    made: dict[str, Any] = {}

    def make() -> None:
        try:
            made["client"] = Client(address, timeout=CONNECT_TIMEOUT_S)  # type: ignore[no-untyped-call]
        except Exception as err:  # a MemoryError too (an HTTP reply read as a length)
            made["error"] = err

    thread = threading.Thread(target=make, name="hetsim-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_TIMEOUT_S + 1.0)
    expected = f"expected a Dask scheduler at {address}"
    if "client" in made:
        return made["client"]
    if "error" in made:
        err = made["error"]
        got = f"{type(err).__name__}: {err}"
    else:
        got = (
            f"no answer to Dask's handshake in {CONNECT_TIMEOUT_S:g} s (not a Dask scheduler: "
            "a dashboard's port?)"
        )
    raise SweepError([Problem("scheduler", expected, got)])


def _on_dask(
    points: Sequence[Point],
    run_point: PointFn,
    workers: int,
    scheduler: str | None,
    options: Mapping[str, Any],
) -> Generator[dict[str, Any], None, None]:
    from distributed import Client, as_completed

    with contextlib.ExitStack() as stack:
        if scheduler is None:
            cluster = stack.enter_context(local_cluster(workers))
            client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
        else:
            client = stack.enter_context(connect(scheduler))
            workers = len(client.scheduler_info()["workers"])
        size = options["batch"] or batch_size(len(points), workers)
        token = uuid4().hex[:8]  # keys unique to this run: a shared scheduler may hold old ones
        batches = [tuple(points[i : i + size]) for i in range(0, len(points), size)]
        keys = [f"hetsim-points-{b[0].id}-{len(b)}-{token}" for b in batches]
        payloads = [pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL) for b in batches]
        with warnings.catch_warnings():
            # the points travel in the tasks, by design (a task retried on another worker has
            # them; scattered, they would go with a worker that died): Dask's advice to scatter
            # a large graph, printed before the progress bar of a 1e5-point sweep, is not ours
            warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
            submitted = client.map(
                execute_batch,
                payloads,
                run_point=run_point,
                key=keys,
                retries=options["retries"],
                pure=False,
            )
        futures = dict(zip(submitted, batches, strict=True))
        try:
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                yield from _finished(future, futures[future])
                future.release()
        finally:
            client.cancel(list(futures))


def _finished(future: Any, points: Sequence[Point]) -> list[dict[str, Any]]:
    """The records of a finished task; a task that erred (its worker kept dying) fails them.

    A task is done once its result is made, but the result stays on its worker until fetched:
    a worker that dies before then leaves the future ``lost`` (Dask computes it again), not
    erred. Its result is waited for; read as an error (``exception()`` is None then), its good
    points had been recorded failed, ``NoneType: None``, and `--resume` never ran them again.
    """
    err: BaseException | None = None
    if future.status == "error":
        err = future.exception()
    else:
        try:
            return pickle.loads(future.result())  # type: ignore[no-any-return]
        except Exception as raised:  # its recomputation failed too (KilledWorker), or cancelled
            err = raised
    return [_record(point, None, f"{type(err).__name__}: {err}", 0.0, "none") for point in points]
