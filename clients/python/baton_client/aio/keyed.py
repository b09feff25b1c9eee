"""The keyed-protocol client for asyncio.

    from baton_client.aio import KeyedClient

    async with KeyedClient(["10.0.0.1:7070"]) as client:
        async with client.lock("jobs/nightly", lease=30, wait=10) as grant:
            await write_to_the_resource(fencing_token=grant.token)

It drives the same engine as the sync client (baton_client._keyed_engine), so both follow one set
of protocol rules; its sockets are read by the engine's background threads and every call is an
awaitable, so the event loop never blocks on the network.

Cancellation never strands a lock: an acquire cancelled while it waits is given up, and a grant
that arrives after that (or had just arrived) is released at once. The request itself stays
queued on the server until then (the protocol has no "withdraw"); a cancelled ``wait=None``
acquire therefore ends as a brief grant, released as it comes.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Iterable, Optional, Union

from .._address import DEFAULT_KEYED_PORT, AddressInput, normalize_addresses
from .._call import Call
from .._identity import DEFAULT_IDENTITY, IdentityOption, resolve_identity
from .._keyed_engine import KeyedEngine
from ..errors import BatonError, LockTimeout
from ..keyed import _token

__all__ = ["KeyedClient", "AsyncGrant"]


async def _settled(call: Call) -> Any:
    """Awaits the call. Cancelled, the call is cancelled too: a grant already in hand is
    released, and one that arrives later is released as it comes."""
    loop = asyncio.get_running_loop()
    future: "asyncio.Future[None]" = loop.create_future()

    def wake(_: Call) -> None:
        loop.call_soon_threadsafe(_set_done, future)

    call.add_done_callback(wake)
    try:
        await future
    except asyncio.CancelledError:
        leftover = call.cancel()
        if isinstance(leftover, AsyncGrant):
            leftover._start_release_quietly()
        raise
    return call.outcome()


def _set_done(future: "asyncio.Future[None]") -> None:
    if not future.done():
        future.set_result(None)


class AsyncGrant:
    """A held keyed lock: its fencing ``token`` (an int, exact to 2^64-1)."""

    __slots__ = ("_engine", "_via", "key", "token", "_release_call")

    def __init__(self, engine: KeyedEngine, via: Any, key: str, token: int) -> None:
        self._engine = engine
        self._via = via
        self.key = key
        self.token = token
        self._release_call: Optional[Call] = None

    @property
    def name(self) -> str:
        return self.key

    def _start_release(self) -> Call:
        if self._release_call is None:
            self._release_call = self._engine.start_release(self._via, self.key, self.token)
        return self._release_call

    def _start_release_quietly(self) -> None:
        try:
            self._start_release()
        except BatonError:
            pass

    async def release(self) -> bool:
        """True when released; False when the token no longer held the lock (see the sync
        ``Grant.release``). Cancelling the await does not stop the release."""
        return bool(await asyncio.shield(_settled(self._start_release())))

    def __repr__(self) -> str:
        return f"AsyncGrant(key={self.key!r}, token={self.token})"


class KeyedClient:
    """The asyncio twin of ``baton_client.KeyedClient``: the same arguments and rules."""

    def __init__(
        self,
        addresses: Union[AddressInput, Iterable[AddressInput], None] = None,
        identity: IdentityOption = DEFAULT_IDENTITY,
        *,
        reconnect_interval: float = 3.0,
        connect_timeout: float = 3.0,
        release_retry_for: float = 5.0,
        release_retry_interval: float = 0.2,
        release_attempt_timeout: float = 1.0,
    ) -> None:
        resolved = resolve_identity(identity)
        engine_ref: list = []
        self._engine = KeyedEngine(
            normalize_addresses(addresses, DEFAULT_KEYED_PORT),
            resolved,
            reconnect_interval=reconnect_interval,
            connect_timeout=connect_timeout,
            release_retry_for=release_retry_for,
            release_retry_interval=release_retry_interval,
            release_attempt_timeout=release_attempt_timeout,
            make_grant=lambda via, key, token: AsyncGrant(engine_ref[0], via, key, token),
        )
        engine_ref.append(self._engine)
        self.identity = resolved

    async def acquire(self, name: str, lease: float, wait: Optional[float] = None) -> AsyncGrant:
        """See ``baton_client.KeyedClient.acquire``."""
        return await _settled(self._engine.start_acquire(name, lease, wait))

    async def try_acquire(self, name: str, lease: float) -> Optional[AsyncGrant]:
        """The grant when ``name`` is free now, else None."""
        try:
            return await _settled(self._engine.start_acquire(name, lease, None, try_lock=True))
        except LockTimeout:
            return None

    async def release(self, name: str, token: int) -> bool:
        """See ``baton_client.KeyedClient.release``."""
        return bool(await asyncio.shield(_settled(self._engine.start_release(None, name, _token(token)))))

    @asynccontextmanager
    async def lock(self, name: str, lease: float, wait: Optional[float] = None) -> AsyncIterator[AsyncGrant]:
        """``async with client.lock(...) as grant``: the body runs only while held; released after
        (also when the body raises or is cancelled)."""
        grant = await self.acquire(name, lease, wait)
        try:
            yield grant
        except BaseException:
            try:
                await grant.release()
            except (BatonError, asyncio.CancelledError):
                pass
            raise
        await grant.release()

    async def close(self) -> None:
        """Fails what is in flight with ``client-closed`` and closes every connection."""
        await asyncio.get_running_loop().run_in_executor(None, self._engine.close)

    async def __aenter__(self) -> "KeyedClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"aio.KeyedClient({', '.join(self._engine.describe())})"
