package baton

import (
	"sort"
	"time"
)

// keyedRequest is one acquire or release in flight. It is a plain value that moves from a
// dropped connection to another one unchanged; every field is guarded by KeyedClient.mu.
type keyedRequest struct {
	op    byte // 'A' or 'R'
	slot  string
	key   string
	start time.Time

	// Acquire.
	lease     string        // decimal seconds
	wait      time.Duration // what the caller asked for; 0 = forever
	waitText  string        // the wait as sent next (shrunk by the time spent before a re-send)
	triesLeft int           // connections it may still be tried on
	// oldestSince is when it became the oldest outstanding A of its key on its link; zero while
	// an older one is outstanding there (the server answers it only after that one).
	oldestSince time.Time
	deadline    *time.Timer // the client's own deadline of a finite wait
	dueOnce     bool        // the deadline fired once: the reader had one more moment to deliver
	// cancelled: the caller's context ended first. The request stays pending (dropping the
	// connection would hit every other request on it); a grant that comes anyway is released.
	cancelled bool

	// Release.
	token    uint64
	via      *keyedConn // the connection that granted the token, tried first
	lostOn   *keyedConn // the connection an attempt was lost on: the retry goes elsewhere
	attempt  *time.Timer
	attempts int // attempts sent so far: a timer of an earlier attempt finds a newer count
	retry    *time.Timer

	link    *keyedLink  // where it is pending now; nil when nowhere
	seq     uint64      // its place in its link's send order
	parked  *time.Timer // waiting for a connection to come up
	settled bool
	done    chan keyedResult // buffered 1: settle never blocks
}

type keyedResult struct {
	grant *Grant
	err   error
}

func (r *keyedRequest) line() string {
	if r.op == 'A' {
		return acquireLine(r.key, r.lease, r.waitText)
	}
	return releaseLine(r.key, r.token)
}

// shrinkWait, before an acquire is sent again, takes the time already spent off its wait, so
// that the caller never waits longer than asked. False when no wait is left.
func (r *keyedRequest) shrinkWait(now time.Time) bool {
	if r.wait == 0 {
		return true // forever stays forever
	}
	left := r.wait - now.Sub(r.start)
	if left <= 0 {
		return false
	}
	r.waitText = secondsText(left)
	return true
}

// acquireMargin is how long past its wait the client waits for an acquire's answer before it
// gives up on its own: 1 s + 10% of the wait (the TypeScript client's rule). The server answers
// `T` at the wait; only a stalled server or a half-open connection reaches this.
func acquireMargin(wait time.Duration) time.Duration {
	return time.Second + wait/10
}

// pendingTable holds the requests sent on one link and not yet answered. Replies name only
// (op, key), and the server answers equal pairs in send order, so each slot is a FIFO.
type pendingTable struct {
	slots map[string][]*keyedRequest
	count int
	sent  uint64
}

func newPendingTable() *pendingTable { return &pendingTable{slots: map[string][]*keyedRequest{}} }

func (p *pendingTable) push(r *keyedRequest) {
	p.sent++
	r.seq = p.sent
	p.slots[r.slot] = append(p.slots[r.slot], r)
	p.count++
}

func (p *pendingTable) oldest(slot string) *keyedRequest {
	if q := p.slots[slot]; len(q) > 0 {
		return q[0]
	}
	return nil
}

// shift removes and returns the oldest request of slot: the one a reply for slot answers.
func (p *pendingTable) shift(slot string) *keyedRequest {
	q := p.slots[slot]
	if len(q) == 0 {
		return nil
	}
	r := q[0]
	q[0] = nil
	if len(q) == 1 {
		delete(p.slots, slot) // only keys in flight stay in the map
	} else {
		p.slots[slot] = q[1:]
	}
	p.count--
	return r
}

// remove takes r out wherever it stands; only for a link about to be dropped, since the server
// still owes r a reply that would otherwise go to the next request of its slot.
func (p *pendingTable) remove(r *keyedRequest) bool {
	q := p.slots[r.slot]
	for i, x := range q {
		if x == r {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(p.slots, r.slot)
			} else {
				p.slots[r.slot] = q
			}
			p.count--
			return true
		}
	}
	return false
}

// drain removes and returns everything in send order, so that a re-send elsewhere keeps it.
func (p *pendingTable) drain() []*keyedRequest {
	var all []*keyedRequest
	for _, q := range p.slots {
		all = append(all, q...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	p.slots = map[string][]*keyedRequest{}
	p.count = 0
	return all
}
