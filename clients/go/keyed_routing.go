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

// sendAcquireLocked sends r on the chosen connection; with none up it waits for one (park)
// while some connection will dial again, else fails with reason.
func (c *KeyedClient) sendAcquireLocked(r *keyedRequest, reason error) {
	if reason == nil {
		reason = connectionLost(noConnection)
	}
	if k := c.pick(nil, nil); k != nil {
		k.link.pushLocked(r)
		return
	}
	for _, k := range c.conns {
		if k.state == stateDown {
			c.parkLocked(r, reason)
			return
		}
	}
	c.settleLocked(r, nil, reason)
}

// parkLocked: no connection is up, but some will dial again (a failover: the connections on the
// dead node are coming home). The acquire waits for one, within its own wait and at most one
// reconnect interval plus a dial timeout, instead of failing at once.
func (c *KeyedClient) parkLocked(r *keyedRequest, reason error) {
	limit := c.parkLimit
	if r.wait > 0 {
		if left := r.wait - time.Since(r.start); left < limit {
			limit = left
		}
	}
	if limit < 0 {
		limit = 0
	}
	c.parked[r] = struct{}{}
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

// unparkLocked sends the parked acquires now that a connection is dialling or open.
func (c *KeyedClient) unparkLocked() {
	if len(c.parked) == 0 {
		return
	}
	now := time.Now()
	waiting := c.parked
	c.parked = map[*keyedRequest]struct{}{}
	for r := range waiting {
		r.parked.Stop()
		r.parked = nil
		if !r.shrinkWait(now) {
			c.settleLocked(r, nil, timeoutError(r))
		} else {
			c.sendAcquireLocked(r, nil)
		}
	}
}

// orphanedLocked takes the requests of a connection that dropped: acquires move to the next
// connection (and fail after as many tries as there are connections), releases retry later.
func (c *KeyedClient) orphanedLocked(requests []*keyedRequest, reason error, from *keyedConn) {
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
			c.sendAcquireLocked(r, reason)
		}
	}
}
