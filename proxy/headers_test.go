package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

func TestUpstreamCredentialsComeFromHeadersWithValueEnv(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer upSrv.Close()
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{
		"s": {URL: upSrv.URL, Headers: map[string]config.Header{"X-Api-Key": {ValueEnv: "S_KEY"}}},
	}}}}
	env := func(k string) string {
		if k == "S_KEY" {
			return "k3y"
		}
		return ""
	}
	p, err := New(context.Background(), cfg, Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) == 0 {
		t.Fatal("the upstream was never called")
	}
	for _, k := range keys {
		if k != "k3y" {
			t.Fatalf("an upstream request carried X-Api-Key %q, want the value of $S_KEY", k)
		}
	}

	// A missing variable stops the proxy at start, naming it.
	_, err = New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "S_KEY") {
		t.Errorf("an unset valueEnv: %v, want an error naming S_KEY", err)
	}
}
