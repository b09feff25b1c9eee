package baton

// The session steps of the conformance kit (conformance/README.md, "The client steps"): the
// runner (conformance_test.go) calls sessionConformanceStep for each step of a session vector,
// and this file drives a SessionClient through it. Durations in steps are milliseconds.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// sessionCall is one started call (hold or release): its outcome once finished.
type sessionCall struct {
	done    chan struct{}
	outcome map[string]any
	claim   *Claim // a hold that got its claim
}

// sessionVectorState is what one vector's session steps share: the client and the calls.
type sessionVectorState struct {
	mu     sync.Mutex
	client *SessionClient
	calls  map[string]*sessionCall
}

func (s *sessionVectorState) start(id string, run func() (map[string]any, *Claim)) {
	call := &sessionCall{done: make(chan struct{})}
	s.mu.Lock()
	s.calls[id] = call
	s.mu.Unlock()
	go func() {
		defer close(call.done)
		call.outcome, call.claim = run()
	}()
}

func (s *sessionVectorState) call(id string) (*sessionCall, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call, ok := s.calls[id]
	if !ok {
		return nil, fmt.Errorf("no call %q", id)
	}
	return call, nil
}

// heldClaim is the claim a finished hold step got, or an error saying it holds nothing.
func (s *sessionVectorState) heldClaim(id string) (*Claim, error) {
	call, err := s.call(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-call.done:
	default:
		return nil, fmt.Errorf("%s has not finished", id)
	}
	if call.claim == nil {
		return nil, fmt.Errorf("%s holds nothing (%v)", id, call.outcome)
	}
	return call.claim, nil
}

// sessionOutcome is a call's result in the kit's outcome shapes.
func sessionOutcome(err error) map[string]any {
	var baton *Error
	switch {
	case errors.Is(err, ErrTimeout):
		return map[string]any{"timeout": true}
	case errors.As(err, &baton):
		return map[string]any{"error": baton.Code}
	}
	return map[string]any{"error": fmt.Sprintf("not a baton error: %v", err)}
}

// sessionClientOptions turns a vector's client options into Options; addresses are node names
// resolved through nodes.
func sessionClientOptions(options map[string]any, nodes map[string]string) (Options, error) {
	var o Options
	names, _ := options["addresses"].([]any)
	if len(names) == 0 {
		names = []any{"n1"}
	}
	for _, n := range names {
		name, _ := n.(string)
		addr, ok := nodes[name]
		if !ok {
			return o, fmt.Errorf("no node %q", name)
		}
		o.Addresses = append(o.Addresses, addr)
	}
	switch id := options["identity"].(type) {
	case nil:
		o.NoIdentity = true
	case string:
		o.Identity = id
	}
	o.Resumable, _ = options["resumable"].(bool)
	o.MinHeartbeatInterval = msOption(options, "min_heartbeat_interval_ms")
	o.MaxPark = msOption(options, "max_park_ms")
	o.DialTimeout = msOption(options, "connect_timeout_ms")
	return o, nil
}

func msOption(m map[string]any, key string) time.Duration {
	v, _ := m[key].(float64)
	return time.Duration(v * float64(time.Millisecond))
}

func stepString(step map[string]any, key string) string {
	s, _ := step[key].(string)
	return s
}

// runSessionStep runs one client step of a session vector.
func runSessionStep(t *testing.T, s *sessionVectorState, step map[string]any) error {
	switch {
	case step["call"] == "hold":
		id, name := stepString(step, "id"), stepString(step, "name")
		opts := HoldOptions{Lease: msOption(step, "lease_ms"), Wait: msOption(step, "wait_ms")}
		s.start(id, func() (map[string]any, *Claim) {
			claim, err := s.client.Hold(context.Background(), name, opts)
			if err != nil {
				return sessionOutcome(err), nil
			}
			return map[string]any{"granted": fmt.Sprint(claim.Token())}, claim
		})
	case step["call"] == "release":
		claim, err := s.heldClaim(stepString(step, "of"))
		if err != nil {
			return err
		}
		s.start(stepString(step, "id"), func() (map[string]any, *Claim) {
			claim.Release() // the claim is closed, whether or not it was lost before
			return map[string]any{"released": true}, nil
		})
	case step["call"] != nil:
		return fmt.Errorf("%v is no session call", step["call"])
	case step["await"] != nil:
		call, err := s.call(stepString(step, "await"))
		if err != nil {
			return err
		}
		within := msOption(step, "within_ms")
		select {
		case <-call.done:
		case <-time.After(within):
			return fmt.Errorf("not finished within %v", within)
		}
		wanted, _ := step["outcome_any"].([]any)
		if o, ok := step["outcome"]; ok {
			wanted = append(wanted, o)
		}
		for _, w := range wanted {
			if reflect.DeepEqual(w, call.outcome) {
				return nil
			}
		}
		return fmt.Errorf("got %v, want one of %v", call.outcome, wanted)
	case step["await_lost"] != nil:
		claim, err := s.heldClaim(stepString(step, "await_lost"))
		if err != nil {
			return err
		}
		within := msOption(step, "within_ms")
		select {
		case <-claim.Done():
		case <-time.After(within):
			return fmt.Errorf("not lost within %v", within)
		}
		code := lostCode(claim.Err())
		if want, ok := step["code"].(string); ok && want != code {
			return fmt.Errorf("lost with %s (%v), want %s", code, claim.Err(), want)
		}
	case step["not_lost"] != nil:
		claim, err := s.heldClaim(stepString(step, "not_lost"))
		if err != nil {
			return err
		}
		select {
		case <-claim.Done():
			return fmt.Errorf("lost: %v", claim.Err())
		case <-time.After(msOption(step, "for_ms")):
		}
	case step["sleep_ms"] != nil:
		time.Sleep(msOption(step, "sleep_ms"))
	case step["close_client"] != nil:
		s.client.Close()
	default:
		return fmt.Errorf("unknown step %v", step)
	}
	return nil
}

// lostCode is the shared error name a lost claim carries.
func lostCode(err error) string {
	var lost *lostError
	if errors.As(err, &lost) {
		return lost.reason.Code
	}
	return fmt.Sprint(err)
}
