package baton

// Resuming a claim across connections, against tiny scripted servers whose every connection
// runs a handler with the lines the client sends.

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptedServer runs handle(n, lines, conn) for its nth connection (from 0); lines delivers
// what the client sends on it.
type scriptedServer struct {
	ln    net.Listener
	mu    sync.Mutex
	count int
}

func startScriptedServer(t *testing.T, handle func(n int, lines <-chan string, conn net.Conn)) *scriptedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptedServer{ln: ln}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			s.mu.Lock()
			n := s.count
			s.count++
			s.mu.Unlock()
			lines := make(chan string, 16)
			go func() {
				defer close(lines)
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					lines <- strings.TrimRight(line, "\r\n")
				}
			}()
			go handle(n, lines, conn)
		}
	}()
	return s
}

func (s *scriptedServer) Addr() string { return s.ln.Addr().String() }

// answerHeartbeats answers each HEARTBEAT with `ACQUIRED token` until the client goes.
func answerHeartbeats(lines <-chan string, conn net.Conn, token string) {
	for line := range lines {
		if line == "HEARTBEAT" {
			conn.Write([]byte("ACQUIRED " + token + "\n"))
		}
	}
}

// keyOf is the claim key of an ACQUIRE or RESUME line (its last field).
func keyOf(line string) string { return line[strings.LastIndexByte(line, ' ')+1:] }

func TestSessionMovedIsResumedAtTheNamedNodeWithTheSameToken(t *testing.T) {
	var keyBox atomic.Value // the claim key the old node saw, read by the successor
	keyBox.Store("")
	successor := startScriptedServer(t, func(n int, lines <-chan string, conn net.Conn) {
		if first := <-lines; first != "RESUME x "+keyBox.Load().(string) {
			conn.Write([]byte("ERROR 0x09 claim unknown\n"))
			return
		}
		conn.Write([]byte("ACQUIRED 5\n"))
		answerHeartbeats(lines, conn, "5")
	})
	old := startScriptedServer(t, func(n int, lines <-chan string, conn net.Conn) {
		first := <-lines
		keyBox.Store(keyOf(first))
		conn.Write([]byte("ACQUIRED 5\n"))
		time.Sleep(100 * time.Millisecond)
		conn.Write([]byte("MOVED " + successor.Addr() + "\n"))
		conn.Close()
	})
	c := newTestSessionClient(t, Options{Addresses: []string{old.Addr()}, Resumable: true})
	claim, err := c.Hold(context.Background(), "x", HoldOptions{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if key := keyBox.Load().(string); len(key) != 32 {
		t.Fatalf("ACQUIRE sent no claim key: %q", key)
	}
	select {
	case <-claim.Done():
		t.Fatalf("lost across MOVED: %v", claim.Err())
	case <-time.After(2 * time.Second): // two leases, heartbeating on the successor
	}
	if claim.moves.Load() != 1 || claim.Token() != 5 {
		t.Fatalf("moves %d, token %d", claim.moves.Load(), claim.Token())
	}
}

func TestSessionDroppedConnectionIsResumedOrLostByPointEightMaxPark(t *testing.T) {
	server := startScriptedServer(t, func(n int, lines <-chan string, conn net.Conn) {
		<-lines
		if n == 0 {
			conn.Write([]byte("ACQUIRED 5\n"))
			time.Sleep(100 * time.Millisecond)
			conn.Close() // the active "died"
			return
		}
		for range lines { // a node that never answers a RESUME
		}
	})
	maxPark := time.Second
	c := newTestSessionClient(t, Options{Addresses: []string{server.Addr()}, Resumable: true, MaxPark: maxPark})
	claim, err := c.Hold(context.Background(), "x", HoldOptions{Lease: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-claim.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("still trusted long after 0.8 x max-park between connections")
	}
	if took := time.Since(start); took > maxPark {
		t.Fatalf("lost after %v, later than 0.8 x max-park from the last confirmation", took)
	}
	if !errors.Is(claim.Err(), ErrLeaseExpired) {
		t.Fatalf("Err() = %v", claim.Err())
	}
}

func TestSessionResumeAnsweredWithClaimUnknownOrAnotherTokenIsLost(t *testing.T) {
	for name, answer := range map[string]string{"0x09": "ERROR 0x09 claim unknown", "another token": "ACQUIRED 6"} {
		answer := answer
		t.Run(name, func(t *testing.T) {
			server := startScriptedServer(t, func(n int, lines <-chan string, conn net.Conn) {
				first := <-lines
				if n == 0 {
					conn.Write([]byte("ACQUIRED 5\n"))
					time.Sleep(50 * time.Millisecond)
					conn.Close()
					return
				}
				if strings.HasPrefix(first, "RESUME x ") {
					conn.Write([]byte(answer + "\n"))
				}
				answerHeartbeats(lines, conn, "6")
			})
			c := newTestSessionClient(t, Options{Addresses: []string{server.Addr()}, Resumable: true})
			claim, err := c.Hold(context.Background(), "x", HoldOptions{Lease: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-claim.Done():
			case <-time.After(3 * time.Second):
				t.Fatal("the claim was trusted after a failed RESUME")
			}
			if !errors.Is(claim.Err(), ErrLost) {
				t.Fatalf("Err() = %v", claim.Err())
			}
		})
	}
}

func TestSessionServerGoingAwayWhileWaitingQueuesAnewAtOnce(t *testing.T) {
	server := startScriptedServer(t, func(n int, lines <-chan string, conn net.Conn) {
		<-lines
		if n == 0 {
			conn.Write([]byte("WAITING 1\n"))
			time.Sleep(100 * time.Millisecond)
			conn.Write([]byte("ERROR 0x01 server going away\n"))
			conn.Close()
			return
		}
		conn.Write([]byte("ACQUIRED 9\n"))
		answerHeartbeats(lines, conn, "9")
	})
	c := newTestSessionClient(t, Options{Addresses: []string{server.Addr()}})
	start := time.Now()
	claim, err := holdWithin(t, c, 5*time.Second)
	if err != nil || claim.Token() != 9 {
		t.Fatalf("after 0x01 while waiting: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("requeued after %v: not at once", took)
	}
}
