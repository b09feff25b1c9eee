package baton

// The session client against a real three-node cluster: a failover by kill -9 of the active,
// and a planned handoff (SIGTERM of the active), with claims held.

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func sessionAddrs(c *batontest.Cluster) []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.SessionAddr)
	}
	return out
}

// newActive waits until the running nodes agree on an active node other than old.
func newActive(t *testing.T, c *batontest.Cluster, old string) *batontest.ClusterNode {
	t.Helper()
	var id string
	if !eventually(20*time.Second, func() bool { id = c.Active(); return id != "" && id != old }) {
		t.Fatalf("no new active node after %s went\n%s", old, c.Logs())
	}
	return c.Node(id)
}

func holdOrFail(t *testing.T, c *SessionClient, name string, lease time.Duration) *Claim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	claim, err := c.Hold(ctx, name, HoldOptions{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	return claim
}

func TestSessionFailoverLosesASeedClaimAndResumesAResumableOne(t *testing.T) {
	cluster := batontest.StartCluster(t, 3)
	seed := newTestSessionClient(t, Options{Addresses: sessionAddrs(cluster)})
	resumable := newTestSessionClient(t, Options{Addresses: sessionAddrs(cluster), Resumable: true})
	lease := 10 * time.Second
	seedClaim := holdOrFail(t, seed, "seed-lock", lease)
	claim := holdOrFail(t, resumable, "resumable-lock", lease)
	token := claim.Token()
	time.Sleep(500 * time.Millisecond) // let the claims replicate to the standbys

	cluster.Kill9("a")
	select {
	case <-seedClaim.Done():
		if !errors.Is(seedClaim.Err(), ErrLost) {
			t.Fatalf("seed claim: %v", seedClaim.Err())
		}
	case <-time.After(lease):
		t.Fatal("the seed claim's Done stayed open after its node died")
	}
	active := newActive(t, cluster, "a")
	if !eventually(10*time.Second, func() bool {
		v := lockOn(t, active.HTTPAddr, "resumable-lock")
		return v.Holder != nil && v.Holder.Token == strconv.FormatUint(token, 10)
	}) {
		t.Fatalf("the new active %s does not show the resumed claim with token %d\n%s", active.ID, token, cluster.Logs())
	}
	// Resumed, connected and heartbeating on the new active: still confirmed a while later.
	time.Sleep(2 * time.Second)
	select {
	case <-claim.Done():
		t.Fatalf("the resumable claim was lost: %v", claim.Err())
	default:
	}
	if claim.Token() != token {
		t.Fatal("the token changed")
	}
	if err := claim.Release(); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return lockOn(t, active.HTTPAddr, "resumable-lock").Holder == nil }) {
		t.Fatal("Release did not free the lock on the new active")
	}
}

func TestSessionPlannedHandoffMovesAResumableClaim(t *testing.T) {
	cluster := batontest.StartCluster(t, 3)
	c := newTestSessionClient(t, Options{Addresses: sessionAddrs(cluster), Resumable: true})
	claim := holdOrFail(t, c, "moving", 6*time.Second)
	token := claim.Token()
	time.Sleep(500 * time.Millisecond)

	termed := make(chan error, 1)
	go func() { termed <- cluster.Term("a") }()
	active := newActive(t, cluster, "a")
	if !eventually(10*time.Second, func() bool {
		v := lockOn(t, active.HTTPAddr, "moving")
		return v.Holder != nil && v.Holder.Token == strconv.FormatUint(token, 10)
	}) {
		t.Fatalf("the successor %s does not show the claim with token %d\n%s", active.ID, token, cluster.Logs())
	}
	time.Sleep(2 * time.Second)
	select {
	case <-claim.Done():
		t.Fatalf("Done closed across a planned handoff: %v", claim.Err())
	default:
	}
	if claim.moves.Load() == 0 {
		t.Fatal("the claim never saw MOVED")
	}
	if err := <-termed; err != nil {
		t.Fatalf("stopping the old active: %v", err)
	}
	if err := claim.Release(); err != nil {
		t.Fatal(err)
	}
}
