package baton

// A held session claim, as the caller sees it. Its run loop (session_run.go) owns everything
// else; the fields here are written once, before done closes or before Hold returns, so reading
// them after that needs no lock.

import (
	"context"
	"sync"
	"sync/atomic"
)

// Claim is one held session lock. Stop touching the protected resource the moment Done closes.
type Claim struct {
	name  string
	token uint64

	done chan struct{}
	err  error // set before done closes
	// releasedByHolder: done closed because of Release or Close, not a loss before it.
	releasedByHolder bool

	// moves counts the MOVED lines followed (planned handoffs survived), for tests and stats.
	moves atomic.Int32

	releaseOnce sync.Once
	releaseReq  chan struct{}
	finished    chan struct{} // closed when the claim's connections are all closed
}

func newClaim(name string) *Claim {
	return &Claim{name: name, done: make(chan struct{}), releaseReq: make(chan struct{}), finished: make(chan struct{})}
}

// Name is the lock's name.
func (c *Claim) Name() string { return c.name }

// Token is the claim's fencing token (a u64, exact above 2^53). Send it with every write to the
// protected resource.
func (c *Claim) Token() uint64 { return c.token }

// Done is closed the moment ownership is lost or can no longer be confirmed: 0.8 x the lease
// without an answer from the server, any ERROR (a force-release, a shutdown), a REDIRECT while
// holding, a dropped connection that cannot be resumed, Release or Close.
func (c *Claim) Done() <-chan struct{} { return c.done }

// Err is nil while Done is open; then an error for which errors.Is(err, ErrLost) holds, and
// errors.Is with the reason too (ErrForceReleased, ErrLeaseExpired, ErrServerGoingAway,
// ErrConnectionLost, ErrProtocol, ErrClientClosed after Release or Close, ...).
func (c *Claim) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Release ends the claim: the connection is closed (FIN), so the server hands the lock to the
// next waiter at once. It returns when the connection is closed. nil when the claim was still
// held; Err() when it had been lost before. Safe to call more than once and from any goroutine.
func (c *Claim) Release() error {
	c.releaseOnce.Do(func() { close(c.releaseReq) })
	<-c.finished
	if c.releasedByHolder {
		return nil
	}
	return c.err
}

// Context returns a context derived from parent that is cancelled the moment Done closes: give
// it to the guarded work, and the work stops when confirmation stops (as the Go reference
// client does). Its Err() is context.Canceled; Claim.Err() says why.
func (c *Claim) Context(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx
}
