package baton

// The session client against tiny local servers that misbehave: it must end in a clear error
// or a lost claim, never hang or crash.

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// brokenSessionServer accepts connections and runs script on each (after reading the first request
// line), until the test ends.
func brokenSessionServer(t *testing.T, script func(conn net.Conn, first string)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		ln.Close()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				first, err := bufio.NewReader(conn).ReadString('\n')
				if err != nil {
					return
				}
				script(conn, strings.TrimSpace(first))
				select {
				case <-done:
				case <-time.After(30 * time.Second):
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func holdWithin(t *testing.T, c *SessionClient, limit time.Duration) (*Claim, error) {
	t.Helper()
	type result struct {
		claim *Claim
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		claim, err := c.Hold(context.Background(), "x", HoldOptions{Lease: time.Second})
		ch <- result{claim, err}
	}()
	select {
	case r := <-ch:
		return r.claim, r.err
	case <-time.After(limit):
		t.Fatal("Hold hangs")
		return nil, nil
	}
}

func TestSessionHalfLineThenSilenceEndsTheHold(t *testing.T) {
	addr := brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte("ACQUI")) })
	c := newTestSessionClient(t, Options{Addresses: []string{addr}, ReconnectFor: time.Second})
	_, err := holdWithin(t, c, 10*time.Second)
	if !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Hold against a half line then silence: %v, want lease-expired (no answer within 0.8 x lease)", err)
	}
}

func TestSessionHalfLineThenSilenceWhileHoldingIsLost(t *testing.T) {
	addr := brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte("ACQUIRED 5\nACQUI")) })
	c := newTestSessionClient(t, Options{Addresses: []string{addr}})
	claim, err := holdWithin(t, c, 5*time.Second)
	if err != nil || claim.Token() != 5 {
		t.Fatalf("hold: %v", err)
	}
	select {
	case <-claim.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("Done still open well past 0.8 x lease of silence")
	}
	if !errors.Is(claim.Err(), ErrLeaseExpired) {
		t.Fatalf("Err() = %v", claim.Err())
	}
}

func TestSessionUnreadableRepliesAreProtocolErrors(t *testing.T) {
	for name, reply := range map[string]string{
		"21-digit token":     "ACQUIRED 123456789012345678901\n",
		"unknown line":       "HELLO\n",
		"not UTF-8":          "ACQUIRED \xff\n",
		"10 MB line":         strings.Repeat("x", 10<<20),
		"ERROR without code": "ERROR\n",
	} {
		reply := reply
		t.Run(name, func(t *testing.T) {
			addr := brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte(reply)) })
			c := newTestSessionClient(t, Options{Addresses: []string{addr}})
			_, err := holdWithin(t, c, 10*time.Second)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want a protocol error", err)
			}
		})
	}
}

func TestSessionReplyToNothingWhileHoldingIsLost(t *testing.T) {
	addr := brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte("ACQUIRED 5\nWAITING 3\n")) })
	c := newTestSessionClient(t, Options{Addresses: []string{addr}})
	claim, err := holdWithin(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-claim.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("a WAITING to nothing while holding did not end the claim")
	}
	if !errors.Is(claim.Err(), ErrProtocol) {
		t.Fatalf("Err() = %v", claim.Err())
	}
}

func TestSessionRedirectLoopIsBounded(t *testing.T) {
	var addr string
	addr = brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte("REDIRECT " + addr + "\n")) })
	c := newTestSessionClient(t, Options{Addresses: []string{addr}})
	_, err := holdWithin(t, c, 10*time.Second)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("a redirect loop: %v", err)
	}
}

func TestSessionTokensExhaustedFailsTheHoldWithoutRetrying(t *testing.T) {
	addr := brokenSessionServer(t, func(conn net.Conn, _ string) { conn.Write([]byte("ERROR 0x07 fencing tokens exhausted\n")) })
	c := newTestSessionClient(t, Options{Addresses: []string{addr}})
	start := time.Now()
	_, err := holdWithin(t, c, 10*time.Second)
	if !errors.Is(err, ErrTokensExhausted) || time.Since(start) > 2*time.Second {
		t.Fatalf("got %v after %v, want tokens-exhausted at once", err, time.Since(start))
	}
}
