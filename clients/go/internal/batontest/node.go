package batontest

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// AdminToken is the admin token every node started here runs with.
const AdminToken = "batontest-admin-token-0123456789abcdef"

// Node is one running `baton serve` on free 127.0.0.1 ports.
type Node struct {
	*Process
	LockAddr    string
	SessionAddr string
	HTTPAddr    string
	DataDir     string
	AdminToken  string
}

var servingLine = regexp.MustCompile(`^baton serving lock=(\S+) session=(\S+) http=(\S+) data-dir=`)

// StartNode starts `baton serve --no-console` with every port on 0, a fresh data dir and the
// admin token, plus extra flags (e.g. "--token-floor", "9007199254740993"), and returns once it
// printed its serving line.
func StartNode(t testing.TB, extra ...string) *Node {
	t.Helper()
	dataDir := t.TempDir()
	args := append([]string{"serve", "--no-console", "--data-dir", dataDir, "--lock-port", "0", "--session-port", "0",
		"--http-port", "0", "--admin-token", AdminToken}, extra...)
	p, line := StartProcess(t, "baton serve", nil, 30*time.Second, servingLine.MatchString, args...)
	m := servingLine.FindStringSubmatch(line)
	return &Node{Process: p, LockAddr: m[1], SessionAddr: m[2], HTTPAddr: m[3], DataDir: dataDir, AdminToken: AdminToken}
}

func (n *Node) String() string {
	return fmt.Sprintf("node lock=%s session=%s http=%s", n.LockAddr, n.SessionAddr, n.HTTPAddr)
}
