package health

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// TestLastErrorNamesAMisshapenAnswer: a server behind an L7 proxy that
// answers a bare `Access denied` 403 shows that answer, by shape, as its
// lastError, not a generic transport failure.
func TestLastErrorNamesAMisshapenAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "Access denied")
	}))
	defer srv.Close()
	check := &config.HealthCheck{Tool: "list_sites", IntervalSeconds: 60, TimeoutSeconds: 2, FailureThreshold: 1}
	p := Start([]Target{{Project: "infra", Server: "grafana", URL: srv.URL + "/mcp", Check: check}}, 2*time.Second, 100*time.Millisecond)
	defer p.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		in := p.Instances()[0]
		if in.Status != Unknown {
			want := "upstream answered 403 text/plain `Access denied`, not JSON-RPC: something between mcplocal and the server answered (an L7 proxy or gateway?)"
			if in.Status != Unhealthy || in.LastError != want {
				t.Fatalf("status %s, lastError %q; want unhealthy with %q", in.Status, in.LastError, want)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no probe result within 5s")
}
