package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestOpenPostgresThatFailsLeavesNoGoroutine: an Open whose schema cannot be
// created (nothing listens) closes the pool it made: its background
// goroutines end, and a proxy retrying its audit store does not pile them up.
func TestOpenPostgresThatFailsLeavesNoGoroutine(t *testing.T) {
	noLeaks(t)
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := audit.OpenPostgres(c, "postgres://postgres:secret@127.0.0.1:1/audit?sslmode=disable&connect_timeout=2")
	if err == nil {
		s.Close()
		t.Fatal("OpenPostgres of an unreachable server: no error")
	}
}
