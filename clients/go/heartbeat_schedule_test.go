package baton

import (
	"testing"
	"time"
)

// fakeClock moves only when a test says so.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{now: time.Unix(1_000_000, 0)} }
func ms(n float64) time.Duration             { return time.Duration(n * float64(time.Millisecond)) }
func scheduleFor(lease, min time.Duration) (*heartbeatSchedule, *fakeClock) {
	c := newFakeClock()
	return newHeartbeatSchedule(lease, min, c), c
}

func TestHeartbeatIntervalIsLeaseOverFourBeforeAnyRoundTrip(t *testing.T) {
	s, _ := scheduleFor(ms(1000), ms(50))
	if got := s.Interval(); got != ms(250) {
		t.Fatalf("interval %v, want 250ms", got)
	}
}

func TestHeartbeatRoundTripsAreSmoothedWithAlphaPointTwo(t *testing.T) {
	s, _ := scheduleFor(ms(1000), ms(10))
	s.Sample(ms(10))
	if s.SmoothedRTT() != ms(10) {
		t.Fatalf("first sample sets srtt: %v", s.SmoothedRTT())
	}
	s.Sample(ms(60))
	if got := s.SmoothedRTT(); got != ms(20) { // 10 + 0.2 x (60 - 10)
		t.Fatalf("srtt %v, want 20ms", got)
	}
}

func TestHeartbeatIntervalLeavesTwiceTheSmoothedRoundTrip(t *testing.T) {
	s, _ := scheduleFor(ms(1000), ms(10))
	s.Sample(ms(40))
	if got := s.Interval(); got != ms(250-80) {
		t.Fatalf("interval %v, want 170ms", got)
	}
}

func TestHeartbeatIntervalIsClampedBetweenFloorAndLeaseOverFour(t *testing.T) {
	slow, _ := scheduleFor(ms(1000), ms(50))
	slow.Sample(ms(200))
	if got := slow.Interval(); got != ms(50) {
		t.Fatalf("slow link: interval %v, want the 50ms floor", got)
	}
	tiny, _ := scheduleFor(ms(100), ms(50))
	if got := tiny.Interval(); got != ms(25) {
		t.Fatalf("tiny lease: interval %v, want lease/4 = 25ms (lease/4 beats the floor)", got)
	}
}

func TestHeartbeatRoundTripIsMeasuredOnTheInjectedClock(t *testing.T) {
	s, c := scheduleFor(ms(1000), ms(10))
	s.Sent(true)
	c.Advance(ms(30))
	if !s.Answered() {
		t.Fatal("an answer to the heartbeat in flight was refused")
	}
	if s.SmoothedRTT() != ms(30) {
		t.Fatalf("srtt %v, want 30ms", s.SmoothedRTT())
	}
	// An ACQUIRE's answer is a confirmation, not a heartbeat round trip.
	s.Sent(false)
	c.Advance(ms(500))
	s.Answered()
	if s.SmoothedRTT() != ms(30) {
		t.Fatalf("an ACQUIRE was sampled: srtt %v", s.SmoothedRTT())
	}
}

func TestAtMostOneHeartbeatInFlight(t *testing.T) {
	s, c := scheduleFor(ms(1000), ms(50))
	s.Start()
	s.Sent(false) // the ACQUIRE
	c.Advance(ms(5000))
	if s.HeartbeatDue() {
		t.Fatal("a heartbeat is due while the ACQUIRE awaits its answer")
	}
	s.Answered()
	if !s.HeartbeatDue() {
		t.Fatal("no heartbeat due long after the last request")
	}
	s.Sent(true)
	c.Advance(ms(5000))
	if _, ok := s.NextHeartbeat(); ok || s.HeartbeatDue() {
		t.Fatal("a second heartbeat is due while one is in flight")
	}
	if s.Answered(); s.InFlight() {
		t.Fatal("still in flight after its answer")
	}
	if s.Answered() {
		t.Fatal("an answer to nothing was taken")
	}
}

func TestNextHeartbeatIsAnIntervalAfterTheLastSend(t *testing.T) {
	s, c := scheduleFor(ms(1000), ms(10))
	s.Sent(true)
	sentAt := c.Now()
	c.Advance(ms(20))
	s.Answered() // srtt 20 -> interval 250 - 40 = 210
	at, ok := s.NextHeartbeat()
	if !ok || at != sentAt.Add(ms(210)) {
		t.Fatalf("next heartbeat at %v (ok %v), want send + 210ms", at.Sub(sentAt), ok)
	}
	c.Advance(ms(189))
	if s.HeartbeatDue() {
		t.Fatal("due a millisecond early")
	}
	c.Advance(ms(1))
	if !s.HeartbeatDue() {
		t.Fatal("not due on time")
	}
}

func TestSilenceGivesUpAtPointEightLeaseFromTheLastConfirmedSend(t *testing.T) {
	s, c := scheduleFor(ms(1000), ms(50))
	s.Start()
	s.Sent(false)
	sentAt := c.Now()
	c.Advance(ms(100))
	s.Answered() // confirmed as of the send, not the answer: the server renewed no earlier
	if got := s.GiveUpAt(ms(1000)); got != sentAt.Add(ms(800)) {
		t.Fatalf("give up %v after the send, want 800ms", got.Sub(sentAt))
	}
	c.Advance(ms(699))
	if s.Expired(ms(1000)) {
		t.Fatal("expired before 0.8 x lease")
	}
	s.Sent(true) // unanswered heartbeats do not move the deadline
	c.Advance(ms(1))
	if !s.Expired(ms(1000)) {
		t.Fatal("not expired at 0.8 x lease without an answer")
	}
}

func TestSilenceBetweenConnectionsUsesTheShorterKeptTime(t *testing.T) {
	s, c := scheduleFor(ms(10000), ms(50))
	s.Start()
	s.Sent(false)
	s.Answered()
	s.Sent(true)
	s.Dropped() // the connection went; its heartbeat will never be answered
	if s.InFlight() {
		t.Fatal("a dropped request is still in flight")
	}
	c.Advance(ms(1600))
	if !s.Expired(ms(2000)) { // min(lease 10 s, max-park 2 s) x 0.8
		t.Fatal("not expired at 0.8 x max-park")
	}
	if s.Expired(ms(10000)) {
		t.Fatal("expired early against the full lease")
	}
}
