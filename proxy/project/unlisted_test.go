package project

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// TestAServerThatCannotListIsNotedInToolsList: when one server of a project
// cannot list its tools (here an L7 proxy in front of it answers a
// plain-text 403 to everything) while the others can, tools/list still
// answers with the others' tools, and the missing server does not just
// vanish: the list carries a ⚠ notice for it, a tool named
// <server>_unavailable whose description says which server is missing,
// why, and the request's trace code; the request's audit row is degraded
// with that reason.
func TestAServerThatCannotListIsNotedInToolsList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	good, _, _, _ := faultyUpstream(t)
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Access denied", http.StatusForbidden)
	}))
	t.Cleanup(denied.Close)
	rows := &rowsSeen{}
	k := knobs.Defaults()
	k.RequestDeadline = 8 * time.Second
	p := New("p", Options{Servers: map[string]string{"good": good, "wall": denied.URL}, Relay: true,
		Sessions: session.NewTable(), Audit: rows, Knobs: k, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	code := trace.New()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: serveRelaying(t, p), HTTPClient: &http.Client{Transport: withTrace{code: code}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list failed as a whole when one server of two could answer: %v", err)
	}
	var names []string
	var notice string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name == "wall_unavailable" {
			notice = tl.Description
		}
	}
	if !strings.Contains(strings.Join(names, " "), "good_echo") {
		t.Errorf("the answering server's tools are missing: %v", names)
	}
	for _, want := range []string{"⚠", "wall", "unavailable", "403", "[trace " + code + "]"} {
		if !strings.Contains(notice, want) {
			t.Errorf("no ⚠ notice for the server that could not list (want %q in the description of wall_unavailable); tools: %v, notice: %q", want, names, notice)
		}
	}
	if strings.Contains(notice, "may be down") {
		t.Errorf("a denial is advised as an outage: %q", notice)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found bool
		for _, r := range rows.all() {
			if r.CorrelationID == code && r.Tool == "tools/list" {
				found = true
				if !r.Degraded || !strings.Contains(r.DegradedReason, "wall") {
					t.Errorf("tools/list row not degraded with the server's reason: degraded %v, reason %q", r.Degraded, r.DegradedReason)
				}
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no audit row for the tools/list")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *rowsSeen) all() []audit.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Row(nil), s.rows...)
}
