"""What a session claim's machine reports to its driver: the actions it asks for, and how an
attempt at a claim ended (which the acquire plan reads to choose the next one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

from ._session_wire import Address
from .errors import BatonError

#: Redirects in a row before we call it a loop (acquiring or resuming).
MAX_REDIRECTS = 8

#: ``("connect", generation, address)``, ``("send", text)``, ``("drop",)``, ``("settle",
#: Outcome)`` or ``("lose", LockLost)``: see ``ClaimMachine``.
Action = Tuple[Any, ...]


@dataclass(frozen=True)
class Outcome:
    """How an attempt ended before it held the lock, or that it holds it.

    ``kind``: ``held``; ``redirect`` (to ``address``); ``retry`` (server trouble: queue anew,
    ``answered`` says whether the server had answered); ``failed`` (raise ``reason``);
    ``timed-out``.
    """

    kind: str
    address: Optional[Address] = None
    reason: Optional[BatonError] = None
    answered: bool = False
