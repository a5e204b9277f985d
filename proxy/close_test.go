package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// Close stops the health prober: an upstream hears no probe after it.
func TestCloseStopsTheProbes(t *testing.T) {
	var probes atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer up.Close()
	const every = 20 * time.Millisecond
	cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{
		"s": {URL: up.URL + "/mcp", HealthCheck: &config.HealthCheck{IntervalSeconds: every.Seconds(), TimeoutSeconds: 1}}}}}}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for probes.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(every / 2) // polling the upstream's count; the prober's own ticker probes
	}
	if probes.Load() < 2 {
		t.Fatalf("the prober probed %d times in 5 s", probes.Load())
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := probes.Load()
	time.Sleep(15 * every) // fifteen probe intervals with no prober: nothing to wait for but time
	if n := probes.Load() - after; n > 0 {
		t.Errorf("%d probes reached the upstream after Close", n)
	}
}

// /readyz names an unhealthy upstream (not its lastError), and Close
// closes the audit store.
func TestReadyzNamesAnUnhealthyServerAndCloseClosesTheStore(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer up.Close()
	cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{
		"s": {URL: up.URL + "/mcp", HealthCheck: &config.HealthCheck{IntervalSeconds: 0.02, TimeoutSeconds: 1, FailureThreshold: 1}}}}}}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	status, body := 0, ""
	for deadline := time.Now().Add(5 * time.Second); status != 503 && time.Now().Before(deadline); {
		status, _, body = get(t, p, http.MethodGet, "/readyz", "")
		if status != 503 {
			time.Sleep(10 * time.Millisecond) // polling /readyz until the prober's own failures count
		}
	}
	// It names the server and its status, never its lastError (/readyz is
	// open to anyone; the upstream's own words are the admin API's).
	if want := `{"paused":[],"servers":["p/s: unhealthy"],"status":"not ready"}`; status != 503 || strings.TrimSpace(body) != want {
		t.Errorf("/readyz with s failing its probe: %d %s, want 503 %s", status, body, want)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.store.Query(context.Background(), audit.Filter{}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("the store after Close: %v, want audit.ErrClosed", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
