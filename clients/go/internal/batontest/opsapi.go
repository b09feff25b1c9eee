package batontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

var httpClient = &http.Client{Timeout: 5 * time.Second}

// API calls one node's ops API (docs/console.md) with the admin token and decodes a JSON
// answer into out (when not nil). It returns the HTTP status; an error only when no answer came.
func API(httpAddr, adminToken, method, path string, body, out any) (int, error) {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+httpAddr+path, reader)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	text, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return res.StatusCode, err
	}
	if out != nil && len(text) > 0 {
		if err := json.Unmarshal(text, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: %d %s: %v", method, path, res.StatusCode, text, err)
		}
	}
	return res.StatusCode, nil
}

// ForceRelease force-releases lock name on the node at httpAddr; with a non-empty token, only
// that holder (409 stale-token otherwise). It returns an error unless the node answered 200.
func ForceRelease(httpAddr, adminToken, name, token string) error {
	body := map[string]string{}
	if token != "" {
		body["token"] = token
	}
	var answer any
	status, err := API(httpAddr, adminToken, "POST", "/api/v1/locks/"+url.PathEscape(name)+"/force-release", body, &answer)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("force-release %s: HTTP %d: %v", name, status, answer)
	}
	return nil
}

// ForceRelease force-releases lock name on this node (see the package function).
func (n *Node) ForceRelease(name, token string) error {
	return ForceRelease(n.HTTPAddr, n.AdminToken, name, token)
}

// ForceRelease force-releases lock name through this node's ops API (a standby forwards it to
// the active node).
func (n *ClusterNode) ForceRelease(name, token string) error {
	return ForceRelease(n.HTTPAddr, AdminToken, name, token)
}
