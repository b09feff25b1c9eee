"""The session-protocol client for asyncio: ``async with client.hold(name, lease=...) as claim``.

The protocol itself is ``ClaimMachine`` (baton_client/_session_machine.py) and ``AcquirePlan``
(_session_plan.py), the very same objects the threaded client drives; this module only drives them from the event loop:
one task per claim (its deadlines and events), one reader task per connection (``ACQUIRED``
is pushed). ``claim.lost`` is an ``asyncio.Event``.

Cancellation never strands a claim: a ``hold`` cancelled while it waits (or at the very moment
it is granted) closes its connection before the ``CancelledError`` goes on, and a closed
connection is a release (or leaves the queue).
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any, Callable, Deque, Optional, Sequence, Set, Tuple, Union

from .._durations import session_lease_ms, wait_seconds
from .._heartbeat import DEFAULT_MIN_INTERVAL
from .._identity import DEFAULT_IDENTITY, IdentityOption
from .._keys import require_valid_key
from .._session_claim import HeldClaim
from .._session_driver import LINGER, ClaimDriver
from .._session_machine import DEFAULT_MAX_PARK, ClaimMachine
from .._session_outcome import Outcome
from .._session_plan import AcquirePlan
from .._session_settings import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_RECONNECT_FOR,
    AddressInput,
    SessionClientSettings,
)
from .._session_wire import Address, LineReader, format_address
from ..errors import BatonError, LockLost


class _StreamLink:
    """One TCP connection with its permanent reader task, which also does the connect and posts
    ``opened``/``line``/``bad``/``closed`` events."""

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
        self._writer: Optional[asyncio.StreamWriter] = None
        self._dropped = False
        self._cut_handle: Optional[asyncio.TimerHandle] = None
        self.task = asyncio.ensure_future(self._run())

    def send(self, text: str) -> None:
        if self._writer is None or self._dropped or self._writer.is_closing():
            return
        self._writer.write((text + "\n").encode("utf-8"))

    def drop(self) -> None:
        """Leaves with a FIN (the release), reads on until the server closes (no unread byte may
        turn the close into a reset, which keeps a resumable claim parked), cut after LINGER."""
        if self._dropped:
            return
        self._dropped = True
        if self._writer is not None:
            self._goodbye()
        else:
            # Still connecting: the reader finds _dropped set and says goodbye; a connect that
            # hangs is cut by its own timeout, or now.
            self._cut_handle = asyncio.get_event_loop().call_later(LINGER, self.task.cancel)

    def _goodbye(self) -> None:
        writer = self._writer
        assert writer is not None
        try:
            if writer.can_write_eof() and not writer.is_closing():
                writer.write_eof()
        except (OSError, RuntimeError):
            pass
        self._cut_handle = asyncio.get_event_loop().call_later(LINGER, writer.transport.abort)

    async def _run(self) -> None:
        host, port = self.address
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), self._connect_timeout)
        except (OSError, asyncio.TimeoutError) as error:
            self._post(("closed", self.generation, BatonError("connection-lost", f"{format_address(self.address)}: {error or 'connect timed out'}")))
            return
        except asyncio.CancelledError:
            self._post(("closed", self.generation, None))
            return
        self._writer = writer
        if self._dropped:
            self._goodbye()
        else:
            self._post(("opened", self.generation))
        lines = LineReader()
        unreadable = False
        error: Optional[BaseException] = None
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if unreadable:
                    continue  # drain, so the close is a FIN and not a reset
                try:
                    for line in lines.feed(data):
                        self._post(("line", self.generation, line))
                except BatonError as bad:
                    unreadable = True
                    self._post(("bad", self.generation, bad))
        except OSError as failure:
            error = failure
        except asyncio.CancelledError:
            writer.transport.abort()
            raise
        finally:
            if self._cut_handle is not None:
                self._cut_handle.cancel()
            writer.close()
        if lines.pending and error is None:
            error = BatonError("connection-lost", f"{format_address(self.address)} closed in the middle of a line")
        self._post(("closed", self.generation, error))


class _AsyncClaimRunner(ClaimDriver):
    """Drives one ClaimMachine from one task: events from reader tasks and the caller arrive in
    a mailbox, the machine's deadlines are the waits' timeouts."""

    def __init__(
        self,
        machine: ClaimMachine,
        address: Address,
        connect_timeout: float,
        on_ended: Callable[["_AsyncClaimRunner"], None],
    ) -> None:
        self.machine = machine
        self._connect_timeout = connect_timeout
        self._on_ended = on_ended
        self._mailbox: Deque[Tuple[Any, ...]] = collections.deque([("start", address)])
        self._wake = asyncio.Event()
        self._wake.set()
        self._link: Optional[_StreamLink] = None
        loop = asyncio.get_event_loop()
        self.ready: "asyncio.Future[Outcome]" = loop.create_future()
        self.lost = asyncio.Event()
        self.reason: Optional[LockLost] = None
        self._stopped = asyncio.Event()
        self.task = asyncio.ensure_future(self._run())

    def _post(self, event: Tuple[Any, ...]) -> None:
        self._mailbox.append(event)
        self._wake.set()

    def close_now(self) -> None:
        """Releases (or leaves the queue) at once, without awaiting: the FIN is on its way when
        this returns, which is what a cancelled ``hold`` needs."""
        self.machine.close(time.monotonic())
        self._carry_out(self.machine.take_actions())
        self._wake.set()

    async def close(self) -> None:
        self.close_now()
        try:
            await asyncio.wait_for(self._stopped.wait(), LINGER)
        except asyncio.TimeoutError:
            pass

    async def _run(self) -> None:
        machine = self.machine
        try:
            while True:
                self._carry_out(machine.take_actions())
                if machine.phase == "ended":
                    break
                if not self._mailbox:
                    deadline = machine.next_deadline()
                    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                    self._wake.clear()
                    try:
                        await asyncio.wait_for(self._wake.wait(), timeout)
                    except asyncio.TimeoutError:
                        pass
                now = time.monotonic()
                while self._mailbox:
                    self._dispatch(self._mailbox.popleft(), now)
                    self._carry_out(machine.take_actions())
                machine.tick(now)
        finally:
            if machine.phase != "ended":  # the task itself was cancelled (the loop is closing)
                machine.close(time.monotonic())
            self._carry_out(machine.take_actions())
            if not self.ready.done():
                self.ready.set_result(Outcome("failed", reason=BatonError("client-closed")))
            if self._link is not None:
                self._link.drop()
            self._stopped.set()
            self._on_ended(self)

    def _open_link(self, generation: int, address: Address) -> _StreamLink:
        return _StreamLink(generation, address, self._post, self._connect_timeout)

    def _settle(self, outcome: Outcome) -> None:
        if not self.ready.done():
            self.ready.set_result(outcome)


class Claim(HeldClaim):
    """A held session lock (asyncio). Use the token with every write to the protected resource,
    and stop the moment ``lost`` is set (``await claim.lost.wait()`` in a task beside the work)."""

    _runner: _AsyncClaimRunner
    lost: asyncio.Event

    async def release(self) -> None:
        """Releases the lock by closing the connection. Safe to call more than once."""
        await self._runner.close()

    async def __aenter__(self) -> "Claim":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


class _Hold:
    """``async with client.hold(...) as claim``: acquires on entry, releases on exit."""

    def __init__(self, client: "SessionClient", name: str, lease: float, wait: Optional[float]) -> None:
        self._client = client
        self._args = (name, lease, wait)
        self._claim: Optional[Claim] = None

    async def __aenter__(self) -> Claim:
        claim = await self._client.acquire(*self._args)
        if claim.lost.is_set():  # lost between the grant and the body: the body must not run
            await claim.release()
            claim.check()
        self._claim = claim
        return claim

    async def __aexit__(self, *exc: object) -> None:
        if self._claim is not None:
            await self._claim.release()


class SessionClient(SessionClientSettings):
    """Session-protocol claims on one Baton cluster, for asyncio; options as
    ``baton_client.session.SessionClient``'s."""

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
        self._live: Set[_AsyncClaimRunner] = set()

    def hold(self, name: str, lease: float, wait: Optional[float] = None) -> _Hold:
        """``async with client.hold(name, lease=10) as claim:`` holds ``name`` for the block;
        ``wait`` (seconds; None or 0: forever) ends in ``LockTimeout`` with nothing queued."""
        return _Hold(self, name, lease, wait)

    async def acquire(self, name: str, lease: float, wait: Optional[float] = None) -> Claim:
        """Waits until ``name`` is held and returns the claim; ``await claim.release()``."""
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
                outcome = await asyncio.shield(runner.ready)
            except BaseException:
                runner.close_now()  # cancelled: never strand a claim (or a place in a queue)
                raise
            if outcome.kind == "held":
                self._preferred = plan.index
                return Claim(runner)
            pause = plan.after(outcome, time.monotonic())
            if pause > 0:
                await asyncio.sleep(pause)

    async def close(self) -> None:
        """Closes every claim and pending hold of this client."""
        self._closed = True
        await asyncio.gather(*(runner.close() for runner in list(self._live)))

    async def __aenter__(self) -> "SessionClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _attempt(self, address: Address, name: str, lease_ms: int, give_up_after: Optional[float]) -> _AsyncClaimRunner:
        machine = self.new_machine(name, lease_ms, give_up_after, time.monotonic())
        runner = _AsyncClaimRunner(machine, address, self.connect_timeout, self._live.discard)
        self._live.add(runner)
        return runner
