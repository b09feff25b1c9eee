"""Where a resumable session claim is looked for once its connection is gone (dropped, or a
node that could not answer its RESUME). The ``ClaimMachine`` keeps the protocol; this keeps
the walk over the addresses."""

from __future__ import annotations

from typing import Optional, Sequence

from ._session_outcome import MAX_REDIRECTS
from ._session_wire import Address

#: Pause after a pass over every address found none that would answer a RESUME.
RESUME_PASS_PAUSE = 0.1


class ResumeSearch:
    """The cluster's addresses in turn, from the one that dropped the claim; a pause after each
    whole pass; at most ``MAX_REDIRECTS`` redirects in a row (a standby naming the active)."""

    def __init__(self, addresses: Sequence[Address]) -> None:
        self.addresses = list(addresses)
        self.redirects = 0
        self.misses = 0
        #: Set after a whole pass: ask ``pause_target`` then, not before (None: no pause).
        self.pause_until: Optional[float] = None
        self.pause_target: Optional[Address] = None

    def missed(self, current: Optional[Address], now: float) -> Optional[Address]:
        """``current`` dropped the claim or could not answer: the address to ask next (None:
        there is none), at once, or at ``pause_until`` when that is set."""
        addresses = self.addresses or ([current] if current else [])
        at = addresses.index(current) if current in addresses else -1
        target = addresses[(at + 1) % len(addresses)] if addresses else current
        self.redirects = 0
        self.misses += 1
        self.pause_until = None
        if target is not None and self.misses % max(1, len(addresses)) == 0:
            self.pause_until = now + RESUME_PASS_PAUSE
            self.pause_target = target
        return target

    def redirected(self) -> bool:
        """Counts a REDIRECT; False once that is more than ``MAX_REDIRECTS`` in a row."""
        self.redirects += 1
        return self.redirects <= MAX_REDIRECTS

    def found(self) -> None:
        """A node answered the RESUME: the next search starts afresh."""
        self.redirects = 0
        self.misses = 0
