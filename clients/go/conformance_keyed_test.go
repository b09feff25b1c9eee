package baton

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// keyedConformanceStep plays one step of a keyed vector with a KeyedClient.
func keyedConformanceStep(t *testing.T, step map[string]any, ctx *conformanceContext) error {
	client, _ := ctx.State.(*KeyedClient)
	if client == nil {
		if step["close_client"] != nil {
			return nil
		}
		c, err := NewKeyedClient(keyedConformanceOptions(ctx))
		if err != nil {
			return err
		}
		started := make(chan struct{}, 64)
		c.mu.Lock()
		c.started = func() {
			select {
			case started <- struct{}{}:
			default: // never block the client (it holds its lock here)
			}
		}
		c.mu.Unlock()
		ctx.State, client = c, c
		keyedStarted = started
		t.Cleanup(func() { c.Close() })
	}
	if step["close_client"] != nil {
		return client.Close()
	}
	id, _ := step["id"].(string)
	name, _ := step["name"].(string)
	call := newConformanceCall()
	switch step["call"] {
	case "acquire", "try_acquire":
		lease, wait := millis(step["lease_ms"]), millis(step["wait_ms"])
		try := step["call"] == "try_acquire"
		go func() {
			var g *Grant
			var err error
			if try {
				g, err = client.TryAcquire(context.Background(), name, lease)
			} else {
				g, err = client.Acquire(context.Background(), name, AcquireOptions{Lease: lease, Wait: wait})
			}
			if err != nil {
				call.finish(nil, outcomeOfError(err))
				return
			}
			call.finish(g, map[string]any{"granted": strconv.FormatUint(g.Token(), 10)})
		}()
	case "release":
		of, _ := step["of"].(string)
		var g *Grant
		if c := ctx.Calls[of]; c != nil {
			select {
			case <-c.Done():
				g, _ = c.Result.(*Grant)
			default:
			}
		}
		if g == nil {
			return fmt.Errorf("release of %s, which holds nothing", of)
		}
		go func() {
			err := g.Release(context.Background())
			switch {
			case err == nil:
				call.finish(nil, map[string]any{"released": true})
			case errors.Is(err, ErrStale):
				call.finish(nil, map[string]any{"released": false})
			default:
				call.finish(nil, outcomeOfError(err))
			}
		}()
	default:
		return fmt.Errorf("not a keyed step")
	}
	ctx.Calls[id] = call
	// The Go API blocks; the vector's next step must come after this call went out.
	select {
	case <-keyedStarted:
	case <-time.After(5 * time.Second):
		return errors.New("the call did not start within 5 s")
	}
	return nil
}

// keyedStarted receives once per request the client under test has started (KeyedClient.started).
var keyedStarted chan struct{}

func keyedConformanceOptions(ctx *conformanceContext) Options {
	o := Options{Addresses: ctx.Addresses}
	if identity, ok := ctx.Options["identity"].(string); ok {
		o.Identity = identity
	} else {
		o.NoIdentity = true // null or absent: the seed protocol's bytes
	}
	o.ReleaseRetryFor = millis(ctx.Options["release_retry_for_ms"])
	o.ReleaseRetryInterval = millis(ctx.Options["release_retry_interval_ms"])
	o.ReconnectInterval = millis(ctx.Options["reconnect_interval_ms"])
	o.DialTimeout = millis(ctx.Options["connect_timeout_ms"])
	return o
}
