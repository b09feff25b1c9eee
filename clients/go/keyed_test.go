package baton

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func newTestClient(t *testing.T, addrs ...string) *KeyedClient {
	t.Helper()
	c, err := NewKeyedClient(Options{Addresses: addrs, Identity: "go-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestKeyedGrantReleaseAndStale(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 20*time.Second)
	g, err := c.Acquire(ctx, "go/a", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "go/a" || g.Token() != 1 {
		t.Fatalf("grant %v", g)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatalf("a second Release returns the first outcome, got %v", err)
	}
	// A lease that ran out: the release is stale.
	g2, err := c.Acquire(ctx, "go/a", AcquireOptions{Lease: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := g2.Release(ctx); !errors.Is(err, ErrStale) {
		t.Fatalf("release after the lease: %v, want ErrStale", err)
	}
}

func TestKeyedFIFOHandoverTimeoutAndTry(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 20*time.Second)
	first, err := c.Acquire(ctx, "go/q", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquire(ctx, "go/q", 30*time.Second); !errors.Is(err, ErrTimeout) {
		t.Fatalf("TryAcquire of a held lock: %v, want ErrTimeout", err)
	}
	if _, err := c.Acquire(ctx, "go/q", AcquireOptions{Lease: 30 * time.Second, Wait: 200 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a wait that ran out: %v, want ErrTimeout", err)
	}
	got := make(chan *Grant, 2)
	for i := 0; i < 2; i++ {
		go func() {
			g, err := c.Acquire(ctx, "go/q", AcquireOptions{Lease: 30 * time.Second})
			if err != nil {
				t.Error(err)
			}
			got <- g
		}()
		time.Sleep(100 * time.Millisecond) // queue in this order
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second.Token() <= first.Token() {
		t.Fatalf("tokens out of order: %d then %d", first.Token(), second.Token())
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	third := <-got
	if third.Token() <= second.Token() {
		t.Fatalf("tokens out of order: %d then %d", second.Token(), third.Token())
	}
	if err := third.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := c.TryAcquire(ctx, "go/q", 30*time.Second)
	if err != nil {
		t.Fatalf("TryAcquire of a free lock: %v", err)
	}
	_ = g.Release(ctx)
}
