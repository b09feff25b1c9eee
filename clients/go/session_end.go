package baton

// How a claim's run ends, or starts over. Before the claim holds: failHold reports Hold's error,
// retry queues anew elsewhere. Once it holds: lose closes Done with the reason, release closes
// the connection for the holder. Either way every connection is closed: nothing is left held or
// queued behind the caller's back.

import (
	"time"
)

// failHold ends a claim that never held: Hold returns err, the connection is closed.
func (r *claimRun) failHold(err error) {
	r.phase = phaseEnded
	r.dropConn()
	r.ready <- err
}

// retry follows server trouble before holding (going away, gone, silent, full): queue anew at
// once on the next address (the same one when there is only one), pausing after a whole pass
// without any answer, and giving up when no server has answered for ReconnectFor.
func (r *claimRun) retry(reason *Error) {
	now := r.client.clock.Now()
	r.redirects = 0
	if r.answered {
		r.lastAnswerAt = now
		r.unansweredInRow = 0
	} else {
		r.unansweredInRow++
	}
	if now.Sub(r.lastAnswerAt) >= r.client.reconnectFor {
		r.failHold(reason)
		return
	}
	count := len(r.client.addresses)
	r.index = (r.index + 1) % count
	var at time.Time
	if r.unansweredInRow >= count {
		r.unansweredInRow = 0
		at = now.Add(passPause) // the wait deadline, if sooner, still wins (onTimer)
	}
	r.startAttempt(r.client.addresses[r.index], at)
}

// protocolFailure: the server sent what a client cannot read; trust nothing it said.
func (r *claimRun) protocolFailure(err *Error) {
	if r.phase == phaseHeld {
		r.lose(err)
	} else {
		r.failHold(err)
	}
}

// lose: ownership can no longer be vouched for. Done closes first (the work stops), then the
// connection closes so the server moves on.
func (r *claimRun) lose(reason *Error) {
	r.phase = phaseEnded
	r.claim.err = &lostError{reason: reason}
	close(r.claim.done)
	r.dropConn()
}

// release ends a held claim for its holder (Release, or Close with reason client-closed): Done
// closes, then FIN, then a short wait for the server's own close, so the bytes still arriving
// are read rather than turning our close into a reset (after which a server would keep a
// resumable claim until its lease ended instead of handing the lock on at once).
func (r *claimRun) release(reason *Error) {
	if reason == nil {
		reason = newError("client-closed", "released by its holder")
	}
	r.phase = phaseEnded
	r.claim.releasedByHolder = true
	r.claim.err = &lostError{reason: reason}
	close(r.claim.done)
	if r.conn == nil {
		r.dropConn()
		return
	}
	// Wait for the server's close after our FIN (the reader reports it), so that Release
	// returns once the lock has moved on.
	gen := r.gen
	r.dropConn()
	timer := time.NewTimer(leaveDrain + 100*time.Millisecond)
	defer timer.Stop()
	for {
		select {
		case ev := <-r.events:
			if ev.gen == gen && ev.kind == eventClosed {
				return
			}
			if ev.kind == eventOpened {
				ev.conn.Close() // a dial still under way when the claim ended
			}
		case <-timer.C:
			return
		}
	}
}
