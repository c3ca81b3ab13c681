"""`run_sweep`'s connection to a scheduler given by address: a server there that never answers
Dask's handshake is a SweepError once `CONNECT_TIMEOUT_S` has passed, not a hang."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator

import pytest

from hetsim.errors import SweepError
from hetsim.sweep import runner

SWEEP = {"target": "x86-h100", "models": ["mlp"], "vary": {"executor.dispatch_us": [1, 2]}}


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The address of a TCP server that takes connections and never says a word (as an HTTP
    server waits for a request it can parse)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:  # closed below
            pass

    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for connection in accepted:
        connection.close()


def test_a_server_that_never_answers_is_a_sweep_error(
    silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(SweepError) as caught:  # the client waited forever
        runner.run_sweep(SWEEP, scheduler=silent_server)
    message = str(caught.value)
    assert re.fullmatch(
        rf"scheduler: expected a Dask scheduler at {re.escape(silent_server)}, got "
        r"(no answer to Dask's handshake in 1 s \(not a Dask scheduler: a dashboard's port\?\)"
        r"|OSError: .*)",
        message,
    ), message
