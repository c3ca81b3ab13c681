"""A target built from a calibration of this machine predicts `hetsim.execute` on it.

The bound is generous (50%), yet a loaded machine failed it (57%, the calibration measured while
other work ran): it asserts on wall time, so it is marked ``timed`` and runs from
``benchmarks/slow_tests.py``, not in the test command. A broken calibration (a unit slip, a
lost parameter, a wrong kind) fails it by far more. The 10% goal is measured by
``benchmarks/accuracy.py``. One BLAS thread for both the calibration and the
timed runs: on a machine shared with other work, BLAS threads that wait for a busy core make
multi-threaded timings swing by orders of magnitude (docs/validation.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from hetsim.calibrate import LOCAL_TAG, calibrate, compare_model, write_tag
from hetsim.target import add_tag_dir, remove_tag_dir

BOUND_PCT = 50.0

pytestmark = pytest.mark.timed


@pytest.fixture(scope="module")
def local_tag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("local")
    with threadpool_limits(limits=1, user_api="blas"):
        write_tag(calibrate("quick", threads=1), folder / f"{LOCAL_TAG}.yaml")
    add_tag_dir(folder)
    yield LOCAL_TAG
    remove_tag_dir(folder)


def test_calibrated_target_predicts_squeezenet_within_the_bound(local_tag: str) -> None:
    with threadpool_limits(limits=1, user_api="blas"):
        comparison = compare_model("squeezenet", local_tag, repeats=7)
    assert abs(comparison.error_pct) <= BOUND_PCT, comparison.to_dict()
