package batontest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is one `node bin/baton ...` child in its own process group.
type Process struct {
	cmd    *exec.Cmd
	name   string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
}

// StartProcess runs `node <repo>/bin/baton args...` with env added to the environment, and
// returns once its first stdout line satisfies ready (the line is returned), failing the test
// after timeout or when the process exits first. t.Cleanup kills it.
func StartProcess(t testing.TB, name string, env []string, timeout time.Duration, ready func(line string) bool, args ...string) (*Process, string) {
	t.Helper()
	p, line, err := startProcess(t, name, env, timeout, ready, args...)
	if err != nil {
		t.Fatalf("batontest: %v", err)
	}
	return p, line
}

// startProcess is StartProcess reporting a failed start as an error (with the child's stderr),
// so that a caller can try again (a port taken meanwhile).
func startProcess(t testing.TB, name string, env []string, timeout time.Duration, ready func(line string) bool, args ...string) (*Process, string, error) {
	cmd := exec.Command("node", append([]string{BatonBin(t)}, args...)...)
	cmd.Dir = RepoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	// Its own group, so a kill reaches whatever node started along with it; and killed by the
	// kernel if the test binary dies first (a timeout panic skips t.Cleanup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{cmd: cmd, name: name, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = &lockedWriter{p: p}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.Kill9)

	lines := make(chan string, 16)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				select {
				case lines <- strings.TrimRight(line, "\r\n"):
				default: // nobody listens any more: drop, never block the child
				}
			}
			if err != nil {
				close(lines)
				_, _ = io.Copy(io.Discard, r)
				return
			}
		}
	}()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-p.exited
				return nil, "", fmt.Errorf("%s exited before it was ready; stderr:\n%s", name, p.Stderr())
			}
			if ready(line) {
				return p, line, nil
			}
		case <-deadline:
			p.Kill9()
			return nil, "", fmt.Errorf("%s not ready within %v; stderr:\n%s", name, timeout, p.Stderr())
		}
	}
}

type lockedWriter struct{ p *Process }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	// Keep the last 64 KiB: enough to explain a failure, bounded for a chatty node.
	if w.p.stderr.Len() > 1<<16 {
		rest := append([]byte(nil), w.p.stderr.Bytes()[w.p.stderr.Len()-1<<15:]...)
		w.p.stderr.Reset()
		w.p.stderr.Write(rest)
	}
	return w.p.stderr.Write(b)
}

// Stderr is what the process wrote to stderr so far (the last 64 KiB or so).
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Kill9 is kill -9 of the whole process group; it returns once the process has exited.
func (p *Process) Kill9() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// Term sends SIGTERM (a graceful stop: an active node hands off first) and waits up to
// timeout for the exit; past it the group is killed and an error returned.
func (p *Process) Term(timeout time.Duration) error {
	if !p.Running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		p.Kill9()
		return fmt.Errorf("%s did not exit within %v of SIGTERM", p.name, timeout)
	}
}
