"""The keyed client's engine (lib/client/keyed-client.ts): a small pool of persistent
connections (one per address, two when only one address is given) and the retry rules. The sync
``KeyedClient`` and the asyncio one both drive it: the protocol's rules live here once, and the
asyncio client only turns its calls into awaitables (its sockets are read by the same background
threads, so an event loop never blocks on them).

Every acquire and release goes to the first open connection (``_pick``), not round-robin, as the
TypeScript client does: requests made together then leave on one socket and come back in one
read (alternating split a pipelined batch in halves and doubled the server's syscalls), and the
server answers equal (op, key) pairs in send order only within one connection. The other
connections stand by, already connected, for when the first one drops.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._address import Address, format_address
from ._call import Call
from ._durations import TRY_WAIT_WIRE, lease_to_wire, wait_seconds, wait_to_wire
from ._keyed_connection import CONNECTING, DOWN, OPEN, KeyedConnection, connection_lost
from ._keyed_pending import PendingAcquire, PendingRelease
from ._keys import require_valid_key
from ._scheduler import Scheduler, TimerHandle, cancel
from .errors import BatonError, LockTimeout

PendingRequest = Union[PendingAcquire, PendingRelease]

NO_CONNECTION = "no connection to a Baton server is up"
#: The try-lock's wait on the wire (1 ms), in seconds for the client's own deadline.
TRY_WAIT_S = 0.001


def acquire_margin(wait: float) -> float:
    """How long past the wait the client waits for an answer: 1 s + 10% of the wait. The server
    answers `T` at the wait, so only a stalled server or a dead link reaches this."""
    return 1.0 + wait / 10


def client_closed() -> BatonError:
    return BatonError("client-closed", "the client was closed")


class KeyedEngine:
    def __init__(
        self,
        addresses: Sequence[Address],
        identity: Optional[str],
        reconnect_interval: float,
        connect_timeout: float,
        release_retry_for: float,
        release_retry_interval: float,
        release_attempt_timeout: float,
        make_grant: Callable[[Any, str, int], Any],
    ) -> None:
        self.lock = threading.Lock()
        self.identity = identity
        self.reconnect_interval = reconnect_interval
        self.connect_timeout = connect_timeout
        self.release_retry_for = release_retry_for
        self.release_retry_interval = release_retry_interval
        self.release_attempt_timeout = release_attempt_timeout
        self._make_grant = make_grant
        # With one address, a second connection keeps requests flowing while the first reconnects.
        homes = list(addresses) * 2 if len(addresses) == 1 else list(addresses)
        self.connections = [KeyedConnection(self, home, i) for i, home in enumerate(homes)]
        self.scheduler = Scheduler()
        self._started = False
        self._closed = False
        #: Acquires waiting for a connection to come up, each with the node it was lost on (None
        #: when none), in the order they were parked.
        self._parked: Dict[PendingAcquire, Optional[Address]] = {}
        self._park_limit = reconnect_interval + connect_timeout
        #: Releases waiting for their next try.
        self._retrying: List[PendingRelease] = []

    @property
    def closed(self) -> bool:
        return self._closed

    def later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        return self.scheduler.call_later(delay, fn, *args)

    # -- acquire ------------------------------------------------------------------------------------

    def start_acquire(self, key: str, lease: object, wait: object, try_lock: bool = False) -> Call:
        """Starts an acquire; the call resolves with a grant, or fails with LockTimeout or a
        BatonError. Validation errors raise here, before anything is sent."""
        require_valid_key(key)
        lease_wire = lease_to_wire(lease)
        if try_lock:
            wait_s: Optional[float] = TRY_WAIT_S
            wait_wire = TRY_WAIT_WIRE
        else:
            wait_s = wait_seconds(wait)
            wait_wire = wait_to_wire(wait)
        if self._closed:
            raise client_closed()
        call = Call()
        request = PendingAcquire(key, lease_wire, wait_s, wait_wire, len(self.connections), call)
        call.request = request
        # A grant that arrives after the caller gave up is released at once.
        call.on_abandoned_result = self.release_abandoned
        if wait_s is not None:
            # One deadline for the whole acquire, however often it moves to another connection.
            request.timer = self.later(wait_s + acquire_margin(wait_s), self._acquire_due, request)
        self._send_acquire(request, None, None)
        return call

    def _send_acquire(
        self, request: PendingAcquire, reason: Optional[BaseException], avoid: Optional[KeyedConnection], lost_at: Optional[Address] = None
    ) -> None:
        for _ in range(len(self.connections) + 1):
            with self.lock:
                if self._closed:
                    break
                connection = self._pick(None, avoid, lost_at)
                if connection is None:
                    # Connections that are down, or that a redirect led to the node just lost, come
                    # back (home) by themselves: wait for one rather than fail.
                    if any(c.state == DOWN or (lost_at is not None and c.address == lost_at and c.home != lost_at) for c in self.connections):
                        self._park(request, reason or connection_lost(NO_CONNECTION), lost_at)
                        return
                    break
            # Sent again after a drop (``reason``): a socket the server has closed too is given up
            # instead (KeyedConnection.send), and the next one is picked.
            if connection.send(request, probe=reason is not None):
                return
        self._fail_acquire(request, client_closed() if self._closed else (reason or connection_lost(NO_CONNECTION)))

    def _park(self, request: PendingAcquire, reason: BaseException, lost_at: Optional[Address]) -> None:
        """Under the lock. No connection is up, but some will reconnect (a failover): the acquire
        waits for one, within its own wait and at most one reconnect interval plus a connect
        timeout, instead of failing at once. ``lost_at``: the node it was just lost on, which
        ``unpark`` keeps it away from too."""
        limit = self._park_limit
        if request.wait is not None:
            limit = max(0.0, min(limit, request.wait - (time.monotonic() - request.started_at)))
        self._parked[request] = lost_at
        request.park_timer = self.later(limit, self._park_expired, request, reason)

    def _park_expired(self, request: PendingAcquire, reason: BaseException) -> None:
        with self.lock:
            if request not in self._parked:
                return
            del self._parked[request]
        self._fail_acquire(request, reason)

    def unpark(self) -> None:
        """A connection is connecting again, so it can take requests. An acquire lost with a node
        still keeps away from the connections a redirect had led to that node: one comes home
        while another is still open there (the dying process has not closed that socket yet), and
        the acquire sent on the open one would spend a try (with two connections, its last) on the
        dead node. With only such connections, or down ones, it stays parked, under the timer it
        was parked with."""
        with self.lock:
            if not self._parked:
                return
            waiting, self._parked = self._parked, {}
            for request, lost_at in list(waiting.items()):
                if lost_at is not None and self._pick(None, None, lost_at) is None:
                    self._parked[request] = waiting.pop(request)
        now = time.monotonic()
        for request, lost_at in waiting.items():
            cancel(request.park_timer)
            if not request.shrink_wait(now):
                self._fail_acquire(request, LockTimeout(request.key, request.wait))
            else:
                self._send_acquire(request, None, None, lost_at)

    def _acquire_due(self, request: PendingAcquire) -> None:
        """A finite-wait acquire reached its deadline. One behind older acquires of its key on its
        connection is not overdue (the server answers it only after them): it gets the margin again
        from when it became the oldest. Bytes already in the socket are read first."""
        request.timer = None
        with self.lock:
            holder = next((c for c in self.connections if c.holds(request)), None)
            if holder is None:
                return  # settled, or parked (the park has its own timer)
            margin = acquire_margin(request.wait or 0.0)
            since = request.oldest_since
            left = margin if since is None else margin - (time.monotonic() - since)
        if left <= 0 and holder.readable():
            left = 0.05
        if left > 0:
            request.timer = self.later(left, self._acquire_due, request)
            return
        # Overdue: the server is stalled or the link is dead. Dropping the connection is what makes
        # the server forget the queued request.
        waited = time.monotonic() - request.started_at
        if holder.abandon(request, f"no answer to acquire {request.key!r} within {waited:.1f} s") is not None:
            self._fail_acquire(request, LockTimeout(request.key, request.wait))

    def _fail_acquire(self, request: PendingAcquire, error: BaseException) -> None:
        cancel(request.timer)
        cancel(request.park_timer)
        request.call.reject(error)

    # -- a sync caller's wait -------------------------------------------------------------------------

    def wait(self, call: Call) -> None:
        """Blocks until ``call`` settles. While its request is on an open connection, the caller
        reads that connection's replies itself when nobody else does (KeyedConnection.wait_here);
        otherwise (connecting, parked, between retries) the reader and timer threads settle it."""
        request = call.request
        while not call.done:
            connection = request.sent_on if request is not None else None
            wire = None
            if connection is not None:
                with self.lock:
                    if connection.state == OPEN and connection.holds(request):
                        wire = connection.wire
            if wire is None:
                call.wait(0.5)
            else:
                connection.wait_here(call, wire)

    # -- replies (from the connections' reader threads) -------------------------------------------

    def granted(self, request: PendingAcquire, via: KeyedConnection, token: int) -> None:
        cancel(request.timer)
        request.call.resolve(self._make_grant(via, request.key, token))

    def timed_out(self, request: PendingAcquire) -> None:
        self._fail_acquire(request, LockTimeout(request.key, request.wait))

    def release_answered(self, request: PendingRelease, released: bool) -> None:
        cancel(request.timer)
        request.call.resolve(released)

    def request_failed(self, request: PendingRequest, error: BaseException) -> None:
        cancel(request.timer)
        if isinstance(request, PendingAcquire):
            cancel(request.park_timer)
        request.call.reject(error)

    def orphaned(self, requests: List[PendingRequest], reason: BaseException, origin: KeyedConnection, lost_at: Optional[Address] = None) -> None:
        """Requests from a connection that dropped (none got an answer): acquires move on to the
        next connection (and fail after one try per connection), releases retry later."""
        now = time.monotonic()
        for request in requests:
            if self._closed:
                self.request_failed(request, client_closed())
            elif isinstance(request, PendingRelease):
                cancel(request.timer)  # that attempt is over: no answer can come
                request.lost_on = origin
                self._retry_release_later(request, reason)
            else:
                request.tries_left -= 1
                if request.tries_left <= 0:
                    self._fail_acquire(request, reason)
                elif not request.shrink_wait(now):
                    self._fail_acquire(request, LockTimeout(request.key, request.wait))
                else:
                    self._send_acquire(request, reason, origin, lost_at)

    # -- release -------------------------------------------------------------------------------------

    def start_release(self, via: Any, key: str, token: int) -> Call:
        """Starts a release; the call resolves True (released) or False (the token no longer held
        the key, or an earlier attempt whose answer was lost released it)."""
        require_valid_key(key)
        if self._closed:
            raise client_closed()
        call = Call()
        request = PendingRelease(key, token, via, call)
        call.request = request
        self._send_release(request, None)
        return call

    def release_abandoned(self, grant: Any) -> None:
        """A grant nobody will use (its caller gave up before it came): released at once."""
        if self._closed:
            return
        try:
            self.start_release(getattr(grant, "_via", None), grant.key, grant.token)
        except BatonError:
            pass

    def _send_release(self, request: PendingRelease, reason: Optional[BaseException]) -> None:
        with self.lock:
            if self._closed:
                connection = None
            else:
                connection = self._pick(request.via, request.lost_on)
        if connection is None or not connection.send(request):
            if self._closed:
                request.call.reject(client_closed())
            else:
                self._retry_release_later(request, reason or connection_lost(NO_CONNECTION))
            return
        # Never past the retry window (but long enough for a live server to answer), so a release
        # settles about when its retries run out.
        window_left = self.release_retry_for - (time.monotonic() - request.started_at)
        timeout = min(self.release_attempt_timeout, max(window_left, self.release_retry_interval))
        request.timer = self.later(timeout, self._release_overdue, request, timeout)

    def _release_overdue(self, request: PendingRelease, timeout: float) -> None:
        """A release attempt got no answer in time: it failed, and the retries go on."""
        request.timer = None
        why = f"no answer to release {request.key!r} within {timeout:.1f} s"
        where = None
        for connection in self.connections:
            where = connection.abandon(request, why)
            if where is not None:
                request.lost_on = connection
                break
        else:
            return  # answered meanwhile
        self._retry_release_later(request, BatonError("io-timeout", f"{where}: {why}"))

    def _retry_release_later(self, request: PendingRelease, reason: BaseException) -> None:
        if self._closed:
            request.call.reject(client_closed())
            return
        if time.monotonic() - request.started_at + self.release_retry_interval > self.release_retry_for:
            request.call.reject(reason)
            return
        with self.lock:
            self._retrying.append(request)
        request.timer = self.later(self.release_retry_interval, self._retry_release, request, reason)

    def _retry_release(self, request: PendingRelease, reason: BaseException) -> None:
        with self.lock:
            if request not in self._retrying:
                return
            self._retrying.remove(request)
        self._send_release(request, reason)

    # -- the pool -------------------------------------------------------------------------------------

    def _pick(self, preferred: Any, avoid: Any, lost_at: Optional[Address] = None) -> Optional[KeyedConnection]:
        """Under the lock: ``preferred`` when open, else the first open connection in address order,
        else the first one still connecting (its lines wait for the socket); ``avoid`` (the one an
        attempt was just lost on, which may have come straight back to the same failing server, or
        is about to close) only when no other connection is open or connecting; one that said
        goodbye only when nothing else is. None when none is."""
        if not self._started:
            self._started = True
            for connection in self.connections:
                connection.start()
        # One that said goodbye (`E - -`: the server closes it after that line) is still open, but
        # a request sent there would only come back at the drop, one try spent for nothing: it is
        # the last choice. (Two connections told at once that the server goes away would
        # otherwise pass their requests to each other.)
        # After a drop at `lost_at`, a connection that reached that node only through a standby's
        # `M` (its own node is another) is no place to re-send: when that node died, every
        # connection a redirect had led there dies with it, and moving the acquire along them
        # spent all its tries on one death in a millisecond (seen with kill -9 of an active that
        # all three connections had been sent to). Such a connection comes home once it drops.
        def redirected_to_lost(connection: KeyedConnection) -> bool:
            return lost_at is not None and connection.address == lost_at and connection.home != lost_at

        for connection in self.connections:
            if connection is preferred and connection is not avoid and connection.state == OPEN and connection.farewell is None:
                return connection
        for connection in self.connections:
            if connection is not avoid and connection.state == OPEN and connection.farewell is None and not redirected_to_lost(connection):
                return connection
        for connection in self.connections:
            if connection is not avoid and connection.state == CONNECTING and not redirected_to_lost(connection):
                return connection
        if avoid is not None and (avoid.state == CONNECTING or (avoid.state == OPEN and avoid.farewell is None)):
            return avoid  # type: ignore[no-any-return]
        for connection in self.connections:
            if connection.state == OPEN and not redirected_to_lost(connection):
                return connection
        return None

    def describe(self) -> List[str]:
        """Each connection's address and state, for repr and debugging."""
        return [f"{format_address(c.address)} {c.state}" for c in self.connections]

    def close(self) -> None:
        """Fails what is in flight with client-closed and closes every connection."""
        with self.lock:
            if self._closed:
                return
            self._closed = True
            parked, self._parked = list(self._parked), {}
            retrying, self._retrying = self._retrying, []
        reason = client_closed()
        for request in parked:
            self._fail_acquire(request, reason)
        for release in retrying:
            cancel(release.timer)
            release.call.reject(reason)
        for connection in self.connections:
            for request in connection.close(reason):
                self.request_failed(request, reason)
        self.scheduler.stop()
        for connection in self.connections:
            connection.join(2.0)
