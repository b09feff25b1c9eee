"""One timer thread for a client: deadlines, retries and reconnect pauses.

``threading.Timer`` would start a thread per timer (a pipelined burst of acquires with waits
would start thousands); one heap and one thread serve them all. Callbacks run on the timer thread
and must be short: they send a line or settle a call, never wait for a reply.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

log = logging.getLogger("baton_client")


class TimerHandle:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler:
    def __init__(self, name: str = "baton-timers") -> None:
        self._heap: List[Tuple[float, int, TimerHandle, Callable[..., Any], Tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        """Runs ``fn(*args)`` on the timer thread after ``delay`` seconds (monotonic clock)."""
        handle = TimerHandle()
        with self._cond:
            if self._stopped:
                handle.cancelled = True
                return handle
            heapq.heappush(self._heap, (time.monotonic() + max(0.0, delay), next(self._seq), handle, fn, args))
            self._cond.notify()
        return handle

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._heap.clear()
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped:
                        return
                    if self._heap:
                        delay = self._heap[0][0] - time.monotonic()
                        if delay <= 0:
                            _, _, handle, fn, args = heapq.heappop(self._heap)
                            break
                        self._cond.wait(delay)
                    else:
                        self._cond.wait()
            if handle.cancelled:
                continue
            try:
                fn(*args)
            except Exception:  # a bug in one callback must not stop every other timer
                log.exception("baton_client timer callback failed")


def cancel(handle: Optional[TimerHandle]) -> None:
    if handle is not None:
        handle.cancel()
