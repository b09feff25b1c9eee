"""When a session sends its next HEARTBEAT, and until when its ownership is confirmed.

docs/protocol.md "Writing a client" 2-3, as lib/client/heartbeat-schedule.ts does it: the
server restarts a session's lease when a message arrives, so the client sends every lease/4,
minus twice the smoothed round trip (room for the trip), never more often than a floor; and it
stops trusting its ownership at 0.8 x lease after the last confirmed request, before the server
can have given the lock to anyone else. Times are seconds on a monotonic clock that the caller
passes in, so all of it is testable with a fake clock and no sleeps.
"""

from __future__ import annotations

from typing import Optional

#: EWMA weight of a new round-trip sample (the rest stays with the history).
RTT_ALPHA = 0.2
#: Without an answer for this share of the lease, the client stops trusting its ownership.
SILENCE_SHARE = 0.8
#: The default floor of the heartbeat interval, in seconds.
DEFAULT_MIN_INTERVAL = 0.05


class HeartbeatSchedule:
    """``clamp(lease/4 - 2 x smoothed RTT, min_interval, lease/4)``, in seconds."""

    def __init__(self, lease: float, min_interval: float = DEFAULT_MIN_INTERVAL) -> None:
        self.lease = lease
        self.min_interval = min_interval
        self.smoothed_rtt: Optional[float] = None
        self.last_rtt: Optional[float] = None
        self.samples = 0

    def sample(self, rtt: float) -> None:
        """Records one HEARTBEAT -> reply round trip."""
        self.last_rtt = rtt
        self.samples += 1
        if self.smoothed_rtt is None:
            self.smoothed_rtt = rtt
        else:
            self.smoothed_rtt += RTT_ALPHA * (rtt - self.smoothed_rtt)

    @property
    def base_interval(self) -> float:
        return self.lease / 4

    @property
    def interval(self) -> float:
        """Should the floor exceed lease/4 (a tiny lease), lease/4 wins: a heartbeat too late
        loses the lock, one too early costs a line."""
        ceiling = self.base_interval
        wanted = ceiling - 2 * (self.smoothed_rtt or 0.0)
        return min(ceiling, max(self.min_interval, wanted))


class Confirmation:
    """One claim's request timing: at most one request in flight, the heartbeat due time, and
    the silence deadline (0.8 x the kept time after the last answered request was *sent*: the
    server restarted the lease when it arrived, which was no earlier, so counting from the send
    keeps our deadline ahead of the server's even on a slow way back)."""

    def __init__(self, lease: float, min_interval: float, now: float) -> None:
        self.schedule = HeartbeatSchedule(lease, min_interval)
        self.lease = lease
        #: Send time of the last request the server answered (or of the first one sent).
        self.anchor = now
        #: Send time of the one request awaiting its answer; None when nothing is in flight.
        self.inflight_since: Optional[float] = None
        self.inflight_is_heartbeat = False
        self.last_sent_at = now
        #: When the next HEARTBEAT is due; None until a first answer set the rhythm.
        self.next_beat_at: Optional[float] = None
        self.heartbeats = 0

    def sent(self, now: float, is_heartbeat: bool) -> None:
        self.inflight_since = now
        self.inflight_is_heartbeat = is_heartbeat
        self.last_sent_at = now

    def answered(self, now: float) -> bool:
        """The request in flight got its answer. False if nothing was in flight (a reply to
        nothing, which the caller treats as a protocol error)."""
        sent_at = self.inflight_since
        if sent_at is None:
            return False
        self.inflight_since = None
        self.anchor = sent_at
        if self.inflight_is_heartbeat:
            self.schedule.sample(now - sent_at)
            self.heartbeats += 1
        self.next_beat_at = self.last_sent_at + self.schedule.interval
        return True

    def forget_inflight(self) -> None:
        """The connection was left: whatever was in flight will not be answered there."""
        self.inflight_since = None
        self.next_beat_at = None

    def heartbeat_due(self, now: float) -> bool:
        """At most one in flight, and only once the interval since the last send has passed."""
        return self.inflight_since is None and self.next_beat_at is not None and now >= self.next_beat_at

    def silence_deadline(self, kept: Optional[float] = None) -> float:
        """When ownership stops being confirmed: 0.8 x ``kept`` (default the lease) after the anchor."""
        return self.anchor + SILENCE_SHARE * (self.lease if kept is None else kept)
