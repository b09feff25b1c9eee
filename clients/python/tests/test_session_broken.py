"""The threaded session client against tiny scripted servers on 127.0.0.1 that misbehave: half
lines then silence, unreadable tokens, replies to nothing, a 10 MB line, going away while we
wait, redirect loops. Each must end in a clear error, a timeout or a loss: never a hang."""

from __future__ import annotations

import socket
import threading
import time
from typing import Callable, List

import pytest

from baton_client.errors import BatonError, LockTimeout
from baton_client.session import SessionClient

Script = Callable[[int, socket.socket, "LineIn"], None]
SLACK = 2.0


class LineIn:
    """Reads the client's lines on one connection."""

    def __init__(self, sock: socket.socket) -> None:
        self.file = sock.makefile("rb")

    def line(self) -> str:
        raw = self.file.readline()
        if not raw:
            raise EOFError("the client closed")
        return raw.decode().rstrip("\r\n")


class ScriptedServer:
    """Runs ``script(index, sock, lines)`` for each connection, in its own thread."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.accepted = 0
        self.socks: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            index = self.accepted
            self.accepted += 1
            self.socks.append(sock)
            threading.Thread(target=self._serve, args=(index, sock), daemon=True).start()

    def _serve(self, index: int, sock: socket.socket) -> None:
        try:
            self.script(index, sock, LineIn(sock))
        except (OSError, EOFError):
            pass

    def close(self) -> None:
        self.listener.close()
        for sock in self.socks:
            try:
                sock.close()
            except OSError:
                pass


@pytest.fixture
def serve() -> Callable[[Script], ScriptedServer]:
    servers: List[ScriptedServer] = []

    def start(script: Script) -> ScriptedServer:
        server = ScriptedServer(script)
        servers.append(server)
        return server

    yield start  # type: ignore[misc]
    for server in servers:
        server.close()


def _silence(sock: socket.socket) -> None:
    time.sleep(30)


def test_a_half_line_then_silence_while_acquiring_ends_in_lock_timeout(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        assert lines.line().startswith("ACQUIRE ")
        sock.sendall(b"ACQUI")
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    started = time.monotonic()
    with pytest.raises(LockTimeout):
        with client.hold("x", lease=10, wait=0.5):
            pytest.fail("the body ran without the lock")
    assert time.monotonic() - started < 0.5 + SLACK
    client.close()


def test_a_half_line_then_silence_without_a_wait_ends_in_an_error(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(b"ACQUIRED 1")  # never finished
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None, reconnect_for=0.5)
    started = time.monotonic()
    with pytest.raises(BatonError) as caught:
        client.acquire("x", lease=1)
    # 0.8 x lease without an answer per attempt, queueing anew until reconnect_for has passed.
    assert caught.value.code == "lease-expired"
    assert time.monotonic() - started < 0.8 + 0.5 + 0.8 + SLACK
    client.close()


def test_a_half_line_then_silence_while_holding_is_lost_by_0_8_lease(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(b"ACQUIRED 41\n")
        assert lines.line() == "HEARTBEAT"
        sock.sendall(b"ACQ")
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    claim = client.acquire("x", lease=1)
    assert claim.token == 41
    assert claim.lost.wait(0.8 + SLACK)
    assert claim.reason is not None and claim.reason.code == "lease-expired"
    client.close()


@pytest.mark.parametrize(
    "reply",
    [b"ACQUIRED 123456789012345678901\n", b"ACQUIRED 18446744073709551616\n", b"HELLO\n", b"ACQUIRED \xff\n", b"MOVED h:1\n"],
)
def test_an_unreadable_answer_is_a_protocol_error(serve, reply: bytes) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(reply)
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    with pytest.raises(BatonError) as caught:
        with client.hold("x", lease=10):
            pytest.fail("the body ran without the lock")
    assert caught.value.code == "protocol-error"
    client.close()


def test_a_10_mb_line_is_a_protocol_error_without_reading_it_all_first(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        try:
            sock.sendall(b"x" * (10 * 1024 * 1024))
        except OSError:
            pass
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    started = time.monotonic()
    with pytest.raises(BatonError) as caught:
        client.acquire("x", lease=10)
    assert caught.value.code == "protocol-error"
    assert time.monotonic() - started < SLACK
    client.close()


def test_a_reply_to_nothing_while_holding_loses_the_claim(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(b"ACQUIRED 5\n")
        time.sleep(0.1)
        sock.sendall(b"ACQUIRED 5\n")  # unsolicited: no heartbeat was sent yet (lease 10 s)
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    claim = client.acquire("x", lease=10)
    assert claim.lost.wait(SLACK)
    assert claim.reason is not None and claim.reason.code == "protocol-error"
    client.close()


def test_0x01_while_waiting_queues_anew_at_once(serve) -> None:  # type: ignore[no-untyped-def]
    def script(index: int, sock: socket.socket, lines: LineIn) -> None:
        assert lines.line() == "ACQUIRE x 10000"
        if index == 0:
            sock.sendall(b"WAITING 1\nERROR 0x01 server going away\n")
            sock.close()
            return
        sock.sendall(b"ACQUIRED 77\n")
        _silence(sock)

    server = serve(script)
    client = SessionClient([server.address], identity=None)
    started = time.monotonic()
    with client.hold("x", lease=10) as claim:
        assert claim.token == 77
    assert server.accepted == 2
    assert time.monotonic() - started < SLACK  # at once, not after a pause
    client.close()


def test_0x01_while_holding_is_lost_and_redirect_while_holding_too(serve) -> None:  # type: ignore[no-untyped-def]
    for goodbye, code in ((b"ERROR 0x01 server going away\n", "server-going-away"), (b"REDIRECT 127.0.0.1:1\n", "server-going-away"), (b"ERROR 0x03 lease expired\n", "lease-expired")):

        def script(index: int, sock: socket.socket, lines: LineIn, goodbye: bytes = goodbye) -> None:
            lines.line()
            sock.sendall(b"ACQUIRED 3\n")
            time.sleep(0.2)
            sock.sendall(goodbye)
            sock.close()

        server = serve(script)
        client = SessionClient([server.address], identity=None)
        claim = client.acquire("x", lease=10)
        assert claim.lost.wait(SLACK), goodbye
        assert claim.reason is not None and claim.reason.code == code
        client.close()


def test_redirects_are_followed_and_a_loop_is_an_error(serve) -> None:  # type: ignore[no-untyped-def]
    def granting(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(b"ACQUIRED 12\n")
        _silence(sock)

    active = serve(granting)

    def standby(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(f"REDIRECT {active.address}\n".encode())
        sock.close()

    first = serve(standby)
    client = SessionClient([first.address], identity=None)
    with client.hold("x", lease=10) as claim:
        assert claim.token == 12
    client.close()

    holder: List[ScriptedServer] = []

    def loop(index: int, sock: socket.socket, lines: LineIn) -> None:
        lines.line()
        sock.sendall(f"REDIRECT {holder[0].address}\n".encode())
        sock.close()

    holder.append(serve(loop))
    client = SessionClient([holder[0].address], identity=None)
    with pytest.raises(BatonError) as caught:
        client.acquire("x", lease=10)
    assert caught.value.code == "protocol-error" and "redirects" in str(caught.value)
    client.close()
