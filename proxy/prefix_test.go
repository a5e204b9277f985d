package proxy_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// A one-server project's tool names are prefixed with the server's name
// unless its config says prefix: false.
func TestPrefixFalsePassesToolNamesThrough(t *testing.T) {
	up := newTestUpstream(t)
	no, yes := false, true
	for _, c := range []struct {
		prefix *bool
		want   []string
	}{
		{nil, []string{"wiki_search", "wiki_update_page", "wiki_whoami"}},
		{&yes, []string{"wiki_search", "wiki_update_page", "wiki_whoami"}},
		{&no, []string{"search", "update_page", "whoami"}},
	} {
		cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
			"p": {Prefix: c.prefix, Servers: map[string]*config.Server{"wiki": {URL: up.URL()}}}}}
		p, err := proxy.New(context.Background(), cfg, proxy.Options{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "prefix-test", Version: "0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", HTTPClient: http.DefaultClient, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range toolNames(t, cs) {
			if slices.Contains([]string{"search", "update_page", "whoami"}, n) || slices.Contains(c.want, n) {
				got = append(got, n)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("prefix %v: upstream tools listed as %v, want %v", c.prefix, got, c.want)
		}
		_ = cs.Close()
		_ = p.Close(context.Background())
	}
}
