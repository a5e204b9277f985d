package proxy

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// MCPCTL_CONNS_MAX is lowered below the open-file limit, leaving room for
// upstream connections, the store and the log; a knob already below it is
// kept.
func TestConnsMaxIsClampedBelowTheFDLimit(t *testing.T) {
	for _, c := range []struct {
		knob    int64
		fds     uint64
		want    int64
		clamped bool
	}{
		{20000, 20000, 16000, true},
		{20000, 3000, 2400, true},
		{20000, 1024, 820, true},
		{100, 3000, 100, false},
		{20000, 0, 20000, false},
		{20000, 50, 1, true},
	} {
		got, clamped := ClampConns(c.knob, c.fds)
		if got != c.want || clamped != c.clamped {
			t.Errorf("ClampConns(%d, %d) = %d, %v; want %d, %v", c.knob, c.fds, got, clamped, c.want, c.clamped)
		}
		if c.fds > 0 && uint64(got) >= c.fds {
			t.Errorf("ClampConns(%d, %d) = %d: not below the fd limit", c.knob, c.fds, got)
		}
	}
}

// A refused connection is logged, once a second at most with the count.
func TestConnRefusalsAreLogged(t *testing.T) {
	var buf bytes.Buffer
	refuse := refuseConn(7, slog.New(slog.NewTextHandler(&buf, nil)))
	for range 100 {
		if out := refuse(); !bytes.Contains(out, []byte("MCPCTL_CONNS_MAX")) {
			t.Fatalf("the refusal does not name the knob: %s", out)
		}
	}
	if n := strings.Count(buf.String(), "connection refused"); n != 1 || !strings.Contains(buf.String(), "MCPCTL_CONNS_MAX") {
		t.Fatalf("%d log lines for 100 refusals within a second, want 1 naming MCPCTL_CONNS_MAX: %s", n, buf.String())
	}
}
