"""What a held session claim shows its holder, the same for the threaded and the asyncio client;
each client's ``Claim`` adds the release (a call, or an ``await``)."""

from __future__ import annotations

from typing import Any, Optional

from ._session_driver import ClaimDriver
from .errors import LockLost


class HeldClaim:
    """The token, the ``lost`` event and why it was set, of the claim a runner holds."""

    def __init__(self, runner: ClaimDriver) -> None:
        self._runner = runner
        self.name = runner.machine.name
        #: The fencing token, exact (a u64).
        self.token: int = runner.machine.token
        #: Set the moment ownership is lost or can no longer be confirmed; ``reason`` says why.
        self.lost: Any = runner.lost

    @property
    def reason(self) -> Optional[LockLost]:
        """Why ownership ended (``.code``: ``force-released``, ``lease-expired``, ...); None while held."""
        return self._runner.reason

    def check(self) -> None:
        """Raises ``LockLost`` once ownership is lost or can no longer be confirmed."""
        if self.lost.is_set():
            raise self._runner.reason or LockLost("connection-lost", f"lock {self.name!r} lost")

    @property
    def heartbeat_interval(self) -> float:
        """The gap the schedule keeps between heartbeats now, in seconds."""
        return self._runner.machine.conf.schedule.interval

    def __repr__(self) -> str:
        state = f"lost: {self.reason}" if self.lost.is_set() else "held"
        return f"<Claim {self.name!r} token={self.token} {state}>"
