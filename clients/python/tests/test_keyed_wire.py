"""The keyed reply parser against random and hostile bytes, and the client against a broken
server: never a hang, never a crash, always a clear error."""

from __future__ import annotations

import random
import threading
import time
from typing import List

import pytest

from baton_client import BatonError, KeyedClient, LockTimeout
from baton_client._keyed_wire import (
    MAX_REPLY_LINE_BYTES,
    U64_MAX,
    ConnectionError_,
    Granted,
    IdentityOk,
    LineSplitter,
    LineTooLong,
    Malformed,
    Redirect,
    Released,
    RequestError,
    Stale,
    TimedOut,
    parse_reply,
    parse_u64,
)
from fake_server import FakeConn, FakeServer

REPLY_TYPES = (Granted, TimedOut, Released, Stale, RequestError, ConnectionError_, Redirect, IdentityOk, Malformed)
SEED = 28  # fixed: a failure reproduces


# -- the parser ------------------------------------------------------------------------------


def test_parser_reads_every_reply_of_the_protocol() -> None:
    assert parse_reply(b"A jobs/nightly 1") == Granted("jobs/nightly", 1)
    assert parse_reply(b"A k 18446744073709551615") == Granted("k", U64_MAX)
    assert parse_reply(b"A k 00000000000000000007") == Granted("k", 7)
    assert parse_reply(b"T jobs/nightly") == TimedOut("jobs/nightly")
    assert parse_reply(b"R k OK") == Released("k")
    assert parse_reply(b"R k STALE") == Stale("k")
    assert parse_reply(b"E A k bad-lease bad lease: a decimal") == RequestError("A", "k", "bad-lease", "bad lease: a decimal")
    assert parse_reply(b"E R k session-claim") == RequestError("R", "k", "session-claim", "")
    assert parse_reply(b"E - - server-going-away bye") == ConnectionError_("server-going-away", "bye")
    assert parse_reply(b"M 10.0.0.2:7070") == Redirect(("10.0.0.2", 7070))
    assert parse_reply(b"M [::1]:7070") == Redirect(("::1", 7070))
    assert parse_reply(b"I OK") == IdentityOk()
    assert parse_reply("A ключ 5".encode()) == Granted("ключ", 5)


@pytest.mark.parametrize(
    "line",
    [
        b"A k 18446744073709551616",  # 2^64
        b"A k 100000000000000000000",  # 21 digits
        b"A k -1",
        b"A k 1.5",
        b"A k",
        b"A k ",
        b"R k MAYBE",
        b"T k extra",
        b"E A",
        b"E A k",
        b"M nowhere",
        b"M host:99999",
        b"I NO",
        b"X y z",
        b"",
        b"A",
        b"A k \xff",
        b"\xc3\x28 k 1",
        b"A k \xd9\xa1",  # an Arabic-Indic digit is not a decimal digit here
    ],
)
def test_parser_calls_unreadable_lines_malformed(line: bytes) -> None:
    assert isinstance(parse_reply(line), Malformed)


def _mutations(rng: random.Random) -> bytes:
    base = rng.choice(
        [b"A key 42", b"T key", b"R key OK", b"R key STALE", b"E A key bad-key text", b"E - - io-timeout t", b"M 127.0.0.1:7070", b"I OK"]
    )
    data = bytearray(base)
    for _ in range(rng.randint(0, 4)):
        choice = rng.random()
        if choice < 0.3 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif choice < 0.5 and data:
            del data[rng.randrange(len(data))]
        elif choice < 0.7:
            data.insert(rng.randrange(len(data) + 1), rng.choice(b" 0123456789\r\xff\x00"))
        else:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 30)))
    return bytes(data)


def test_parser_never_raises_on_random_and_mutated_bytes() -> None:
    rng = random.Random(SEED)
    for i in range(20000):
        if i % 2:
            line = bytes(rng.randrange(256) for _ in range(rng.randint(0, 80)))
        else:
            line = _mutations(rng)
        reply = parse_reply(line)
        assert isinstance(reply, REPLY_TYPES), (line, reply)
        if isinstance(reply, Granted):
            assert 0 <= reply.token <= U64_MAX
            assert line.decode().endswith(" " + line.decode().rsplit(" ", 1)[1])


def test_parser_takes_every_u64_exactly_and_nothing_above() -> None:
    rng = random.Random(SEED)
    for _ in range(5000):
        value = rng.randrange(0, U64_MAX + 1)
        assert parse_reply(f"A k {value}".encode()) == Granted("k", value)
        too_big = rng.randrange(U64_MAX + 1, 10**21)
        assert isinstance(parse_reply(f"A k {too_big}".encode()), Malformed)
    assert parse_u64(str(2**53 + 1)) == 2**53 + 1


def test_line_splitter_gives_the_same_lines_however_the_stream_is_cut() -> None:
    rng = random.Random(SEED)
    for _ in range(500):
        lines = [bytes(rng.choice(b"abcAT 0123\r") for _ in range(rng.randint(0, 40))).replace(b"\r", b"") for _ in range(rng.randint(1, 20))]
        stream = b"".join(line + rng.choice([b"\n", b"\r\n"]) for line in lines)
        splitter = LineSplitter()
        out: List[bytes] = []
        i = 0
        while i < len(stream):
            step = rng.randint(1, 17)
            out.extend(splitter.feed(stream[i : i + step]))
            i += step
        assert out == lines
        assert splitter.pending_bytes == 0


def test_line_splitter_refuses_a_10_mb_line_without_buffering_it() -> None:
    splitter = LineSplitter()
    chunk = b"x" * 65536
    fed = 0
    with pytest.raises(LineTooLong):
        while fed < 10 * 1024 * 1024:
            splitter.feed(chunk)
            fed += len(chunk)
            assert splitter.pending_bytes <= MAX_REPLY_LINE_BYTES
    assert fed <= 2 * MAX_REPLY_LINE_BYTES


# -- the client against a broken server --------------------------------------------------------


def _serve(reply_to_acquire):
    """A fake server: reads request lines, and for each `A` line writes reply_to_acquire(line, conn)."""

    def handler(conn: FakeConn) -> None:
        while True:
            line = conn.readline(timeout=30)
            if line is None:
                return
            if line.startswith("A ") or line.startswith("R "):
                out = reply_to_acquire(line, conn)
                if out is not None:
                    conn.send(out)

    return handler


def _client(address: str, **tuning) -> KeyedClient:
    options = {"reconnect_interval": 0.2, "connect_timeout": 1.0, **tuning}
    return KeyedClient(address, identity=None, **options)


def _expect_protocol_error(reply: bytes) -> None:
    with FakeServer(_serve(lambda line, conn: reply)) as server, _client(server.address) as client:
        started = time.monotonic()
        with pytest.raises(BatonError) as info:
            client.acquire("x", lease=30, wait=2)
        assert info.value.code == "protocol-error", info.value
        assert time.monotonic() - started < 2.5


def test_a_reply_to_nothing_is_a_protocol_error() -> None:
    _expect_protocol_error(b"A someone-else 5\n")


def test_a_21_digit_token_is_a_protocol_error() -> None:
    _expect_protocol_error(b"A x 100000000000000000000\n")


def test_a_release_reply_to_an_acquire_is_a_protocol_error() -> None:
    _expect_protocol_error(b"R x OK\n")


def test_bad_utf8_is_a_protocol_error() -> None:
    _expect_protocol_error(b"A \xff\xfe 5\n")


def test_a_10_mb_line_is_a_protocol_error_not_10_mb_of_memory() -> None:
    def flood(line: str, conn: FakeConn) -> None:
        chunk = b"A" * 65536
        for _ in range(160):  # 10 MB, never a newline
            conn.send(chunk)
        return None

    with FakeServer(_serve(flood)) as server, _client(server.address) as client:
        started = time.monotonic()
        with pytest.raises(BatonError) as info:
            client.acquire("x", lease=30, wait=2)
        assert info.value.code == "protocol-error"
        assert time.monotonic() - started < 2.5


def test_a_half_line_then_silence_ends_in_lock_timeout_within_the_clients_deadline() -> None:
    with FakeServer(_serve(lambda line, conn: b"A x 1")) as server, _client(server.address) as client:
        started = time.monotonic()
        with pytest.raises(LockTimeout):
            client.acquire("x", lease=30, wait=0.5)
        took = time.monotonic() - started
        # The deadline is wait + 1 s + 10%: 1.55 s; generous slack for a busy machine.
        assert 1.4 <= took < 6, took


def test_a_silent_server_fails_a_release_after_its_retries() -> None:
    with FakeServer(_serve(lambda line, conn: None)) as server, _client(
        server.address, release_retry_for=1.0, release_retry_interval=0.1, release_attempt_timeout=0.3
    ) as client:
        started = time.monotonic()
        with pytest.raises(BatonError) as info:
            client.release("x", 5)
        assert info.value.code in ("io-timeout", "connection-lost")
        assert time.monotonic() - started < 6


def test_garbage_replies_always_settle_every_call() -> None:
    rng = random.Random(SEED)
    lock = threading.Lock()

    def garbage(line: str, conn: FakeConn) -> bytes:
        with lock:
            choice = rng.random()
            if choice < 0.3:
                return _mutations(rng) + b"\n"
            if choice < 0.5:
                return bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))) + b"\n"
            if choice < 0.53:
                return b""  # silence: the client's own deadline ends it
            return f"A {line.split()[1]} {rng.randrange(U64_MAX)}\n".encode()

    with FakeServer(_serve(garbage)) as server, _client(server.address) as client:
        for i in range(120):
            started = time.monotonic()
            try:
                client.acquire(f"k{i % 3}", lease=30, wait=0.05)
            except BatonError:  # LockTimeout is one
                pass
            assert time.monotonic() - started < 8


def test_try_acquire_sends_a_1_ms_wait() -> None:
    seen: List[str] = []

    def record(line: str, conn: FakeConn) -> bytes:
        seen.append(line)
        return b"T x\n"

    with FakeServer(_serve(record)) as server, _client(server.address) as client:
        assert client.try_acquire("x", lease=30) is None
    assert seen == ["A x 30 0.001"]


def test_a_server_going_away_gets_its_waiting_acquire_re_sent() -> None:
    count = {"A": 0}
    lock = threading.Lock()

    def going_away(line: str, conn: FakeConn) -> bytes:
        with lock:
            count["A"] += 1
            first = count["A"] == 1
        if first:
            conn.send(b"T x\nE - - server-going-away shutting down\n")
            conn.close()
            return b""
        return b"A x 77\n"

    with FakeServer(_serve(going_away)) as server, _client(server.address) as client:
        grant = client.acquire("x", lease=30)  # wait forever: that T was not a timeout
        assert grant.token == 77


def test_m_redirect_is_followed_with_the_rest_of_the_wait() -> None:
    seen: List[str] = []

    def active(line: str, conn: FakeConn) -> bytes:
        seen.append(line)
        return f"A {line.split()[1]} 9\n".encode()

    with FakeServer(_serve(active)) as target:

        def standby(conn: FakeConn) -> None:
            conn.send(f"M {target.address}\n".encode())
            while conn.readline(timeout=30) is not None:
                conn.send(f"M {target.address}\n".encode())

        with FakeServer(standby) as server, _client(server.address) as client:
            grant = client.acquire("x", lease=30, wait=20)
            assert grant.token == 9
    assert seen and seen[0].startswith("A x 30 ")
    wait_sent = float(seen[0].split()[3])
    assert 0 < wait_sent <= 20


def test_a_redirect_loop_is_a_protocol_error() -> None:
    def loop(conn: FakeConn) -> None:
        while True:
            conn.send(f"M 127.0.0.1:{conn.sock.getsockname()[1]}\n".encode())
            if conn.readline(timeout=30) is None:
                return

    with FakeServer(loop) as server, _client(server.address) as client:
        with pytest.raises(BatonError) as info:
            client.acquire("x", lease=30, wait=3)
        assert info.value.code == "protocol-error"


def test_an_acquire_fails_only_after_one_try_per_connection() -> None:
    seen: List[str] = []

    def hang_up(line: str, conn: FakeConn) -> bytes:
        seen.append(line)
        conn.close()
        return b""

    with FakeServer(_serve(hang_up)) as server, _client(server.address, reconnect_interval=5) as client:
        with pytest.raises(BatonError) as info:
            client.acquire("x", lease=30)
        assert info.value.code == "connection-lost"
    assert seen == ["A x 30 0", "A x 30 0"]  # two connections for one address: two tries


def test_a_release_whose_connection_drops_is_retried_on_the_other_connection() -> None:
    seen: List[tuple] = []

    def flaky(line: str, conn: FakeConn) -> bytes:
        seen.append((conn.index, line))
        if line.startswith("A "):
            return b"A x 5\n"
        if len([s for s in seen if s[1].startswith("R ")]) == 1:
            conn.close()  # the first attempt's answer is lost
            return b""
        return b"R x STALE\n"  # the first attempt did release: the retry finds it gone

    with FakeServer(_serve(flaky)) as server, _client(server.address) as client:
        grant = client.acquire("x", lease=30)
        assert grant.release() is False  # "released, or no longer held"
    releases = [(i, line) for i, line in seen if line.startswith("R ")]
    assert [line for _, line in releases] == ["R x 5", "R x 5"]
    assert releases[0][0] != releases[1][0]  # on another connection
