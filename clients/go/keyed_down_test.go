package baton

import (
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

// deadAddress is a 127.0.0.1 port nothing listens on (probed free, then closed).
func deadAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// An address that is down is left out: requests go to the one that is up.
func TestKeyedDownAddressIsLeftOut(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, deadAddress(t), n.LockAddr)
	ctx := ctxFor(t, 20*time.Second)
	for i := 0; i < 3; i++ {
		g, err := c.Acquire(ctx, "go/down", AcquireOptions{Lease: 30 * time.Second, Wait: 5 * time.Second})
		if err != nil {
			t.Fatalf("acquire %d with one address down: %v", i, err)
		}
		if err := g.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// With no server at all, an acquire fails with ErrConnectionLost after trying every
// connection, in bounded time; it does not hang.
func TestKeyedNoServerFailsWithConnectionLost(t *testing.T) {
	c, err := NewKeyedClient(Options{Addresses: []string{deadAddress(t)}, NoIdentity: true, ReconnectInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Acquire(ctxFor(t, 20*time.Second), "go/none", AcquireOptions{Lease: time.Second})
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("got %v, want ErrConnectionLost", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("failed only after %v", took)
	}
}

// A daemon that dies under a waiting acquire: the acquire moves on, and fails with
// ErrConnectionLost once every connection dropped under it.
func TestKeyedServerDeathFailsWaitingAcquire(t *testing.T) {
	n := batontest.StartNode(t)
	c, err := NewKeyedClient(Options{Addresses: []string{n.LockAddr}, NoIdentity: true, ReconnectInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxFor(t, 30*time.Second)
	if _, err := c.Acquire(ctx, "go/die", AcquireOptions{Lease: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, "go/die", AcquireOptions{Lease: 30 * time.Second})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	n.Kill9()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("got %v, want ErrConnectionLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting acquire did not end after its server died")
	}
}

// Close leaves no goroutine of the client behind (connections, writers), also with requests
// in flight and an address that is down.
func TestKeyedCloseLeavesNoGoroutineBehind(t *testing.T) {
	n := batontest.StartNode(t)
	before := runtime.NumGoroutine()
	c, err := NewKeyedClient(Options{Addresses: []string{n.LockAddr, deadAddress(t)}, Identity: "leak-check"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, 20*time.Second)
	g, err := c.Acquire(ctx, "go/leak", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Acquire(ctx, "go/leak", AcquireOptions{Lease: 30 * time.Second}) }()
	_ = g
	time.Sleep(100 * time.Millisecond)
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
