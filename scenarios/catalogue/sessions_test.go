package catalogue

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	r := s.JudgeOn(target, harness.DefaultBounds(), o)
	if !r.Pass || !strings.Contains(o.Text, "stateless") {
		t.Errorf("a stateless proxy's DELETE: want a pass judged as stateless, got %q (%s)", r.Reason, o.Text)
	}
}

// A stateless proxy is still held to its DELETE being answered 2xx or 405
// and to serving after it: one answering 500, or refusing the request
// after, fails the row.
func TestAStatelessProxysBrokenDeleteFails(t *testing.T) {
	s := byName(t, "none × DELETE with empty JSON body")
	for name, refuse := range map[string]func(r *http.Request, deleted bool) bool{
		"a DELETE answered 500":            func(r *http.Request, _ bool) bool { return r.Method == http.MethodDelete },
		"a request after the DELETE fails": func(_ *http.Request, deleted bool) bool { return deleted },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			inner := sdkServer(t, true)
			var deleted atomic.Bool
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				after := deleted.Load()
				if r.Method == http.MethodDelete {
					deleted.Store(true)
				}
				if refuse(r, after) {
					http.Error(w, "broken", http.StatusInternalServerError)
					return
				}
				httputil.NewSingleHostReverseProxy(mustParse(t, inner.URL)).ServeHTTP(w, r)
			}))
			t.Cleanup(proxy.Close)
			target := served{url: proxy.URL}
			o := DeleteEmptyJSON.Do(ctx, &harness.Env{Target: target})
			if r := s.JudgeOn(shape(t, "stateless: true\n"), harness.DefaultBounds(), o); r.Pass {
				t.Errorf("%s: the row passed (%s)", name, o.Text)
			}
		})
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
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
	if r := s.JudgeOn(target, harness.DefaultBounds(), o); !r.Pass {
		t.Errorf("a stateful go-sdk server's DELETE failed a target without errorShapes: %s", r.Reason)
	}
	r := s.JudgeOn(nil, harness.DefaultBounds(), o)
	if r.Pass || r.Breaches[0].Tier != Own || !strings.Contains(r.Reason, "not a JSON-RPC error") {
		t.Errorf("mcplocal's 404 must carry a JSON-RPC error body: got %s", r.Reason)
	}
}

// A stateless proxy may answer the DELETE with a 2xx, or refuse it with
// 405 as the MCP spec lets a server: either passes, and the row says which.
func TestAStatelessProxyAnsweringDeleteWith2xxOr405Passes(t *testing.T) {
	for _, status := range []int{http.StatusNoContent, http.StatusMethodNotAllowed} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		inner := sdkServer(t, true)
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				w.WriteHeader(status)
				return
			}
			httputil.NewSingleHostReverseProxy(mustParse(t, inner.URL)).ServeHTTP(w, r)
		}))
		t.Cleanup(proxy.Close)
		s := byName(t, "none × DELETE with empty JSON body")
		o := DeleteEmptyJSON.Do(ctx, &harness.Env{Target: served{url: proxy.URL}})
		if r := s.JudgeOn(shape(t, "stateless: true\n"), harness.DefaultBounds(), o); !r.Pass || !strings.Contains(o.Text, fmt.Sprint(status)) {
			t.Errorf("a stateless proxy answering its DELETE %d: want a pass saying so, got %q (%s)", status, r.Reason, o.Text)
		}
	}
}
