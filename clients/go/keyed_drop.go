package baton

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// How a keyed link ends: dropped by the network or the server, or by the client itself at a
// deadline. All called with KeyedClient.mu held.

// droppedLocked ends a link that will not be used again: its requests go back to the client,
// and it returns how long to wait before dialling home again.
func (k *keyedConn) droppedLocked(link *keyedLink, target string, err error) time.Duration {
	c := k.c
	reason := link.reasonFor(err)
	served := link.served
	k.link, k.state = nil, stateDown
	orphans := link.takeAll()
	if len(orphans) > 0 {
		c.orphanedLocked(orphans, reason, k, link.address)
	}
	switch {
	case served:
		// It was serving and dropped (its node died or handed off): in a cluster another node
		// is taking over, so come home at once. Rate-limited by nature: to be dropped again it
		// must first be answered again.
		return 0
	case target != k.home:
		// A redirect's target that could not be reached: home again soon.
		if c.reconnectInterval < redirectRetry {
			return c.reconnectInterval
		}
		return redirectRetry
	}
	return c.reconnectInterval
}

// reasonFor is the error a drop hands to the requests that were pending on the link.
func (l *keyedLink) reasonFor(err error) error {
	if l.dropped != nil {
		return l.dropped
	}
	if l.farewell != nil {
		return l.farewell
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Code == "protocol-error" {
			return newError(e.Code, l.address+": "+e.Detail)
		}
		return e
	}
	if err == nil || errors.Is(err, net.ErrClosed) {
		return connectionLost(l.address + " closed the connection")
	}
	return connectionLost(l.address + ": " + err.Error())
}

// abandonLocked gives up on r, which the server has not answered in time, and drops its link
// at once: the server then forgets the request, and replies still owed on that socket could no
// longer be matched. The other requests move on as after any drop. Returns the address, or ""
// when r is pending nowhere.
func (c *KeyedClient) abandonLocked(r *keyedRequest, why string) string {
	link := r.link
	if link == nil || (!link.pending.remove(r) && !link.removeLetGo(r)) {
		return ""
	}
	r.link = nil
	if r.op == 'R' {
		r.lostOn = link.conn
	}
	if link.dropped == nil {
		link.dropped = connectionLost(fmt.Sprintf("%s: dropped after %s", link.address, why))
	}
	link.cancel()
	if link.sock != nil {
		link.sock.Close()
	}
	return link.address
}

func (l *keyedLink) removeLetGo(r *keyedRequest) bool {
	for i, x := range l.letGo {
		if x == r {
			l.letGo = append(l.letGo[:i:i], l.letGo[i+1:]...)
			return true
		}
	}
	return false
}

func connectionLost(detail string) *Error { return newError("connection-lost", detail) }
