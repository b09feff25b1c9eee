"""The keyed-protocol client, for threads.

    from baton_client import KeyedClient

    with KeyedClient(["10.0.0.1:7070", "10.0.0.2:7070"]) as client:
        with client.lock("jobs/nightly", lease=30, wait=10) as grant:
            write_to_the_resource(fencing_token=grant.token)

A keyed grant is owned by its fencing token and lasts until it is released or its lease runs out
(the lease is fixed: it is not renewed). The body of ``with client.lock(...)`` runs only once the
lock is held: a failed acquire raises before it. Durations are seconds (int or float); a wait of
None (the default), 0 or ``math.inf`` waits forever, as on the wire; ``try_acquire`` does not wait.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Optional, Union

from ._address import DEFAULT_KEYED_PORT, AddressInput, normalize_addresses
from ._call import Call
from ._identity import DEFAULT_IDENTITY, IdentityOption, resolve_identity
from ._keyed_engine import KeyedEngine
from .errors import BatonError, LockTimeout

__all__ = ["KeyedClient", "Grant"]


def _wait_for(engine: KeyedEngine, call: Call) -> Any:
    """Blocks until the call settles (reading its reply itself when it can: KeyedEngine.wait).
    Interrupted (KeyboardInterrupt, a signal handler raising), the call is cancelled: a grant
    already in hand is released, and one that arrives later is released as it comes, so an
    interrupted acquire never strands a lock."""
    try:
        engine.wait(call)
    except BaseException:
        leftover = call.cancel()
        if isinstance(leftover, Grant):
            try:
                leftover._start_release()
            except BatonError:
                pass
        raise
    return call.outcome()


_RELEASE_ONCE = threading.Lock()


def _token(token: int) -> int:
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token <= (1 << 64) - 1:
        raise BatonError("bad-token", f"bad token: {token!r}; an int from 0 to 2^64-1")
    return token


class Grant:
    """A held keyed lock: its fencing ``token`` (an int, exact to 2^64-1) and how to let it go.

    Pass the token with every write to the protected resource, and have the resource refuse a
    token lower than the highest it has seen."""

    __slots__ = ("_engine", "_via", "key", "token", "_release_call")

    def __init__(self, engine: KeyedEngine, via: Any, key: str, token: int) -> None:
        self._engine = engine
        self._via = via
        #: The lock's name.
        self.key = key
        #: The fencing token.
        self.token = token
        self._release_call: Optional[Call] = None

    @property
    def name(self) -> str:
        return self.key

    def _start_release(self) -> Call:
        # One release per grant, even when two threads call release() at once.
        with _RELEASE_ONCE:
            if self._release_call is None:
                self._release_call = self._engine.start_release(self._via, self.key, self.token)
            return self._release_call

    def release(self) -> bool:
        """True when the server released the lock; False when the token no longer held it (its
        lease ran out, an operator took it, or an earlier attempt whose answer was lost released
        it). Retried on another connection for 5 s when the connection drops. Raises BatonError
        (``session-claim``, ``connection-lost``, ...) when it could not be done. Calling it again
        returns the first call's outcome."""
        return bool(_wait_for(self._engine, self._start_release()))

    def __repr__(self) -> str:
        return f"Grant(key={self.key!r}, token={self.token})"


class KeyedClient:
    """A client of Baton's keyed protocol, safe to share between threads.

    ``addresses``: the servers of one Baton cluster (``"host:port"`` strings or ``(host, port)``
    tuples; default ``127.0.0.1:7070``). One persistent connection per address (two when only one
    is given), each read by a background thread and redialled every ``reconnect_interval`` seconds
    while down; requests from every thread are pipelined on the first open one.

    ``identity``: shown to operators for this client's locks; omitted, ``<user>@<host> pid <pid>``;
    ``None`` sends none; a bad one raises BatonError ``bad-identity``.

    Tuning, in seconds: ``reconnect_interval`` (3), ``connect_timeout`` (3),
    ``release_retry_for`` (5), ``release_retry_interval`` (0.2), ``release_attempt_timeout`` (1).
    """

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
            make_grant=lambda via, key, token: Grant(engine_ref[0], via, key, token),
        )
        engine_ref.append(self._engine)
        #: The identity sent (None: none).
        self.identity = resolved

    def acquire(self, name: str, lease: float, wait: Optional[float] = None) -> Grant:
        """Queues for ``name`` and returns the grant once held. ``lease``: seconds > 0 the lock
        stays held without a release. ``wait``: seconds to queue (None, 0 or inf: forever).

        Raises LockTimeout when the wait ran out (nothing is held) or a finite wait's server went
        silent past wait + 1 s + 10%; BatonError for an error reply (``bad-key`` before sending,
        ``tokens-exhausted``, ``kicked``, ...) or after every connection dropped under it."""
        return _wait_for(self._engine, self._engine.start_acquire(name, lease, wait))

    def try_acquire(self, name: str, lease: float) -> Optional[Grant]:
        """The grant when ``name`` is free now, else None (on the wire a 1 ms wait)."""
        try:
            return _wait_for(self._engine, self._engine.start_acquire(name, lease, None, try_lock=True))
        except LockTimeout:
            return None

    def release(self, name: str, token: int) -> bool:
        """Releases the keyed grant that ``token`` names on ``name`` (a token kept from another
        process, say): as ``Grant.release``. A session's token raises BatonError
        ``session-claim``: only the session's own connection ends its claim."""
        return bool(_wait_for(self._engine, self._engine.start_release(None, name, _token(token))))

    @contextmanager
    def lock(self, name: str, lease: float, wait: Optional[float] = None) -> Iterator[Grant]:
        """Holds ``name`` for the body of a ``with`` block and releases it after. A failed
        acquire raises before the body runs. If the body raises, that error wins over a failed
        release; otherwise a failed release raises (a STALE one does not: check
        ``grant.release()`` yourself when you need to know)."""
        grant = self.acquire(name, lease, wait)
        try:
            yield grant
        except BaseException:
            try:
                grant.release()
            except BatonError:
                pass
            raise
        grant.release()

    def close(self) -> None:
        """Fails what is in flight with ``client-closed`` and closes every connection."""
        self._engine.close()

    def __enter__(self) -> "KeyedClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KeyedClient({', '.join(self._engine.describe())})"
