"""One session claim's protocol state machine, without sockets, threads or clocks of its own:
events and the time in, actions out. The threaded client (session.py) and the asyncio one
(aio/session.py) drive the very same machine. The model is the TypeScript client's
lib/client/session-client-connection.ts.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from ._heartbeat import DEFAULT_MIN_INTERVAL, Confirmation
from ._session_outcome import MAX_REDIRECTS, Action, Outcome
from ._session_resume import ResumeSearch
from ._session_wire import (
    HEARTBEAT_LINE,
    Acquired,
    Address,
    Moved,
    Redirect,
    ServerError,
    Waiting,
    encode_acquire,
    encode_client,
    encode_resume,
    format_address,
    parse_reply,
    protocol_error,
)
from .errors import BatonError, LockLost

#: Server-side errors that still end a hold at once rather than queueing anew: a node whose
#: fencing tokens are exhausted will never grant again, and neither will its cluster (the
#: conformance vector session-errors/0x07-tokens-exhausted).
FINAL_ERRORS = frozenset({"tokens-exhausted"})
#: ``baton serve --max-park``'s default, in seconds.
DEFAULT_MAX_PARK = 60.0


class ClaimMachine:
    """One claim on one lock, across the connections it takes (a resumable one may take several).

    Inputs: ``start``, ``opened``, ``line``, ``closed``, ``bad_bytes``, ``tick``, ``close``, each
    with the monotonic time. Outputs, appended to ``actions`` for the driver to carry out in
    order: ``("connect", generation, address)`` (leave the current connection, open a new one),
    ``("send", text)``, ``("drop",)`` (leave the current connection), ``("settle", Outcome)``
    (once), ``("lose", LockLost)`` (once, only after ``held`` was settled). Events of a
    connection whose generation is not the current one are ignored by the driver.
    """

    def __init__(
        self,
        name: str,
        lease_ms: int,
        *,
        now: float,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        give_up_after: Optional[float] = None,
        identity: Optional[str] = None,
        claim_key: Optional[str] = None,
        resume_addresses: Sequence[Address] = (),
        max_park: float = DEFAULT_MAX_PARK,
    ) -> None:
        self.name = name
        self.lease_ms = lease_ms
        self.lease = lease_ms / 1000
        self.identity = identity
        self.claim_key = claim_key
        self.max_park = max_park
        self.conf = Confirmation(self.lease, min_interval, now)
        self.give_up_at = None if give_up_after is None else now + give_up_after
        self.phase = "acquiring"  # acquiring | queued | held | ended
        self.token = 0
        self.position: Optional[int] = None
        self.generation = 0
        self.address: Optional[Address] = None
        self.resuming = False
        self.search = ResumeSearch(resume_addresses)
        self.answered_any = False
        self.closing = False
        self.actions: List[Action] = []

    # -- inputs --

    def start(self, address: Address, now: float) -> None:
        self.conf.anchor = now
        self._connect(address)

    def opened(self, now: float) -> None:
        if self.phase == "ended":
            return
        if self.resuming:
            # The silence deadline keeps counting from the last confirmation: a resume extends
            # nothing until the server answers it.
            self._send(self._identity_line() + encode_resume(self.name, self.claim_key or ""), now, False)
            return
        self.conf.anchor = now
        self._send(self._identity_line() + encode_acquire(self.name, self.lease_ms, self.claim_key), now, False)

    def line(self, text: str, now: float) -> None:
        if self.phase == "ended":
            return
        try:
            reply = parse_reply(text)
        except BatonError as error:
            self._protocol_failure(error)
            return
        if isinstance(reply, Acquired):
            self._on_acquired(reply.token, now)
        elif isinstance(reply, Waiting):
            self._on_waiting(reply.position, now)
        elif isinstance(reply, ServerError):
            self._on_error(reply.error, now)
        elif isinstance(reply, Moved):
            # The claim moved with a handoff to the node named: take it up there.
            if self.claim_key is None:
                self._protocol_failure(protocol_error(f"MOVED to a session that sent no claim key: {text!r}"))
            else:
                self._resume_at(reply.address)
        elif isinstance(reply, Redirect):
            self._on_redirect(reply.address)

    def bad_bytes(self, error: BatonError, now: float) -> None:
        """The connection sent what no line can be (too long, not UTF-8)."""
        if self.phase != "ended":
            self._protocol_failure(error)

    def closed(self, error: Optional[BaseException], now: float) -> None:
        if self.phase == "ended":
            return
        # A resumable claim outlives a dropped connection on the server for a while (a standby
        # that takes over keeps it): look for it, until the silence deadline says it is lost.
        if self.claim_key is not None and self.phase in ("held", "queued") and not self.closing:
            self._resume_next(now)
            return
        where = format_address(self.address) if self.address else "?"
        detail = f"{where}: {error}" if error is not None else f"{where} closed the connection"
        reason = error if isinstance(error, BatonError) else BatonError("connection-lost", detail)
        if self.phase == "held":
            self._lose(reason)
        else:
            self._finish(Outcome("retry", reason=reason, answered=self.answered_any))

    def tick(self, now: float) -> None:
        """Whatever is due at ``now``: the wait's end, the silence deadline, a heartbeat, a resume."""
        if self.phase == "ended":
            return
        if self.give_up_at is not None and now >= self.give_up_at and self.phase in ("acquiring", "queued"):
            self._finish(Outcome("timed-out"))
            return
        kept = self._kept()
        if now >= self.conf.silence_deadline(kept):
            what = (
                f"{kept:g} s a server keeps a claim between connections (max_park)"
                if kept < self.lease
                else f"{self.lease:g} s lease"
            )
            error = BatonError("lease-expired", f"no answer from the server within 0.8 x the {what}")
            if self.phase == "held":
                self._lose(error)
            else:
                self._finish(Outcome("retry", reason=error, answered=self.answered_any))
            return
        if self.search.pause_until is not None and now >= self.search.pause_until:
            target = self.search.pause_target or self.address
            self.search.pause_until = None
            if target is not None:
                self._resume_at(target)
            return
        if not self.resuming and self.conf.heartbeat_due(now):
            self._send(HEARTBEAT_LINE, now, True)

    def close(self, now: float) -> None:
        """The holder releases (or gives up waiting): closing the connection is the release."""
        self.closing = True
        if self.phase == "ended":
            return
        held = self.phase == "held"
        self._end()
        if held:
            self.actions.append(("lose", LockLost("client-closed", f"lock {self.name!r} released by its holder")))
        else:
            self.actions.append(("settle", Outcome("failed", reason=BatonError("client-closed"))))
        self.actions.append(("drop",))

    def next_deadline(self) -> Optional[float]:
        """The earliest time ``tick`` has something to do; None once ended."""
        if self.phase == "ended":
            return None
        times = [self.conf.silence_deadline(self._kept())]
        if self.give_up_at is not None and self.phase in ("acquiring", "queued"):
            times.append(self.give_up_at)
        if self.search.pause_until is not None:
            times.append(self.search.pause_until)
        if not self.resuming and self.conf.inflight_since is None and self.conf.next_beat_at is not None:
            times.append(self.conf.next_beat_at)
        return min(times)

    def take_actions(self) -> List[Action]:
        actions, self.actions = self.actions, []
        return actions

    # -- replies --

    def _on_acquired(self, token: int, now: float) -> None:
        if self.resuming:
            # The answer to RESUME: the same claim, holding (the same token) or granted meanwhile.
            if self.conf.inflight_since is None:
                return self._protocol_failure(protocol_error("ACQUIRED that answers no request"))
            if self.phase == "held" and token != self.token:
                return self._protocol_failure(
                    protocol_error(f"RESUME answered with token {token} for a claim holding token {self.token}")
                )
            self._resumed()
            self._answer(now)
            if self.phase != "held":
                self._become_held(token)
            return
        # While queued, the first ACQUIRED is the push (the server sends it before answering any
        # heartbeat as holder); a heartbeat in flight is still owed its own answer.
        if self.phase == "queued":
            return self._become_held(token)
        if self.conf.inflight_since is None:
            return self._protocol_failure(protocol_error(f"ACQUIRED {token} that answers no request"))
        if self.phase == "held" and token != self.token:
            return self._protocol_failure(protocol_error(f"ACQUIRED with token {token} while holding token {self.token}"))
        self._answer(now)
        if self.phase == "acquiring":
            self._become_held(token)

    def _on_waiting(self, position: int, now: float) -> None:
        if self.conf.inflight_since is None:
            return self._protocol_failure(protocol_error(f"WAITING {position} that answers no request"))
        if self.phase == "held":
            return self._lose(protocol_error("WAITING while holding the lock"))
        if self.resuming:
            self._resumed()
        self.phase = "queued"
        self.position = position
        self._answer(now)

    def _on_error(self, error: BatonError, now: float) -> None:
        if self.resuming:
            # A node going away or full: look elsewhere. Anything else (claim-unknown above all:
            # it expired, or no node has it any more) means the claim is gone.
            if error.server_side:
                return self._resume_next(now)
            return self._resume_failed(error)
        if self.phase == "held":
            return self._lose(error)
        kind = "retry" if error.server_side and error.code not in FINAL_ERRORS else "failed"
        self._finish(Outcome(kind, reason=error, answered=self.answered_any))

    def _on_redirect(self, address: Address) -> None:
        if self.resuming:
            # Resuming, a standby names the active: look for the claim there.
            if not self.search.redirected():
                return self._resume_failed(protocol_error(f"more than {MAX_REDIRECTS} redirects in a row"))
            return self._resume_at(address)
        # A node that stops being active redirects its open sessions: the claim ended there, as
        # at ERROR 0x01. The next claim starts at the named address.
        if self.phase == "held":
            where = format_address(self.address) if self.address else "?"
            return self._lose(
                BatonError(
                    "server-going-away",
                    f"{where} is no longer active: REDIRECT to {format_address(address)}",
                )
            )
        self._finish(Outcome("redirect", address=address))

    # -- steps --

    def _identity_line(self) -> str:
        return "" if self.identity is None else encode_client(self.identity) + "\n"

    def _send(self, text: str, now: float, is_heartbeat: bool) -> None:
        self.actions.append(("send", text))
        self.conf.sent(now, is_heartbeat)

    def _answer(self, now: float) -> None:
        self.conf.answered(now)
        self.answered_any = True

    def _connect(self, address: Address) -> None:
        self.generation += 1
        self.address = address
        self.actions.append(("connect", self.generation, address))

    def _become_held(self, token: int) -> None:
        self.phase = "held"
        self.token = token
        self.position = None
        self.give_up_at = None
        self.actions.append(("settle", Outcome("held")))

    def _kept(self) -> float:
        """How long the server keeps the claim without hearing from us: the lease, but between
        connections at most its --max-park, after which it ends the claim with nobody to tell."""
        return min(self.lease, self.max_park) if self.resuming else self.lease

    def _resume_at(self, address: Address) -> None:
        """Leaves the current connection and asks ``address`` for the claim (RESUME)."""
        self.resuming = True
        self.search.pause_until = None
        self.conf.forget_inflight()
        self._connect(address)

    def _resume_next(self, now: float) -> None:
        """The connection dropped, or a node could not answer: the next address, pausing after a
        whole pass over them."""
        target = self.search.missed(self.address, now)
        self.resuming = True
        self.conf.forget_inflight()
        self.generation += 1  # the connection we leave says nothing more
        self.actions.append(("drop",))
        if target is None:
            return self._resume_failed(BatonError("connection-lost", "no address to resume at"))
        if self.search.pause_until is None:
            return self._resume_at(target)

    def _resumed(self) -> None:
        self.resuming = False
        self.search.found()

    def _resume_failed(self, error: BatonError) -> None:
        """The claim is not to be found again: a holder's ownership is lost; a waiter queues anew."""
        if self.phase == "held":
            return self._lose(error)
        self._finish(Outcome("retry", reason=error, answered=self.answered_any))

    def _protocol_failure(self, error: BatonError) -> None:
        if self.phase == "held":
            self._lose(error)
        else:
            self._finish(Outcome("failed", reason=error))

    def _finish(self, outcome: Outcome) -> None:
        """Before holding: report how the attempt ended and leave the connection."""
        self._end()
        self.actions.append(("settle", outcome))
        self.actions.append(("drop",))

    def _lose(self, reason: BatonError) -> None:
        """While holding: ownership can no longer be vouched for. Closing lets the server move on."""
        self._end()
        lost = reason if isinstance(reason, LockLost) else LockLost(reason.code, reason.detail)
        self.actions.append(("lose", lost))
        self.actions.append(("drop",))

    def _end(self) -> None:
        self.phase = "ended"
        self.resuming = False
        self.search.pause_until = None
        self.give_up_at = None

