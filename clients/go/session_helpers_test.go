package baton

// Helpers of the session client's integration tests: a client that is closed by t.Cleanup, the
// ops API's view of a lock, and a local TCP proxy that can stop forwarding (a network that goes
// silent without closing anything).

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

func newTestSessionClient(t *testing.T, opts Options) *SessionClient {
	t.Helper()
	if opts.Identity == "" {
		opts.NoIdentity = true
	}
	c, err := NewSessionClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type lockView struct {
	Holder *struct {
		Token      string  `json:"token"`
		ClientName *string `json:"clientName"`
	} `json:"holder"`
	QueueLength int `json:"queueLength"`
}

// lockOn is the lock as the node's ops API shows it; a lock nobody holds or waits for may be
// unknown (404), which reads as the empty view.
func lockOn(t *testing.T, httpAddr, name string) lockView {
	t.Helper()
	var v lockView
	status, err := batontest.API(httpAddr, batontest.AdminToken, "GET", "/api/v1/locks/"+url.PathEscape(name), nil, &v)
	if err != nil || (status != 200 && status != 404) {
		t.Fatalf("GET lock %s: %d %v", name, status, err)
	}
	if status == 404 {
		return lockView{}
	}
	return v
}

// eventually polls cond every 20 ms for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// stallingProxy forwards TCP to target until Stall, after which it forwards nothing more in
// either direction but keeps every connection open: a network gone silent.
type stallingProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{}
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
}

func startStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{ln: ln, target: target, stalled: make(chan struct{})}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *stallingProxy) Addr() string { return p.ln.Addr().String() }
func (p *stallingProxy) Stall()       { p.once.Do(func() { close(p.stalled) }) }

func (p *stallingProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *stallingProxy) pipe(from, to net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := from.Read(buf)
		select {
		case <-p.stalled:
			io.Copy(io.Discard, from) // swallow, forward nothing
			return
		default:
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			to.Close()
			return
		}
	}
}
