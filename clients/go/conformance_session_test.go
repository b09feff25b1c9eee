package baton

// The session steps of the conformance kit (conformance/README.md, "The client steps"), played
// with a SessionClient through the runner's hook (conformance_test.go states the contract: the
// runner plays sleep_ms and await; this file plays hold, release, await_lost, not_lost and
// close_client). Durations in steps are milliseconds.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

func init() { sessionConformanceStep = sessionStep }

// sessionStep plays one step of a session vector.
func sessionStep(t *testing.T, step map[string]any, ctx *conformanceContext) error {
	client, _ := ctx.State.(*SessionClient)
	if client == nil {
		if step["close_client"] != nil {
			return nil // nothing was started
		}
		c, err := NewSessionClient(sessionConformanceOptions(ctx))
		if err != nil {
			return err
		}
		t.Cleanup(func() { c.Close() })
		ctx.State, client = c, c
	}
	switch {
	case step["close_client"] != nil:
		return client.Close()
	case step["call"] == "hold":
		return startHold(step, ctx, client)
	case step["call"] == "release":
		claim, err := heldClaim(ctx, step["of"])
		if err != nil {
			return err
		}
		call := newConformanceCall()
		ctx.Calls[stepText(step, "id")] = call
		go func() {
			claim.Release() // the claim is closed, whether or not it had been lost before
			call.finish(nil, map[string]any{"released": true})
		}()
	case step["await_lost"] != nil:
		claim, err := heldClaim(ctx, step["await_lost"])
		if err != nil {
			return err
		}
		within := millis(step["within_ms"])
		select {
		case <-claim.Done():
		case <-time.After(within):
			return fmt.Errorf("not lost within %v", within)
		}
		if want, ok := step["code"].(string); ok {
			if got := lostCode(claim.Err()); got != want {
				return fmt.Errorf("lost with %s (%v)", got, claim.Err())
			}
		}
	case step["not_lost"] != nil:
		claim, err := heldClaim(ctx, step["not_lost"])
		if err != nil {
			return err
		}
		select {
		case <-claim.Done():
			return fmt.Errorf("lost: %v", claim.Err())
		case <-time.After(millis(step["for_ms"])):
		}
	default:
		return errors.New("not a session step")
	}
	return nil
}

// startHold starts a Hold and returns at once; the call finishes with the claim or the error.
func startHold(step map[string]any, ctx *conformanceContext, client *SessionClient) error {
	name := stepText(step, "name")
	opts := HoldOptions{Lease: millis(step["lease_ms"]), Wait: millis(step["wait_ms"])}
	call := newConformanceCall()
	ctx.Calls[stepText(step, "id")] = call
	go func() {
		claim, err := client.Hold(context.Background(), name, opts)
		if err != nil {
			call.finish(nil, outcomeOfError(err))
			return
		}
		call.finish(claim, map[string]any{"granted": strconv.FormatUint(claim.Token(), 10)})
	}()
	return nil
}

// heldClaim is the claim that the hold step `of` got, or why there is none.
func heldClaim(ctx *conformanceContext, of any) (*Claim, error) {
	id, _ := of.(string)
	call := ctx.Calls[id]
	if call == nil {
		return nil, fmt.Errorf("no call %q", id)
	}
	select {
	case <-call.Done():
	default:
		return nil, fmt.Errorf("%s has not finished", id)
	}
	claim, _ := call.Result.(*Claim)
	if claim == nil {
		return nil, fmt.Errorf("%s holds nothing (%v)", id, call.Outcome)
	}
	return claim, nil
}

func sessionConformanceOptions(ctx *conformanceContext) Options {
	o := Options{Addresses: ctx.Addresses}
	if identity, ok := ctx.Options["identity"].(string); ok {
		o.Identity = identity
	} else {
		o.NoIdentity = true // null or absent: the seed protocol's bytes
	}
	o.Resumable, _ = ctx.Options["resumable"].(bool)
	o.MinHeartbeatInterval = millis(ctx.Options["min_heartbeat_interval_ms"])
	o.MaxPark = millis(ctx.Options["max_park_ms"])
	o.DialTimeout = millis(ctx.Options["connect_timeout_ms"])
	return o
}

func stepText(step map[string]any, key string) string {
	s, _ := step[key].(string)
	return s
}

// lostCode is the shared error name a lost claim carries.
func lostCode(err error) string {
	var lost *lostError
	if errors.As(err, &lost) {
		return lost.reason.Code
	}
	return fmt.Sprint(err)
}
