package baton

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

// Many goroutines share one client and one lock: never two holders at once, every token larger
// than the one before it.
func TestSessionOneClientManyGoroutinesExcludeEachOther(t *testing.T) {
	node := batontest.StartNode(t)
	c := newTestSessionClient(t, Options{Addresses: []string{node.SessionAddr}})
	var inside int32
	var mu sync.Mutex
	var last uint64
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				claim, err := c.Hold(ctx, "shared", HoldOptions{Lease: 2 * time.Second})
				cancel()
				if err != nil {
					t.Error(err)
					return
				}
				if atomic.AddInt32(&inside, 1) != 1 {
					t.Error("two holders at once")
				}
				mu.Lock()
				if claim.Token() <= last {
					t.Errorf("token %d after %d", claim.Token(), last)
				}
				last = claim.Token()
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				atomic.AddInt32(&inside, -1)
				if err := claim.Release(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
