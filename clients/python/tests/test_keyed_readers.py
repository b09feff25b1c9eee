"""Who reads a keyed connection: a sync caller reads its own reply while nobody else does (it
leads), others sleep until it hands them theirs, and the reader thread takes over once no caller
reads. These tests pin the cases where that hand-over could lose a reply or a drop."""

from __future__ import annotations

import signal
import threading
import time
from typing import List

import pytest

from baton_client import KeyedClient
from conftest import BatonProcess, wait_for
from fake_server import FakeConn, FakeServer


class Interrupted(BaseException):
    """What the test's signal handler raises in the main thread (as KeyboardInterrupt would)."""


def test_a_caller_leading_for_a_long_wait_hands_other_threads_their_replies(baton_server: BatonProcess) -> None:
    with KeyedClient(baton_server.lock_address, identity=None) as holder, KeyedClient(baton_server.lock_address, identity=None) as client:
        held = holder.acquire("readers/held", lease=30)
        box: List = []
        waiter = threading.Thread(target=lambda: box.append(client.acquire("readers/held", lease=30)), daemon=True)
        waiter.start()
        time.sleep(0.2)  # the waiter is reading the socket now, for as long as its wait lasts
        started = time.monotonic()
        for i in range(200):
            client.acquire(f"readers/quick-{i % 4}", lease=30).release()
        assert time.monotonic() - started < 10
        assert held.release() is True
        waiter.join(10)
        assert box and box[0].release() is True


def test_an_interrupted_leader_leaves_a_working_client_and_its_late_grant_released(baton_server: BatonProcess) -> None:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_kill"):
        pytest.skip("needs signals to the main thread")

    def interrupt(signum, frame):  # type: ignore[no-untyped-def]
        raise Interrupted()

    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        with KeyedClient(baton_server.lock_address, identity=None) as holder, KeyedClient(baton_server.lock_address, identity=None) as client:
            held = holder.acquire("readers/interrupted", lease=30)
            main = threading.main_thread().ident
            assert main is not None
            threading.Timer(0.3, signal.pthread_kill, args=(main, signal.SIGUSR1)).start()
            with pytest.raises(Interrupted):
                client.acquire("readers/interrupted", lease=30)  # waits forever, reading the socket
            assert held.release() is True
            # The grant that came after the caller gave up is released by the client itself.
            wait_for(lambda: baton_server.holder("readers/interrupted") is None, 5, "the abandoned grant released")
            assert client.acquire("readers/after", lease=30).release() is True
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_drop_on_an_idle_connection_is_seen_without_a_caller() -> None:

    def handler(conn: FakeConn) -> None:
        line = conn.readline()
        if line is None:
            return
        conn.send(f"A {line.split()[1]} 7\n".encode())
        time.sleep(0.3)  # the client is idle now: nobody but its reader thread can see this
        conn.close()

    with FakeServer(handler) as server, KeyedClient(server.address, identity=None, reconnect_interval=0.2) as client:
        assert client.acquire("readers/idle", lease=30).token == 7
        first = client._engine.connections[0]
        gen = first.gen
        wait_for(lambda: first.gen != gen, 5, "the reader thread to see the drop")
        # The idle connection came home again on its own.
        wait_for(lambda: len(server.conns) >= 3, 5, "a reconnect")
