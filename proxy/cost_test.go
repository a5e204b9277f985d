package proxy_test

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// idleSessions is how many client sessions TestIdleSessionCost opens.
const idleSessions = 100

// idleSessionSanity bounds the measured cost of one idle session. It is far
// above what a session costs (see docs/protocol.md) and only catches a
// regression that makes sessions heavy (a transport or a server per call).
const idleSessionSanity = 1 << 20

// TestIdleSessionCost measures what an idle client session costs once it has
// its own server and upstream session: heap and goroutines per session. The
// figures include the test's own clients and the fake upstream's sessions
// (same process), so they bound the proxy's share from above.
func TestIdleSessionCost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fake := newTestUpstream(t)
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		"p": {Servers: map[string]*config.Server{"everything": {URL: fake.URL()}}},
	}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	kv := knobs.Defaults()
	p, err := proxy.New(ctx, cfg, proxy.Options{Knobs: &kv, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	url := "http://" + p.Addr() + "/projects/p/mcp"
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "cost", Version: "0"}, nil)
	open := func() *mcp.ClientSession { return connectAndCall(ctx, t, client, hc, url, "everything_whoami") }
	direct := func() *mcp.ClientSession { return connectAndCall(ctx, t, client, hc, fake.URL(), "whoami") }
	// The same sessions straight to the fake: the client's and the fake's
	// share, to subtract.
	warmDirect := direct()
	defer warmDirect.Close()
	d0, dg0 := settle()
	var directs []*mcp.ClientSession
	for range idleSessions {
		directs = append(directs, direct())
	}
	d1, dg1 := settle()
	for _, cs := range directs {
		_ = cs.Close()
	}
	baseHeap := (int64(d1) - int64(d0)) / idleSessions
	baseG := float64(dg1-dg0) / idleSessions
	t.Logf("direct to the upstream (client + fake): %d bytes (%.1f KiB), %.1f goroutines per session", baseHeap, float64(baseHeap)/1024, baseG)
	warm := open() // connection pools, caches and capabilities: not per session
	defer warm.Close()
	heap0, g0 := settle()
	sessions := make([]*mcp.ClientSession, 0, idleSessions)
	for range idleSessions {
		sessions = append(sessions, open())
	}
	heap1, g1 := settle()
	perHeap := (int64(heap1) - int64(heap0)) / idleSessions
	perG := float64(g1-g0) / idleSessions
	t.Logf("through the proxy (proxy + client + fake): %d bytes (%.1f KiB), %.1f goroutines per session; %d sessions",
		perHeap, float64(perHeap)/1024, perG, idleSessions)
	t.Logf("the proxy's share of an idle session, its upstream session included: %d bytes (%.1f KiB), %.1f goroutines",
		perHeap-baseHeap, float64(perHeap-baseHeap)/1024, perG-baseG)
	if perHeap > idleSessionSanity {
		t.Errorf("an idle session costs %d bytes, above the sanity bound %d: something per session got heavy", perHeap, idleSessionSanity)
	}
	for _, cs := range sessions {
		_ = cs.Close()
	}
}

// settle collects garbage until the heap is steady and returns it with the
// goroutine count.
func settle() (uint64, int) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// connectAndCall opens a session at url and calls tool once, so the session
// holds everything a working session holds.
func connectAndCall(ctx context.Context, t *testing.T, client *mcp.Client, hc *http.Client, url, tool string) *mcp.ClientSession {
	t.Helper()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	return cs
}
