// Package batontest starts real Baton daemons for the Go client's tests: a single node, a
// three-node cluster, and the ops API calls the tests need. Every process it starts is killed
// (its whole process group) by t.Cleanup, whatever the test did.
package batontest

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot is the Baton checkout the test runs in, found by walking up from the working
// directory (go test runs in the package's directory) to the first one holding bin/baton.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("batontest: working directory: %v", err)
	}
	for {
		if info, err := os.Stat(filepath.Join(dir, "bin", "baton")); err == nil && !info.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("batontest: no bin/baton above the working directory")
		}
		dir = parent
	}
}

// BatonBin is the repository's bin/baton, run with `node`.
func BatonBin(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "bin", "baton")
}
