package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

// TestLogsCarryNoSecret: the lines mcplocal writes that name a DSN or an
// upstream URL (the startup line, an upstream's error) carry neither the
// DSN's password nor the URL's key, and say where they were removed.
func TestLogsCarryNoSecret(t *testing.T) {
	var buf bytes.Buffer
	logger := newLogger(&buf)
	logger.Info("mcplocal listening", "addr", "127.0.0.1:8080", "audit", "postgres://mcp:PGPASS-77@db.internal:5432/audit?sslmode=disable")
	logger.Info("audit store", "dsn", "host=db user=mcp password=KVPASS-88 dbname=audit")
	logger.Error("upstream failed", "err", errors.New(`Post "http://docmost:3000/mcp?apikey=URLKEY-99": connection refused`))
	out := buf.String()
	for _, secret := range []string{"PGPASS-77", "KVPASS-88", "URLKEY-99"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log carries the secret %s:\n%s", secret, out)
		}
	}
	if n := strings.Count(out, redact.Mask); n < 3 {
		t.Errorf("the log says %d times that a secret was removed, want 3 (one per line):\n%s", n, out)
	}
	if !strings.Contains(out, "db.internal:5432") || !strings.Contains(out, "docmost:3000/mcp") {
		t.Errorf("redaction removed more than the secrets (the host is what an operator needs):\n%s", out)
	}
}
