"""Who reads a keyed connection: a sync caller reads its own reply while nobody else does (it
leads), others sleep until it hands them theirs, and the reader thread takes over once no caller
reads. These tests pin the cases where that hand-over could lose a reply or a drop."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import ExitStack
from typing import Any, Callable, List, Optional

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


class DeadActiveCluster:
    """A fake three-node cluster: `a` the active (it never answers: the lock is someone else's),
    `b` and `c` standbys that send every connection to `a` with `M` until `promoted` is set; then
    `b` grants every `A` with token 9 and `c` points at `b`. The client under test has its three
    connections on `a` (two by redirect) when the context is entered."""

    def __init__(self) -> None:
        self.promoted = threading.Event()
        self.granted_lines: List[str] = []
        self._stack = ExitStack()

    def __enter__(self) -> "DeadActiveCluster":
        def dead_active(conn: FakeConn) -> None:
            while conn.readline(timeout=30) is not None:
                pass  # the acquire waits: the lock is held by someone else

        self.a = a = self._stack.enter_context(FakeServer(dead_active))

        def standby(conn: FakeConn, new_active: Optional[str]) -> None:
            if not self.promoted.is_set():
                conn.send(f"M {a.address}\n".encode())
                while conn.readline(timeout=30) is not None:
                    conn.send(f"M {a.address}\n".encode())
                return
            if new_active is not None:
                conn.send(f"M {new_active}\n".encode())
            while True:
                line = conn.readline(timeout=30)
                if line is None:
                    return
                if new_active is None and line.startswith("A "):
                    self.granted_lines.append(line)
                    conn.send(f"A {line.split()[1]} 9\n".encode())

        self.b = b = self._stack.enter_context(FakeServer(lambda conn: standby(conn, None)))
        self.c = self._stack.enter_context(FakeServer(lambda conn: standby(conn, b.address)))
        self.client = self._stack.enter_context(
            KeyedClient([a.address, b.address, self.c.address], identity=None, reconnect_interval=1.0, connect_timeout=1.0)
        )
        engine = self.client._engine
        with engine.lock:
            engine._pick(None, None)  # connect now, as the first request would
        self.conns = conns = engine.connections
        a_addr = conns[0].home
        wait_for(
            lambda: all(c.state == "open" and c.address == a_addr for c in conns) and len(a.conns) == 3,
            5,
            "all three connections on the active a",
        )
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()


def test_an_acquire_moved_off_a_dead_active_skips_sockets_it_already_closed() -> None:
    """A kill -9 of the active closes every connection to it at once (those of standbys'
    addresses too: they were redirected there), but each reader sees its close in its own time. An
    acquire moved off the first one must not land on another already closed, spending a try at
    each: it waits for a reconnect, and the new active grants it. Here the readers of the other
    two connections are kept from seeing their close (their read_lock is held) until the acquire
    has moved on. (They come home after 0.2 s, the first one, home at the dead node, after the
    reconnect interval, as in the cluster test.)"""
    with DeadActiveCluster() as cluster:
        client, conns, a = cluster.client, cluster.conns, cluster.a
        box: List[Any] = []

        def waiter() -> None:
            box.append(_outcome(lambda: client.acquire("readers/failover", lease=30, wait=10)))

        thread = threading.Thread(target=waiter, daemon=True)
        thread.start()
        sent = lambda: any(line.startswith("A readers/failover") for conn in a.conns for line in conn.received)  # noqa: E731
        wait_for(sent, 5, "the acquire on a")
        # The readers of the connections that came to a by redirect are late to see it die.
        slow = [conns[1].read_lock, conns[2].read_lock]
        for lock in slow:
            lock.acquire()
        try:
            cluster.promoted.set()
            a.close()  # every connection to a closes at once; its port refuses from now on
            wait_for(lambda: conns[0].state != "open", 5, "the first connection's drop")
            time.sleep(0.1)  # the acquire moves on meanwhile
        finally:
            for lock in slow:
                lock.release()
                time.sleep(0.1)  # one late reader after the other
        thread.join(15)
        assert box, "the acquire never settled"
        grant = box[0]
        assert not isinstance(grant, BaseException), grant
        assert grant.token == 9
        assert len(cluster.granted_lines) == 1 and 0 < float(cluster.granted_lines[0].split()[3]) < 10


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except BaseException as error:  # noqa: BLE001 - handed to the test thread
        return error


def test_an_acquire_moved_off_a_dead_active_is_not_sent_along_connections_redirected_there() -> None:
    """As above, but the dead active's other sockets close a moment later than the first, after the
    acquire could have moved onto them (a process dying closes its sockets one by one): they look
    alive when it moves. Those connections reached a only through a standby's `M`; the acquire
    waits for one to come home instead of spending a try on each, and the new active grants it."""
    with DeadActiveCluster() as cluster:
        client, a = cluster.client, cluster.a
        box: List[Any] = []
        thread = threading.Thread(target=lambda: box.append(_outcome(lambda: client.acquire("readers/later", lease=30, wait=10))), daemon=True)
        thread.start()
        carrying = lambda: [conn for conn in a.conns if any(line.startswith("A readers/later") for line in conn.received)]  # noqa: E731
        wait_for(lambda: len(carrying()) == 1, 5, "the acquire on a")
        first = carrying()[0]
        cluster.promoted.set()
        first.close()  # the socket carrying the acquire closes first ...
        time.sleep(0.3)  # ... the others only once the acquire could have moved onto them
        a.close()
        thread.join(15)
        assert box, "the acquire never settled"
        grant = box[0]
        assert not isinstance(grant, BaseException), grant
        assert grant.token == 9
        assert len(cluster.granted_lines) == 1
        # It never went back to a node it had reached only through a redirect.
        assert len(carrying()) == 1, [conn.received for conn in a.conns]


def test_a_parked_acquire_comes_home_past_a_redirected_connection_still_open() -> None:
    """As above, with one address (a standby that sent both connections to a), and the dead
    active's other socket slow to close: the connection that lost the acquire comes home while
    the other is still open on a. The parked acquire goes home with it, not onto that socket,
    which would spend its last try (two connections, two tries) on the dead node."""
    promoted = threading.Event()
    granted_lines: List[str] = []

    def dead_active(conn: FakeConn) -> None:
        while conn.readline(timeout=30) is not None:
            pass

    with FakeServer(dead_active) as a:

        def standby(conn: FakeConn) -> None:
            if not promoted.is_set():
                conn.send(f"M {a.address}\n".encode())
            while True:
                line = conn.readline(timeout=30)
                if line is None:
                    return
                if not promoted.is_set():
                    conn.send(f"M {a.address}\n".encode())
                elif line.startswith("A "):
                    granted_lines.append(line)
                    conn.send(f"A {line.split()[1]} 9\n".encode())

        with FakeServer(standby) as b:
            with KeyedClient(b.address, identity=None, reconnect_interval=1.0, connect_timeout=1.0) as client:
                engine = client._engine
                with engine.lock:
                    engine._pick(None, None)
                conns = engine.connections
                wait_for(
                    lambda: all(c.state == "open" and c.address != c.home for c in conns) and len(a.conns) == 2,
                    5,
                    "both connections on the active a",
                )
                box: List[Any] = []
                thread = threading.Thread(target=lambda: box.append(_outcome(lambda: client.acquire("readers/later", lease=30, wait=10))), daemon=True)
                thread.start()
                sent = lambda: [line for conn in a.conns for line in conn.received if line.startswith("A readers/later")]  # noqa: E731
                wait_for(lambda: len(sent()) == 1, 5, "the acquire on a")
                first = next(conn for conn in a.conns if conn.received)
                promoted.set()
                first.close()  # the socket carrying the acquire closes ...
                # ... and the other one only once the connection that lost the acquire has come home
                # and the acquire has gone somewhere again: to b, or back to a.
                wait_for(lambda: granted_lines or len(sent()) > 1, 5, "the acquire sent again")
                a.close()
                thread.join(15)
                assert box, "the acquire never settled"
                grant = box[0]
                assert not isinstance(grant, BaseException), f"{grant!r} (a received {sent()})"
                assert grant.token == 9
                assert len(granted_lines) == 1
                assert len(sent()) == 1, sent()
