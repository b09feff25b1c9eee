package baton

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func TestKeyedSessionClaimIsRefused(t *testing.T) {
	n := batontest.StartNode(t)
	// A session takes the lock on a raw socket and keeps it open.
	s, err := net.Dial("tcp", n.SessionAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(s, "ACQUIRE go/s 30000\n")
	line, err := bufio.NewReader(s).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ACQUIRED ") {
		t.Fatalf("session: %q %v", line, err)
	}
	token, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "ACQUIRED ")), 10, 64)
	c := newTestClient(t, n.LockAddr)
	err = c.Release(ctxFor(t, 10*time.Second), "go/s", token)
	if !errors.Is(err, ErrSessionClaim) {
		t.Fatalf("release of a session's token: %v, want ErrSessionClaim", err)
	}
}

func TestKeyedRefusesBadInputBeforeSending(t *testing.T) {
	c, err := NewKeyedClient(Options{Addresses: []string{"127.0.0.1:1"}, NoIdentity: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxFor(t, 5*time.Second)
	for _, name := range []string{"", "a b", "a\u00a0b", strings.Repeat("x", 251), "a\xff"} {
		if _, err := c.Acquire(ctx, name, AcquireOptions{Lease: time.Second}); !errors.Is(err, ErrBadKey) {
			t.Errorf("Acquire(%q): %v, want ErrBadKey", name, err)
		}
	}
	if _, err := c.Acquire(ctx, "ok", AcquireOptions{}); !errors.Is(err, ErrBadLease) {
		t.Errorf("no lease: %v", err)
	}
	if _, err := c.Acquire(ctx, "ok", AcquireOptions{Lease: time.Second, Wait: -1}); !errors.Is(err, ErrBadWait) {
		t.Errorf("negative wait: %v", err)
	}
	if _, err := NewKeyedClient(Options{Identity: "bad\tname"}); !errors.Is(err, ErrBadIdentity) {
		t.Errorf("bad identity: %v", err)
	}
	if _, err := NewKeyedClient(Options{Addresses: []string{"host:notaport"}}); !errors.Is(err, ErrBadUsage) {
		t.Errorf("bad address: %v", err)
	}
}

func TestKeyedTokenAbove2To53IsExact(t *testing.T) {
	n := batontest.StartNode(t, "--token-floor", "9007199254740993")
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 10*time.Second)
	g, err := c.Acquire(ctx, "go/big", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if g.Token() <= 9007199254740993 || g.Token() > 9007199254740993+1000 {
		t.Fatalf("token %d, want just above 9007199254740993", g.Token())
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestKeyedManyGoroutinesPipeline(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 60*time.Second)
	const workers, rounds = 32, 20
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				// Half the workers share a few keys (queues, handovers), half have their own.
				key := fmt.Sprintf("go/p/%d", w%4)
				if w%2 == 1 {
					key = fmt.Sprintf("go/own/%d", w)
				}
				g, err := c.Acquire(ctx, key, AcquireOptions{Lease: 30 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[g.Token()] {
					t.Errorf("token %d granted twice", g.Token())
				}
				seen[g.Token()] = true
				mu.Unlock()
				if err := g.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if len(seen) != workers*rounds {
		t.Fatalf("%d grants, want %d", len(seen), workers*rounds)
	}
}

func TestKeyedCancelledAcquireNeverStrands(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 20*time.Second)
	holder, err := c.Acquire(ctx, "go/c", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A waiter gives up; the grant it would get when the holder releases must not stay held.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(cctx, "go/c", AcquireOptions{Lease: 30 * time.Second})
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire: %v", err)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The lock is free again within a moment: someone else gets it (a short wait, not its 30 s lease).
	other := newTestClient(t, n.LockAddr)
	g, err := other.Acquire(ctx, "go/c", AcquireOptions{Lease: 30 * time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatalf("the lock stayed stranded: %v", err)
	}
	if g.Token() != holder.Token()+2 {
		t.Fatalf("token %d, want %d (the cancelled waiter's grant released in between)", g.Token(), holder.Token()+2)
	}
	_ = g.Release(ctx)
	// An already-cancelled context sends nothing.
	done, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := c.Acquire(done, "go/c", AcquireOptions{Lease: time.Second}); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with a done context: %v", err)
	}
}

func TestKeyedCloseFailsPendingAndLaterCalls(t *testing.T) {
	n := batontest.StartNode(t)
	c := newTestClient(t, n.LockAddr)
	ctx := ctxFor(t, 20*time.Second)
	g, err := c.Acquire(ctx, "go/close", AcquireOptions{Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, "go/close", AcquireOptions{Lease: 30 * time.Second})
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("pending acquire at Close: %v", err)
	}
	if _, err := c.Acquire(ctx, "go/x", AcquireOptions{Lease: time.Second}); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("acquire after Close: %v", err)
	}
	if err := g.Release(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("release after Close: %v", err)
	}
}
