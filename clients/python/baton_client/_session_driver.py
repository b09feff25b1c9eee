"""What the threaded and the asyncio runner of a ``ClaimMachine`` share: feeding the machine the
events of its connections and carrying out the actions it asks for."""

from __future__ import annotations

from typing import Any, List, Optional, Protocol, Tuple

from ._session_machine import ClaimMachine
from ._session_outcome import Action, Outcome
from ._session_wire import Address
from .errors import LockLost

#: A closed connection waits this long for the server's side of the close, then is cut.
LINGER = 1.0


class Link(Protocol):
    """One connection of a claim (a socket with its reader thread, or a stream with its task)."""

    def send(self, text: str) -> None: ...

    def drop(self) -> None: ...


class ClaimDriver:
    """Events are tuples: ``("start", address)``, ``("close",)``, and from the connection of
    generation ``g``: ``("opened", g)``, ``("line", g, text)``, ``("bad", g, error)``,
    ``("closed", g, error)``. A subclass opens the links (``_open_link``), hands the outcome to
    the caller (``_settle``), and has a ``lost`` event (``threading`` or ``asyncio``)."""

    machine: ClaimMachine
    lost: Any
    reason: Optional[LockLost]
    _link: Optional[Link]

    def _open_link(self, generation: int, address: Address) -> Link:
        raise NotImplementedError

    def _settle(self, outcome: Outcome) -> None:
        raise NotImplementedError

    def _dispatch(self, event: Tuple[Any, ...], now: float) -> None:
        kind = event[0]
        machine = self.machine
        if kind == "start":
            machine.start(event[1], now)
        elif kind == "close":
            machine.close(now)
        elif event[1] != machine.generation:
            return  # a connection we left
        elif kind == "opened":
            machine.opened(now)
        elif kind == "line":
            machine.line(event[2], now)
        elif kind == "bad":
            machine.bad_bytes(event[2], now)
        elif kind == "closed":
            machine.closed(event[2], now)

    def _carry_out(self, actions: List[Action]) -> None:
        for action in actions:
            kind = action[0]
            if kind == "connect":
                if self._link is not None:
                    self._link.drop()
                self._link = self._open_link(action[1], action[2])
            elif kind == "send":
                if self._link is not None:
                    self._link.send(action[1])
            elif kind == "drop":
                if self._link is not None:
                    self._link.drop()
                    self._link = None
            elif kind == "settle":
                self._settle(action[1])
            elif kind == "lose":
                if not self.lost.is_set():
                    self.reason = action[1]
                    self.lost.set()
