"""The completion of one client call (an acquire or a release), settled once from any thread.

The engine settles it from a reader or timer thread; the sync API blocks on it, and the asyncio
API hands it to its event loop with a done callback. A call can be cancelled by its caller (an
interrupted ``acquire``, a cancelled task): a grant that arrives after that is given to the
``on_abandoned_result`` hook, which releases it, so no lock is left held by nobody.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional


class Call:
    __slots__ = ("_lock", "_event", "_result", "_error", "_done", "_cancelled", "_callbacks", "on_abandoned_result")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._result: Any = None
        self._error: Optional[BaseException] = None
        self._done = False
        self._cancelled = False
        self._callbacks: List[Callable[["Call"], None]] = []
        #: Called with a result that arrived after cancel() (a grant nobody will use).
        self.on_abandoned_result: Optional[Callable[[Any], None]] = None

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
        self._event.set()
        if cancelled and error is None and self.on_abandoned_result is not None:
            self.on_abandoned_result(result)
        for callback in callbacks:
            callback(self)
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
        callback(self)

    def wait(self, timeout: Optional[float] = None) -> bool:
        return self._event.wait(timeout)

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
