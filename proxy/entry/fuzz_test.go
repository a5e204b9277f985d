package entry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
)

// fuzzTarget is one entry handler shared by every fuzz input (building one
// per input would make the fuzzer measure setup): one project without
// upstreams, users alice and bob, sessions capped so inputs cannot pile up.
func fuzzTarget() http.Handler {
	fuzzOnce.Do(func() {
		reg := session.NewRegistry(session.Limits{MaxTotal: 256, MaxPerUser: 256})
		tbl := reg.Table("p")
		p := project.New("p", project.Options{Sessions: tbl, Audit: discard{}, Knobs: knobs.Defaults(), Logger: nopLogger()})
		h := New(Options{
			Projects: map[string]Project{"p": {P: p, Sessions: tbl}},
			Users:    map[string]string{"alice-token": "alice", "bob-token": "bob"},
			Registry: reg, Records: audit.NewMemory(), Audit: discard{}, MaxBodyBytes: 64 << 10,
		})
		mux := http.NewServeMux()
		mux.Handle("/projects/{project}/mcp", h)
		fuzzHandler = mux
	})
	return fuzzHandler
}

// FuzzEntry sends arbitrary methods, session ids, headers and bodies to the
// entry handler. Whatever arrives: no panic, an answer with a status, and
// every error answered in JSON (a JSON-RPC error on this endpoint).
func FuzzEntry(f *testing.F) {
	f.Add("POST", "", "application/json", "application/json, text/event-stream", "Bearer alice-token", initBody)
	f.Add("POST", "NEVER-ISSUED", "application/json", "application/json, text/event-stream", "Bearer bob-token", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	f.Add("DELETE", "x", "application/json", "*/*", "bearer alice-token", "")
	f.Add("GET", "abc", "", "text/event-stream", "", "")
	f.Add("POST", "ünï😀", "text/plain", "text/html", "Basic x", `{"jsonrpc":"1.0","id":[],"method":5}`)
	f.Add("POST", strings.Repeat("z", 200), "application/json; charset=utf-8", "application/*", "Bearer", `[{"jsonrpc":"2.0"}]`)
	f.Add("PUT", "a b/../c", "application/json", "", "Bearer alice-token extra", `{`)
	h := fuzzTarget()
	f.Fuzz(func(t *testing.T, method, sessionID, contentType, accept, authz, body string) {
		req := httptest.NewRequest(http.MethodPost, "/projects/p/mcp", strings.NewReader(body))
		if validMethod(method) {
			req.Method = method
		}
		set := func(k, v string) {
			if v != "" {
				req.Header[k] = []string{v}
			}
		}
		set("Mcp-Session-Id", sessionID)
		set("Content-Type", contentType)
		set("Accept", accept)
		set("Authorization", authz)
		// A GET on a session is a stream that stays open until its client
		// leaves: this client leaves after a moment.
		ctx, cancel := context.WithTimeout(req.Context(), 200*time.Millisecond)
		defer cancel()
		req = req.WithContext(ctx)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code < 100 || w.Code > 599 {
			t.Fatalf("status %d", w.Code)
		}
		if w.Code >= 400 {
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("%s answered %d with Content-Type %q: %q", req.Method, w.Code, ct, w.Body.String())
			}
			var e struct {
				JSONRPC string           `json:"jsonrpc"`
				Error   *json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil {
				t.Fatalf("%s answered %d without a JSON-RPC error: %q", req.Method, w.Code, w.Body.String())
			}
		}
	})
}

// validMethod reports whether m is an HTTP token (httptest panics on others).
func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
