package baton

// The session client against a real single `baton serve` (internal/batontest).

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func TestSessionFIFOHandoverIsPushed(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	ctx := context.Background()
	first, err := c.Hold(ctx, "fifo", HoldOptions{Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Claim, 2)
	holdAsync := func() {
		claim, err := c.Hold(ctx, "fifo", HoldOptions{Lease: 2 * time.Second})
		if err != nil {
			t.Error(err)
		}
		got <- claim
	}
	go holdAsync()
	if !eventually(5*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "fifo").QueueLength == 1 }) {
		t.Fatal("the second claim is not WAITING in the queue")
	}
	go holdAsync()
	if !eventually(5*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "fifo").QueueLength == 2 }) {
		t.Fatal("the third claim is not WAITING in the queue")
	}
	// Waiting longer than a lease: the waiters' heartbeats keep their places.
	time.Sleep(2500 * time.Millisecond)
	if n := lockOn(t, node.HTTPAddr, "fifo").QueueLength; n != 2 {
		t.Fatalf("queue %d after a lease of waiting, want 2", n)
	}
	select {
	case <-first.Done():
		t.Fatalf("the holder lost its claim while heartbeating: %v", first.Err())
	default:
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second == nil || second.Token() <= first.Token() {
		t.Fatalf("second holder: %+v after token %d", second, first.Token())
	}
	if lockOn(t, node.HTTPAddr, "fifo").QueueLength != 1 {
		t.Fatal("the third claim left the queue early")
	}
	second.Release()
	third := <-got
	if third == nil || third.Token() <= second.Token() {
		t.Fatal("the third claim was not pushed the lock")
	}
	third.Release()
	if !errors.Is(third.Err(), ErrLost) || !errors.Is(third.Err(), ErrClientClosed) {
		t.Fatalf("after Release, Err() = %v", third.Err())
	}
}

func TestSessionWaitRunsOutWithNothingQueued(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	holder, err := c.Hold(context.Background(), "busy", HoldOptions{Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	start := time.Now()
	claim, err := c.Hold(context.Background(), "busy", HoldOptions{Lease: 5 * time.Second, Wait: 300 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || claim != nil {
		t.Fatalf("got %v, %v; want ErrTimeout", claim, err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 3*time.Second {
		t.Fatalf("timed out after %v", took)
	}
	if !eventually(2*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "busy").QueueLength == 0 }) {
		t.Fatal("the timed-out claim is still queued")
	}
}

func TestSessionCancelledHoldNeverStrands(t *testing.T) {
	for _, resumable := range []bool{false, true} {
		resumable := resumable
		t.Run("resumable="+strconv.FormatBool(resumable), func(t *testing.T) { cancelledHoldNeverStrands(t, resumable) })
	}
}

// cancelledHoldNeverStrands: a resumable waiter's connection must end with FIN, not a reset,
// or the server would keep its place (and later grant it the lock) for a lease.
func cancelledHoldNeverStrands(t *testing.T, resumable bool) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}, Resumable: resumable})
	holder, err := c.Hold(context.Background(), "cancel", HoldOptions{Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		claim, err := c.Hold(ctx, "cancel", HoldOptions{Lease: 5 * time.Second})
		if claim != nil {
			claim.Release()
		}
		result <- err
	}()
	if !eventually(5*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "cancel").QueueLength == 1 }) {
		t.Fatal("the claim never queued")
	}
	cancel()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Hold returned %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a cancelled Hold did not return")
	}
	if !eventually(2*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "cancel").QueueLength == 0 }) {
		t.Fatal("the cancelled claim is still queued")
	}
	holder.Release()
	// Nobody stranded: the lock is free for the next one at once.
	next, err := c.Hold(context.Background(), "cancel", HoldOptions{Lease: time.Second, Wait: 2 * time.Second})
	if err != nil {
		t.Fatalf("the lock was stranded: %v", err)
	}
	next.Release()
}

func TestSessionForceReleaseClosesDoneWithinOneHeartbeatInterval(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	lease := 4 * time.Second // heartbeat interval at most 1 s
	claim, err := c.Hold(context.Background(), "forced", HoldOptions{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	work := claim.Context(context.Background())
	start := time.Now()
	if err := node.ForceRelease("forced", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-claim.Done():
	case <-time.After(lease / 4):
		t.Fatal("Done not closed within one heartbeat interval of the force-release")
	}
	t.Logf("Done closed %v after the force-release", time.Since(start))
	if err := claim.Err(); !errors.Is(err, ErrLost) || !errors.Is(err, ErrForceReleased) {
		t.Fatalf("Err() = %v, want lost: force-released", err)
	}
	select {
	case <-work.Done():
	case <-time.After(time.Second):
		t.Fatal("the work's context was not cancelled")
	}
	if err := claim.Release(); !errors.Is(err, ErrForceReleased) {
		t.Fatalf("Release after the loss: %v", err)
	}
}

func TestSessionStopsTrustingBy08LeaseWhenHeartbeatsGoUnanswered(t *testing.T) {
	node := batontest.StartNode(t)
	proxy := startStallingProxy(t, node.SessionAddr)
	c := newTestSessionClient(t, Options{Addresses: []string{proxy.Addr()}})
	lease := 1500 * time.Millisecond
	claim, err := c.Hold(context.Background(), "silent", HoldOptions{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease) // heartbeats answered meanwhile
	select {
	case <-claim.Done():
		t.Fatalf("lost while heartbeats were answered: %v", claim.Err())
	default:
	}
	proxy.Stall()
	stalledAt := time.Now()
	select {
	case <-claim.Done():
	case <-time.After(lease):
		t.Fatal("Done still open a full lease after the network went silent")
	}
	// The deadline counts from the last answered send, at most one interval before the stall.
	if took := time.Since(stalledAt); took > time.Duration(0.8*float64(lease))+200*time.Millisecond {
		t.Fatalf("Done closed %v after the stall, later than 0.8 x lease", took)
	}
	if err := claim.Err(); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Err() = %v, want lease-expired", err)
	}
}

func TestSessionShutdownOfTheNodeClosesDone(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}, ReconnectFor: time.Second})
	claim, err := c.Hold(context.Background(), "shutdown", HoldOptions{Lease: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waiterErr := make(chan error, 1)
	go func() {
		_, err := c.Hold(context.Background(), "shutdown", HoldOptions{Lease: 10 * time.Second})
		waiterErr <- err
	}()
	if !eventually(5*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "shutdown").QueueLength == 1 }) {
		t.Fatal("the waiter never queued")
	}
	go node.Term(15 * time.Second)
	select {
	case <-claim.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed at the node's shutdown")
	}
	if err := claim.Err(); !errors.Is(err, ErrServerGoingAway) {
		t.Fatalf("Err() = %v, want server-going-away (0x01)", err)
	}
	// The waiter reconnects at once; with the only node gone it gives up after ReconnectFor.
	select {
	case err := <-waiterErr:
		if err == nil {
			t.Fatal("the waiter got a lock from a node that shut down")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter hangs after its node shut down")
	}
}

func TestSessionTokenAbove2To53IsExact(t *testing.T) {
	node := batontest.StartNode(t, "--token-floor", "9007199254740993")
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}, Identity: "go-test pid 1"})
	claim, err := c.Hold(context.Background(), "big", HoldOptions{Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Release()
	if claim.Token() < 9007199254740993 {
		t.Fatalf("token %d below the floor", claim.Token())
	}
	view := lockOn(t, node.HTTPAddr, "big")
	if view.Holder == nil || view.Holder.Token != strconv.FormatUint(claim.Token(), 10) {
		t.Fatalf("the server says holder %+v, the client token %d", view.Holder, claim.Token())
	}
	if view.Holder.ClientName == nil || *view.Holder.ClientName != "go-test pid 1" {
		t.Fatalf("identity not sent with the ACQUIRE: %v", view.Holder.ClientName)
	}
}

func TestSessionClientCloseReleasesAndFailsWaiters(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	claim, err := c.Hold(context.Background(), "closing", HoldOptions{Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waiter := make(chan error, 1)
	go func() {
		_, err := c.Hold(context.Background(), "closing", HoldOptions{Lease: 5 * time.Second})
		waiter <- err
	}()
	if !eventually(5*time.Second, func() bool { return lockOn(t, node.HTTPAddr, "closing").QueueLength == 1 }) {
		t.Fatal("the waiter never queued")
	}
	c.Close()
	if !errors.Is(claim.Err(), ErrClientClosed) {
		t.Fatalf("held claim after Close: %v", claim.Err())
	}
	if err := <-waiter; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("waiting Hold after Close: %v", err)
	}
	if _, err := c.Hold(context.Background(), "closing", HoldOptions{Lease: time.Second}); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Hold after Close: %v", err)
	}
	v := lockOn(t, node.HTTPAddr, "closing")
	if v.Holder != nil || v.QueueLength != 0 {
		t.Fatalf("left on the server after Close: %+v", v)
	}
}

func TestSessionHoldRefusesBadArguments(t *testing.T) {
	c := newTestSessionClient(t, Options{Addresses: []string{"127.0.0.1:1"}})
	if _, err := c.Hold(context.Background(), "bad key", HoldOptions{Lease: time.Second}); !errors.Is(err, ErrBadKey) {
		t.Errorf("bad key: %v", err)
	}
	if _, err := c.Hold(context.Background(), "k", HoldOptions{}); !errors.Is(err, ErrBadLease) {
		t.Errorf("no lease: %v", err)
	}
	if _, err := c.Hold(context.Background(), "k", HoldOptions{Lease: time.Second, Wait: -1}); !errors.Is(err, ErrBadWait) {
		t.Errorf("negative wait: %v", err)
	}
	if _, err := NewSessionClient(Options{Identity: " bad"}); !errors.Is(err, ErrBadIdentity) {
		t.Errorf("bad identity: %v", err)
	}
}
