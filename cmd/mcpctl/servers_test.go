package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// serversProxy starts a real proxy (project docmost, one fake docmost) and
// a second fake docmost to add as a server; it returns the proxy's URL and
// the second fake's.
func serversProxy(t *testing.T) (proxyURL, extraURL string) {
	t.Helper()
	var urls []string
	for range 2 {
		up, err := upstream.NewDocmost(upstream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = up.Close() })
		urls = append(urls, up.URL())
	}
	k := knobs.Defaults()
	k.UpstreamConnect, k.ShutdownGrace = time.Second, 200*time.Millisecond
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		"docmost": {Servers: map[string]*config.Server{"docmost": {URL: urls[0]}}},
	}}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{Knobs: &k, ServersFile: t.TempDir() + "/servers.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return "http://" + p.Addr(), urls[1]
}

// TestServersGetYAMLApplyRoundTrips: create server → get servers -o yaml →
// delete server → apply -f (the YAML on stdin) restores the same server and
// probe: the second get -o yaml is byte for byte the first.
func TestServersGetYAMLApplyRoundTrips(t *testing.T) {
	px, extra := serversProxy(t)
	r := cli(t, "create", "server", "wiki", "--project", "docmost", "--server-url", extra, "--url", px,
		"--health-check-tool", "search", "--health-check-arguments", `{"query":"ping"}`,
		"--health-check-interval", "60", "--health-check-timeout", "15", "--health-check-failure-threshold", "3")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "server docmost/wiki created (readiness probe: tools/call search every 1m0s, timeout 15s") {
		t.Errorf("create output: %s", r.stdout)
	}
	r = cli(t, "get", "servers", "-o", "yaml", "--url", px)
	r.wantCode(t, 0)
	saved := r.stdout
	for _, want := range []string{"name: wiki", "url: " + extra, "tool: search", "intervalSeconds: 60", "timeoutSeconds: 15", "failureThreshold: 3", "query: ping"} {
		if !strings.Contains(saved, want) {
			t.Errorf("get -o yaml lacks %q:\n%s", want, saved)
		}
	}
	cli(t, "delete", "server", "wiki", "--url", px).wantCode(t, 0)
	if r := cli(t, "get", "servers", "-o", "yaml", "--url", px); strings.Contains(r.stdout, "wiki") {
		t.Fatalf("after delete, get still lists wiki:\n%s", r.stdout)
	}
	old := stdin
	stdin = strings.NewReader(saved)
	t.Cleanup(func() { stdin = old })
	r = cli(t, "apply", "-f", "-", "--url", px)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "server docmost/wiki created") || !strings.Contains(r.stdout, "server docmost/docmost unchanged") {
		t.Errorf("apply output: %s", r.stdout)
	}
	if r := cli(t, "get", "servers", "-o", "yaml", "--url", px); r.stdout != saved {
		t.Fatalf("get -o yaml | apply -f did not round-trip:\nbefore:\n%s\nafter:\n%s", saved, r.stdout)
	}
}

// TestCreateServerSeedCommand: the seed's command, on an existing server,
// keeps its URL and sets the probe; leaving the tool out keeps liveness
// while tuning the timings; a probe on a tool the server lacks is refused
// with the field named and exit 1.
func TestCreateServerSeedCommand(t *testing.T) {
	px, _ := serversProxy(t)
	r := cli(t, "create", "server", "docmost", "--health-check-tool", "search",
		"--health-check-interval", "60", "--health-check-timeout", "15", "--force", "--url", px)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "server docmost/docmost replaced (readiness probe: tools/call search every 1m0s, timeout 15s") {
		t.Errorf("seed command output: %s", r.stdout)
	}
	r = cli(t, "create", "server", "docmost", "--health-check-interval", "30", "--force", "--url", px)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "(liveness probe: tools/list every 30s") {
		t.Errorf("omitting the tool should keep liveness: %s", r.stdout)
	}
	r = cli(t, "create", "server", "docmost", "--health-check-tool", "list_sites", "--force", "--url", px)
	r.wantCode(t, 1)
	r.wantStderr(t, `healthCheck.tool: "list_sites" is not a tool of server docmost`)
	r = cli(t, "create", "server", "other", "--url", px)
	r.wantCode(t, 2)
	r.wantStderr(t, "--server-url is required")
}
