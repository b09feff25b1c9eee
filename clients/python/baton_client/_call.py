"""The completion of one client call (an acquire or a release), settled once from any thread.

The engine settles it from a reader or timer thread; the sync API blocks on it, and the asyncio
API hands it to its event loop with a done callback. A call can be cancelled by its caller (an
interrupted ``acquire``, a cancelled task): a grant that arrives after that is given to the
``on_abandoned_result`` hook, which releases it, so no lock is left held by nobody.

A sync caller sleeps on a bare ``_thread`` lock (``_bell``), not an Event: an Event is a Condition
over two locks, and its wake-up costs several times more, on the path of every reply. The bell
also rings without settling the call (``ring``): a caller waiting for its reply is then asked to
take over reading the socket (see KeyedConnection.wait_here).
"""

from __future__ import annotations

import logging
import _thread
import threading
from typing import Any, Callable, List, Optional

log = logging.getLogger("baton_client")


def _guarded(fn: Callable[[Any], Any], arg: Any) -> None:
    try:
        fn(arg)
    except Exception:
        log.exception("baton_client: a completion callback failed")


class Call:
    __slots__ = ("_lock", "_bell", "_result", "_error", "_done", "_cancelled", "_callbacks", "on_abandoned_result", "request")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        #: Held while nothing has happened; released (rung) when the call settles or its waiter
        #: is asked to read for itself.
        self._bell = _thread.allocate_lock()
        self._bell.acquire()
        self._result: Any = None
        self._error: Optional[BaseException] = None
        self._done = False
        self._cancelled = False
        self._callbacks: List[Callable[["Call"], None]] = []
        #: Called with a result that arrived after cancel() (a grant nobody will use).
        self.on_abandoned_result: Optional[Callable[[Any], None]] = None
        #: What the engine sent for it (a PendingAcquire or PendingRelease): a waiting caller
        #: looks up the connection it is on, to read its reply itself.
        self.request: Any = None

    # -- settling (engine side) -------------------------------------------------------------------

    def resolve(self, result: Any) -> bool:
        return self._settle(result, None)

    def reject(self, error: BaseException) -> bool:
        return self._settle(None, error)

    def _settle(self, result: Any, error: Optional[BaseException]) -> bool:
        with self._lock:
            if self._done:
                return False
            self._done = True
            self._result, self._error = result, error
            cancelled = self._cancelled
            callbacks, self._callbacks = self._callbacks, []
        self.ring()
        # The settling thread is a connection's reader or the timer thread: a failing callback
        # must not take it down with it.
        if cancelled and error is None and self.on_abandoned_result is not None:
            _guarded(self.on_abandoned_result, result)
        for callback in callbacks:
            _guarded(callback, self)
        return True

    # -- waiting (caller side) ---------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._done

    def add_done_callback(self, callback: Callable[["Call"], None]) -> None:
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        _guarded(callback, self)

    def ring(self) -> None:
        """Wakes the caller waiting in ``wait`` (if any); a ring nobody waits for is kept until the
        next ``wait``, which then returns at once."""
        try:
            self._bell.release()
        except RuntimeError:  # already rung
            pass

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Sleeps until the call settles, the bell rings, or ``timeout``; whether it is done."""
        if self._done:
            return True
        if timeout is None:
            self._bell.acquire()
        elif timeout > 0:
            self._bell.acquire(True, timeout)
        if self._done:
            self.ring()  # done stays done: leave the bell rung for any later wait
            return True
        return False

    def outcome(self) -> Any:
        """The result, or raises the error; only once done."""
        if self._error is not None:
            raise self._error
        return self._result

    def cancel(self) -> Any:
        """The caller gives up. Returns the result when it had already arrived (the caller must
        dispose of it, e.g. release a grant); else None, and a later result goes to
        ``on_abandoned_result``."""
        with self._lock:
            if self._done:
                return self._result if self._error is None else None
            self._cancelled = True
            return None
