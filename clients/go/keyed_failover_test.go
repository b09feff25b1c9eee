package baton

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Where an acquire goes when the active node dies under it (kill -9): the connections that a
// standby's `M` had led to that node die with it, each a moment later than the first (a dying
// process closes its sockets one by one). The same case as the last test of
// clients/python/tests/test_keyed_readers.py and lib/client/keyed-client-failover.test.ts.

// fakeNode is a scripted keyed server on 127.0.0.1: onConnect runs once per accepted
// connection (it may send), onLine for every line the client sends; it records every line.
type fakeNode struct {
	ln    net.Listener
	addr  string
	mu    sync.Mutex
	conns []*fakeNodeConn
}

type fakeNodeConn struct {
	net.Conn
	node  *fakeNode
	lines []string // guarded by node.mu
}

func (c *fakeNodeConn) send(line string) { _, _ = c.Write([]byte(line + "\n")) }

func startFakeNode(t *testing.T, onConnect func(*fakeNodeConn), onLine func(*fakeNodeConn, string)) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNode{ln: ln, addr: ln.Addr().String()}
	t.Cleanup(n.kill)
	go func() {
		for {
			sock, err := ln.Accept()
			if err != nil {
				return
			}
			conn := &fakeNodeConn{Conn: sock, node: n}
			n.mu.Lock()
			n.conns = append(n.conns, conn)
			n.mu.Unlock()
			go func() {
				defer sock.Close()
				if onConnect != nil {
					onConnect(conn)
				}
				r := bufio.NewReader(sock)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimSuffix(line, "\n")
					n.mu.Lock()
					conn.lines = append(conn.lines, line)
					n.mu.Unlock()
					if onLine != nil {
						onLine(conn, line)
					}
				}
			}()
		}
	}()
	return n
}

// kill stops listening and closes every connection: the node is gone.
func (n *fakeNode) kill() {
	n.ln.Close()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.conns {
		c.Close()
	}
}

// linesStarting: every line from every connection that starts with prefix.
func (n *fakeNode) linesStarting(prefix string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, c := range n.conns {
		for _, line := range c.lines {
			if strings.HasPrefix(line, prefix) {
				out = append(out, line)
			}
		}
	}
	return out
}

// carrying: the connections that received a line starting with prefix.
func (n *fakeNode) carrying(prefix string) []*fakeNodeConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*fakeNodeConn
	for _, c := range n.conns {
		for _, line := range c.lines {
			if strings.HasPrefix(line, prefix) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func TestKeyedAcquireLostWithTheActiveIsNotSentAlongConnectionsRedirectedThere(t *testing.T) {
	var promoted atomic.Bool
	// a: the active; it never answers (the lock is someone else's).
	a := startFakeNode(t, nil, nil)
	// b and c: standbys that send every connection to a until the failover; then b grants every
	// acquire with token 9, and c points at b.
	var granted atomic.Int32
	b := startFakeNode(t,
		func(conn *fakeNodeConn) {
			if !promoted.Load() {
				conn.send("M " + a.addr)
			}
		},
		func(conn *fakeNodeConn, line string) {
			switch {
			case !promoted.Load():
				conn.send("M " + a.addr)
			case strings.HasPrefix(line, "A "):
				granted.Add(1)
				conn.send("A " + strings.Fields(line)[1] + " 9")
			}
		})
	c := startFakeNode(t,
		func(conn *fakeNodeConn) {
			if promoted.Load() {
				conn.send("M " + b.addr)
			} else {
				conn.send("M " + a.addr)
			}
		},
		func(conn *fakeNodeConn, line string) {
			if !promoted.Load() {
				conn.send("M " + a.addr)
			}
		})
	client, err := NewKeyedClient(Options{Addresses: []string{a.addr, b.addr, c.addr}, NoIdentity: true,
		ReconnectInterval: time.Second, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// All three connections open on a, two of them through b's and c's M: the acquire then goes
	// on the first, whose home is a.
	onA := func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		for _, k := range client.conns {
			if k.state != stateOpen || k.link.address != a.addr {
				return false
			}
		}
		return true
	}
	if !eventually(5*time.Second, onA) {
		t.Fatal("the three connections never were all open on a")
	}

	type result struct {
		grant *Grant
		err   error
	}
	done := make(chan result, 1)
	go func() {
		g, err := client.Acquire(ctxFor(t, 20*time.Second), "readers/later", AcquireOptions{Lease: 30 * time.Second, Wait: 10 * time.Second})
		done <- result{g, err}
	}()
	const sent = "A readers/later "
	if !eventually(5*time.Second, func() bool { return len(a.carrying(sent)) == 1 }) {
		t.Fatal("the acquire never reached a")
	}
	promoted.Store(true)
	a.carrying(sent)[0].Close()        // the socket carrying the acquire closes first ...
	time.Sleep(300 * time.Millisecond) // ... the others only once the acquire could have moved onto them
	a.kill()

	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("the acquire failed: %v (a received %q)", r.err, a.linesStarting(sent))
		}
		if r.grant.Token() != 9 {
			t.Fatalf("token %d, want 9 from b", r.grant.Token())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the acquire never settled")
	}
	if n := granted.Load(); n != 1 {
		t.Fatalf("b granted %d acquires, want 1", n)
	}
	// It never went back to the node it had reached only through a redirect.
	if got := a.linesStarting(sent); len(got) != 1 {
		t.Fatalf("a received the acquire %d times, want once: %q", len(got), got)
	}
}

// The same death, but the dead active's other socket is slow to close (a loaded machine, a
// process that closes its sockets one by one): the connection that lost the acquire comes home
// while the other is still open on a. The parked acquire goes home with it, not onto that
// socket, which would spend its last try (two connections, two tries) on the dead node.
func TestKeyedParkedAcquireComesHomePastARedirectedConnectionStillOpen(t *testing.T) {
	var promoted atomic.Bool
	// a: the active; it never answers (the lock is someone else's).
	a := startFakeNode(t, nil, nil)
	// b: the client's one address, a standby that sends every connection to a until the
	// failover; then it grants every acquire with token 9.
	var granted atomic.Int32
	b := startFakeNode(t,
		func(conn *fakeNodeConn) {
			if !promoted.Load() {
				conn.send("M " + a.addr)
			}
		},
		func(conn *fakeNodeConn, line string) {
			switch {
			case !promoted.Load():
				conn.send("M " + a.addr)
			case strings.HasPrefix(line, "A "):
				granted.Add(1)
				conn.send("A " + strings.Fields(line)[1] + " 9")
			}
		})
	client, err := NewKeyedClient(Options{Addresses: []string{b.addr}, NoIdentity: true,
		ReconnectInterval: time.Second, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	onA := func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		for _, k := range client.conns {
			if k.state != stateOpen || k.link.address != a.addr {
				return false
			}
		}
		return true
	}
	if !eventually(5*time.Second, onA) {
		t.Fatal("the two connections never were both open on a")
	}

	type result struct {
		grant *Grant
		err   error
	}
	done := make(chan result, 1)
	go func() {
		g, err := client.Acquire(ctxFor(t, 20*time.Second), "readers/later", AcquireOptions{Lease: 30 * time.Second, Wait: 10 * time.Second})
		done <- result{g, err}
	}()
	const sent = "A readers/later "
	if !eventually(5*time.Second, func() bool { return len(a.carrying(sent)) == 1 }) {
		t.Fatal("the acquire never reached a")
	}
	promoted.Store(true)
	a.carrying(sent)[0].Close() // the socket carrying the acquire closes ...
	// ... and the other one only once the connection that lost the acquire has come home and
	// the acquire has gone somewhere again: to b, or back to a.
	if !eventually(5*time.Second, func() bool { return granted.Load() > 0 || len(a.linesStarting(sent)) > 1 }) {
		t.Fatal("the acquire went nowhere after its connection dropped")
	}
	a.kill()

	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("the acquire failed: %v (a received %q)", r.err, a.linesStarting(sent))
		}
		if r.grant.Token() != 9 {
			t.Fatalf("token %d, want 9 from b", r.grant.Token())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the acquire never settled")
	}
	if n := granted.Load(); n != 1 {
		t.Fatalf("b granted %d acquires, want 1", n)
	}
	if got := a.linesStarting(sent); len(got) != 1 {
		t.Fatalf("a received the acquire %d times, want once: %q", len(got), got)
	}
}
