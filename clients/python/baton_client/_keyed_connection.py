"""One persistent keyed-protocol connection (lib/client/keyed-client-connection.ts): it pipelines
requests, matches replies to them by (op, key) in send order, follows ``M`` redirects, and after a
drop hands its unanswered requests back to the engine and reconnects on its own reader thread.

Locks: the engine's ``lock`` guards every table and state; ``write_lock`` orders writes on the
socket. A sender takes ``write_lock`` and then ``lock`` (so a request enters the pending table in
the order its bytes leave), never the other way round. Calls are settled with neither held.

Who reads (leader/follower): handing each reply from the reader thread to the thread that waits
for it costs two thread wake-ups per acquire+release, more than the round trips themselves. So a
sync caller waiting for its reply reads the socket itself while nobody else does (it leads: it
holds ``read_lock`` and settles every reply it reads, others' too), and one that finds the socket
being read sleeps until its reply is settled or it is asked to lead (it follows). Whoever stops
reading asks the oldest follower to lead. The reader thread rests while callers lead, and takes
over once none has read for ``READER_REST_S``, so drops, ``M`` and ``E - -`` are still seen on an
idle connection (and the asyncio client, whose callers never lead, is served by it alone).
"""

from __future__ import annotations

import _thread
import logging
import select
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Deque, List, Optional, Union

from ._address import Address, format_address
from ._call import Call
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
from ._readable import Readable
from .errors import BatonError, error_from_wire_name

if TYPE_CHECKING:
    from ._keyed_engine import KeyedEngine

PendingRequest = Union[PendingAcquire, PendingRelease]

log = logging.getLogger("baton_client")

#: A `T` with more than this left of its wait is the server letting go of the request as it goes
#: away; within it, a server timer a hair early could look the same, and it is taken as the
#: timeout it all but is (the TypeScript client's margin).
LET_GO_MARGIN_S = 0.010
#: Redirects in a row without a real reply before we call it a loop.
MAX_REDIRECTS = 8
#: How soon a connection comes home after the node a redirect named could not be reached.
REDIRECT_RETRY_S = 0.2

#: How long the reader thread leaves the socket to the callers after one last read it: long
#: enough that a caller's next request (a release after its acquire) finds it still theirs, short
#: enough that a drop or a redirect on a connection gone idle is acted on at once for a person.
READER_REST_S = 0.02
#: A leader or follower looks up again at least this often (its request may have moved).
LOOK_AGAIN_S = 0.5

IDLE, CONNECTING, OPEN, DOWN, CLOSED = "idle", "connecting", "open", "down", "closed"


class Wire:
    """One socket as it is read: the line splitter that goes with its bytes, and the generation
    it belongs to (a leader holding an old one finds out and lets go)."""

    __slots__ = ("sock", "gen", "splitter", "where", "for_callers")

    def __init__(self, sock: socket.socket, gen: int, where: str) -> None:
        self.sock = sock
        self.gen = gen
        self.splitter = LineSplitter()
        self.where = where
        #: The leaders' own wait (used only under ``read_lock``); the reader thread has another.
        self.for_callers = Readable(sock)


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
        #: Acquires answered `T` before their wait could have run out: the server let go of them as
        #: it went away (`T` comes just before `E - - server-going-away`). They are sent again, with
        #: what is left of their wait, when this connection drops, which the goodbye makes it do.
        self.let_go: List[PendingAcquire] = []
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
        #: The socket in use as it is read (None while not open).
        self.wire: Optional[Wire] = None
        #: Held by whoever reads the socket: the reader thread or a leading caller.
        self.read_lock = _thread.allocate_lock()
        #: Callers sleeping until their reply is read by someone else (oldest first).
        self.followers: Deque[Call] = deque()
        self.followers_lock = _thread.allocate_lock()
        #: Whether a caller reads now, and when one last stopped: the reader thread rests meanwhile.
        self.leading = False
        self.led_at = 0.0
        #: Rung when the socket is given up, so a resting reader thread reconnects at once.
        self.reader_bell = _thread.allocate_lock()
        self.reader_bell.acquire()

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

    def send(self, request: PendingRequest, probe: bool = False) -> bool:
        """Sends now if open, or queues the line while connecting. False when this connection
        cannot take it (it went down since it was picked): the engine picks again.

        ``probe`` (an acquire sent again after its connection dropped): an open socket whose end
        has already arrived (the server closed it, and this connection's reader has not got to it
        yet) is given up here instead of carrying the request. When a node dies, every connection
        to it closes at once, but each one's reader sees that in its own time: an acquire moved
        onto a socket already closed came back at its drop, one try spent for nothing, and with
        every connection redirected to the dead active it failed before another node could take
        it. (One syscall, only on this path: a first send never probes.)"""
        line = request.line()
        failed: Optional[OSError] = None
        gone: Optional[str] = None
        with self.write_lock:
            with self.lock:
                if self.state not in (OPEN, CONNECTING):
                    return False
                gen = self.gen
                sock = self.sock if self.state == OPEN else None
                if probe and sock is not None and _closed_by_peer(sock):
                    gone = self.where()
                else:
                    if isinstance(request, PendingAcquire):
                        request.oldest_since = None if self.pending.oldest(request.slot) is not None else time.monotonic()
                    self.pending.push(request.slot, request)
                    request.sent_on = self
                    if sock is None:
                        self.outbox.append(line)
                        return True
            if gone is None:
                try:
                    sock.sendall(line)  # type: ignore[union-attr]
                except OSError as error:
                    failed = error
        if gone is not None:
            self.detach(gen, connection_lost(f"{gone} closed the connection"))
            return False
        if failed is not None:
            self.detach(gen, connection_lost(f"{self.where()}: {failed}"))
        return True

    def holds(self, request: PendingRequest) -> bool:
        """Under the engine's lock."""
        return self.pending.has(request.slot, request) or any(r is request for r in self.let_go)

    def _take_unanswered(self) -> List[PendingRequest]:
        """Under the lock: every request sent here and not answered (those let go first: they were
        sent first)."""
        out: List[PendingRequest] = [*self.let_go, *self.pending.drain()]
        self.let_go = []
        return out

    def readable(self) -> bool:
        """Whether bytes wait in the socket (a busy reader thread may not have read them yet)."""
        sock = self.sock
        if sock is None:
            return False
        try:
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
                if not any(r is request for r in self.let_go):
                    return None
                self.let_go = [r for r in self.let_go if r is not request]
            gen = self.gen
            where = self.where()
        self.detach(gen, connection_lost(f"{where}: dropped after {why}"))
        return where

    def close(self, reason: BaseException) -> List[PendingRequest]:
        """Closes for good; returns what was pending (the engine fails it)."""
        with self.lock:
            self.state = CLOSED
            self.gen += 1
            orphans = self._take_unanswered()
            self.outbox = []
            self.wire = None
            sock, self.sock = self.sock, None
        self.wake.set()
        self._ring_reader()
        _shut(sock)
        return orphans

    def join(self, timeout: float) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the drop ------------------------------------------------------------------------------------

    def detach(self, gen: int, reason: BatonError, unreadable: bool = False) -> None:
        """Gives up the socket of generation ``gen`` (once): the pending requests go back to the
        engine (re-sent on another connection: the acquire fails once it met the same everywhere),
        but those the server let go of wait for this connection's reconnect (``_keep_let_go``),
        and the reader reconnects, at once if the socket had served. ``unreadable``: the server sent
        bytes we cannot read, which is the reason given, whatever it said before."""
        with self.lock:
            if gen != self.gen or self.state == CLOSED:
                return
            self.gen += 1
            let_go, self.let_go = self.let_go, []
            orphans: List[PendingRequest] = self.pending.drain()
            self.outbox = []
            self.identities_pending = 0
            if not unreadable and self.farewell is not None:
                reason = self.farewell
            served = self.served
            #: Where the socket talked (before the connection goes home below).
            lost_at = self.address
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
            self.wire = None
            sock, self.sock = self.sock, None
            expired = self._keep_let_go(let_go) if served else []
            if not served:
                orphans = [*let_go, *orphans]
        self._ring_reader()
        _shut(sock)
        for request in expired:
            self.engine.timed_out(request)
        if orphans:
            self.engine.orphaned(orphans, reason, self, lost_at)
        if served:
            self.engine.unpark()

    def _keep_let_go(self, let_go: List[PendingAcquire]) -> List[PendingAcquire]:
        """Under the lock, at a drop after which this connection reconnects at once: the acquires
        the server let go of as it went away wait for that reconnect, to be sent first on the new
        socket (with what is left of their wait), as the protocol asks; they have not failed, and
        spend no try. Moved to another connection instead, one could reach a socket the same
        server is about to close too (it lets go of every connection's waits at once), and fail
        there. Returns those whose wait ran out meanwhile."""
        now = time.monotonic()
        expired: List[PendingAcquire] = []
        for request in let_go:
            if not request.shrink_wait(now):
                expired.append(request)
                continue
            request.oldest_since = None if self.pending.oldest(request.slot) is not None else now
            self.pending.push(request.slot, request)
            self.outbox.append(request.line())
        return expired

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
            wire = self._go_live(sock, gen)
            if wire is not None:
                self._serve(wire)
            _shut(sock)
            # Closed only while nobody reads it: a leader must never poll a descriptor number that
            # a new socket may already have.
            with self.read_lock:
                sock.close()
            self._pause()

    def _go_live(self, sock: socket.socket, gen: int) -> Optional[Wire]:
        """Makes ``sock`` the connection's socket and writes the identity and the queued lines."""
        identity = self.engine.identity
        with self.write_lock:
            with self.lock:
                if gen != self.gen or self.state != CONNECTING:
                    return None
                self.sock = sock
                wire = self.wire = Wire(sock, gen, format_address(self.address))
                self.led_at = 0.0
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
            return None
        return wire

    def _pause(self) -> None:
        with self.lock:
            pause = self.pause if self.state != CONNECTING else 0.0
            self.pause = 0.0
        if pause > 0:
            self.wake.wait(pause)

    def _serve(self, wire: Wire) -> None:
        """The reader thread's share of the reading: whatever no caller reads."""
        readable = Readable(wire.sock)
        while True:
            # Rest while callers read for themselves (checking now and then that the socket is
            # still this one: a drop a leader saw is the reader thread's to reconnect).
            while True:
                if self.gen != wire.gen:
                    return
                quiet_for = time.monotonic() - self.led_at
                if not self.leading and quiet_for >= READER_REST_S:
                    break
                self.reader_bell.acquire(True, READER_REST_S if self.leading else READER_REST_S - quiet_for)
            # Watch without holding the socket, so a caller can still take it; a give-up (drop,
            # redirect, close) shuts the socket, which ends this wait too.
            readable.wait(None)
            with self.read_lock:
                if self.gen != wire.gen:
                    return
                # A caller may have read those bytes first: then nothing waits now.
                carry_on = not readable.wait(0) or self._read_once(wire)
            self._pass_reading_on()
            if not carry_on:
                return

    def _ring_reader(self) -> None:
        try:
            self.reader_bell.release()
        except RuntimeError:  # already rung
            pass

    def wait_here(self, call: Call, wire: Wire) -> None:
        """A sync caller waits for ``call``, whose request went out on ``wire``: it reads the
        socket itself when nobody does, else sleeps until its reply is read or it is asked to
        lead. Returns when the call settled or after a while (the caller looks again where its
        request is)."""
        read_lock = self.read_lock
        if not read_lock.acquire(False):
            with self.followers_lock:
                self.followers.append(call)
            # Tried again once among the followers: whoever let go of the socket between the two
            # tries found nobody to ask to lead, and whoever lets go after this one finds us.
            if not read_lock.acquire(False):
                call.wait(LOOK_AGAIN_S)
                self._unfollow(call)
                if call.done and not read_lock.locked():
                    # The ask to lead may have come to us just as our reply did: pass it on.
                    self._pass_reading_on()
                return
            self._unfollow(call)
        self.leading = True
        try:
            self._lead(call, wire)
        finally:
            self.leading = False
            self.led_at = time.monotonic()
            read_lock.release()
        self._pass_reading_on()

    def _lead(self, call: Call, wire: Wire) -> None:
        """Under ``read_lock``: reads until ``call`` settles (with every other reply that comes
        first) or the socket is given up."""
        readable = wire.for_callers
        while not call.done and self.gen == wire.gen:
            if not readable.wait(LOOK_AGAIN_S):
                return
            try:
                if not self._read_once(wire):
                    return
            except BaseException:
                # Interrupted (KeyboardInterrupt in the main thread) with bytes read but perhaps
                # not all handled: replies may be lost, so the socket can no longer be matched
                # to its requests. Dropped, as a dead link would be: its requests go elsewhere.
                self.detach(wire.gen, connection_lost(f"{wire.where}: dropped after a caller reading it was interrupted"))
                raise

    def _unfollow(self, call: Call) -> None:
        with self.followers_lock:
            try:
                self.followers.remove(call)
            except ValueError:  # already asked to lead
                pass

    def _pass_reading_on(self) -> None:
        """After letting go of ``read_lock``: the oldest follower still waiting is asked to lead."""
        followers = self.followers
        if not followers:
            return
        with self.followers_lock:
            while followers:
                call = followers.popleft()
                if not call.done:
                    call.ring()
                    return

    def _read_once(self, wire: Wire) -> bool:
        """Under ``read_lock``: one read of the socket, every whole line in it handled. False when
        the socket is done with (dropped, broken or redirected)."""
        gen, where = wire.gen, wire.where
        try:
            data = wire.sock.recv(65536)
        except OSError as error:
            self.detach(gen, connection_lost(f"{where}: {error}"))
            return False
        if not data:
            closed_mid_line = wire.splitter.pending_bytes > 0
            self.detach(gen, connection_lost(f"{where} closed the connection" + (" in the middle of a line" if closed_mid_line else "")))
            return False
        try:
            lines = wire.splitter.feed(data)
        except LineTooLong as error:
            self.detach(gen, protocol_error(f"{where}: {error}"), unreadable=True)
            return False
        for raw in lines:
            try:
                carry_on = self._receive(gen, raw)
            except Exception as error:  # a bug here must not leave the connection unread
                log.exception("baton_client: handling a keyed reply failed")
                self.detach(gen, BatonError("internal", f"{where}: {error!r}"))
                return False
            if not carry_on:
                return False
        return True

    def _receive(self, gen: int, raw: bytes) -> bool:
        """Handles one reply line; False when this socket is done with (dropped or redirected)."""
        reply = parse_reply(raw)
        engine = self.engine
        answered: Optional[PendingRequest] = None
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
                    self.let_go.append(answered)
                    return True
        if broken is not None:
            self.detach(gen, protocol_error(f"{self.where()}: {broken}"), unreadable=True)
            return False
        if isinstance(reply, Redirect):
            for request in expired:
                engine.timed_out(request)
            return False
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
        self.wire = None
        sock, self.sock = self.sock, None
        now = time.monotonic()
        expired: List[PendingAcquire] = []
        for request in self._take_unanswered():
            if isinstance(request, PendingAcquire) and not request.shrink_wait(now):
                expired.append(request)
                continue
            if isinstance(request, PendingAcquire):
                request.oldest_since = None if self.pending.oldest(request.slot) is not None else now
            self.pending.push(request.slot, request)
            self.outbox.append(request.line())
        self._ring_reader()
        _shut(sock)
        return expired


def _early(request: PendingAcquire) -> bool:
    """A `T` that cannot be a timeout: to a wait-forever acquire, or with more than LET_GO_MARGIN_S
    of the wait left (the client's measure of the wait always contains the server's). The server
    sends it only when it lets waiting requests go, just before `E - - server-going-away`; the
    protocol says to send them again after reconnecting. (If the connection never drops, the
    acquire's own deadline ends it as a timeout; a wait-forever one waits for the drop.)"""
    if request.wait is None:
        return True
    return request.wait - (time.monotonic() - request.started_at) > LET_GO_MARGIN_S


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the server's end of ``sock`` has already arrived (its FIN, or a reset): a look at
    the socket that takes nothing from it. Bytes still to be read mean it is not known yet."""
    if _MSG_DONTWAIT == 0:  # no MSG_DONTWAIT (Windows): look only when a read would not block
        try:
            ready, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False  # not known: the reader will say
        if not ready:
            return False
    try:
        return sock.recv(1, socket.MSG_PEEK | _MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:  # reset, or given up meanwhile
        return True


_MSG_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


def _shut(sock: Optional[socket.socket]) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
