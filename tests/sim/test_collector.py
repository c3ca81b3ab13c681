"""`paused()` across threads: the collector ends as it began, whatever the interleaving."""

from __future__ import annotations

import gc
import threading

from hetsim.sim.collector import paused


def _interleaved(first_out: str) -> bool:
    """Threads a and b both inside `paused`, b entering after a; `first_out` leaves first.
    Whether the collector is on once both are out (it was on before)."""
    inside = {name: threading.Event() for name in "ab"}
    leave = {name: threading.Event() for name in "ab"}

    def run(name: str) -> None:
        with paused():
            inside[name].set()
            leave[name].wait(5)

    a = threading.Thread(target=run, args=("a",))
    a.start()
    assert inside["a"].wait(5)
    b = threading.Thread(target=run, args=("b",))
    b.start()
    assert inside["b"].wait(5)
    assert not gc.isenabled()
    other = "b" if first_out == "a" else "a"
    leave[first_out].set()
    threads = {"a": a, "b": b}
    threads[first_out].join(5)
    assert not threads[first_out].is_alive()
    assert not gc.isenabled()  # the other is still inside
    leave[other].set()
    threads[other].join(5)
    assert not threads[other].is_alive()
    return gc.isenabled()


def test_the_collector_is_on_again_once_every_thread_is_out() -> None:
    # b read "off" while a's pause was on, and a, leaving first, turned it on: b then turned it
    # off for good (each caller restored its own read; 3 in 100 rounds of 8 threads of mlp)
    assert gc.isenabled()
    try:
        assert _interleaved("a")
        assert _interleaved("b")
    finally:
        gc.enable()


def test_a_pause_begun_while_another_runs_turns_the_collector_off_again() -> None:
    # something turned it on while one pause ran: a pause entered after ran with it on
    try:
        with paused():
            gc.enable()
            with paused():
                assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_collector_off_before_stays_off() -> None:
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
