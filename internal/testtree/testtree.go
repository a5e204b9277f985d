// Package testtree writes trees of files for tests: a module to copy or
// mutate, a directory a tool reads.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (a slash-separated path relative to dir: its content)
// under dir, making the directories they need; the test fails at the first
// file it cannot write.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
