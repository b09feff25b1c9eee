"""Where to ask next while taking one session claim, for the threaded and the asyncio client
alike: the walk over a cluster's addresses, one ``ClaimMachine`` attempt at a time."""

from __future__ import annotations

from typing import Optional, Sequence

from ._session_outcome import MAX_REDIRECTS, Outcome
from ._session_wire import Address, protocol_error
from .errors import BatonError, LockTimeout

#: Pause after a whole pass over the addresses found no server, so a restart is not hammered.
PASS_PAUSE = 0.2


class AcquirePlan:
    """The walk over a cluster's addresses while taking one claim (TS ``SessionClient.open``):
    follow REDIRECTs (a bounded number in a row), queue anew at the next address after server
    trouble, pause after a whole pass that nobody answered, give up after ``reconnect_for``
    without any answer, and keep the caller's wait across all of it."""

    def __init__(
        self,
        name: str,
        addresses: Sequence[Address],
        preferred: int,
        wait: Optional[float],
        reconnect_for: float,
        now: float,
    ) -> None:
        self.name = name
        self.addresses = list(addresses)
        self.index = preferred % len(self.addresses)
        self.address = self.addresses[self.index]
        self.wait = wait
        self.started = now
        self.reconnect_for = reconnect_for
        self.redirects = 0
        self.last_answer_at = now
        self.unanswered_in_row = 0

    def left(self, now: float) -> Optional[float]:
        """What is left of the wait (None: forever); raises LockTimeout when nothing is."""
        if self.wait is None:
            return None
        left = self.wait - (now - self.started)
        if left <= 0:
            raise LockTimeout(self.name, self.wait)
        return left

    def after(self, outcome: Outcome, now: float) -> float:
        """The attempt ended without holding: raises, or returns the pause before the next one
        (at ``self.address``)."""
        if outcome.kind == "timed-out":
            raise LockTimeout(self.name, self.wait)
        if outcome.kind == "failed":
            raise outcome.reason or BatonError("internal", "an attempt failed without a reason")
        if outcome.kind == "redirect":
            self.redirects += 1
            if self.redirects > MAX_REDIRECTS:
                raise protocol_error(f"more than {MAX_REDIRECTS} redirects in a row")
            assert outcome.address is not None
            self.address = outcome.address
            return 0.0
        # retry: server trouble before we held anything: queue anew at once on the next
        # address, or the same one when there is only one.
        self.redirects = 0
        if outcome.answered:
            self.last_answer_at = now
            self.unanswered_in_row = 0
        else:
            self.unanswered_in_row += 1
        if now - self.last_answer_at >= self.reconnect_for:
            raise outcome.reason or BatonError("connection-lost", "no server answered")
        self.index = (self.index + 1) % len(self.addresses)
        self.address = self.addresses[self.index]
        if self.unanswered_in_row >= len(self.addresses):
            self.unanswered_in_row = 0
            left = self.left(now)
            return PASS_PAUSE if left is None else min(PASS_PAUSE, left)
        return 0.0
