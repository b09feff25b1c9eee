package baton

import (
	"context"
	"net"
	"sync"
	"time"
)

// KeyedClient takes locks over Baton's keyed protocol (docs/protocol.md, "Keyed protocol"):
// leases fixed at the grant, released by the fencing token. It keeps one persistent connection
// per address (two when one address is given, so that requests keep flowing while one
// reconnects), pipelines every request, and retries as the protocol's design says. Safe for use
// from many goroutines; Close it when done.
type KeyedClient struct {
	mu    sync.Mutex
	conns []*keyedConn
	// parked: acquires waiting for a connection to come up, each with the node it was lost on
	// ("" when none); retrying: releases waiting for their next attempt.
	parked   map[*keyedRequest]string
	retrying map[*keyedRequest]struct{}
	closed   bool

	identity     string
	sendIdentity bool

	reconnectInterval     time.Duration
	parkLimit             time.Duration
	releaseRetryFor       time.Duration
	releaseRetryInterval  time.Duration
	releaseAttemptTimeout time.Duration

	// started, when set (tests), is called once a request has been handed to a connection,
	// parked or settled: the conformance runner plays the next step only after it.
	started func()

	dialer net.Dialer
	ctx    context.Context // cancelled by Close: ends dials, writers and reconnect pauses
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// AcquireOptions say how long a keyed lock is held and how long to queue for it.
type AcquireOptions struct {
	// Lease: how long the lock stays held without a release (> 0). The server reclaims it then,
	// whatever the client does.
	Lease time.Duration
	// Wait: how long to queue; 0 waits forever. A finite wait also bounds how long the client
	// waits for any answer: a server silent for Wait + 1 s + 10% of Wait fails the acquire with
	// ErrTimeout and that connection is dropped (the server then forgets the request).
	Wait time.Duration
}

const noConnection = "no connection to a Baton server is up"

// NewKeyedClient starts the connections (in the background: a server that is not up yet is
// dialled again every ReconnectInterval) and returns at once. Bad options (an unreadable
// address, a bad Identity) are refused here, before anything is dialled.
func NewKeyedClient(o Options) (*KeyedClient, error) {
	addresses, err := normalizeAddresses(o.Addresses, DefaultKeyedPort)
	if err != nil {
		return nil, err
	}
	identity, send, err := resolveIdentity(o)
	if err != nil {
		return nil, err
	}
	c := &KeyedClient{
		parked:                map[*keyedRequest]string{},
		retrying:              map[*keyedRequest]struct{}{},
		identity:              identity,
		sendIdentity:          send,
		reconnectInterval:     orDefault(o.ReconnectInterval, 3*time.Second),
		releaseRetryFor:       orDefault(o.ReleaseRetryFor, 5*time.Second),
		releaseRetryInterval:  orDefault(o.ReleaseRetryInterval, 200*time.Millisecond),
		releaseAttemptTimeout: orDefault(o.ReleaseAttemptTimeout, time.Second),
		dialer:                net.Dialer{Timeout: orDefault(o.DialTimeout, 3*time.Second)},
	}
	c.parkLimit = c.reconnectInterval + c.dialer.Timeout
	c.ctx, c.cancel = context.WithCancel(context.Background())
	// With one address, a second connection keeps requests flowing while the first reconnects.
	if len(addresses) == 1 {
		addresses = append(addresses, addresses[0])
	}
	c.mu.Lock()
	for _, a := range addresses {
		k := &keyedConn{c: c, home: a}
		c.conns = append(c.conns, k)
		// Its first link exists (dialling) before New returns, so a first request queues on it
		// at once, its wait untouched, instead of waiting for the goroutine to start.
		first := k.openLocked(a, 0, nil)
		c.wg.Add(1)
		go k.run(first)
	}
	c.mu.Unlock()
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Acquire queues for the lock name and returns its grant. It fails with ErrTimeout when the
// wait ran out (nothing is held), with an *Error carrying the server's code for an `E` reply
// (errors.Is(err, ErrBadLease), ...), with ErrConnectionLost after every connection dropped
// under it, and with ctx.Err() when ctx ends first: the request then stays queued on the server
// (taking it out would mean dropping a connection that other requests share), and a grant that
// comes for it later is released at once, so a cancelled acquire never strands a lock.
func (c *KeyedClient) Acquire(ctx context.Context, name string, o AcquireOptions) (*Grant, error) {
	if err := checkKey(name); err != nil {
		return nil, err
	}
	lease, err := keyedLeaseText(o.Lease)
	if err != nil {
		return nil, err
	}
	wait, err := keyedWaitText(o.Wait)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &keyedRequest{op: 'A', slot: "A " + name, key: name, start: time.Now(), lease: lease, wait: o.Wait,
		waitText: wait, done: make(chan keyedResult, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClientClosed
	}
	r.triesLeft = len(c.conns)
	if o.Wait > 0 {
		// One deadline for the whole acquire, however often it moves to another connection.
		r.deadline = time.AfterFunc(o.Wait+acquireMargin(o.Wait), func() { c.acquireDue(r) })
	}
	c.sendAcquireLocked(r, nil, "")
	if c.started != nil {
		c.started()
	}
	c.mu.Unlock()

	select {
	case res := <-r.done:
		return res.grant, res.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	if !r.settled {
		r.settled, r.cancelled = true, true
		if r.parked != nil {
			r.parked.Stop()
			delete(c.parked, r)
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	// Settled as ctx ended: a grant that came is let go, so the caller holds nothing.
	if res := <-r.done; res.grant != nil {
		c.mu.Lock()
		c.releaseLocked(res.grant.key, res.grant.token, res.grant.via)
		c.mu.Unlock()
	}
	return nil, ctx.Err()
}

// TryAcquire takes the lock only if it is free now. On the wire it is an acquire with a 1 ms
// wait (`A <name> <lease> 0.001`; the protocol's 0 means forever), so a lock held by someone
// else fails with ErrTimeout, like a wait that ran out.
func (c *KeyedClient) TryAcquire(ctx context.Context, name string, lease time.Duration) (*Grant, error) {
	return c.Acquire(ctx, name, AcquireOptions{Lease: lease, Wait: time.Millisecond})
}

// Close fails every request in flight with ErrClientClosed, closes the connections and waits
// for the client's goroutines to end. Grants still held are not released (their leases end
// them). Safe to call more than once.
func (c *KeyedClient) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for r := range c.parked {
		c.settleLocked(r, nil, ErrClientClosed)
	}
	for r := range c.retrying {
		c.settleLocked(r, nil, ErrClientClosed)
	}
	c.parked, c.retrying = map[*keyedRequest]string{}, map[*keyedRequest]struct{}{}
	for _, k := range c.conns {
		k.state = stateClosed
		if link := k.link; link != nil {
			c.failLocked(link.takeAll(), ErrClientClosed)
			link.cancel()
			if link.sock != nil {
				link.sock.Close()
			}
		}
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// sleep waits d, or until Close; false when closed.
func (c *KeyedClient) sleep(d time.Duration) bool {
	if d <= 0 {
		return c.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// settleLocked gives r its result, once; timers of r are stopped.
func (c *KeyedClient) settleLocked(r *keyedRequest, g *Grant, err error) {
	if r.settled {
		return
	}
	r.settled = true
	stopTimer(r.deadline)
	stopTimer(r.attempt)
	stopTimer(r.retry)
	stopTimer(r.parked)
	r.done <- keyedResult{grant: g, err: err}
}

func (c *KeyedClient) failLocked(requests []*keyedRequest, err error) {
	for _, r := range requests {
		c.settleLocked(r, nil, err)
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}
