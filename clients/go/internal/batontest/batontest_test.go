package batontest

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// exchange sends one keyed line and reads one reply line.
func exchange(t *testing.T, addr, line string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(reply, "\r\n")
}

func TestStartNodeServesAndForceReleases(t *testing.T) {
	n := StartNode(t)
	if got := exchange(t, n.LockAddr, "A bt/x 30 0"); got != "A bt/x 1" {
		t.Fatalf("grant: %q", got)
	}
	if err := n.ForceRelease("bt/x", "1"); err != nil {
		t.Fatal(err)
	}
	if got := exchange(t, n.LockAddr, "R bt/x 1"); got != "R bt/x STALE" {
		t.Fatalf("release after force-release: %q", got)
	}
	n.Kill9()
	if n.Running() {
		t.Fatal("still running after Kill9")
	}
}

func TestStartClusterRedirectsFromStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three nodes")
	}
	c := StartCluster(t, 3)
	if got := exchange(t, c.Node("b").LockAddr, "A bt/x 30 0"); got != "M "+c.Node("a").LockAddr {
		t.Fatalf("standby b answered %q", got)
	}
	c.Kill9("a")
	if err := c.WaitActive("b", 20*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, c.Logs())
	}
}
