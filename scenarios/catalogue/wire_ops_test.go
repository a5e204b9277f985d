package catalogue

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// wireTarget is a server at url taken for a proxy: its MCP endpoint is
// url/mcp, its tools go by their own names.
type wireTarget struct{ url string }

func (t wireTarget) Name() string                              { return "wire-test" }
func (t wireTarget) Start(context.Context, harness.Spec) error { return nil }
func (t wireTarget) URL() string                               { return t.url }
func (t wireTarget) Restart(context.Context) error             { return nil }
func (t wireTarget) Stop(context.Context) error                { return nil }
func (t wireTarget) Endpoint(string) string                    { return t.url + "/mcp" }
func (t wireTarget) ServerEndpoint(_, _ string) string         { return t.url + "/mcp" }
func (t wireTarget) ToolName(_, tool string) string            { return tool }
func (t wireTarget) PromptName(_, prompt string) string        { return prompt }

// upstreamKey carries inFront's reverse proxy to the everything fake in the
// request a breaking func sees (frontProxy).
type upstreamKey struct{}

// frontProxy is the reverse proxy to the everything fake behind r's front.
func frontProxy(r *http.Request) http.Handler { return r.Context().Value(upstreamKey{}).(http.Handler) }

// inFront serves the everything fake through breaking, which may rewrite a
// request (its body read into b) before it goes on, or answer it itself.
func inFront(t *testing.T, breaking func(w http.ResponseWriter, r *http.Request, b *[]byte) bool) *harness.Env {
	t.Helper()
	up, err := upstream.NewEverything(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + up.Addr())
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), upstreamKey{}, rp))
		b, _ := io.ReadAll(r.Body)
		if breaking != nil && breaking(w, r, &b) {
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return harness.JudgedOn(wireTarget{url: front.URL}, harness.CompressedBounds())
}

// Each wire operation holds against the everything fake itself (the go-sdk's
// server), and fails against a front that breaks its promise.
func TestWireOperationsFailAProxyThatBreaksThem(t *testing.T) {
	for _, c := range []struct {
		op       Operation
		breaking func(w http.ResponseWriter, r *http.Request, b *[]byte) bool
	}{
		{InvalidParams, func(_ http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			// The missing name filled in: a result, not -32602.
			*b = bytes.Replace(*b, []byte(`"params":{"arguments":"not an object"}`), []byte(`"params":{"name":"echo","arguments":{"text":"x"}}`), 1)
			return false
		}},
		{NotificationAccepted, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			if bytes.Contains(*b, []byte("notifications/roots/list_changed")) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{}`))
				return true
			}
			return false
		}},
		{UnsupportedVersion, func(_ http.ResponseWriter, r *http.Request, _ *[]byte) bool {
			if r.Header.Get("Mcp-Protocol-Version") == "1999-01-01" {
				r.Header.Set("Mcp-Protocol-Version", wireVersion)
			}
			return false
		}},
		{LargeAnswer, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			if bytes.Contains(*b, []byte(`"id":"large"`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"large","result":{"content":[{"type":"text","text":"line 000000 of the large answer"}]}}`))
				return true
			}
			return false
		}},
		{IDsOfEveryKind, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			if bytes.Contains(*b, []byte(`"id":-7`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`))
				return true
			}
			return false
		}},
		{VersionNegotiated, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			if bytes.Contains(*b, []byte(`"protocolVersion":"2999-01-01"`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2999-01-01","capabilities":{},"serverInfo":{"name":"x","version":"0"}}}`))
				return true
			}
			return false
		}},
		{ToolsListedWhole, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
			if bytes.Contains(*b, []byte(`"tools/list"`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":100,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]}}`))
				return true
			}
			return false
		}},
	} {
		t.Run(c.op.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if o := c.op.Do(ctx, inFront(t, nil)); o.Err != nil || len(o.Broken) > 0 {
				t.Errorf("against the everything fake: %v %s", o.Err, strings.Join(o.Broken, "; "))
			}
			if o := c.op.Do(ctx, inFront(t, c.breaking)); o.Err == nil && len(o.Broken) == 0 {
				t.Errorf("passed a front that breaks it: %+v", o)
			}
		})
	}
}

// A wire row ends the session it opened (a DELETE naming its id), so no
// session of it outlives the row.
func TestWireOperationsEndTheirSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	used, deleted := map[string]bool{}, map[string]bool{}
	env := inFront(t, func(_ http.ResponseWriter, r *http.Request, _ *[]byte) bool {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			mu.Lock()
			defer mu.Unlock()
			if r.Method == http.MethodDelete {
				deleted[id] = true
			} else {
				used[id] = true
			}
		}
		return false
	})
	if o := InvalidParams.Do(ctx, env); o.Err != nil || len(o.Broken) > 0 {
		t.Fatalf("the row failed: %v %v", o.Err, o.Broken)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(used) == 0 {
		t.Fatal("no request named a session")
	}
	for id := range used {
		if !deleted[id] {
			t.Errorf("session %s outlived the row: never DELETEd", id)
		}
	}
}

// A wire row opens its session as a client does: an initialize answered
// other than 200, or its notifications/initialized refused, fails the row
// before its timed part, naming which.
func TestAWireRowFailsASessionThatDoesNotOpen(t *testing.T) {
	s := byName(t, "none × "+InvalidParams.Name)
	for step, refuse := range map[string]string{"initialize": `"method":"initialize"`, "notifications/initialized": `"method":"notifications/initialized"`} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			env := inFront(t, func(w http.ResponseWriter, _ *http.Request, b *[]byte) bool {
				if bytes.Contains(*b, []byte(refuse)) {
					http.Error(w, "refused", http.StatusInternalServerError)
					return true
				}
				return false
			})
			o := InvalidParams.Do(ctx, env)
			r := s.JudgeOn(bare{}, harness.DefaultBounds(), o)
			if o.Err == nil || !strings.Contains(o.Err.Error(), step) || r.Pass {
				t.Errorf("a session whose %s is refused: err %v, verdict %s", step, o.Err, r.Reason)
			}
		})
	}
}
