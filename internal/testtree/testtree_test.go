package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Every file is written at its path under the directory, the directories
// it needs made on the way.
func TestWriteMakesEveryFileAndItsDirectories(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir, map[string]string{"go.mod": "module m\n", "a/b/c.go": "package b\n"})
	for name, want := range map[string]string{"go.mod": "module m\n", "a/b/c.go": "package b\n"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
}
