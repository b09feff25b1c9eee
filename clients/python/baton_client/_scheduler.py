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
            entry = (time.monotonic() + max(0.0, delay), next(self._seq), handle, fn, args)
            heapq.heappush(self._heap, entry)
            # Wake the timer thread only when this timer is due before the one it sleeps for: a
            # release's attempt timer per call would otherwise cost a thread switch per release.
            if self._heap[0] is entry:
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
                    heap = self._heap
                    # Cancelled timers leave at once, not when due: every release arms an attempt
                    # timer that its answer cancels a moment later, and waking for each of those
                    # would cost this thread a wake-up per release.
                    while heap and heap[0][2].cancelled:
                        heapq.heappop(heap)
                    if heap:
                        delay = heap[0][0] - time.monotonic()
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
