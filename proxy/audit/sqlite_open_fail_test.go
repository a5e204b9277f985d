package audit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestOpenSQLiteThatFailsLeavesNoGoroutine: an Open that cannot create the
// schema (its directory does not exist), or cannot add the session table's
// client column to an older database (opened read-only here), fails with
// the reason and closes the database it opened: none of its goroutines
// stay behind.
func TestOpenSQLiteThatFailsLeavesNoGoroutine(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	// A database from before the client column: the session table without it.
	s, err := audit.OpenSQLite(ctx(t), old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx(t), `ALTER TABLE `+audit.SessionTable+` DROP COLUMN client`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	noLeaks(t)
	for path, want := range map[string]string{
		filepath.Join(dir, "missing", "audit.db"): "create schema: ",
		old + "?_pragma=query_only(1)":            "add the session table's client column: ",
	} {
		s, err := audit.OpenSQLite(ctx(t), path)
		if err == nil {
			s.Close()
			t.Fatalf("OpenSQLite(%q): no error", path)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("OpenSQLite(%q): %v; want it to say %q", path, err, want)
		}
	}
}
