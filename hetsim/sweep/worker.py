"""Set-up of a sweep's local Dask worker processes, run by each as it starts
(``distributed.worker.preload`` in `hetsim.sweep.runner.CLUSTER_CONFIG`).

A Ctrl-C in a terminal reaches every process of the command, the workers too, and each printed
its KeyboardInterrupt traceback under the sweep's ``interrupted`` line. The command stops them
itself as it closes the cluster, so they ignore the interrupt.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["dask_setup"]


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (Dask calls this once the worker is made)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
