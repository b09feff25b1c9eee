package baton

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Grant is a keyed lock held: its name and fencing token, and the way to let go of it.
type Grant struct {
	c     *KeyedClient
	key   string
	token uint64
	via   *keyedConn // the connection that granted it: a release tries it first

	once    sync.Once
	release *keyedRequest
}

// Name is the lock's name.
func (g *Grant) Name() string { return g.key }

// Token is the fencing token: send it with every write to the resource the lock protects, and
// have the resource refuse a token lower than the highest it has seen. Exact to 2^64-1.
func (g *Grant) Token() uint64 { return g.token }

func (g *Grant) String() string { return g.key + " token " + strconv.FormatUint(g.token, 10) }

// Release lets go of the lock. nil: released. ErrStale: the token no longer held the lock
// (its lease ran out or an operator force-released it); nothing was changed. A release whose
// connection dropped is retried on another connection (5 s at 200 ms intervals by default),
// and a retry gets ErrStale if the lost attempt did release: after a retry ErrStale means
// "released, or no longer held". ErrSessionClaim: the token is a session's, which only its own
// connection can end. When ctx ends first, Release returns ctx.Err() and the release goes on
// in the background; calling Release again returns its outcome.
func (g *Grant) Release(ctx context.Context) error {
	g.once.Do(func() {
		g.c.mu.Lock()
		g.release = g.c.releaseLocked(g.key, g.token, g.via)
		g.c.mu.Unlock()
	})
	select {
	case res := <-g.release.done:
		g.release.done <- res // keep it for the next call
		return res.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaseLocked starts the release of token on key, preferring connection via.
func (c *KeyedClient) releaseLocked(key string, token uint64, via *keyedConn) *keyedRequest {
	r := &keyedRequest{op: 'R', slot: "R " + key, key: key, token: token, via: via, start: time.Now(),
		done: make(chan keyedResult, 1)}
	if c.closed {
		c.settleLocked(r, nil, ErrClientClosed)
		return r
	}
	c.sendReleaseLocked(r, nil)
	if c.started != nil {
		c.started()
	}
	return r
}

// sendReleaseLocked makes one attempt, bounded by the attempt timeout but never past the retry
// window (though long enough for a live server to answer), so a release settles about when its
// retries run out.
func (c *KeyedClient) sendReleaseLocked(r *keyedRequest, reason error) {
	k := c.pick(r.via, r.lostOn)
	if k == nil {
		if reason == nil {
			reason = connectionLost(noConnection)
		}
		c.retryReleaseLocked(r, reason)
		return
	}
	k.link.pushLocked(r)
	timeout := c.releaseAttemptTimeout
	windowLeft := c.releaseRetryFor - time.Since(r.start)
	if windowLeft < c.releaseRetryInterval {
		windowLeft = c.releaseRetryInterval
	}
	if windowLeft < timeout {
		timeout = windowLeft
	}
	r.attempts++
	n := r.attempts
	r.attempt = time.AfterFunc(timeout, func() { c.releaseOverdue(r, n, timeout) })
}

// releaseOverdue: an attempt got no answer in time. It failed (its connection is dropped, so
// a late answer cannot be matched to a later request), and the retries go on.
func (c *KeyedClient) releaseOverdue(r *keyedRequest, attempt int, timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.settled || r.attempts != attempt || r.link == nil {
		return
	}
	why := fmt.Sprintf("no answer to release %q within %v", r.key, timeout)
	where := c.abandonLocked(r, why)
	c.retryReleaseLocked(r, newError("io-timeout", where+": "+why))
}

// retryReleaseLocked tries r again after the retry interval, unless that would pass the retry
// window: then it fails with reason.
func (c *KeyedClient) retryReleaseLocked(r *keyedRequest, reason error) {
	if time.Since(r.start)+c.releaseRetryInterval > c.releaseRetryFor {
		c.settleLocked(r, nil, reason)
		return
	}
	c.retrying[r] = struct{}{}
	var timer *time.Timer
	timer = time.AfterFunc(c.releaseRetryInterval, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.retry != timer || r.settled {
			return
		}
		delete(c.retrying, r)
		r.retry = nil
		if c.closed {
			c.settleLocked(r, nil, ErrClientClosed)
			return
		}
		c.sendReleaseLocked(r, reason)
	})
	r.retry = timer
}

// Release releases token on the lock name without a Grant (a token kept elsewhere, another
// process's): the same outcomes and retries as Grant.Release.
func (c *KeyedClient) Release(ctx context.Context, name string, token uint64) error {
	if err := checkKey(name); err != nil {
		return err
	}
	c.mu.Lock()
	r := c.releaseLocked(name, token, nil)
	c.mu.Unlock()
	select {
	case res := <-r.done:
		return res.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
