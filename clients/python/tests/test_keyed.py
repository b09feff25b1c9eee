"""The sync keyed client against a real single-node ``baton serve``."""

from __future__ import annotations

import socket
import threading
import time
from typing import List

import pytest

from baton_client import BatonError, Grant, KeyedClient, LockTimeout
from conftest import BatonProcess


@pytest.fixture
def client(baton_server: BatonProcess):
    with KeyedClient(baton_server.lock_address, identity="pytest keyed") as c:
        yield c


def _in_thread(fn, *args):
    """Runs fn in a thread; returns (thread, box) where box gets ("ok", value) or ("err", error)."""
    box: List = []

    def run() -> None:
        try:
            box.append(("ok", fn(*args)))
        except BaseException as error:  # noqa: BLE001
            box.append(("err", error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_grant_has_an_int_token_and_releases(client: KeyedClient, baton_server: BatonProcess) -> None:
    grant = client.acquire("keyed/grant", lease=30)
    assert isinstance(grant, Grant) and isinstance(grant.token, int) and grant.token > 0
    holder = baton_server.holder("keyed/grant")
    assert holder is not None and holder["token"] == str(grant.token)
    assert holder["clientName"] == "pytest keyed"
    assert grant.release() is True
    assert grant.release() is True  # the same outcome, not a second release
    assert baton_server.holder("keyed/grant") is None


def test_lock_context_manager_holds_for_the_body_and_releases_after(client: KeyedClient, baton_server: BatonProcess) -> None:
    with client.lock("keyed/with", lease=30) as grant:
        assert baton_server.holder("keyed/with")["token"] == str(grant.token)
    assert baton_server.holder("keyed/with") is None


def test_lock_releases_when_the_body_raises(client: KeyedClient, baton_server: BatonProcess) -> None:
    with pytest.raises(ZeroDivisionError):
        with client.lock("keyed/raises", lease=30):
            1 / 0
    assert baton_server.holder("keyed/raises") is None


def test_a_failed_acquire_never_runs_the_body(client: KeyedClient) -> None:
    held = client.acquire("keyed/body", lease=30)
    ran = []
    with pytest.raises(LockTimeout):
        with client.lock("keyed/body", lease=30, wait=0.2):
            ran.append(True)
    assert ran == []
    assert held.release() is True


def test_fifo_handover_between_two_clients(baton_server: BatonProcess, client: KeyedClient) -> None:
    first = client.acquire("keyed/fifo", lease=30)
    with KeyedClient(baton_server.lock_address) as second, KeyedClient(baton_server.lock_address) as third:
        t2, box2 = _in_thread(second.acquire, "keyed/fifo", 30)
        # The second must be queued before the third: wait until the server shows it waiting.
        def queued(n: int) -> bool:
            status, body = baton_server.api("/api/v1/locks/keyed%2Ffifo")
            return status == 200 and len(body.get("queue", [])) >= n

        from conftest import wait_for

        wait_for(lambda: queued(1), 10, "the second client queued")
        t3, box3 = _in_thread(third.acquire, "keyed/fifo", 30)
        wait_for(lambda: queued(2), 10, "the third client queued")
        assert box2 == [] and box3 == []
        assert first.release() is True
        t2.join(10)
        assert box2 and box2[0][0] == "ok", box2
        grant2 = box2[0][1]
        assert grant2.token > first.token
        time.sleep(0.2)
        assert box3 == []  # still behind the second
        assert grant2.release() is True
        t3.join(10)
        assert box3 and box3[0][0] == "ok", box3
        assert box3[0][1].token > grant2.token
        assert box3[0][1].release() is True


def test_timeout_raises_lock_timeout_and_nothing_is_held(client: KeyedClient, baton_server: BatonProcess) -> None:
    held = client.acquire("keyed/timeout", lease=30)
    with KeyedClient(baton_server.lock_address) as other:
        started = time.monotonic()
        with pytest.raises(LockTimeout) as info:
            other.acquire("keyed/timeout", lease=30, wait=0.3)
        took = time.monotonic() - started
        assert info.value.code == "lock-timeout"
        assert 0.25 <= took < 5
    assert held.release() is True
    assert baton_server.holder("keyed/timeout") is None


def test_try_acquire_returns_none_when_held_and_a_grant_when_free(client: KeyedClient) -> None:
    held = client.try_acquire("keyed/try", lease=30)
    assert held is not None
    assert client.try_acquire("keyed/try", lease=30) is None
    assert held.release() is True
    again = client.try_acquire("keyed/try", lease=30)
    assert again is not None and again.token > held.token
    assert again.release() is True


def test_release_after_the_lease_ran_out_is_stale(client: KeyedClient) -> None:
    grant = client.acquire("keyed/stale", lease=0.2)
    time.sleep(0.6)
    assert grant.release() is False


def test_releasing_a_sessions_token_is_refused_with_session_claim(client: KeyedClient, baton_server: BatonProcess) -> None:
    host, _, port = baton_server.session_address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as session:
        session.sendall(b"ACQUIRE keyed/session-held 30000\n")
        line = session.makefile("rb").readline().decode().strip()
        assert line.startswith("ACQUIRED "), line
        token = int(line.split()[1])
        with pytest.raises(BatonError) as info:
            client.release("keyed/session-held", token)
        assert info.value.code == "session-claim"
        assert baton_server.holder("keyed/session-held")["token"] == str(token)


@pytest.mark.parametrize("name", ["", "a b", "tab\there", "nbsp\u00a0x", "bom\ufeffx", "x" * 251, "\ud800"])
def test_a_bad_key_is_refused_before_anything_is_sent(client: KeyedClient, name: str) -> None:
    with pytest.raises(BatonError) as info:
        client.acquire(name, lease=30)
    assert info.value.code == "bad-key"
    assert client._engine._started is False  # not a byte on the wire


def test_bad_durations_are_refused_before_sending(client: KeyedClient) -> None:
    with pytest.raises(BatonError) as lease:
        client.acquire("keyed/durations", lease=0)
    assert lease.value.code == "bad-lease"
    with pytest.raises(BatonError) as wait:
        client.acquire("keyed/durations", lease=1, wait=-1)
    assert wait.value.code == "bad-wait"


def test_a_bad_identity_is_refused_at_construction() -> None:
    with pytest.raises(BatonError) as info:
        KeyedClient("127.0.0.1:1", identity=" leading space")
    assert info.value.code == "bad-identity"


def test_identity_none_sends_no_identity(baton_server: BatonProcess) -> None:
    with KeyedClient(baton_server.lock_address, identity=None) as anonymous:
        grant = anonymous.acquire("keyed/anonymous", lease=30)
        assert baton_server.holder("keyed/anonymous")["clientName"] is None
        grant.release()


def test_the_default_identity_is_user_at_host_pid(baton_server: BatonProcess) -> None:
    import os

    with KeyedClient(baton_server.lock_address) as named:
        grant = named.acquire("keyed/default-identity", lease=30)
        shown = baton_server.holder("keyed/default-identity")["clientName"]
        assert shown == named.identity and shown.endswith(f" pid {os.getpid()}") and "@" in shown
        grant.release()


def test_a_token_above_2_to_the_53_is_exact(start_baton) -> None:
    floor = 9007199254740993
    node = start_baton("--token-floor", str(floor))
    with KeyedClient(node.lock_address) as big:
        grant = big.acquire("keyed/big-token", lease=30)
        assert grant.token > floor
        assert node.holder("keyed/big-token")["token"] == str(grant.token)
        assert float(grant.token) != grant.token or grant.token == int(float(grant.token))
        assert big.release("keyed/big-token", grant.token) is True


def test_pipelining_from_many_threads_over_shared_connections(client: KeyedClient) -> None:
    threads = 24
    rounds = 40
    errors: List[BaseException] = []
    tokens: List[int] = []
    inside = {"count": 0, "max": 0}
    guard = threading.Lock()

    def work(i: int) -> None:
        try:
            for r in range(rounds):
                # Half the threads share one lock (mutual exclusion), half have their own key.
                name = "keyed/pipe-shared" if i % 2 == 0 else f"keyed/pipe-{i}"
                with client.lock(name, lease=30, wait=60) as grant:
                    with guard:
                        tokens.append(grant.token)
                        if name == "keyed/pipe-shared":
                            inside["count"] += 1
                            inside["max"] = max(inside["max"], inside["count"])
                    if name == "keyed/pipe-shared":
                        with guard:
                            inside["count"] -= 1
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert errors == []
    assert len(tokens) == threads * rounds
    assert len(set(tokens)) == len(tokens)  # every grant its own token
    assert inside["max"] == 1  # never two holders of the shared lock at once
    # Pipelined on the first open connection: the spare stands by.
    assert [c.state for c in client._engine.connections] == ["open", "open"]


def test_close_fails_a_waiting_acquire_with_client_closed(baton_server: BatonProcess, client: KeyedClient) -> None:
    held = client.acquire("keyed/closing", lease=30)
    other = KeyedClient(baton_server.lock_address)
    thread, box = _in_thread(other.acquire, "keyed/closing", 30)
    time.sleep(0.3)
    other.close()
    thread.join(10)
    assert box and box[0][0] == "err" and isinstance(box[0][1], BatonError)
    assert box[0][1].code == "client-closed"
    with pytest.raises(BatonError):
        other.acquire("keyed/closing", lease=30)
    assert held.release() is True


def test_an_address_that_refuses_fails_the_acquire_with_connection_lost() -> None:
    # A port nobody listens on: both tries fail, then the park gives up.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with KeyedClient(f"127.0.0.1:{port}", reconnect_interval=0.2, connect_timeout=0.5) as nowhere:
        started = time.monotonic()
        with pytest.raises(BatonError) as info:
            nowhere.acquire("keyed/nowhere", lease=30)
        assert info.value.code == "connection-lost"
        assert time.monotonic() - started < 10
