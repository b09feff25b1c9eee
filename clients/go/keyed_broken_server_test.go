package baton

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// brokenServer listens on 127.0.0.1 and answers the first request line of every connection
// with reply (written as is, no line end added), then stays silent until the test ends.
func brokenServer(t *testing.T, reply []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				r := bufio.NewReader(c)
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				_, _ = c.Write(reply)
				_, _ = r.WriteTo(discard{}) // silence, reading on until closed
			}()
		}
	}()
	return l.Addr().String()
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// A half line then silence: a finite wait ends in ErrTimeout at the client's own deadline
// (wait + 1 s + 10%), not in a hang.
func TestKeyedHalfLineThenSilenceTimesOut(t *testing.T) {
	addr := brokenServer(t, []byte("A x 1"))
	c, err := NewKeyedClient(Options{Addresses: []string{addr}, NoIdentity: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Acquire(ctxFor(t, 10*time.Second), "x", AcquireOptions{Lease: 30 * time.Second, Wait: 100 * time.Millisecond})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if took < time.Second || took > 5*time.Second {
		t.Fatalf("gave up after %v, want about 1.1 s (wait + 1 s + 10%%)", took)
	}
}

// Bytes a client cannot read end the acquire with a protocol-error on every connection it
// tried, quickly: never a hang, never a grant made of garbage.
func TestKeyedUnreadableRepliesFailWithProtocolError(t *testing.T) {
	for name, reply := range map[string][]byte{
		"token-21-digits":  []byte("A x 123456789012345678901\n"),
		"reply-to-nothing": []byte("A y 7\n"),
		"not-utf8":         []byte("A x\xff 1\n"),
		"overlong":         append(make([]byte, 200<<10), '\n'),
	} {
		t.Run(name, func(t *testing.T) {
			addr := brokenServer(t, reply)
			c, err := NewKeyedClient(Options{Addresses: []string{addr}, NoIdentity: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = c.Acquire(ctx, "x", AcquireOptions{Lease: 30 * time.Second})
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want ErrProtocol", err)
			}
		})
	}
}

// A release to a silent server gives up within its retry window (shortened here), with the
// io-timeout of its last attempt.
func TestKeyedReleaseToSilentServerGivesUp(t *testing.T) {
	addr := brokenServer(t, nil)
	c, err := NewKeyedClient(Options{Addresses: []string{addr}, NoIdentity: true, ReleaseRetryFor: 1500 * time.Millisecond,
		ReleaseAttemptTimeout: 300 * time.Millisecond, ReleaseRetryInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	err = c.Release(ctxFor(t, 10*time.Second), "x", 1)
	if !errors.Is(err, ErrIOTimeout) && !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("got %v, want io-timeout or connection-lost", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("gave up after %v, want within about the 1.5 s window", took)
	}
}
