package baton

// What the server's lines (and a dropped connection) do to a claim: the session protocol's
// client-side rules of docs/protocol.md, one handler per reply. Called on the claim's run loop
// (session_run.go) only.

import (
	"fmt"
	"time"
)

func (r *claimRun) receive(line string) {
	reply, err := parseSessionLine(line)
	if err != nil {
		r.protocolFailure(err.(*Error))
		return
	}
	switch reply.kind {
	case sessionAcquired:
		r.onAcquired(reply.token)
	case sessionWaiting:
		r.onWaiting()
	case sessionErrorLine:
		r.onError(reply.err)
	case sessionMoved:
		if r.key == "" {
			r.protocolFailure(newError("protocol-error", "MOVED to a session that sent no claim key: "+line))
			return
		}
		r.claim.moves.Add(1)
		r.resumeAt(reply.address)
	case sessionRedirect:
		r.onRedirect(reply.address)
	}
}

func (r *claimRun) onAcquired(token uint64) {
	if r.resume.active {
		r.onResumeAcquired(token)
		return
	}
	// While queued, the first ACQUIRED is the push (the server sends it before answering a
	// heartbeat as holder); a heartbeat in flight is still owed its own answer.
	if r.phase == phaseQueued {
		r.becomeHeld(token)
		return
	}
	if !r.sched.Answered() {
		r.protocolFailure(newError("protocol-error", "ACQUIRED that answers no request"))
		return
	}
	r.answered = true
	if r.phase == phaseHeld && token != r.claim.token {
		r.protocolFailure(newError("protocol-error", fmt.Sprintf("ACQUIRED %d while holding token %d", token, r.claim.token)))
		return
	}
	if r.phase == phaseAcquiring {
		r.becomeHeld(token)
	}
}

func (r *claimRun) onWaiting() {
	if !r.sched.InFlight() {
		r.protocolFailure(newError("protocol-error", "WAITING that answers no request"))
		return
	}
	if r.phase == phaseHeld {
		r.lose(newError("protocol-error", "WAITING while holding the lock"))
		return
	}
	if r.resume.active {
		r.resumed()
	}
	r.phase = phaseQueued
	r.sched.Answered()
	r.answered = true
}

func (r *claimRun) onError(err *Error) {
	switch {
	case r.resume.active:
		// A node going away or full: look elsewhere. Anything else (claim-unknown above all)
		// means the claim is gone.
		if err.ServerSide() {
			r.resumeNext()
		} else {
			r.resumeFailed(err)
		}
	case r.phase == phaseHeld:
		r.lose(err)
	case err.Code == "tokens-exhausted":
		// Server side, but final: the nodes of a cluster share one token sequence, so no node of
		// this cluster will grant again (docs/protocol.md: try another cluster).
		r.failHold(err)
	case err.ServerSide():
		r.retry(err) // 0x01 while waiting: queue anew at once
	default:
		r.failHold(err)
	}
}

func (r *claimRun) onRedirect(address string) {
	if r.resume.active {
		r.resume.redirects++
		if r.resume.redirects > maxSessionRedirects {
			r.resumeFailed(newError("protocol-error", fmt.Sprintf("more than %d redirects in a row", maxSessionRedirects)))
			return
		}
		r.resumeAt(address)
		return
	}
	if r.phase == phaseHeld {
		// A node that stops being active redirects its open sessions: the claim ended there.
		r.lose(newError("server-going-away", r.address+" is no longer active: REDIRECT to "+address))
		return
	}
	r.redirects++
	if r.redirects > maxSessionRedirects {
		r.failHold(newError("protocol-error", fmt.Sprintf("more than %d redirects in a row", maxSessionRedirects)))
		return
	}
	r.startAttempt(address, time.Time{})
}

// closed: the connection ended without a last line (or with unreadable bytes).
func (r *claimRun) closed(err error) {
	r.conn = nil
	r.gen++
	if e, ok := err.(*Error); ok && e.Code == "protocol-error" {
		r.protocolFailure(e)
		return
	}
	// A resumable claim outlives a dropped connection on the server for a while (a standby
	// that takes over keeps it): look for it until the silence deadline says it is lost.
	if r.key != "" && (r.phase == phaseQueued || r.phase == phaseHeld) {
		r.resumeNext()
		return
	}
	reason, ok := err.(*Error)
	if !ok {
		reason = newError("connection-lost", fmt.Sprint(err))
	}
	if r.phase == phaseHeld {
		r.lose(reason)
	} else {
		r.retry(reason)
	}
}
