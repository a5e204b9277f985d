package project

import (
	"log/slog"
	"testing"
)

func newNamed(t *testing.T, noPrefix bool, servers ...string) *Project {
	t.Helper()
	m := map[string]string{}
	for _, s := range servers {
		m[s] = "http://127.0.0.1:1/mcp"
	}
	return New("p", Options{Servers: m, NoPrefix: noPrefix, Logger: slog.New(slog.DiscardHandler)})
}

// Names a client sees map back to the server and the upstream's own name;
// the longest server prefix wins.
func TestNamesRouteBackToTheirServer(t *testing.T) {
	p := newNamed(t, false, "wiki", "wiki-admin", "net")
	for _, c := range []struct{ name, server, upstream string }{
		{"wiki_search", "wiki", "search"},
		{"wiki-admin_search", "wiki-admin", "search"},
		{"net_list_sites", "net", "list_sites"},
	} {
		s, u, ok := p.internal(c.name)
		if !ok || s != c.server || u != c.upstream {
			t.Errorf("%s: got %q %q %v, want %q %q", c.name, s, u, ok, c.server, c.upstream)
		}
		if got := p.external(c.server, c.upstream); got != c.name {
			t.Errorf("external(%s, %s) = %q, want %q", c.server, c.upstream, got, c.name)
		}
	}
	if _, _, ok := p.internal("other_search"); ok {
		t.Error("a name without a server prefix routed somewhere")
	}
}

// prefix: false passes names through, and only for a one-server project.
func TestNoPrefixPassesNamesThrough(t *testing.T) {
	p := newNamed(t, true, "everything")
	if s, u, ok := p.internal("test_simple_text"); !ok || s != "everything" || u != "test_simple_text" {
		t.Fatalf("got %q %q %v", s, u, ok)
	}
	if got := p.external("everything", "echo"); got != "echo" {
		t.Fatalf("external = %q", got)
	}
	if two := newNamed(t, true, "a", "b"); two.external("a", "x") != "a_x" {
		t.Fatal("with two servers, names must stay prefixed whatever NoPrefix says")
	}
}
