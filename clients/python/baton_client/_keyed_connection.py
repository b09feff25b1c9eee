"""One persistent keyed-protocol connection (lib/client/keyed-client-connection.ts): it pipelines
requests, matches replies to them by (op, key) in send order, follows ``M`` redirects, and after a
drop hands its unanswered requests back to the engine and reconnects on its own reader thread.

Locks: the engine's ``lock`` guards every table and state; ``write_lock`` orders writes on the
socket. A sender takes ``write_lock`` and then ``lock`` (so a request enters the pending table in
the order its bytes leave), never the other way round. Calls are settled with neither held.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

from ._address import Address, format_address
from ._keyed_pending import PendingAcquire, PendingRelease, PendingTable
from ._keyed_wire import (
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
    identity_line,
    parse_reply,
)
from .errors import BatonError, error_from_wire_name

if TYPE_CHECKING:
    from ._keyed_engine import KeyedEngine

PendingRequest = Union[PendingAcquire, PendingRelease]

#: Redirects in a row without a real reply before we call it a loop.
MAX_REDIRECTS = 8
#: How soon a connection comes home after the node a redirect named could not be reached.
REDIRECT_RETRY_S = 0.2

IDLE, CONNECTING, OPEN, DOWN, CLOSED = "idle", "connecting", "open", "down", "closed"


def connection_lost(text: str) -> BatonError:
    return BatonError("connection-lost", text)


def protocol_error(text: str) -> BatonError:
    return BatonError("protocol-error", text)


class KeyedConnection:
    def __init__(self, engine: "KeyedEngine", home: Address, index: int) -> None:
        self.engine = engine
        self.lock = engine.lock
        self.write_lock = threading.Lock()
        #: The address this connection belongs to; it comes back here after every drop.
        self.home = home
        #: Where it talks now: home until a redirect points elsewhere.
        self.address = home
        self.index = index
        self.state = IDLE
        #: Bumped whenever the socket in use is given up: late lines of an old socket are ignored.
        self.gen = 0
        self.sock: Optional[socket.socket] = None
        #: Request lines sent while connecting, written once the socket is up.
        self.outbox: List[bytes] = []
        self.pending: "PendingTable[PendingRequest]" = PendingTable()
        self.identities_pending = 0
        #: Whether the socket in use has answered a request yet.
        self.served = False
        #: What the server said before closing (`E - - ...`), the best reason for the drop.
        self.farewell: Optional[BatonError] = None
        self.redirects = 0
        #: How long the reader waits before the next connect.
        self.pause = 0.0
        self.wake = threading.Event()
        self.thread: Optional[threading.Thread] = None

    # -- called by the engine -----------------------------------------------------------------------

    def start(self) -> None:
        """Under the engine's lock."""
        if self.state != IDLE:
            return
        self.state = CONNECTING
        self.thread = threading.Thread(target=self._run, name=f"baton-keyed-{self.index}", daemon=True)
        self.thread.start()

    def where(self) -> str:
        return format_address(self.address)

    def send(self, request: PendingRequest) -> bool:
        """Sends now if open, or queues the line while connecting. False when this connection
        cannot take it (it went down since it was picked): the engine picks again."""
        line = request.line()
        failed: Optional[OSError] = None
        with self.write_lock:
            with self.lock:
                if self.state not in (OPEN, CONNECTING):
                    return False
                if isinstance(request, PendingAcquire):
                    request.oldest_since = None if self.pending.oldest(request.slot) is not None else time.monotonic()
                self.pending.push(request.slot, request)
                gen = self.gen
                sock = self.sock if self.state == OPEN else None
                if sock is None:
                    self.outbox.append(line)
                    return True
            try:
                sock.sendall(line)
            except OSError as error:
                failed = error
        if failed is not None:
            self.detach(gen, connection_lost(f"{self.where()}: {failed}"))
        return True

    def holds(self, request: PendingRequest) -> bool:
        """Under the engine's lock."""
        return self.pending.has(request.slot, request)

    def readable(self) -> bool:
        """Whether bytes wait in the socket (a busy reader thread may not have read them yet)."""
        sock = self.sock
        if sock is None:
            return False
        try:
            import select

            ready, _, _ = select.select([sock], [], [], 0)
            return bool(ready)
        except (OSError, ValueError):
            return False

    def abandon(self, request: PendingRequest, why: str) -> Optional[str]:
        """Gives up on ``request``, which the server has not answered in time, and drops this
        connection at once: the server then forgets the request, and replies still owed on this
        socket could no longer be matched. Returns the address, or None when it is not here."""
        with self.lock:
            if not self.pending.remove(request.slot, request):
                return None
            gen = self.gen
            where = self.where()
        self.detach(gen, connection_lost(f"{where}: dropped after {why}"))
        return where

    def close(self, reason: BaseException) -> List[PendingRequest]:
        """Closes for good; returns what was pending (the engine fails it)."""
        with self.lock:
            self.state = CLOSED
            self.gen += 1
            orphans = self.pending.drain()
            self.outbox = []
            sock, self.sock = self.sock, None
        self.wake.set()
        _shut(sock)
        return orphans

    def join(self, timeout: float) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the drop ------------------------------------------------------------------------------------

    def detach(self, gen: int, reason: BatonError, fatal: bool = False) -> None:
        """Gives up the socket of generation ``gen`` (once): the pending requests go back to the
        engine (re-sent elsewhere, or failed when ``fatal``: a server sending bytes we cannot read is
        broken, not gone), and the reader reconnects, at once if the socket had served."""
        with self.lock:
            if gen != self.gen or self.state == CLOSED:
                return
            self.gen += 1
            orphans = self.pending.drain()
            self.outbox = []
            self.identities_pending = 0
            if not fatal and self.farewell is not None:
                reason = self.farewell
            served = self.served
            # A redirect's target that could not be reached (the active a standby named has just
            # died): home again soon, where the standby will know better.
            redirect_failed = not served and self.address != self.home
            self.served = False
            self.farewell = None
            self.redirects = 0
            self.address = self.home
            # A connection that was serving and dropped (its node died or handed off) comes home at
            # once: in a cluster another node is taking over. A failed connect, or one dropped
            # before it answered anything (a server turning it away), waits the interval.
            interval = self.engine.reconnect_interval
            self.pause = 0.0 if served else (min(REDIRECT_RETRY_S, interval) if redirect_failed else interval)
            self.state = CONNECTING if served else DOWN
            sock, self.sock = self.sock, None
        _shut(sock)
        if orphans:
            self.engine.orphaned(orphans, reason, self, fatal)
        if served:
            self.engine.unpark()

    # -- the reader thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        engine = self.engine
        while True:
            with self.lock:
                if self.state == CLOSED:
                    return
                if self.state in (DOWN, IDLE):
                    self.state = CONNECTING
                gen, address = self.gen, self.address
            engine.unpark()
            try:
                sock = socket.create_connection(address, timeout=engine.connect_timeout)
            except OSError as error:
                self.detach(gen, connection_lost(f"{format_address(address)}: {error}"))
                self._pause()
                continue
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
            except OSError:
                pass
            if self._go_live(sock, gen):
                self._read(sock, gen)
            _shut(sock)
            sock.close()
            self._pause()

    def _go_live(self, sock: socket.socket, gen: int) -> bool:
        """Makes ``sock`` the connection's socket and writes the identity and the queued lines."""
        identity = self.engine.identity
        with self.write_lock:
            with self.lock:
                if gen != self.gen or self.state != CONNECTING:
                    return False
                self.sock = sock
                self.state = OPEN
                queued, self.outbox = self.outbox, []
                if identity is not None:
                    self.identities_pending += 1
            # First on the socket, before any request it carries: the server names claims with it.
            head = identity_line(identity) if identity is not None else b""
            try:
                sock.sendall(head + b"".join(queued))
            except OSError as error:
                failed: Optional[OSError] = error
            else:
                failed = None
        if failed is not None:
            self.detach(gen, connection_lost(f"{format_address(self.address)}: {failed}"))
            return False
        return True

    def _pause(self) -> None:
        with self.lock:
            pause = self.pause if self.state != CONNECTING else 0.0
            self.pause = 0.0
        if pause > 0:
            self.wake.wait(pause)

    def _read(self, sock: socket.socket, gen: int) -> None:
        splitter = LineSplitter()
        where = format_address(self.address)
        while True:
            try:
                data = sock.recv(65536)
            except OSError as error:
                self.detach(gen, connection_lost(f"{where}: {error}"))
                return
            if not data:
                closed_mid_line = splitter.pending_bytes > 0
                self.detach(gen, connection_lost(f"{where} closed the connection" + (" in the middle of a line" if closed_mid_line else "")))
                return
            try:
                lines = splitter.feed(data)
            except LineTooLong as error:
                self.detach(gen, protocol_error(f"{where}: {error}"), fatal=True)
                return
            for raw in lines:
                if not self._receive(gen, raw):
                    return

    def _receive(self, gen: int, raw: bytes) -> bool:
        """Handles one reply line; False when this socket is done with (dropped or redirected)."""
        reply = parse_reply(raw)
        engine = self.engine
        answered: Optional[PendingRequest] = None
        early: Optional[PendingAcquire] = None
        broken: Optional[str] = None
        expired: List[PendingAcquire] = []
        with self.lock:
            if gen != self.gen:
                return False
            if isinstance(reply, Redirect):
                if self.redirects >= MAX_REDIRECTS:
                    broken = f"more than {MAX_REDIRECTS} redirects in a row"
                else:
                    expired = self._redirect(reply.address)
            else:
                self.redirects = 0
            if broken is not None or isinstance(reply, Redirect):
                pass
            elif isinstance(reply, Malformed):
                broken = f"unreadable reply ({reply.why}): {reply.line}"
            elif isinstance(reply, ConnectionError_):
                # The server closes after this; keep its words for the requests we hand back.
                self.farewell = error_from_wire_name(reply.code, reply.text)
                return True
            elif isinstance(reply, IdentityOk):
                if self.identities_pending <= 0:
                    broken = "I OK answers no identity sent"
                else:
                    self.identities_pending -= 1
                    return True
            elif isinstance(reply, RequestError) and reply.op == "I":
                # A bad identity: the connection stays usable, its requests unnamed (our rule is the
                # server's, so this means an older or stricter server).
                if self.identities_pending <= 0:
                    broken = f"an identity error answers no identity sent: {reply.code}"
                else:
                    self.identities_pending -= 1
                    return True
            else:
                self.served = True
                answered = self._answered(reply.slot)
                expected = "A" if isinstance(reply, (Granted, TimedOut)) else "R" if isinstance(reply, (Released, Stale)) else None
                if answered is None or (expected is not None and answered.op != expected):
                    broken = f"a reply to nothing: {raw[:200]!r}"
                elif isinstance(reply, TimedOut) and isinstance(answered, PendingAcquire) and _early(answered):
                    early = answered
        if broken is not None:
            self.detach(gen, protocol_error(f"{self.where()}: {broken}"), fatal=True)
            return False
        if isinstance(reply, Redirect):
            for request in expired:
                engine.timed_out(request)
            return False
        if early is not None:
            # Not a timeout: the server let the request go (it is going away). Send it again on
            # another connection, as after a drop.
            engine.orphaned([early], BatonError("server-going-away", f"{self.where()} let a waiting request go"), self, False)
            return True
        assert answered is not None
        if isinstance(reply, Granted):
            engine.granted(answered, self, reply.token)  # type: ignore[arg-type]
        elif isinstance(reply, TimedOut):
            engine.timed_out(answered)  # type: ignore[arg-type]
        elif isinstance(reply, (Released, Stale)):
            engine.release_answered(answered, isinstance(reply, Released))  # type: ignore[arg-type]
        elif isinstance(reply, RequestError):
            engine.request_failed(answered, error_from_wire_name(reply.code, reply.text))
        return True

    def _answered(self, slot: str) -> Optional[PendingRequest]:
        """Under the lock: takes the oldest request of ``slot``, which this reply answers. The next
        `A` on that key is now the oldest: its deadline gives it a margin from here."""
        request = self.pending.shift(slot)
        following = self.pending.oldest(slot)
        if isinstance(following, PendingAcquire):
            following.oldest_since = time.monotonic()
        return request

    def _redirect(self, target: Address) -> List[PendingAcquire]:
        """Under the lock. ``M host:port``: this node is a standby; talk to the active node and send
        every unanswered request again there (an `A` with what is left of its wait). Returns the
        acquires whose wait ran out meanwhile (the caller fails them, outside the lock)."""
        self.redirects += 1
        self.gen += 1
        self.served = False
        self.address = target
        self.state = CONNECTING
        self.pause = 0.0
        self.identities_pending = 0
        sock, self.sock = self.sock, None
        now = time.monotonic()
        expired: List[PendingAcquire] = []
        for request in self.pending.drain():
            if isinstance(request, PendingAcquire) and not request.shrink_wait(now):
                expired.append(request)
                continue
            if isinstance(request, PendingAcquire):
                request.oldest_since = None if self.pending.oldest(request.slot) is not None else now
            self.pending.push(request.slot, request)
            self.outbox.append(request.line())
        _shut(sock)
        return expired


def _early(request: PendingAcquire) -> bool:
    """A `T` that cannot be a timeout: the answer to a wait-forever acquire. The server sends it
    only when it lets waiting requests go (just before `E - - server-going-away`, or a hold that
    found no active node), and the protocol says to send them again after reconnecting. A `T` to
    a finite wait is taken as the timeout it says, whenever it comes (no guessing from clocks)."""
    return request.wait is None


def _shut(sock: Optional[socket.socket]) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
