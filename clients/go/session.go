package baton

// The session-protocol client: one TCP connection is one claim on one lock, kept alive by
// heartbeats, pushed its ACQUIRED when the lock reaches it, and lost the moment the client can
// no longer vouch for it. Hold finds a server that will hold the claim (following REDIRECTs,
// moving down the address list when a server goes away) and returns the held Claim; each claim
// runs on its own goroutine (session_run.go). The TypeScript twin is lib/client/session-client.ts.

import (
	"context"
	"sync"
	"time"
)

// HoldOptions are the lease and the wait of one claim.
type HoldOptions struct {
	// Lease: the server frees the lock after this long without hearing from the client (whole
	// milliseconds on the wire, rounded up; at least 1 ms). Heartbeats keep it alive.
	Lease time.Duration
	// Wait: give up with ErrTimeout when not holding within this long. 0 waits forever.
	Wait time.Duration
}

// Defaults of the session options (options.go).
const (
	defaultMinHeartbeatInterval = 50 * time.Millisecond
	defaultMaxPark              = 60 * time.Second
	defaultReconnectFor         = 5 * time.Second
	defaultSessionDialTimeout   = 3 * time.Second
	// maxLeaseMs: the wire's lease_ms has at most 15 digits.
	maxLeaseMs = 999_999_999_999_999
)

// SessionClient takes session claims. It is safe for use from many goroutines; Close ends every
// claim it holds or waits for.
type SessionClient struct {
	addresses            []string
	identity             string // "" sends no CLIENT line
	resumable            bool
	maxPark              time.Duration
	minHeartbeatInterval time.Duration
	reconnectFor         time.Duration
	dialTimeout          time.Duration
	clock                clock

	mu        sync.Mutex
	preferred int // where the last claim succeeded; the next one starts there
	closed    bool
	closing   chan struct{} // closed by Close: every claim's run ends
	runs      sync.WaitGroup
}

// NewSessionClient checks the options (a bad identity is ErrBadIdentity, an unreadable address
// an *Error too) and makes a client; a duration option of 0 or less takes its default, as for
// the KeyedClient. It connects nothing until Hold.
func NewSessionClient(opts Options) (*SessionClient, error) {
	addresses, err := normalizeAddresses(opts.Addresses, DefaultSessionPort)
	if err != nil {
		return nil, err
	}
	identity, _, err := resolveIdentity(opts)
	if err != nil {
		return nil, err
	}
	return &SessionClient{
		addresses:            addresses,
		identity:             identity,
		resumable:            opts.Resumable,
		maxPark:              orDefault(opts.MaxPark, defaultMaxPark),
		minHeartbeatInterval: orDefault(opts.MinHeartbeatInterval, defaultMinHeartbeatInterval),
		reconnectFor:         orDefault(opts.ReconnectFor, defaultReconnectFor),
		dialTimeout:          orDefault(opts.DialTimeout, defaultSessionDialTimeout),
		clock:                systemClock{},
		closing:              make(chan struct{}),
	}, nil
}

// Hold waits until name is held and returns the claim; the caller must Release it (or Close
// the client). ctx and opts.Wait bound only the wait: when either ends it first, Hold returns
// ctx.Err() or an error matching ErrTimeout, and nothing is held or queued (the connection is
// closed). Once Hold has returned a claim, watch claim.Done() (or claim.Context) and stop the
// guarded work when it closes.
func (c *SessionClient) Hold(ctx context.Context, name string, opts HoldOptions) (*Claim, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := checkKey(name); err != nil {
		return nil, err
	}
	leaseMs, err := sessionMillis(opts.Lease)
	if err != nil {
		return nil, err
	}
	if leaseMs > maxLeaseMs {
		return nil, newError("bad-lease", "Lease is longer than 15 digits of milliseconds")
	}
	if opts.Wait < 0 {
		return nil, newError("bad-wait", "Wait must be >= 0 (0 waits forever)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err // cancelled already: not even a connection
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, newError("client-closed", "")
	}
	c.runs.Add(1)
	start := c.preferred
	c.mu.Unlock()

	r := newClaimRun(c, ctx, name, leaseMs, opts.Wait, start)
	go func() {
		defer c.runs.Done()
		r.run()
	}()
	if err := <-r.ready; err != nil {
		return nil, err
	}
	return r.claim, nil
}

// Close ends every claim of this client: held ones are released (their Done closes with
// ErrClientClosed as the reason), waiting Holds return ErrClientClosed. It returns when every
// connection is closed. Safe to call more than once.
func (c *SessionClient) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.closing)
	}
	c.mu.Unlock()
	c.runs.Wait()
	return nil
}

// holdSucceededAt remembers where a claim was taken: the next claim starts there.
func (c *SessionClient) holdSucceededAt(index int) {
	c.mu.Lock()
	c.preferred = index
	c.mu.Unlock()
}
