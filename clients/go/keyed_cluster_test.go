package baton

import (
	"errors"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

// A three-node cluster: a client given only a standby's address follows its `M` to the active
// node; kill -9 of the active leaves a held grant valid on the new active, released there with
// the same token.
func TestKeyedClusterRedirectAndFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	cluster := batontest.StartCluster(t, 3)
	ctx := ctxFor(t, 60*time.Second)

	// Only standby c's address: every request is redirected to a.
	viaStandby := newTestClient(t, cluster.Node("c").LockAddr)
	g, err := viaStandby.Acquire(ctx, "go/m", AcquireOptions{Lease: 30 * time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatalf("acquire through a standby: %v\n%s", err, cluster.Logs())
	}
	if err := g.Release(ctx); err != nil {
		t.Fatalf("release through a standby: %v", err)
	}

	c := newTestClient(t, cluster.LockAddrs()...)
	held, err := c.Acquire(ctx, "go/f", AcquireOptions{Lease: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cluster.Kill9("a")
	if err := cluster.WaitActive("b", 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, cluster.Logs())
	}
	// b took over the lock with its token: a release there with that token is OK, not STALE.
	if err := held.Release(ctx); err != nil {
		t.Fatalf("release of token %d on the new active: %v\n%s", held.Token(), err, cluster.Logs())
	}
	// And the client goes on taking locks there; tokens keep rising across the failover.
	next, err := c.Acquire(ctx, "go/f", AcquireOptions{Lease: 30 * time.Second, Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("acquire after the failover: %v", err)
	}
	if next.Token() <= held.Token() {
		t.Fatalf("token %d after the failover is not above %d", next.Token(), held.Token())
	}
	if err := next.Release(ctx); err != nil && !errors.Is(err, ErrStale) {
		t.Fatal(err)
	}
}
