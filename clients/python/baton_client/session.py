"""The session-protocol client, for threads: one TCP connection is one claim on one lock.

``SessionClient.hold(name, lease=...)`` is a context manager that yields a ``Claim`` only once
the lock is held (a body never runs without it): ``.token`` is the fencing token, ``.lost`` a
``threading.Event`` set the moment ownership is lost or can no longer be confirmed (any
``ERROR``, a ``REDIRECT`` while holding, 0.8 x lease without an answer, the release), and
``.check()`` raises ``LockLost``. Leaving the block closes the connection, which releases.

The model is the TypeScript client (lib/client/session-client.ts and
session-client-connection.ts), split the same way in three:

- ``ClaimMachine``: one claim's protocol state machine, without sockets, threads or clocks of
  its own (events and the time in, actions out). aio/session.py drives the very same machine.
- ``_ClaimRunner``: drives a machine from one background thread; each connection has its own
  permanent reader thread (``ACQUIRED`` is pushed, never only an answer).
- ``SessionClient``: finds a server that will hold the claim (following ``REDIRECT``, queueing
  anew elsewhere on ``0x01``) with ``AcquirePlan``, shared with asyncio too.
"""

from __future__ import annotations

import queue
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Set, Tuple, Union

from ._heartbeat import DEFAULT_MIN_INTERVAL, Confirmation
from ._session_wire import (
    DEFAULT_SESSION_PORT,
    HEARTBEAT_LINE,
    Acquired,
    Address,
    LineReader,
    Moved,
    Redirect,
    ServerError,
    Waiting,
    encode_acquire,
    encode_client,
    encode_resume,
    format_address,
    parse_address,
    parse_reply,
    protocol_error,
)
from ._durations import session_lease_ms, wait_seconds
from ._identity import DEFAULT_IDENTITY, IdentityOption, resolve_identity
from ._keys import require_valid_key
from .errors import BatonError, LockLost, LockTimeout

#: Redirects in a row before we call it a loop (acquiring or resuming).
MAX_REDIRECTS = 8
#: Pause after a whole pass over the addresses found no server, so a restart is not hammered.
PASS_PAUSE = 0.2
#: Pause after a pass over every address found none that would answer a RESUME.
RESUME_PASS_PAUSE = 0.1
#: Server-side errors that still end a hold at once rather than queueing anew: a node whose
#: fencing tokens are exhausted will never grant again, and neither will its cluster (the
#: conformance vector session-errors/0x07-tokens-exhausted).
FINAL_ERRORS = frozenset({"tokens-exhausted"})
#: ``baton serve --max-park``'s default, in seconds.
DEFAULT_MAX_PARK = 60.0
#: How long to keep queueing anew while no server answers at all, in seconds.
DEFAULT_RECONNECT_FOR = 5.0
#: How long a connect may take, in seconds.
DEFAULT_CONNECT_TIMEOUT = 3.0
#: A closed connection waits this long for the server's side of the close, then is cut.
LINGER = 1.0

AddressInput = Union[str, Tuple[str, int]]


def normalize_addresses(addresses: Union[AddressInput, Sequence[AddressInput], None]) -> List[Address]:
    """``"host:port"`` strings (a bare host takes 7071) or ``(host, port)`` pairs; a single one
    may be given on its own. ``ValueError`` for an empty list or an unreadable entry."""
    if addresses is None:
        addresses = [f"127.0.0.1:{DEFAULT_SESSION_PORT}"]
    if isinstance(addresses, str) or (
        isinstance(addresses, tuple) and len(addresses) == 2 and isinstance(addresses[1], int)
    ):
        addresses = [addresses]  # type: ignore[list-item]
    result: List[Address] = []
    for entry in addresses:  # type: ignore[union-attr]
        if isinstance(entry, str):
            parsed = parse_address(entry, DEFAULT_SESSION_PORT)
        elif isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], int):
            parsed = entry if entry[0] and 1 <= entry[1] <= 65535 else None
        else:
            parsed = None
        if parsed is None:
            raise ValueError(f"not a server address: {entry!r}")
        result.append(parsed)
    if not result:
        raise ValueError("at least one server address is needed")
    return result


def new_claim_key() -> str:
    """128 random bits, hex: only this client knows it, so only it can take its claim up again
    (the fencing token is public and never enough)."""
    return secrets.token_hex(16)



# --- outcomes of one attempt ---


@dataclass(frozen=True)
class Outcome:
    """How an attempt ended before it held the lock, or that it holds it.

    ``kind``: ``held``; ``redirect`` (to ``address``); ``retry`` (server trouble: queue anew,
    ``answered`` says whether the server had answered); ``failed`` (raise ``reason``);
    ``timed-out``.
    """

    kind: str
    address: Optional[Address] = None
    reason: Optional[BatonError] = None
    answered: bool = False


# --- the state machine of one claim ---

Action = Tuple[Any, ...]


class ClaimMachine:
    """One claim on one lock, across the connections it takes (a resumable one may take several).

    Inputs: ``start``, ``opened``, ``line``, ``closed``, ``bad_bytes``, ``tick``, ``close``, each
    with the monotonic time. Outputs, appended to ``actions`` for the driver to carry out in
    order: ``("connect", generation, address)`` (leave the current connection, open a new one),
    ``("send", text)``, ``("drop",)`` (leave the current connection), ``("settle", Outcome)``
    (once), ``("lose", LockLost)`` (once, only after ``held`` was settled). Events of a
    connection whose generation is not the current one are ignored by the driver.
    """

    def __init__(
        self,
        name: str,
        lease_ms: int,
        *,
        now: float,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        give_up_after: Optional[float] = None,
        identity: Optional[str] = None,
        claim_key: Optional[str] = None,
        resume_addresses: Sequence[Address] = (),
        max_park: float = DEFAULT_MAX_PARK,
    ) -> None:
        self.name = name
        self.lease_ms = lease_ms
        self.lease = lease_ms / 1000
        self.identity = identity
        self.claim_key = claim_key
        self.resume_addresses = list(resume_addresses)
        self.max_park = max_park
        self.conf = Confirmation(self.lease, min_interval, now)
        self.give_up_at = None if give_up_after is None else now + give_up_after
        self.phase = "acquiring"  # acquiring | queued | held | ended
        self.token = 0
        self.position: Optional[int] = None
        self.generation = 0
        self.address: Optional[Address] = None
        self.resuming = False
        self.resume_redirects = 0
        self.resume_misses = 0
        self.resume_pause_until: Optional[float] = None
        self.resume_pause_target: Optional[Address] = None
        self.answered_any = False
        self.closing = False
        self.actions: List[Action] = []

    # -- inputs --

    def start(self, address: Address, now: float) -> None:
        self.conf.anchor = now
        self._connect(address)

    def opened(self, now: float) -> None:
        if self.phase == "ended":
            return
        if self.resuming:
            # The silence deadline keeps counting from the last confirmation: a resume extends
            # nothing until the server answers it.
            self._send(self._identity_line() + encode_resume(self.name, self.claim_key or ""), now, False)
            return
        self.conf.anchor = now
        self._send(self._identity_line() + encode_acquire(self.name, self.lease_ms, self.claim_key), now, False)

    def line(self, text: str, now: float) -> None:
        if self.phase == "ended":
            return
        try:
            reply = parse_reply(text)
        except BatonError as error:
            self._protocol_failure(error)
            return
        if isinstance(reply, Acquired):
            self._on_acquired(reply.token, now)
        elif isinstance(reply, Waiting):
            self._on_waiting(reply.position, now)
        elif isinstance(reply, ServerError):
            self._on_error(reply.error, now)
        elif isinstance(reply, Moved):
            # The claim moved with a handoff to the node named: take it up there.
            if self.claim_key is None:
                self._protocol_failure(protocol_error(f"MOVED to a session that sent no claim key: {text!r}"))
            else:
                self._resume_at(reply.address)
        elif isinstance(reply, Redirect):
            self._on_redirect(reply.address)

    def bad_bytes(self, error: BatonError, now: float) -> None:
        """The connection sent what no line can be (too long, not UTF-8)."""
        if self.phase != "ended":
            self._protocol_failure(error)

    def closed(self, error: Optional[BaseException], now: float) -> None:
        if self.phase == "ended":
            return
        # A resumable claim outlives a dropped connection on the server for a while (a standby
        # that takes over keeps it): look for it, until the silence deadline says it is lost.
        if self.claim_key is not None and self.phase in ("held", "queued") and not self.closing:
            self._resume_next(now)
            return
        where = format_address(self.address) if self.address else "?"
        detail = f"{where}: {error}" if error is not None else f"{where} closed the connection"
        reason = error if isinstance(error, BatonError) else BatonError("connection-lost", detail)
        if self.phase == "held":
            self._lose(reason)
        else:
            self._finish(Outcome("retry", reason=reason, answered=self.answered_any))

    def tick(self, now: float) -> None:
        """Whatever is due at ``now``: the wait's end, the silence deadline, a heartbeat, a resume."""
        if self.phase == "ended":
            return
        if self.give_up_at is not None and now >= self.give_up_at and self.phase in ("acquiring", "queued"):
            self._finish(Outcome("timed-out"))
            return
        kept = self._kept()
        if now >= self.conf.silence_deadline(kept):
            what = (
                f"{kept:g} s a server keeps a claim between connections (max_park)"
                if kept < self.lease
                else f"{self.lease:g} s lease"
            )
            error = BatonError("lease-expired", f"no answer from the server within 0.8 x the {what}")
            if self.phase == "held":
                self._lose(error)
            else:
                self._finish(Outcome("retry", reason=error, answered=self.answered_any))
            return
        if self.resume_pause_until is not None and now >= self.resume_pause_until:
            target = self.resume_pause_target or self.address
            self.resume_pause_until = None
            if target is not None:
                self._resume_at(target)
            return
        if not self.resuming and self.conf.heartbeat_due(now):
            self._send(HEARTBEAT_LINE, now, True)

    def close(self, now: float) -> None:
        """The holder releases (or gives up waiting): closing the connection is the release."""
        self.closing = True
        if self.phase == "ended":
            return
        held = self.phase == "held"
        self._end()
        if held:
            self.actions.append(("lose", LockLost("client-closed", f"lock {self.name!r} released by its holder")))
        else:
            self.actions.append(("settle", Outcome("failed", reason=BatonError("client-closed"))))
        self.actions.append(("drop",))

    def next_deadline(self) -> Optional[float]:
        """The earliest time ``tick`` has something to do; None once ended."""
        if self.phase == "ended":
            return None
        times = [self.conf.silence_deadline(self._kept())]
        if self.give_up_at is not None and self.phase in ("acquiring", "queued"):
            times.append(self.give_up_at)
        if self.resume_pause_until is not None:
            times.append(self.resume_pause_until)
        if not self.resuming and self.conf.inflight_since is None and self.conf.next_beat_at is not None:
            times.append(self.conf.next_beat_at)
        return min(times)

    def take_actions(self) -> List[Action]:
        actions, self.actions = self.actions, []
        return actions

    # -- replies --

    def _on_acquired(self, token: int, now: float) -> None:
        if self.resuming:
            # The answer to RESUME: the same claim, holding (the same token) or granted meanwhile.
            if self.conf.inflight_since is None:
                return self._protocol_failure(protocol_error("ACQUIRED that answers no request"))
            if self.phase == "held" and token != self.token:
                return self._protocol_failure(
                    protocol_error(f"RESUME answered with token {token} for a claim holding token {self.token}")
                )
            self._resumed()
            self._answer(now)
            if self.phase != "held":
                self._become_held(token)
            return
        # While queued, the first ACQUIRED is the push (the server sends it before answering any
        # heartbeat as holder); a heartbeat in flight is still owed its own answer.
        if self.phase == "queued":
            return self._become_held(token)
        if self.conf.inflight_since is None:
            return self._protocol_failure(protocol_error(f"ACQUIRED {token} that answers no request"))
        if self.phase == "held" and token != self.token:
            return self._protocol_failure(protocol_error(f"ACQUIRED with token {token} while holding token {self.token}"))
        self._answer(now)
        if self.phase == "acquiring":
            self._become_held(token)

    def _on_waiting(self, position: int, now: float) -> None:
        if self.conf.inflight_since is None:
            return self._protocol_failure(protocol_error(f"WAITING {position} that answers no request"))
        if self.phase == "held":
            return self._lose(protocol_error("WAITING while holding the lock"))
        if self.resuming:
            self._resumed()
        self.phase = "queued"
        self.position = position
        self._answer(now)

    def _on_error(self, error: BatonError, now: float) -> None:
        if self.resuming:
            # A node going away or full: look elsewhere. Anything else (claim-unknown above all:
            # it expired, or no node has it any more) means the claim is gone.
            if error.server_side:
                return self._resume_next(now)
            return self._resume_failed(error)
        if self.phase == "held":
            return self._lose(error)
        kind = "retry" if error.server_side and error.code not in FINAL_ERRORS else "failed"
        self._finish(Outcome(kind, reason=error, answered=self.answered_any))

    def _on_redirect(self, address: Address) -> None:
        if self.resuming:
            # Resuming, a standby names the active: look for the claim there.
            self.resume_redirects += 1
            if self.resume_redirects > MAX_REDIRECTS:
                return self._resume_failed(protocol_error(f"more than {MAX_REDIRECTS} redirects in a row"))
            return self._resume_at(address)
        # A node that stops being active redirects its open sessions: the claim ended there, as
        # at ERROR 0x01. The next claim starts at the named address.
        if self.phase == "held":
            where = format_address(self.address) if self.address else "?"
            return self._lose(
                BatonError(
                    "server-going-away",
                    f"{where} is no longer active: REDIRECT to {format_address(address)}",
                )
            )
        self._finish(Outcome("redirect", address=address))

    # -- steps --

    def _identity_line(self) -> str:
        return "" if self.identity is None else encode_client(self.identity) + "\n"

    def _send(self, text: str, now: float, is_heartbeat: bool) -> None:
        self.actions.append(("send", text))
        self.conf.sent(now, is_heartbeat)

    def _answer(self, now: float) -> None:
        self.conf.answered(now)
        self.answered_any = True

    def _connect(self, address: Address) -> None:
        self.generation += 1
        self.address = address
        self.actions.append(("connect", self.generation, address))

    def _become_held(self, token: int) -> None:
        self.phase = "held"
        self.token = token
        self.position = None
        self.give_up_at = None
        self.actions.append(("settle", Outcome("held")))

    def _kept(self) -> float:
        """How long the server keeps the claim without hearing from us: the lease, but between
        connections at most its --max-park, after which it ends the claim with nobody to tell."""
        return min(self.lease, self.max_park) if self.resuming else self.lease

    def _resume_at(self, address: Address) -> None:
        """Leaves the current connection and asks ``address`` for the claim (RESUME)."""
        self.resuming = True
        self.resume_pause_until = None
        self.conf.forget_inflight()
        self._connect(address)

    def _resume_next(self, now: float) -> None:
        """The connection dropped, or a node could not answer: the next address, pausing after a
        whole pass over them."""
        addresses = self.resume_addresses or ([self.address] if self.address else [])
        at = addresses.index(self.address) if self.address in addresses else -1
        target = addresses[(at + 1) % len(addresses)] if addresses else self.address
        self.resume_redirects = 0
        self.resuming = True
        self.conf.forget_inflight()
        self.generation += 1  # the connection we leave says nothing more
        self.actions.append(("drop",))
        self.resume_misses += 1
        if target is None:
            return self._resume_failed(BatonError("connection-lost", "no address to resume at"))
        if self.resume_misses % max(1, len(addresses)) != 0:
            return self._resume_at(target)
        self.resume_pause_until = now + RESUME_PASS_PAUSE
        self.resume_pause_target = target

    def _resumed(self) -> None:
        self.resuming = False
        self.resume_redirects = 0
        self.resume_misses = 0

    def _resume_failed(self, error: BatonError) -> None:
        """The claim is not to be found again: a holder's ownership is lost; a waiter queues anew."""
        if self.phase == "held":
            return self._lose(error)
        self._finish(Outcome("retry", reason=error, answered=self.answered_any))

    def _protocol_failure(self, error: BatonError) -> None:
        if self.phase == "held":
            self._lose(error)
        else:
            self._finish(Outcome("failed", reason=error))

    def _finish(self, outcome: Outcome) -> None:
        """Before holding: report how the attempt ended and leave the connection."""
        self._end()
        self.actions.append(("settle", outcome))
        self.actions.append(("drop",))

    def _lose(self, reason: BatonError) -> None:
        """While holding: ownership can no longer be vouched for. Closing lets the server move on."""
        self._end()
        lost = reason if isinstance(reason, LockLost) else LockLost(reason.code, reason.detail)
        self.actions.append(("lose", lost))
        self.actions.append(("drop",))

    def _end(self) -> None:
        self.phase = "ended"
        self.resuming = False
        self.resume_pause_until = None
        self.give_up_at = None


# --- where to ask next, for the sync and the asyncio client alike ---


class AcquirePlan:
    """The walk over a cluster's addresses while taking one claim (TS ``SessionClient.open``):
    follow REDIRECTs (a bounded number in a row), queue anew at the next address after server
    trouble, pause after a whole pass that nobody answered, give up after ``reconnect_for``
    without any answer, and keep the caller's wait across all of it."""

    def __init__(
        self,
        name: str,
        addresses: Sequence[Address],
        preferred: int,
        wait: Optional[float],
        reconnect_for: float,
        now: float,
    ) -> None:
        self.name = name
        self.addresses = list(addresses)
        self.index = preferred % len(self.addresses)
        self.address = self.addresses[self.index]
        self.wait = wait
        self.started = now
        self.reconnect_for = reconnect_for
        self.redirects = 0
        self.last_answer_at = now
        self.unanswered_in_row = 0

    def left(self, now: float) -> Optional[float]:
        """What is left of the wait (None: forever); raises LockTimeout when nothing is."""
        if self.wait is None:
            return None
        left = self.wait - (now - self.started)
        if left <= 0:
            raise LockTimeout(self.name, self.wait)
        return left

    def after(self, outcome: Outcome, now: float) -> float:
        """The attempt ended without holding: raises, or returns the pause before the next one
        (at ``self.address``)."""
        if outcome.kind == "timed-out":
            raise LockTimeout(self.name, self.wait)
        if outcome.kind == "failed":
            raise outcome.reason or BatonError("internal", "an attempt failed without a reason")
        if outcome.kind == "redirect":
            self.redirects += 1
            if self.redirects > MAX_REDIRECTS:
                raise protocol_error(f"more than {MAX_REDIRECTS} redirects in a row")
            assert outcome.address is not None
            self.address = outcome.address
            return 0.0
        # retry: server trouble before we held anything: queue anew at once on the next
        # address, or the same one when there is only one.
        self.redirects = 0
        if outcome.answered:
            self.last_answer_at = now
            self.unanswered_in_row = 0
        else:
            self.unanswered_in_row += 1
        if now - self.last_answer_at >= self.reconnect_for:
            raise outcome.reason or BatonError("connection-lost", "no server answered")
        self.index = (self.index + 1) % len(self.addresses)
        self.address = self.addresses[self.index]
        if self.unanswered_in_row >= len(self.addresses):
            self.unanswered_in_row = 0
            left = self.left(now)
            return PASS_PAUSE if left is None else min(PASS_PAUSE, left)
        return 0.0


# --- the threaded driver ---


class _SocketLink:
    """One TCP connection with its permanent reader thread, which also does the connect (so
    nothing else ever blocks on it) and posts ``opened``/``line``/``bad``/``closed`` events."""

    def __init__(
        self,
        generation: int,
        address: Address,
        post: Callable[[Tuple[Any, ...]], None],
        connect_timeout: float,
    ) -> None:
        self.generation = generation
        self.address = address
        self._post = post
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self._dropped = False
        #: LINGER ran out after the drop: a connect that completes now is closed at once.
        self._cut_done = False
        self._thread = threading.Thread(
            target=self._run, name=f"baton-session-reader {format_address(address)}", daemon=True
        )
        self._thread.start()

    def send(self, text: str) -> None:
        with self._lock:
            sock = None if self._dropped else self._sock
        if sock is None:
            return
        try:
            sock.sendall((text + "\n").encode("utf-8"))
        except OSError:
            pass  # the reader sees the connection end and reports it

    def drop(self) -> None:
        """Leaves the connection with a FIN (which is the release), then reads what is left until
        the server closes, so no unread byte turns the close into a reset (a reset keeps a
        resumable claim parked on the server); cut after LINGER whatever happens."""
        with self._lock:
            if self._dropped:
                return
            self._dropped = True
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        timer = threading.Timer(LINGER, self._cut)
        timer.daemon = True
        timer.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _cut(self) -> None:
        with self._lock:
            self._cut_done = True
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _run(self) -> None:
        try:
            sock = socket.create_connection(self.address, timeout=self._connect_timeout)
        except OSError as error:
            self._post(("closed", self.generation, BatonError("connection-lost", f"{format_address(self.address)}: {error}")))
            return
        sock.settimeout(None)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        except OSError:
            pass
        with self._lock:
            self._sock = sock
            dropped = self._dropped
            cut = self._cut_done
        if dropped:  # left while connecting: say goodbye at once
            try:
                sock.shutdown(socket.SHUT_RDWR if cut else socket.SHUT_WR)
            except OSError:
                pass
        else:
            self._post(("opened", self.generation))
        reader = LineReader()
        unreadable = False
        error: Optional[BaseException] = None
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                if unreadable:
                    continue  # drain, so the close is a FIN and not a reset
                try:
                    lines = reader.feed(data)
                except BatonError as bad:
                    unreadable = True
                    self._post(("bad", self.generation, bad))
                    continue
                for line in lines:
                    self._post(("line", self.generation, line))
        except OSError as failure:
            error = failure
        finally:
            try:
                sock.close()
            except OSError:
                pass
        if reader.pending and error is None:
            error = BatonError("connection-lost", f"{format_address(self.address)} closed in the middle of a line")
        self._post(("closed", self.generation, error))


class _ClaimRunner:
    """Drives one ClaimMachine from one background thread: events from the reader threads and
    the caller arrive on a queue, the machine's deadlines are the queue's timeouts."""

    def __init__(
        self,
        machine: ClaimMachine,
        address: Address,
        connect_timeout: float,
        on_ended: Callable[["_ClaimRunner"], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.machine = machine
        self.clock = clock
        self._connect_timeout = connect_timeout
        self._on_ended = on_ended
        self._events: "queue.Queue[Tuple[Any, ...]]" = queue.Queue()
        self._link: Optional[_SocketLink] = None
        self._links: List[_SocketLink] = []
        self.ready = threading.Event()
        self.outcome: Optional[Outcome] = None
        self.lost = threading.Event()
        self.reason: Optional[LockLost] = None
        self._stopped = threading.Event()
        self._events.put(("start", address))
        self._thread = threading.Thread(target=self._run, name=f"baton-session {machine.name}", daemon=True)
        self._thread.start()

    def close(self, wait: float = LINGER) -> None:
        """Releases (or stops waiting): the connection is closed with a FIN. Returns once the
        driver has sent it (at most ``wait`` seconds)."""
        self._events.put(("close",))
        self._stopped.wait(wait)

    def _run(self) -> None:
        machine = self.machine
        try:
            while True:
                self._carry_out(machine.take_actions())
                if machine.phase == "ended":
                    break
                deadline = machine.next_deadline()
                timeout = None if deadline is None else max(0.0, deadline - self.clock())
                try:
                    event: Optional[Tuple[Any, ...]] = self._events.get(timeout=timeout)
                except queue.Empty:
                    event = None
                now = self.clock()
                if event is not None:
                    self._dispatch(event, now)
                    self._carry_out(machine.take_actions())
                machine.tick(now)
        finally:
            self._carry_out(machine.take_actions())
            if not self.ready.is_set():  # never strand the caller
                self.outcome = Outcome("failed", reason=BatonError("internal", "the session driver stopped"))
                self.ready.set()
            if self._link is not None:
                self._link.drop()
            self._stopped.set()
            self._on_ended(self)

    def _dispatch(self, event: Tuple[Any, ...], now: float) -> None:
        kind = event[0]
        machine = self.machine
        if kind == "start":
            machine.start(event[1], now)
        elif kind == "close":
            machine.close(now)
        elif event[1] != machine.generation:
            return  # a connection we left
        elif kind == "opened":
            machine.opened(now)
        elif kind == "line":
            machine.line(event[2], now)
        elif kind == "bad":
            machine.bad_bytes(event[2], now)
        elif kind == "closed":
            machine.closed(event[2], now)

    def _carry_out(self, actions: List[Action]) -> None:
        for action in actions:
            kind = action[0]
            if kind == "connect":
                if self._link is not None:
                    self._link.drop()
                self._link = _SocketLink(action[1], action[2], self._events.put, self._connect_timeout)
            elif kind == "send":
                if self._link is not None:
                    self._link.send(action[1])
            elif kind == "drop":
                if self._link is not None:
                    self._link.drop()
                    self._link = None
            elif kind == "settle":
                if not self.ready.is_set():
                    self.outcome = action[1]
                    self.ready.set()
            elif kind == "lose":
                if not self.lost.is_set():
                    self.reason = action[1]
                    self.lost.set()


# --- the public API ---




class Claim:
    """A held session lock. Use the token with every write to the protected resource, and stop
    the moment ``lost`` is set."""

    def __init__(self, runner: _ClaimRunner) -> None:
        self._runner = runner
        self.name = runner.machine.name
        #: The fencing token, exact (a u64).
        self.token: int = runner.machine.token
        #: Set the moment ownership is lost or can no longer be confirmed; ``reason`` says why.
        self.lost: threading.Event = runner.lost

    @property
    def reason(self) -> Optional[LockLost]:
        """Why ownership ended (``.code``: ``force-released``, ``lease-expired``, ...); None while held."""
        return self._runner.reason

    def check(self) -> None:
        """Raises ``LockLost`` once ownership is lost or can no longer be confirmed."""
        if self.lost.is_set():
            raise self._runner.reason or LockLost("connection-lost", f"lock {self.name!r} lost")

    @property
    def heartbeat_interval(self) -> float:
        """The gap the schedule keeps between heartbeats now, in seconds."""
        return self._runner.machine.conf.schedule.interval

    @property
    def smoothed_rtt(self) -> Optional[float]:
        return self._runner.machine.conf.schedule.smoothed_rtt

    def release(self) -> None:
        """Releases the lock by closing the connection. Safe to call more than once."""
        self._runner.close()

    def __enter__(self) -> "Claim":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        state = f"lost: {self.reason}" if self.lost.is_set() else "held"
        return f"<Claim {self.name!r} token={self.token} {state}>"


class _Hold:
    """``with client.hold(...) as claim``: acquires on entry, releases on exit."""

    def __init__(self, client: "SessionClient", name: str, lease: float, wait: Optional[float]) -> None:
        self._client = client
        self._args = (name, lease, wait)
        self._claim: Optional[Claim] = None

    def __enter__(self) -> Claim:
        claim = self._client.acquire(*self._args)
        if claim.lost.is_set():  # lost between the grant and the body: the body must not run
            claim.release()
            claim.check()
        self._claim = claim
        return claim

    def __exit__(self, *exc: object) -> None:
        if self._claim is not None:
            self._claim.release()



class SessionClient:
    """Session-protocol claims on one Baton cluster, for threads.

    ``addresses``: the cluster's session addresses (``"host:port"`` or ``(host, port)``;
    default ``127.0.0.1:7071``). ``identity``: shown to operators (default
    ``<user>@<host> pid <pid>``; None sends none). ``resumable``: claims survive a handoff or a
    failover of the active node (opt-in; the seed protocol otherwise). ``max_park``: the
    servers' ``--max-park`` in seconds (never set it above theirs). Durations are seconds.
    """

    def __init__(
        self,
        addresses: Union[AddressInput, Sequence[AddressInput], None] = None,
        identity: IdentityOption = DEFAULT_IDENTITY,
        resumable: bool = False,
        max_park: float = DEFAULT_MAX_PARK,
        min_heartbeat_interval: float = DEFAULT_MIN_INTERVAL,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        reconnect_for: float = DEFAULT_RECONNECT_FOR,
    ) -> None:
        self.addresses = normalize_addresses(addresses)
        if not (isinstance(max_park, (int, float)) and max_park > 0 and max_park != float("inf")):
            raise ValueError(f"max_park must be a positive number of seconds, got {max_park!r}")
        self.identity = resolve_identity(identity)
        self.resumable = resumable
        self.max_park = float(max_park)
        self.min_heartbeat_interval = float(min_heartbeat_interval)
        self.connect_timeout = float(connect_timeout)
        self.reconnect_for = float(reconnect_for)
        self._preferred = 0
        self._closed = False
        self._live: Set[_ClaimRunner] = set()
        self._lock = threading.Lock()

    def hold(self, name: str, lease: float, wait: Optional[float] = None) -> _Hold:
        """``with client.hold(name, lease=10) as claim:`` holds ``name`` for the block.

        ``lease`` (seconds): the server frees the lock after this long without hearing from us
        (heartbeats keep it). ``wait`` (seconds; None or 0: forever): raise ``LockTimeout`` if
        not held by then, with nothing left queued."""
        return _Hold(self, name, lease, wait)

    def acquire(self, name: str, lease: float, wait: Optional[float] = None) -> Claim:
        """Waits until ``name`` is held and returns the claim; ``claim.release()`` releases."""
        if self._closed:
            raise BatonError("client-closed")
        require_valid_key(name)
        lease_ms = session_lease_ms(lease)
        plan = AcquirePlan(name, self.addresses, self._preferred, wait_seconds(wait), self.reconnect_for, time.monotonic())
        while True:
            if self._closed:
                raise BatonError("client-closed")
            left = plan.left(time.monotonic())
            runner = self._attempt(plan.address, name, lease_ms, left)
            try:
                runner.ready.wait()
            except BaseException:
                runner.close()  # interrupted: never strand a claim (or a place in a queue)
                raise
            outcome = runner.outcome
            assert outcome is not None
            if outcome.kind == "held":
                self._preferred = plan.index
                return Claim(runner)
            pause = plan.after(outcome, time.monotonic())
            if pause > 0:
                time.sleep(pause)

    def close(self) -> None:
        """Closes every claim and pending hold of this client (each claim's ``lost`` is set)."""
        self._closed = True
        with self._lock:
            runners = list(self._live)
        for runner in runners:
            runner.close()

    def __enter__(self) -> "SessionClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _attempt(self, address: Address, name: str, lease_ms: int, give_up_after: Optional[float]) -> _ClaimRunner:
        machine = ClaimMachine(
            name,
            lease_ms,
            now=time.monotonic(),
            min_interval=self.min_heartbeat_interval,
            give_up_after=give_up_after,
            identity=self.identity,
            claim_key=new_claim_key() if self.resumable else None,
            resume_addresses=self.addresses,
            max_park=self.max_park,
        )
        runner = _ClaimRunner(machine, address, self.connect_timeout, self._ended)
        with self._lock:
            self._live.add(runner)
        return runner

    def _ended(self, runner: _ClaimRunner) -> None:
        with self._lock:
            self._live.discard(runner)
