"""What a keyed client has in flight: requests, and per connection a table matching replies to
them. Replies name only (op, key), and the server answers the same (op, key) on one connection in
send order, so each slot ("A key", "R key") holds a FIFO: its oldest request owns the next reply.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Deque, Dict, Generic, List, Optional, TypeVar

from ._call import Call
from ._durations import wait_to_wire
from ._keyed_wire import acquire_line, release_line
from ._scheduler import TimerHandle

T = TypeVar("T")


class PendingAcquire:
    op = "A"
    __slots__ = ("slot", "key", "lease_wire", "wait", "started_at", "wait_wire", "tries_left", "oldest_since", "timer", "park_timer", "call", "sent_on")

    def __init__(self, key: str, lease_wire: str, wait: Optional[float], wait_wire: str, tries: int, call: Call) -> None:
        self.slot = "A " + key
        self.key = key
        self.lease_wire = lease_wire
        #: What the caller asked for, in seconds; None = forever.
        self.wait = wait
        self.started_at = time.monotonic()
        #: The wait as sent next, in decimal seconds (shrunk when it is sent again).
        self.wait_wire = wait_wire
        #: Connections it may still be tried on.
        self.tries_left = tries
        #: Since when it is the oldest outstanding `A` of its key on its connection (the server
        #: holds its answer back until every older one is answered); None while behind another.
        self.oldest_since: Optional[float] = None
        #: The client's own deadline for a finite wait.
        self.timer: Optional[TimerHandle] = None
        #: While no connection can take it: the timer that gives up.
        self.park_timer: Optional[TimerHandle] = None
        self.call = call
        #: The connection it was last sent on (its caller reads the reply there when it can).
        self.sent_on: Any = None

    def line(self) -> bytes:
        return acquire_line(self.key, self.lease_wire, self.wait_wire)

    def shrink_wait(self, now: float) -> bool:
        """Before it is sent again: the wait less the time already spent, so the caller never waits
        longer than asked. False when no wait is left."""
        if self.wait is None:
            return True
        left = self.wait - (now - self.started_at)
        if left <= 0:
            return False
        self.wait_wire = wait_to_wire(left)
        return True


class PendingRelease:
    op = "R"
    __slots__ = ("slot", "key", "token", "started_at", "via", "lost_on", "timer", "call", "sent_on")

    def __init__(self, key: str, token: int, via: Any, call: Call) -> None:
        self.slot = "R " + key
        self.key = key
        self.token = token
        self.started_at = time.monotonic()
        #: The connection that granted the token, tried first; any connection will do.
        self.via = via
        #: The connection an attempt was lost on: the retry goes elsewhere when another is open.
        self.lost_on: Any = None
        #: The deadline of the attempt in flight, or the pause before the next attempt.
        self.timer: Optional[TimerHandle] = None
        self.call = call
        #: The connection it was last sent on (its caller reads the reply there when it can).
        self.sent_on: Any = None

    def line(self) -> bytes:
        return release_line(self.key, self.token)


class PendingTable(Generic[T]):
    def __init__(self) -> None:
        self._slots: Dict[str, Deque[T]] = {}

    def __len__(self) -> int:
        return sum(len(q) for q in self._slots.values())

    def push(self, slot: str, entry: T) -> None:
        queue = self._slots.get(slot)
        if queue is None:
            self._slots[slot] = deque((entry,))
        else:
            queue.append(entry)

    def oldest(self, slot: str) -> Optional[T]:
        queue = self._slots.get(slot)
        return queue[0] if queue else None

    def has(self, slot: str, entry: T) -> bool:
        queue = self._slots.get(slot)
        return queue is not None and any(e is entry for e in queue)

    def shift(self, slot: str) -> Optional[T]:
        """The oldest entry of the slot, removed; None for a reply nobody waits for."""
        queue = self._slots.get(slot)
        if not queue:
            return None
        entry = queue.popleft()
        if not queue:  # only keys in flight stay in the map
            del self._slots[slot]
        return entry

    def remove(self, slot: str, entry: T) -> bool:
        """Takes ``entry`` out wherever it stands (only before dropping the connection: the reply
        the server still owes it would otherwise go to the next entry of the slot)."""
        queue = self._slots.get(slot)
        if not queue:
            return False
        for i, e in enumerate(queue):
            if e is entry:
                del queue[i]
                if not queue:
                    del self._slots[slot]
                return True
        return False

    def drain(self) -> List[T]:
        """Everything, each slot's entries still in send order."""
        entries = [e for queue in self._slots.values() for e in queue]
        self._slots.clear()
        return entries
