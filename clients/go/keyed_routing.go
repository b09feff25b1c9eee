package baton

import "time"

// Where requests go: the choice of connection, acquires waiting for one (parked), and the
// requests of a connection that dropped. All called with KeyedClient.mu held.

// pick chooses where a request goes: the first open connection in address order, else one
// still connecting (its link queues the bytes until it is up), else none. preferred wins when
// open; avoid (where an attempt was just lost) comes last when any other is open.
//
// Not round-robin, as in the TypeScript client: requests made together then leave in one write
// and come back in one read (alternating split a batch of 16 into 8 + 8 and doubled the
// server's syscalls); the other connections stand by for when the first one drops.
func (c *KeyedClient) pick(preferred, avoid *keyedConn) *keyedConn {
	if preferred != nil && preferred != avoid && preferred.state == stateOpen {
		return preferred
	}
	otherOpen := false
	if avoid != nil {
		for _, k := range c.conns {
			if k != avoid && k.state == stateOpen {
				otherOpen = true
			}
		}
	}
	var fallback *keyedConn
	for _, k := range c.conns {
		if otherOpen && k == avoid {
			continue
		}
		if k.state == stateOpen {
			return k
		}
		if k.state == stateConnecting && fallback == nil {
			fallback = k
		}
	}
	return fallback
}

// pickAwayFrom is pick for an acquire just lost on node lostAt: a connection that reached that
// node only through a standby's `M` is left out. When the node died (kill -9), every connection
// a redirect had led there dies with it, each a moment later (a dying process closes its
// sockets one by one), and moving the acquire along them spent all its tries on one death
// within a millisecond; it waits for one to come home instead. Kept apart from pick so that the
// pick of every other request stays as it was.
func (c *KeyedClient) pickAwayFrom(lostAt string) *keyedConn {
	var fallback *keyedConn
	for _, k := range c.conns {
		if k.reachedOnlyByRedirect(lostAt) {
			continue
		}
		if k.state == stateOpen {
			return k
		}
		if k.state == stateConnecting && fallback == nil {
			fallback = k
		}
	}
	return fallback
}

// reachedOnlyByRedirect: k talks to node only because a standby's `M` led it there (its home is
// another node). It comes home by itself once it drops.
func (k *keyedConn) reachedOnlyByRedirect(node string) bool {
	return k.link != nil && k.link.address == node && k.home != node
}

// sendAcquireLocked sends r on the chosen connection; with none up it waits for one (park)
// while some connection will dial again, else fails with reason. lostAt: the node r was just
// lost on, "" when it was not.
func (c *KeyedClient) sendAcquireLocked(r *keyedRequest, reason error, lostAt string) {
	if reason == nil {
		reason = connectionLost(noConnection)
	}
	var k *keyedConn
	if lostAt == "" {
		k = c.pick(nil, nil)
	} else {
		k = c.pickAwayFrom(lostAt)
	}
	if k != nil {
		k.link.pushLocked(r)
		return
	}
	// Connections that are down, or that a redirect led to the node just lost, come back (home)
	// by themselves: wait for one rather than fail.
	for _, k := range c.conns {
		if k.state == stateDown || (lostAt != "" && k.reachedOnlyByRedirect(lostAt)) {
			c.parkLocked(r, reason, lostAt)
			return
		}
	}
	c.settleLocked(r, nil, reason)
}

// parkLocked: no connection is up, but some will dial again (a failover: the connections on the
// dead node are coming home). The acquire waits for one, within its own wait and at most one
// reconnect interval plus a dial timeout, instead of failing at once. lostAt: the node r was just
// lost on ("" when none), which unparkLocked keeps it away from too.
func (c *KeyedClient) parkLocked(r *keyedRequest, reason error, lostAt string) {
	limit := c.parkLimit
	if r.wait > 0 {
		if left := r.wait - time.Since(r.start); left < limit {
			limit = left
		}
	}
	if limit < 0 {
		limit = 0
	}
	c.parked[r] = lostAt
	var timer *time.Timer
	timer = time.AfterFunc(limit, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.parked == timer {
			delete(c.parked, r)
			r.parked = nil
			c.settleLocked(r, nil, reason)
		}
	})
	r.parked = timer
}

// unparkLocked sends the parked acquires now that a connection is dialling or open. One lost
// with a node still keeps away from the connections a redirect had led to that node: one comes
// home while another is still open there (the dying process has not closed that socket yet),
// and the acquire sent on the open one would spend a try (with two connections, its last) on
// the dead node. With only such connections, or down ones, it stays parked, under the timer it
// was parked with.
func (c *KeyedClient) unparkLocked() {
	if len(c.parked) == 0 {
		return
	}
	now := time.Now()
	waiting := c.parked
	c.parked = map[*keyedRequest]string{}
	for r, lostAt := range waiting {
		var away *keyedConn
		if lostAt != "" {
			if away = c.pickAwayFrom(lostAt); away == nil {
				c.parked[r] = lostAt
				continue
			}
		}
		r.parked.Stop()
		r.parked = nil
		switch {
		case !r.shrinkWait(now):
			c.settleLocked(r, nil, timeoutError(r))
		case away != nil:
			away.link.pushLocked(r)
		default:
			c.sendAcquireLocked(r, nil, "")
		}
	}
}

// orphanedLocked takes the requests of a connection that dropped at node lostAt: acquires move to
// the next connection (and fail after as many tries as there are connections), releases retry
// later.
func (c *KeyedClient) orphanedLocked(requests []*keyedRequest, reason error, from *keyedConn, lostAt string) {
	now := time.Now()
	for _, r := range requests {
		if r.op == 'R' {
			stopTimer(r.attempt) // that attempt is over: no answer can come
			r.lostOn = from
		}
		switch {
		case r.settled: // a cancelled acquire: nothing to re-send
		case c.closed:
			c.settleLocked(r, nil, ErrClientClosed)
		case r.op == 'R':
			c.retryReleaseLocked(r, reason)
		case r.triesLeft <= 1:
			c.settleLocked(r, nil, reason)
		case !r.shrinkWait(now):
			c.settleLocked(r, nil, timeoutError(r))
		default:
			r.triesLeft--
			c.sendAcquireLocked(r, reason, lostAt)
		}
	}
}
