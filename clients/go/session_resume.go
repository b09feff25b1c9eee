package baton

// Opt-in resume (Options.Resumable; docs/protocol.md "Resumable sessions"): a claim whose ACQUIRE
// carried a random claim key outlives its connection on the server for a while. On MOVED (a
// planned handoff) the client RESUMEs at the named node; when the connection drops without a
// line (the active died) it RESUMEs at the next addresses, following REDIRECTs. The work goes on
// meanwhile, but only while the silence rule allows: 0.8 x min(lease, MaxPark) after the last
// confirmation (heartbeat_schedule.go). ERROR 0x09, or a different token, means the claim is lost.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// resumePassPause after a pass over every address found none that would answer a RESUME.
const resumePassPause = 100 * time.Millisecond

type resumeState struct {
	// active: between connections, a RESUME is under way (or about to be sent).
	active    bool
	redirects int
	// misses: connections tried in a row for a RESUME without an answer.
	misses int
}

// newClaimKey is 128 random bits from the system's cryptographic source, in hex. Only this
// client knows it (the server keeps its SHA-256): the public fencing token is never enough to
// take a claim up again.
func newClaimKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("baton: no cryptographic randomness for a claim key: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// resumeAt leaves the current connection and asks address for the claim.
func (r *claimRun) resumeAt(address string) {
	r.resume.active = true
	r.connect(address)
}

// resumeNext: the connection dropped, or a node could not answer; try the next address,
// pausing after a whole pass.
func (r *claimRun) resumeNext() {
	list := r.client.addresses
	at := -1
	for i, a := range list {
		if a == r.address {
			at = i
		}
	}
	next := list[(at+1)%len(list)]
	r.resume.active = true
	r.resume.redirects = 0
	r.resume.misses++
	if r.resume.misses%len(list) != 0 {
		r.connect(next)
		return
	}
	r.dropConn()
	r.dialAt, r.dialTarget = r.client.clock.Now().Add(resumePassPause), next
}

// onResumeAcquired: the answer to RESUME, the same claim holding (the same token) or, for a
// waiter, granted meanwhile (a new token, as any grant).
func (r *claimRun) onResumeAcquired(token uint64) {
	if !r.sched.InFlight() {
		r.protocolFailure(newError("protocol-error", "ACQUIRED that answers no request"))
		return
	}
	if r.phase == phaseHeld && token != r.claim.token {
		r.lose(newError("protocol-error", fmt.Sprintf("RESUME answered with token %d for a claim holding token %d", token, r.claim.token)))
		return
	}
	r.resumed()
	r.sched.Answered()
	r.answered = true
	if r.phase != phaseHeld {
		r.becomeHeld(token)
	}
}

// resumed: a RESUME was answered; back on a connection.
func (r *claimRun) resumed() {
	r.resume = resumeState{}
}

// resumeFailed: the claim cannot be found again. A holder's ownership is lost; a waiter queues
// anew with a new ACQUIRE and a new key.
func (r *claimRun) resumeFailed(err *Error) {
	if r.phase == phaseHeld {
		r.lose(err)
	} else {
		r.retry(err)
	}
}
