package audit_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestSQLiteMemoryIsOneConnection: every connection to ":memory:" is a
// database of its own, so an in-memory store keeps exactly one (a second
// would see no tables); a file store may open up to four.
func TestSQLiteMemoryIsOneConnection(t *testing.T) {
	for path, want := range map[string]int{
		":memory:":                           1,
		":memory:?_pragma=cache_size(-1000)": 1,
		filepath.Join(t.TempDir(), "a.db"):   4,
	} {
		s, err := audit.OpenSQLite(ctx(t), path)
		if err != nil {
			t.Fatalf("OpenSQLite(%q): %v", path, err)
		}
		if got := s.DB().Stats().MaxOpenConnections; got != want {
			t.Errorf("OpenSQLite(%q): at most %d connections, want %d", path, got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
