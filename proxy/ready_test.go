package proxy

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

func TestNotReadyWhileTheAuditStoreIsDown(t *testing.T) {
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: "memory",
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}}},
	}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	get := func() int {
		resp, err := http.Get("http://" + p.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if before := get(); before != http.StatusOK {
		t.Fatalf("/readyz before the store went down answered %d, want 200", before)
	}
	_ = p.store.Close() // the store goes away
	if after := get(); after != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the audit store down answered %d, want 503", after)
	}
}
