package audit_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestSQLiteConnectionPools: every connection to ":memory:" is a
// database of its own, so an in-memory store keeps exactly one (a second
// would see no tables); a file store may open up to four, and keeps all
// four once a burst has opened them (no reconnecting at the next).
func TestSQLiteConnectionPools(t *testing.T) {
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
		var held []*sql.Conn
		for range want {
			c, err := s.DB().Conn(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		for _, c := range held {
			_ = c.Close()
		}
		if st := s.DB().Stats(); st.Idle != want || st.MaxIdleClosed != 0 {
			t.Errorf("OpenSQLite(%q): after %d connections were used at once, %d idle (%d closed as past the idle limit); want %d, 0", path, want, st.Idle, st.MaxIdleClosed, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
