package baton

// When a session sends its next HEARTBEAT, and when it must stop trusting its ownership
// (docs/protocol.md "Writing a client" §2-3; the TypeScript twin is
// lib/client/heartbeat-schedule.ts). The server restarts the lease when a message arrives, so
// the client leaves room for the trip: it sends every lease/4 minus twice the smoothed round
// trip, never more often than the floor. It keeps at most one request in flight, and gives up
// at 0.8 x lease after the last confirmation. All times come from an injected clock, so the
// rules are tested without sleeping.

import "time"

// clock is where the session client reads the time; time.Now carries Go's monotonic reading,
// so differences between its values are immune to wall-clock jumps.
type clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// rttAlpha is the EWMA weight of a new round-trip sample; the rest stays with the history.
const rttAlpha = 0.2

// silenceShare: without an answer for this share of the lease, ownership is not confirmed any
// more; the server reclaims at the full lease, the client stops first.
const silenceShare = 0.8

type heartbeatSchedule struct {
	lease       time.Duration
	minInterval time.Duration
	clock       clock

	srtt    time.Duration
	lastRTT time.Duration
	samples int

	// The one request awaiting its answer (ACQUIRE, RESUME or HEARTBEAT).
	inflight          bool
	inflightHeartbeat bool
	sentAt            time.Time
	// lastSentAt: the next heartbeat is due an interval after the last request went out.
	lastSentAt time.Time
	// anchor: send time of the last request the server answered. The server restarted the lease
	// when that request reached it, no earlier than this; counting silence from here rather than
	// from the answer's arrival keeps the client's deadline ahead of the server's.
	anchor time.Time
}

func newHeartbeatSchedule(lease, minInterval time.Duration, c clock) *heartbeatSchedule {
	return &heartbeatSchedule{lease: lease, minInterval: minInterval, clock: c, anchor: c.Now()}
}

// Interval is clamp(lease/4 - 2 x srtt, minInterval, lease/4). Should the floor exceed lease/4
// (a tiny lease), lease/4 wins: a heartbeat too late loses the lock, one too early costs a line.
func (s *heartbeatSchedule) Interval() time.Duration {
	ceiling := s.lease / 4
	wanted := ceiling - 2*s.srtt
	if wanted < s.minInterval {
		wanted = s.minInterval
	}
	if wanted > ceiling {
		wanted = ceiling
	}
	return wanted
}

// Sample records one HEARTBEAT -> reply round trip.
func (s *heartbeatSchedule) Sample(rtt time.Duration) {
	s.lastRTT = rtt
	if s.samples == 0 {
		s.srtt = rtt
	} else {
		s.srtt += time.Duration(rttAlpha * float64(rtt-s.srtt))
	}
	s.samples++
}

// SmoothedRTT is the EWMA of heartbeat round trips; 0 before the first.
func (s *heartbeatSchedule) SmoothedRTT() time.Duration { return s.srtt }

// Start counts silence from now: the first request of a claim is about to go out.
func (s *heartbeatSchedule) Start() { s.anchor = s.clock.Now() }

// Sent records a request written now; heartbeat says whether it was a HEARTBEAT (whose round
// trip is sampled) rather than an ACQUIRE or RESUME.
func (s *heartbeatSchedule) Sent(heartbeat bool) {
	now := s.clock.Now()
	s.inflight, s.inflightHeartbeat = true, heartbeat
	s.sentAt, s.lastSentAt = now, now
}

// InFlight reports whether a request is awaiting its answer: no heartbeat goes out meanwhile.
func (s *heartbeatSchedule) InFlight() bool { return s.inflight }

// Answered records the answer to the request in flight: a fresh confirmation, and for a
// heartbeat a round trip to learn from. false when nothing was in flight (a reply to nothing).
func (s *heartbeatSchedule) Answered() bool {
	if !s.inflight {
		return false
	}
	now := s.clock.Now()
	s.inflight = false
	s.anchor = s.sentAt
	if s.inflightHeartbeat {
		s.Sample(now.Sub(s.sentAt))
	}
	return true
}

// Dropped forgets the request in flight: its connection is gone and it will never be answered.
// The silence deadline keeps counting from the last confirmation.
func (s *heartbeatSchedule) Dropped() { s.inflight = false }

// NextHeartbeat is when the next HEARTBEAT is due; ok is false while a request is in flight.
func (s *heartbeatSchedule) NextHeartbeat() (at time.Time, ok bool) {
	if s.inflight {
		return time.Time{}, false
	}
	return s.lastSentAt.Add(s.Interval()), true
}

// HeartbeatDue reports whether a HEARTBEAT should go out now.
func (s *heartbeatSchedule) HeartbeatDue() bool {
	at, ok := s.NextHeartbeat()
	return ok && !s.clock.Now().Before(at)
}

// GiveUpAt is the silence deadline: 0.8 x kept after the last confirmation. kept is the lease,
// or between connections min(lease, the servers' --max-park).
func (s *heartbeatSchedule) GiveUpAt(kept time.Duration) time.Time {
	return s.anchor.Add(time.Duration(silenceShare * float64(kept)))
}

// Expired reports whether the silence deadline has passed.
func (s *heartbeatSchedule) Expired(kept time.Duration) bool {
	return !s.clock.Now().Before(s.GiveUpAt(kept))
}
