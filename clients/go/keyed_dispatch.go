package baton

import (
	"fmt"
	"time"
)

// dispatchLocked applies one reply read on link. A non-nil error ends the link: a redirect, or
// a reply that answers nothing this client sent (after which no later reply could be trusted
// to match its request).
func (c *KeyedClient) dispatchLocked(link *keyedLink, reply keyedReply) error {
	switch reply.kind {
	case replyRedirect:
		return redirected{to: reply.address}
	case replyConnError:
		// The server closes after this; keep its words for the requests handed back.
		link.farewell = errorFromWireName(reply.code, reply.text)
		return nil
	}
	link.redirects = 0
	link.served = true
	if reply.kind == replyIdentityOK || (reply.kind == replyRequestError && reply.slot == "I ?") {
		// `I OK`, or `E I ? bad-identity`: the connection stays usable, its requests unnamed.
		// (Identities are checked before they are sent, so the second does not happen.)
		if link.identities == 0 {
			return replyToNothing(link, reply)
		}
		link.identities--
		return nil
	}
	r := link.pending.shift(reply.slot)
	if r == nil {
		return replyToNothing(link, reply)
	}
	// The next A on this key is now the oldest: the server answers it next, and its deadline
	// gives it a margin from here.
	if next := link.pending.oldest(reply.slot); next != nil && next.op == 'A' {
		next.oldestSince = time.Now()
	}
	if reply.kind == replyTimeout && (r.wait == 0 || time.Since(r.start) < r.wait) {
		// Too early to be its wait running out: the server is letting go of it (see letGo).
		link.letGo = append(link.letGo, r)
		return nil
	}
	r.link = nil
	switch reply.kind {
	case replyGranted:
		g := &Grant{c: c, key: reply.key, token: reply.token, via: link.conn}
		if r.settled {
			// Its caller gave up (context) before the grant came: let it go at once.
			c.releaseLocked(g.key, g.token, g.via)
			return nil
		}
		c.settleLocked(r, g, nil)
	case replyTimeout:
		c.settleLocked(r, nil, timeoutError(r))
	case replyReleased:
		c.settleLocked(r, nil, nil)
	case replyStale:
		c.settleLocked(r, nil, newError("stale-token", fmt.Sprintf("token %d no longer holds %q (released, expired or force-released)", r.token, r.key)))
	case replyRequestError:
		c.settleLocked(r, nil, errorFromWireName(reply.code, reply.text))
	}
	return nil
}

func replyToNothing(link *keyedLink, reply keyedReply) error {
	what := reply.slot
	if reply.kind == replyIdentityOK {
		what = "I OK"
	}
	return newError("protocol-error", fmt.Sprintf("%s: a reply to nothing this client sent (%s)", link.address, what))
}

// timeoutError is ErrTimeout for acquire r.
func timeoutError(r *keyedRequest) *Error {
	if r.wait == 0 {
		return newError("lock-timeout", fmt.Sprintf("%q not granted", r.key))
	}
	return newError("lock-timeout", fmt.Sprintf("%q not granted within %v", r.key, r.wait))
}

// acquireDue runs when a finite-wait acquire reached its own deadline (wait + 1 s + 10%). An A
// behind an earlier waiting A on the same key on its connection is answered only after that
// one, so it gets the margin again from when it became the oldest. Once overdue, the reader is
// given one more moment to deliver what may already sit in the socket (after a busy spell the
// answer may be there); then the acquire fails with ErrTimeout and its connection is dropped,
// so that a late reply cannot be matched to a later request.
func (c *KeyedClient) acquireDue(r *keyedRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.settled && r.link == nil {
		return // answered, failed, or cancelled and off every link
	}
	margin := acquireMargin(r.wait)
	if r.link == nil || r.oldestSince.IsZero() {
		// Parked (waiting for a connection): not overdue at a server yet. Or behind an older A
		// on its key: not answered before that one.
		r.deadline = time.AfterFunc(margin, func() { c.acquireDue(r) })
		return
	}
	if left := margin - time.Since(r.oldestSince); left > 0 {
		r.deadline = time.AfterFunc(left, func() { c.acquireDue(r) })
		return
	}
	if !r.dueOnce {
		r.dueOnce = true
		r.deadline = time.AfterFunc(20*time.Millisecond, func() { c.acquireDue(r) })
		return
	}
	waited := time.Since(r.start).Round(time.Millisecond)
	c.abandonLocked(r, fmt.Sprintf("no answer to acquire %q within %v", r.key, waited))
	c.settleLocked(r, nil, timeoutError(r))
}
