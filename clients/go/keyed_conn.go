package baton

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// One persistent keyed connection per address (keyedConn), run by its own goroutine: it dials,
// reads replies, follows `M` redirects, and after a drop hands its unanswered requests back to
// the client and dials again. Each socket it opens is a keyedLink. All state is guarded by
// KeyedClient.mu; only reading and writing the socket happen outside it.

type connState int

const (
	stateConnecting connState = iota // dialling: requests queue in the link's buffer
	stateOpen
	stateDown // dropped, waiting to dial again
	stateClosed
)

const (
	// maxRedirects in a row without a real reply before it counts as a loop.
	maxRedirects = 8
	// redirectRetry: how soon a connection comes home after the node a redirect named could not
	// be reached (the active a standby named has just died): the standby will know better.
	redirectRetry = 200 * time.Millisecond
)

type keyedConn struct {
	c     *KeyedClient
	home  string
	state connState
	link  *keyedLink // the socket in use (connecting or open); nil while down
}

type keyedLink struct {
	conn    *keyedConn
	address string
	ctx     context.Context // cancelled when the link is dropped: ends its dial and writer
	cancel  context.CancelFunc
	sock    net.Conn // nil while dialling
	pending *pendingTable
	// letGo: acquires answered `T` before their wait could have run out. The server let go of
	// them as it went away (`T` comes just before `E - - server-going-away`): they are sent
	// again, with what is left of their wait, when this link drops, which the goodbye makes it.
	letGo  []*keyedRequest
	out    []byte        // request bytes not yet handed to the socket
	wakeup chan struct{} // tells the writer there are bytes
	// identities: `I` lines sent and not yet answered (an `I OK` for none is a reply to nothing).
	identities int
	served     bool   // the server answered a request here (a redirect or goodbye is not service)
	redirects  int    // redirects in a row, carried over to the link a redirect opens
	farewell   *Error // `E - - ...`: the best reason for the drop that follows
	dropped    error  // set when the client drops the link itself (a deadline): the reason
}

// redirected is what the reader returns on `M host:port`.
type redirected struct{ to string }

func (r redirected) Error() string { return "redirected to " + r.to }

// run is the connection's goroutine, from its first link (opened by NewKeyedClient) on.
func (k *keyedConn) run(link *keyedLink) {
	c := k.c
	defer c.wg.Done()
	target := k.home
	for {
		if link == nil {
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				return
			}
			link = k.openLocked(target, 0, nil)
			c.mu.Unlock()
		}

		err := k.serve(link)

		c.mu.Lock()
		link.cancel()
		if link.sock != nil {
			link.sock.Close()
		}
		var to redirected
		if errors.As(err, &to) && link.dropped == nil && !c.closed {
			if link.redirects+1 <= maxRedirects {
				// The new link takes the unanswered requests in the same step, so no request
				// is ever between links (its deadline looks for it on one).
				target = to.to
				link = k.openLocked(target, link.redirects+1, link.takeAll())
				c.mu.Unlock()
				continue
			}
			err = newError("protocol-error", fmt.Sprintf("more than %d redirects in a row", maxRedirects))
		}
		delay := k.droppedLocked(link, target, err)
		target, link = k.home, nil
		c.mu.Unlock()
		if !c.sleep(delay) {
			c.mu.Lock()
			k.state = stateClosed
			c.mu.Unlock()
		}
	}
}

// openLocked starts a link to target: the identity first, then the requests a redirect carried
// (with what is left of their waits), then whatever the client sends meanwhile.
func (k *keyedConn) openLocked(target string, redirects int, carried []*keyedRequest) *keyedLink {
	c := k.c
	ctx, cancel := context.WithCancel(c.ctx)
	link := &keyedLink{conn: k, address: target, ctx: ctx, cancel: cancel, pending: newPendingTable(),
		wakeup: make(chan struct{}, 1), redirects: redirects}
	k.link, k.state = link, stateConnecting
	if c.sendIdentity {
		link.out = append(link.out, identityLine(c.identity)...)
		link.identities++
	}
	now := time.Now()
	for _, r := range carried {
		switch {
		case r.settled: // cancelled by its caller: not sent again
		case r.op == 'A' && !r.shrinkWait(now):
			c.settleLocked(r, nil, timeoutError(r))
		default:
			link.pushLocked(r)
		}
	}
	c.unparkLocked()
	return link
}

// serve dials, then reads replies until the link ends; it returns why it ended.
func (k *keyedConn) serve(link *keyedLink) error {
	c := k.c
	sock, err := c.dialer.DialContext(link.ctx, "tcp", link.address)
	c.mu.Lock()
	if err == nil && (link.dropped != nil || c.closed) {
		// Dropped (a deadline) or closed while dialling: the new socket is not used.
		sock.Close()
		err = link.dropped
		if err == nil {
			err = ErrClientClosed
		}
	}
	if err != nil {
		c.mu.Unlock()
		return err
	}
	link.sock = sock
	k.state = stateOpen
	c.mu.Unlock()
	c.wg.Add(1)
	go link.write(c)
	link.wake()

	r := bufio.NewReaderSize(sock, maxReplyLine)
	for {
		line, err := readReplyLine(r)
		if err != nil {
			return err
		}
		reply, err := parseKeyedReply(line)
		if err != nil {
			return err
		}
		c.mu.Lock()
		err = c.dispatchLocked(link, reply)
		c.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// write hands queued request bytes to the socket, all that is queued in one write: requests
// made together leave together and come back together.
func (l *keyedLink) write(c *KeyedClient) {
	defer c.wg.Done()
	for {
		select {
		case <-l.wakeup:
		case <-l.ctx.Done():
			return
		}
		c.mu.Lock()
		buf := l.out
		l.out = nil
		c.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		if _, err := l.sock.Write(buf); err != nil {
			l.sock.Close() // the reader sees it and the link is dropped
			return
		}
	}
}

func (l *keyedLink) wake() {
	select {
	case l.wakeup <- struct{}{}:
	default:
	}
}

// pushLocked sends r on this link (queued until the socket is up).
func (l *keyedLink) pushLocked(r *keyedRequest) {
	if r.op == 'A' {
		if l.pending.oldest(r.slot) == nil {
			r.oldestSince = time.Now()
		} else {
			r.oldestSince = time.Time{}
		}
	}
	l.pending.push(r)
	r.link = l
	l.out = append(l.out, r.line()...)
	l.wake()
}

// takeAll removes every unanswered request: those let go first (they were sent first), then
// the pending ones in send order.
func (l *keyedLink) takeAll() []*keyedRequest {
	all := append(l.letGo, l.pending.drain()...)
	l.letGo = nil
	for _, r := range all {
		r.link = nil
	}
	return all
}
