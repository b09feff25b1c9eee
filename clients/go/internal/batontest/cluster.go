package batontest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClusterNode is one node of a test cluster: its cluster.json entry and its process (nil
// while it is not running).
type ClusterNode struct {
	ID          string
	LockAddr    string
	SessionAddr string
	HTTPAddr    string
	DataDir     string
	Process     *Process
	args        []string
}

// Cluster is a real cluster of `baton serve --config` processes on 127.0.0.1, as
// docs/cluster.md describes it: node a has the highest priority.
type Cluster struct {
	t     testing.TB
	Nodes []*ClusterNode
}

type clusterPeer struct {
	ID          string `json:"id"`
	Host        string `json:"host"`
	LockPort    int    `json:"lockPort"`
	SessionPort int    `json:"sessionPort"`
	PeerPort    int    `json:"peerPort"`
	HTTPPort    int    `json:"httpPort"`
}

// StartCluster starts n nodes (ids a, b, c, ...) with a 1 s peer timeout and waits until node a
// is the active one and every node agrees (at most 30 s). Ports are probed free first; a
// start that loses its port to another process meanwhile is tried again with new ports.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		c, err := tryCluster(t, n)
		if err == "" {
			if werr := c.WaitActive("a", 30*time.Second); werr != nil {
				t.Fatalf("batontest: %v\n%s", werr, c.Logs())
			}
			return c
		}
		lastErr = err
		if !strings.Contains(err, "EADDRINUSE") {
			break
		}
	}
	t.Fatalf("batontest: cluster did not start: %s", lastErr)
	return nil
}

func tryCluster(t testing.TB, n int) (*Cluster, string) {
	dir := t.TempDir()
	ports, err := freePorts(4 * n)
	if err != nil {
		return nil, err.Error()
	}
	c := &Cluster{t: t}
	peers := make([]clusterPeer, n)
	for i := range peers {
		id := string(rune('a' + i))
		peers[i] = clusterPeer{ID: id, Host: "127.0.0.1", LockPort: ports[4*i], SessionPort: ports[4*i+1], PeerPort: ports[4*i+2], HTTPPort: ports[4*i+3]}
	}
	config, _ := json.MarshalIndent(map[string]any{"peers": peers}, "", "  ")
	configPath := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return nil, err.Error()
	}
	for _, p := range peers {
		node := &ClusterNode{
			ID: p.ID, DataDir: filepath.Join(dir, p.ID),
			LockAddr: joinPort(p.LockPort), SessionAddr: joinPort(p.SessionPort), HTTPAddr: joinPort(p.HTTPPort),
		}
		node.args = []string{"serve", "--no-console", "--config", configPath, "--node", p.ID, "--data-dir", node.DataDir,
			"--drain", "0ms", "--peer-timeout", "1000ms", "--return-hold-down", "2s"}
		c.Nodes = append(c.Nodes, node)
	}
	for _, node := range c.Nodes {
		if err := c.start(node); err != "" {
			for _, other := range c.Nodes {
				if other.Process != nil {
					other.Process.Kill9()
				}
			}
			return nil, err
		}
	}
	return c, ""
}

func joinPort(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// start runs one node, reporting a failed start as text (the caller may retry with new ports).
func (c *Cluster) start(node *ClusterNode) (failure string) {
	p, _, err := startProcess(c.t, "node "+node.ID, []string{"BATON_ADMIN_TOKEN=" + AdminToken, "BATON_READ_TOKEN="}, 30*time.Second,
		func(line string) bool { return strings.HasPrefix(line, "baton serving ") }, node.args...)
	if err != nil {
		return err.Error()
	}
	node.Process = p
	return ""
}

// Node is the node with that id.
func (c *Cluster) Node(id string) *ClusterNode {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	c.t.Fatalf("batontest: no node %q", id)
	return nil
}

// LockAddrs are every node's keyed address, in priority order.
func (c *Cluster) LockAddrs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.LockAddr)
	}
	return out
}

// Restart starts a stopped node again with the same ports and data dir.
func (c *Cluster) Restart(id string) {
	node := c.Node(id)
	if node.Process != nil && node.Process.Running() {
		c.t.Fatalf("batontest: node %s is still running", id)
	}
	if err := c.start(node); err != "" {
		c.t.Fatalf("batontest: restart %s: %s", id, err)
	}
}

type clusterView struct {
	Self   string  `json:"self"`
	Phase  string  `json:"phase"`
	Active *string `json:"active"`
	Nodes  []struct {
		ID     string `json:"id"`
		Alive  bool   `json:"alive"`
		InSync bool   `json:"inSync"`
	} `json:"nodes"`
}

// Active is the id of the active node as every running node agrees on it, or "".
func (c *Cluster) Active() string {
	agreed := ""
	for _, n := range c.Nodes {
		if n.Process == nil || !n.Process.Running() {
			continue
		}
		var v clusterView
		status, err := API(n.HTTPAddr, AdminToken, "GET", "/api/v1/cluster", nil, &v)
		if err != nil || status != 200 || v.Active == nil {
			return ""
		}
		if agreed != "" && agreed != *v.Active {
			return ""
		}
		agreed = *v.Active
		if v.Self == agreed && v.Phase != "active" {
			return ""
		}
	}
	return agreed
}

// WaitActive polls until every running node names id as the active node.
func (c *Cluster) WaitActive(id string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c.Active() == id {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s was not the agreed active node within %v", id, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill9 is kill -9 of node id.
func (c *Cluster) Kill9(id string) { c.Node(id).Process.Kill9() }

// Term stops node id gracefully (an active node hands off first).
func (c *Cluster) Term(id string) error { return c.Node(id).Process.Term(15 * time.Second) }

// Logs are the stderr of every node, for a failure report.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, n := range c.Nodes {
		if n.Process != nil {
			fmt.Fprintf(&b, "--- node %s ---\n%s\n", n.ID, tail(n.Process.Stderr(), 40))
		}
	}
	return b.String()
}

func tail(text string, lines int) string {
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// freePorts are ports the kernel just handed out on 127.0.0.1; all held open together so they
// differ, then closed for the nodes to bind.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
