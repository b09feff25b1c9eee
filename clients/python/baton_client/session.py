"""The session-protocol client, for threads: one TCP connection is one claim on one lock.

``SessionClient.hold(name, lease=...)`` is a context manager that yields a ``Claim`` only once
the lock is held (a body never runs without it): ``.token`` is the fencing token, ``.lost`` a
``threading.Event`` set the moment ownership is lost or can no longer be confirmed (any
``ERROR``, a ``REDIRECT`` while holding, 0.8 x lease without an answer, the release), and
``.check()`` raises ``LockLost``. Leaving the block closes the connection, which releases.

The model is the TypeScript client (lib/client/session-client.ts and
session-client-connection.ts), split the same way in three:

- ``ClaimMachine`` (_session_machine.py): one claim's protocol state machine, without sockets,
  threads or clocks of its own (events and the time in, actions out). aio/session.py drives
  the very same machine.
- ``_ClaimRunner``: drives a machine from one background thread; each connection
  (_session_link.py) has its own permanent reader thread (``ACQUIRED`` is pushed, never only
  an answer).
- ``SessionClient``: finds a server that will hold the claim (following ``REDIRECT``, queueing
  anew elsewhere on ``0x01``) with ``AcquirePlan`` (_session_plan.py), shared with asyncio too.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Optional, Sequence, Set, Tuple, Union

from ._durations import session_lease_ms, wait_seconds
from ._heartbeat import DEFAULT_MIN_INTERVAL
from ._identity import DEFAULT_IDENTITY, IdentityOption
from ._keys import require_valid_key
from ._session_claim import HeldClaim
from ._session_driver import LINGER, ClaimDriver
from ._session_link import SocketLink
from ._session_machine import DEFAULT_MAX_PARK, ClaimMachine
from ._session_outcome import Outcome
from ._session_plan import AcquirePlan
from ._session_settings import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_RECONNECT_FOR,
    AddressInput,
    SessionClientSettings,
)
from ._session_wire import Address
from .errors import BatonError, LockLost


class _ClaimRunner(ClaimDriver):
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
        self._link: Optional[SocketLink] = None
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

    def _open_link(self, generation: int, address: Address) -> SocketLink:
        return SocketLink(generation, address, self._events.put, self._connect_timeout)

    def _settle(self, outcome: Outcome) -> None:
        if not self.ready.is_set():
            self.outcome = outcome
            self.ready.set()


class Claim(HeldClaim):
    """A held session lock. Use the token with every write to the protected resource, and stop
    the moment ``lost`` is set."""

    _runner: _ClaimRunner
    lost: threading.Event

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


class SessionClient(SessionClientSettings):
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
        super().__init__(
            addresses, identity, resumable, max_park, min_heartbeat_interval, connect_timeout, reconnect_for
        )
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
        machine = self.new_machine(name, lease_ms, give_up_after, time.monotonic())
        runner = _ClaimRunner(machine, address, self.connect_timeout, self._ended)
        with self._lock:
            self._live.add(runner)
        return runner

    def _ended(self, runner: _ClaimRunner) -> None:
        with self._lock:
            self._live.discard(runner)
