package baton

// A claim's goroutines and connections all end with it; heartbeats keep a short lease alive.

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func TestSessionHeartbeatsKeepAShortLeaseAlive(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	claim, err := c.Hold(context.Background(), "short", HoldOptions{Lease: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-claim.Done():
		t.Fatalf("lost while heartbeating: %v", claim.Err())
	case <-time.After(2 * time.Second): // five leases
	}
	if v := lockOn(t, node.HTTPAddr, "short"); v.Holder == nil {
		t.Fatal("the server no longer shows the holder")
	}
	claim.Release()
}

func TestSessionLeavesNoGoroutineBehind(t *testing.T) {
	node := batontest.StartNode(t)
	lockOn(t, node.HTTPAddr, "warm-up") // the ops API's keep-alive connection counts in the baseline
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()

	c, err := NewSessionClient(Options{Addresses: []string{node.SessionAddr}, NoIdentity: true})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := c.Hold(context.Background(), "g", HoldOptions{Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = holder.Context(context.Background())
	if _, err := c.Hold(context.Background(), "g", HoldOptions{Lease: time.Second, Wait: 100 * time.Millisecond}); err == nil {
		t.Fatal("a busy lock was granted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	c.Hold(ctx, "g", HoldOptions{Lease: time.Second})
	cancel()
	waiter := make(chan error, 1)
	go func() {
		_, err := c.Hold(context.Background(), "g", HoldOptions{Lease: time.Second})
		waiter <- err
	}()
	time.Sleep(100 * time.Millisecond)
	c.Close()
	<-waiter

	if !eventually(3*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
