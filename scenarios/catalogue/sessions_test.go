package catalogue

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// served is a target already serving at url: an MCP endpoint of the go-sdk
// in front of nothing, for checks that need an answer and no world.
type served struct {
	bare
	url string
}

func (s served) URL() string            { return s.url }
func (s served) Endpoint(string) string { return s.url + "/mcp" }

func sdkServer(t *testing.T, stateless bool) *httptest.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// A stateless proxy (no Mcp-Session-Id, which the MCP spec allows) is
// judged by the stateless promises: its DELETE is answered and nothing
// breaks after it. It is never failed on a deleted id answering 200.
func TestAStatelessProxyIsJudgedByStatelessPromises(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	target := served{url: sdkServer(t, true).URL}
	s := byName(t, "none × DELETE with empty JSON body")
	o := DeleteEmptyJSON.Do(ctx, &harness.Env{Target: target})
	r := s.JudgeOn(target, knobs.Defaults(), o)
	if !r.Pass || !strings.Contains(o.Text, "stateless") {
		t.Errorf("a stateless proxy's DELETE: want a pass judged as stateless, got %q (%s)", r.Reason, o.Text)
	}
}

// A stateful proxy that does not claim errorShapes is held to the spec's
// 404 for a DELETEd id, not to its body being a JSON-RPC error; mcplocal is
// held to both.
func TestADeletedIDsNotFoundBodyIsMcplocalsShape(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	target := served{url: sdkServer(t, false).URL}
	s := byName(t, "none × DELETE with empty JSON body")
	o := DeleteEmptyJSON.Do(ctx, &harness.Env{Target: target})
	if r := s.JudgeOn(target, knobs.Defaults(), o); !r.Pass {
		t.Errorf("a stateful go-sdk server's DELETE failed a target without errorShapes: %s", r.Reason)
	}
	r := s.JudgeOn(nil, knobs.Defaults(), o)
	if r.Pass || r.Breaches[0].Tier != Own || !strings.Contains(r.Reason, "not a JSON-RPC error") {
		t.Errorf("mcplocal's 404 must carry a JSON-RPC error body: got %s", r.Reason)
	}
}
