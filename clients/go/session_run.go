package baton

// The life of one claim, from its first ACQUIRE to its end, on one goroutine: everything that
// happens to the claim (a line read, a connection dropped, a timer, Release, Close, the Hold's
// ctx) arrives in its select loop, so its state needs no lock. Before the claim holds, an
// attempt that ends on server trouble is followed at once by a new one (the next address, a new
// place in the queue); once it holds, anything that stops the client vouching for ownership
// closes the Claim's Done. Resuming (session_resume.go) keeps a resumable claim across
// connections. The TypeScript twin is lib/client/session-client-connection.ts.

import (
	"context"
	"fmt"
	"net"
	"time"
)

type claimPhase int

const (
	phaseAcquiring claimPhase = iota // ACQUIRE sent (or about to be), no answer yet
	phaseQueued                      // WAITING: in the queue
	phaseHeld                        // ACQUIRED: Hold has returned the Claim
	phaseEnded
)

const (
	// maxSessionRedirects in a row before we call it a loop.
	maxSessionRedirects = 8
	// passPause after a whole pass over the addresses found no server, so a restart is not hammered.
	passPause = 200 * time.Millisecond
)

type claimRun struct {
	client  *SessionClient
	name    string
	leaseMs int64
	lease   time.Duration
	ctx     context.Context
	// waitUntil: when a claim not yet held gives up (zero: never).
	waitUntil time.Time

	events chan connEvent
	quit   chan struct{} // closed when the run ends: connection goroutines stop sending
	ready  chan error    // one value: nil once held, else why Hold failed
	claim  *Claim

	// The current connection (a new generation for each).
	gen     int
	conn    net.Conn // nil until opened, and between connections
	address string
	index   int    // the attempt's place in the client's address list
	key     string // the claim key of a resumable claim, "" otherwise
	sched   *heartbeatSchedule
	phase   claimPhase
	// silenceArmed: the first request of the attempt went out, so silence counts.
	silenceArmed bool
	// answered: the server answered a request of this attempt.
	answered bool
	// dialAt: the next connection waits until then (a pause); zero when none is pending.
	dialAt     time.Time
	dialTarget string

	resume resumeState

	// Across attempts, before holding.
	redirects       int
	lastAnswerAt    time.Time
	unansweredInRow int
}

func newClaimRun(c *SessionClient, ctx context.Context, name string, leaseMs int64, wait time.Duration, start int) *claimRun {
	now := c.clock.Now()
	r := &claimRun{
		client: c, name: name, leaseMs: leaseMs, lease: leaseDuration(leaseMs), ctx: ctx,
		events: make(chan connEvent), quit: make(chan struct{}), ready: make(chan error, 1),
		claim: newClaim(name), index: start, lastAnswerAt: now,
	}
	if wait > 0 {
		r.waitUntil = now.Add(wait)
	}
	return r
}

func (r *claimRun) run() {
	defer func() {
		r.dropConn()
		close(r.quit)
		close(r.claim.finished)
	}()
	r.startAttempt(r.client.addresses[r.index], time.Time{})
	for r.phase != phaseEnded {
		var timer *time.Timer
		var timerC <-chan time.Time
		if wake, ok := r.nextWake(); ok {
			timer = time.NewTimer(wake.Sub(r.client.clock.Now()))
			timerC = timer.C
		}
		var ctxDone, releaseReq <-chan struct{}
		if r.phase == phaseHeld {
			releaseReq = r.claim.releaseReq
		} else {
			ctxDone = r.ctx.Done()
		}
		select {
		case ev := <-r.events:
			r.onEvent(ev)
		case <-timerC:
			r.onTimer()
		case <-ctxDone:
			r.failHold(r.ctx.Err())
		case <-releaseReq:
			r.release(nil)
		case <-r.client.closing:
			if r.phase == phaseHeld {
				r.release(newError("client-closed", "the client was closed"))
			} else {
				r.failHold(newError("client-closed", ""))
			}
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// nextWake is the earliest of the pending deadlines: a paused dial, the next heartbeat, the
// silence deadline, the wait.
func (r *claimRun) nextWake() (time.Time, bool) {
	var wake time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	consider(r.dialAt)
	if r.conn != nil && !r.resume.active && (r.phase == phaseQueued || r.phase == phaseHeld) {
		if at, ok := r.sched.NextHeartbeat(); ok {
			consider(at)
		}
	}
	if r.silenceArmed {
		consider(r.sched.GiveUpAt(r.kept()))
	}
	if r.phase != phaseHeld {
		consider(r.waitUntil)
	}
	return wake, !wake.IsZero()
}

func (r *claimRun) onTimer() {
	now := r.client.clock.Now()
	if r.phase != phaseHeld && !r.waitUntil.IsZero() && !now.Before(r.waitUntil) {
		r.failHold(newError("lock-timeout", fmt.Sprintf("%s not held within the wait", r.name)))
		return
	}
	if r.silenceArmed && r.sched.Expired(r.kept()) {
		what := fmt.Sprintf("%d ms lease", r.leaseMs)
		if r.kept() < r.lease {
			what = fmt.Sprintf("%v a server keeps a claim between connections (--max-park)", r.kept())
		}
		err := newError("lease-expired", "no answer from the server within 0.8 x the "+what)
		if r.phase == phaseHeld {
			r.lose(err)
		} else {
			r.retry(err)
		}
		return
	}
	if !r.dialAt.IsZero() && !now.Before(r.dialAt) {
		r.dialAt = time.Time{}
		r.connect(r.dialTarget)
		return
	}
	if r.sched != nil && r.sched.HeartbeatDue() {
		r.heartbeat()
	}
}

func (r *claimRun) onEvent(ev connEvent) {
	if ev.gen != r.gen {
		if ev.kind == eventOpened {
			ev.conn.Close() // a connection we already left
		}
		return
	}
	switch ev.kind {
	case eventOpened:
		r.conn = ev.conn
		r.opened()
	case eventLine:
		r.receive(ev.line)
	case eventClosed:
		r.closed(ev.err)
	}
}

// startAttempt queues anew at address (after a pause until `at`, when given): a new claim key,
// a new schedule, a new place in the queue.
func (r *claimRun) startAttempt(address string, at time.Time) {
	r.phase = phaseAcquiring
	r.answered = false
	r.silenceArmed = false
	r.resume = resumeState{}
	r.key = ""
	if r.client.resumable {
		r.key = newClaimKey()
	}
	r.sched = newHeartbeatSchedule(r.lease, r.client.minHeartbeatInterval, r.client.clock)
	if at.IsZero() {
		r.connect(address)
		return
	}
	r.dropConn()
	r.dialAt, r.dialTarget = at, address
}

// connect leaves the current connection (if any) and dials address; its goroutine reports.
func (r *claimRun) connect(address string) {
	r.dropConn()
	r.address = address
	go dialAndRead(r.gen, address, r.client.dialTimeout, r.events, r.quit)
}

// dropConn closes the current connection and ignores whatever it still says.
func (r *claimRun) dropConn() {
	r.gen++
	if r.conn != nil {
		leave(r.conn)
		r.conn = nil
	}
	if r.sched != nil {
		r.sched.Dropped()
	}
}

func (r *claimRun) opened() {
	text := encodeClient(r.client.identity)
	if r.resume.active {
		// Silence keeps counting from the last confirmation: a RESUME extends nothing until it is
		// answered.
		text += encodeResume(r.name, r.key)
	} else {
		r.sched.Start()
		r.silenceArmed = true
		text += encodeAcquire(r.name, r.leaseMs, r.key)
	}
	r.write(text, false)
}

func (r *claimRun) heartbeat() {
	if r.conn != nil && !r.resume.active && !r.sched.InFlight() && (r.phase == phaseQueued || r.phase == phaseHeld) {
		r.write(heartbeatLine, true)
	}
}

// write sends request lines; a failed write closes the connection, which its reader reports.
func (r *claimRun) write(text string, heartbeat bool) {
	r.sched.Sent(heartbeat)
	if err := writeLine(r.conn, text); err != nil {
		r.conn.Close()
	}
}

// kept: how long the server keeps the claim without hearing from us; between connections at
// most its --max-park.
func (r *claimRun) kept() time.Duration {
	if r.resume.active && r.client.maxPark < r.lease {
		return r.client.maxPark
	}
	return r.lease
}

func (r *claimRun) becomeHeld(token uint64) {
	r.phase = phaseHeld
	r.claim.token = token
	r.client.holdSucceededAt(r.index)
	r.ready <- nil
}

// longestLease is what a time.Duration holds comfortably (the wire's 15 digits of ms reach
// 31,700 years, past Duration's 292): longer leases keep their wire value and are timed as this.
const longestLease = 100 * 365 * 24 * time.Hour

func leaseDuration(leaseMs int64) time.Duration {
	if leaseMs > int64(longestLease/time.Millisecond) {
		return longestLease
	}
	return time.Duration(leaseMs) * time.Millisecond
}
