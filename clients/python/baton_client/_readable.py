"""Waiting for a socket to have something to read (bytes, or its end), with a timeout.

``poll`` where there is one: ``select.select`` refuses descriptors past 1023, which a process with
many files open reaches. One ``Readable`` must not be waited on by two threads at once (a poll
object refuses concurrent use): the reader thread and the callers each have their own.
"""

from __future__ import annotations

import select
import socket
from typing import Optional

_POLL_EVENTS = getattr(select, "POLLIN", 0) | getattr(select, "POLLPRI", 0)


class Readable:
    __slots__ = ("_poll", "_sock")

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._poll = None
        if hasattr(select, "poll"):
            self._poll = select.poll()
            self._poll.register(sock, _POLL_EVENTS)

    def wait(self, timeout: Optional[float]) -> bool:
        """True when a read would not block (or the socket broke: the read then says how); False
        after ``timeout`` seconds (None: no limit)."""
        try:
            if self._poll is not None:
                return bool(self._poll.poll(None if timeout is None else int(timeout * 1000)))
            ready, _, _ = select.select([self._sock], [], [], timeout)
            return bool(ready)
        except (OSError, ValueError):
            return True
