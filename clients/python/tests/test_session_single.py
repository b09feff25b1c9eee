"""The threaded session client against one real ``baton serve``."""

from __future__ import annotations

import socket
import threading
import time
import urllib.parse
from typing import List, Optional

import pytest

from baton_client.errors import BatonError, LockLost, LockTimeout
from baton_client.session import SessionClient

#: Generous: the machine is shared with other test runs.
SLACK = 2.0


def _queue(node, name: str) -> List[dict]:  # type: ignore[no-untyped-def]
    status, body = node.api(f"/api/v1/locks/{urllib.parse.quote(name, safe='')}")
    return [] if status == 404 else body["queue"]


def _wait_queue_length(node, name: str, length: int, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while len(_queue(node, name)) != length:
        assert time.monotonic() < deadline, f"queue of {name} never reached {length}: {_queue(node, name)}"
        time.sleep(0.02)


def test_hold_yields_a_claim_with_its_token_and_releases_on_exit(baton_server) -> None:  # type: ignore[no-untyped-def]
    client = SessionClient([baton_server.session_address], identity="pys test one")
    try:
        with client.hold("pys/basic", lease=5) as claim:
            holder = baton_server.holder("pys/basic")
            assert holder is not None and int(holder["token"]) == claim.token
            assert holder["clientName"] == "pys test one"
            assert not claim.lost.is_set()
            claim.check()
        assert claim.lost.is_set() and claim.reason is not None and claim.reason.code == "client-closed"
        with pytest.raises(LockLost):
            claim.check()
        deadline = time.monotonic() + 5
        while baton_server.holder("pys/basic") is not None:
            assert time.monotonic() < deadline, "the release never reached the server"
            time.sleep(0.02)
    finally:
        client.close()


def test_waiters_are_queued_and_get_the_pushed_grant_in_fifo_order(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/fifo"
    clients = [SessionClient([baton_server.session_address], identity=None) for _ in range(3)]
    order: List[int] = []
    tokens: List[int] = []
    release = [threading.Event() for _ in range(3)]

    def waiter(i: int) -> None:
        with clients[i].hold(name, lease=5) as claim:
            order.append(i)
            tokens.append(claim.token)
            release[i].wait(10)

    try:
        first = clients[0].acquire(name, lease=5)
        threads = []
        for i in (1, 2):
            thread = threading.Thread(target=waiter, args=(i,))
            thread.start()
            threads.append(thread)
            _wait_queue_length(baton_server, name, i)  # WAITING 1, then WAITING 2: FIFO by arrival
        time.sleep(0.6)  # a few heartbeats while queued: still waiting
        assert order == []
        first.release()
        deadline = time.monotonic() + 5
        while order != [1]:
            assert time.monotonic() < deadline, f"the push never came: {order}"
            time.sleep(0.01)
        release[1].set()
        threads[0].join(5)
        deadline = time.monotonic() + 5
        while order != [1, 2]:
            assert time.monotonic() < deadline, f"the second push never came: {order}"
            time.sleep(0.01)
        release[2].set()
        threads[1].join(5)
        assert tokens[0] > first.token and tokens[1] > tokens[0]
    finally:
        for event in release:
            event.set()
        for client in clients:
            client.close()


def test_a_wait_that_runs_out_raises_lock_timeout_and_leaves_nothing_queued(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/timeout"
    holder = SessionClient([baton_server.session_address])
    waiter = SessionClient([baton_server.session_address], resumable=True)  # a parked claim would show too
    try:
        with holder.hold(name, lease=5):
            started = time.monotonic()
            with pytest.raises(LockTimeout) as caught:
                with waiter.hold(name, lease=5, wait=0.5):
                    pytest.fail("the body ran without the lock")
            assert 0.45 <= time.monotonic() - started < 0.5 + SLACK
            assert caught.value.code == "lock-timeout"
            _wait_queue_length(baton_server, name, 0, timeout=5)
    finally:
        holder.close()
        waiter.close()


def test_a_force_release_sets_lost_within_one_heartbeat_interval(baton_server) -> None:  # type: ignore[no-untyped-def]
    client = SessionClient([baton_server.session_address])
    try:
        # A lease of 8 s: one heartbeat interval is 2 s, a generous bound for the pushed ERROR.
        with client.hold("pys/force", lease=8) as claim:
            interval = claim.heartbeat_interval
            assert interval == pytest.approx(2.0, abs=0.1)
            started = time.monotonic()
            status, body = baton_server.api("/api/v1/locks/pys%2Fforce/force-release", "POST", {"token": str(claim.token)})
            assert status == 200, body
            assert claim.lost.wait(interval), "force-release did not reach .lost within one heartbeat interval"
            assert time.monotonic() - started <= interval
            assert isinstance(claim.reason, LockLost) and claim.reason.code == "force-released"
            with pytest.raises(LockLost):
                claim.check()
    finally:
        client.close()


def test_a_token_above_2_53_is_exact(start_baton) -> None:  # type: ignore[no-untyped-def]
    node = start_baton("--token-floor", "9007199254740993")
    client = SessionClient([node.session_address])
    try:
        with client.hold("pys/big", lease=5) as claim:
            assert claim.token > 2**53
            assert str(claim.token) == str(node.holder("pys/big")["token"])
            assert claim.token == 9007199254740994
    finally:
        client.close()


def test_shutdown_sends_0x01_which_sets_lost(start_baton) -> None:  # type: ignore[no-untyped-def]
    node = start_baton()
    client = SessionClient([node.session_address], reconnect_for=0.5)
    try:
        claim = client.acquire("pys/shutdown", lease=10)
        node.sigterm()
        assert claim.lost.wait(5), "shutdown never reached .lost"
        assert claim.reason is not None and claim.reason.code == "server-going-away"
    finally:
        client.close()


class FreezingProxy:
    """A TCP proxy on 127.0.0.1 that can stop forwarding (both ways) without closing anything:
    a paused server, or a network that silently drops, as the client sees it."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.sockets: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            self.sockets += [downstream, upstream]
            threading.Thread(target=self._pump, args=(downstream, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, downstream), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    target.shutdown(socket.SHUT_WR)
                    return
                self.flowing.wait()  # frozen: hold what came, say nothing
                target.sendall(data)
        except OSError:
            return

    def close(self) -> None:
        self.flowing.set()
        self.listener.close()
        for sock in self.sockets:
            try:
                sock.close()
            except OSError:
                pass


def test_without_answers_lost_is_set_by_0_8_lease_before_the_server_expires_it(baton_server) -> None:  # type: ignore[no-untyped-def]
    proxy = FreezingProxy(baton_server.session_address)
    client = SessionClient([proxy.address])
    lease = 2.0
    try:
        claim = client.acquire("pys/silence", lease=lease)
        time.sleep(0.7)  # a couple of answered heartbeats
        assert not claim.lost.is_set()
        proxy.flowing.clear()
        frozen_at = time.monotonic()
        assert claim.lost.wait(0.8 * lease + SLACK), "silence never reached .lost"
        # The last confirmation came before the freeze: the client gives up by 0.8 x lease
        # after it, so no later than 0.8 x lease after the freeze.
        assert time.monotonic() - frozen_at <= 0.8 * lease + SLACK
        # Counted from the send of the last answered request, never early.
        anchor = claim._runner.machine.conf.anchor  # noqa: SLF001
        assert time.monotonic() - anchor >= 0.8 * lease
        assert claim.reason is not None and claim.reason.code == "lease-expired"
    finally:
        client.close()
        proxy.close()


def test_bad_arguments_are_refused_before_anything_is_sent(baton_server) -> None:  # type: ignore[no-untyped-def]
    client = SessionClient([baton_server.session_address])
    try:
        for kwargs, code in (({"lease": 0}, "bad-lease"), ({"lease": 5, "wait": -1}, "bad-wait")):
            with pytest.raises(BatonError) as caught:
                with client.hold("pys/bad", **kwargs):  # type: ignore[arg-type]
                    pytest.fail("the body ran")
            assert caught.value.code == code
        with pytest.raises(BatonError) as caught:
            client.acquire("has space", lease=5)
        assert caught.value.code == "bad-key"
        with pytest.raises(BatonError) as caught:
            SessionClient([baton_server.session_address], identity=" bad")
        assert caught.value.code == "bad-identity"
    finally:
        client.close()


def test_close_ends_held_claims_and_pending_holds(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/close"
    holder = SessionClient([baton_server.session_address])
    waiter = SessionClient([baton_server.session_address])
    errors: List[Optional[BaseException]] = []

    def wait() -> None:
        try:
            waiter.acquire(name, lease=5)
            errors.append(None)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    try:
        claim = holder.acquire(name, lease=5)
        thread = threading.Thread(target=wait)
        thread.start()
        _wait_queue_length(baton_server, name, 1)
        waiter.close()
        thread.join(5)
        assert len(errors) == 1 and isinstance(errors[0], BatonError) and errors[0].code == "client-closed"
        _wait_queue_length(baton_server, name, 0)
        holder.close()
        assert claim.lost.is_set()
    finally:
        holder.close()
        waiter.close()


def test_a_waiter_heartbeats_while_queued_so_a_short_lease_outlives_a_long_wait(baton_server) -> None:  # type: ignore[no-untyped-def]
    """A queued session that stays silent for a lease is ended by the server (0x03): waiting
    2.5 s with a 0.5 s lease works only if the waiter heartbeats while queued."""
    name = "pys/queued-heartbeats"
    holder = SessionClient([baton_server.session_address])
    waiter = SessionClient([baton_server.session_address])
    got: List[object] = []

    def wait() -> None:
        try:
            with waiter.hold(name, lease=0.5) as claim:
                got.append(claim.token)
        except BaseException as error:  # noqa: BLE001
            got.append(error)

    try:
        claim = holder.acquire(name, lease=5)
        thread = threading.Thread(target=wait)
        thread.start()
        _wait_queue_length(baton_server, name, 1)
        time.sleep(2.5)
        assert got == [], got
        claim.release()
        thread.join(5)
        assert len(got) == 1 and isinstance(got[0], int) and got[0] > claim.token, got
    finally:
        holder.close()
        waiter.close()


def test_releasing_a_resumable_claim_frees_the_lock_at_once_and_parks_nothing(baton_server) -> None:  # type: ignore[no-untyped-def]
    """The release is a FIN, never a reset: a reset would keep the claim parked for its lease."""
    client = SessionClient([baton_server.session_address], resumable=True)
    try:
        with client.hold("pys/resumable-release", lease=30) as claim:
            time.sleep(0.2)
            assert int(baton_server.holder("pys/resumable-release")["token"]) == claim.token
        deadline = time.monotonic() + 3  # far below the 30 s a parked claim would stay
        while baton_server.holder("pys/resumable-release") is not None:
            assert time.monotonic() < deadline, baton_server.holder("pys/resumable-release")
            time.sleep(0.02)
    finally:
        client.close()
