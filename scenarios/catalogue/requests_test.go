package catalogue

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// seenRequest is a request as the proxy got it.
type seenRequest struct {
	method string
	header http.Header
	body   string
}

// recorder is a proxy that records every request and answers each with
// answer.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
	url  string
}

func newRecorder(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body string)) *recorder {
	t.Helper()
	rec := &recorder{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.seen = append(rec.seen, seenRequest{method: r.Method, header: r.Header.Clone(), body: string(b)})
		rec.mu.Unlock()
		answer(w, r, string(b))
	}))
	t.Cleanup(ts.Close)
	rec.url = ts.URL
	return rec
}

func (rec *recorder) requests() []seenRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seenRequest(nil), rec.seen...)
}

// env is a world whose proxy is rec, with alice's token.
func (rec *recorder) env() *harness.Env {
	return &harness.Env{Target: served{url: rec.url}, Users: map[string]string{"alice": "alice-token"}}
}

// answerJSON answers 200 with body as JSON, issuing session id if given.
func answerJSON(id, body string) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.Method == http.MethodDelete {
			return
		}
		if id != "" {
			w.Header().Set("Mcp-Session-Id", id)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// asAClientSends holds one request to what an MCP client sends on the
// Streamable HTTP transport: a POST of JSON, accepting JSON and SSE, as
// the user's token, with the session id and protocol version given (none
// when "").
func asAClientSends(t *testing.T, what string, r seenRequest, session, version, body string) {
	t.Helper()
	h := r.header
	switch {
	case r.method != http.MethodPost:
		t.Errorf("%s: %s, want a POST", what, r.method)
	case h.Get("Content-Type") != "application/json":
		t.Errorf("%s: Content-Type %q", what, h.Get("Content-Type"))
	case !strings.Contains(h.Get("Accept"), "application/json") || !strings.Contains(h.Get("Accept"), "text/event-stream"):
		t.Errorf("%s: Accept %q, want JSON and SSE", what, h.Get("Accept"))
	case h.Get("Authorization") != "Bearer alice-token":
		t.Errorf("%s: Authorization %q, want alice's token", what, h.Get("Authorization"))
	case h.Get("Mcp-Session-Id") != session || len(h.Values("Mcp-Session-Id")) > 1:
		t.Errorf("%s: session %q, want %q", what, h.Values("Mcp-Session-Id"), session)
	case h.Get("Mcp-Protocol-Version") != version:
		t.Errorf("%s: protocol version %q, want %q", what, h.Get("Mcp-Protocol-Version"), version)
	case r.body != body:
		t.Errorf("%s: body %q, want %q", what, r.body, body)
	}
}

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// post sends what a client sends, gives back the answer's status, type
// and body, and ends a session its request opened by accident (a 200
// issuing one), never one a refusal names.
func TestPostSendsAsAClientAndClosesWhatItOpened(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, answerJSON("OPENED", `{"jsonrpc":"2.0","id":1,"result":{}}`))
	env := rec.env()
	status, ctype, body, err := post(ctx, env, env.ProjectURL(), "alice", "S1", "2025-06-18", pingBody)
	if err != nil || status != http.StatusOK || ctype != "application/json" || !strings.Contains(body, `"result"`) {
		t.Fatalf("post: %d %q %q %v", status, ctype, body, err)
	}
	got := rec.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want the POST and the DELETE of the session it opened", len(got))
	}
	asAClientSends(t, "post", got[0], "S1", "2025-06-18", pingBody)
	if got[1].method != http.MethodDelete || got[1].header.Get("Mcp-Session-Id") != "OPENED" {
		t.Errorf("after it: %s of session %q, want a DELETE of OPENED", got[1].method, got[1].header.Get("Mcp-Session-Id"))
	}

	refusing := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Mcp-Session-Id", "NAMED")
		http.Error(w, "no", http.StatusBadRequest)
	})
	env = refusing.env()
	if status, _, _, err := post(ctx, env, env.ProjectURL(), "alice", "", "", pingBody); err != nil || status != http.StatusBadRequest {
		t.Fatalf("post to a refusal: %d %v", status, err)
	}
	got = refusing.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests after a refusal naming a session, want the POST alone", len(got))
	}
	asAClientSends(t, "post without a session or version", got[0], "", "", pingBody)
}

// openSession initializes (naming no version in the header), then sends
// notifications/initialized on the session the answer issued, in the
// version asked for; an initialize that issues no session, or a refused
// notification, is an error.
func TestOpenSessionInitializesThenNotifies(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if strings.Contains(body, `"initialize"`) {
			answerJSON("SID", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)(w, r, body)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	id, err := openSession(ctx, rec.env(), "alice", "2025-11-25")
	if err != nil || id != "SID" {
		t.Fatalf("openSession: %q %v", id, err)
	}
	got := rec.requests()
	if len(got) != 2 || !strings.Contains(got[0].body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("requests %+v, want the initialize asking for 2025-11-25, then the notification", got)
	}
	if h := got[0].header; h.Get("Mcp-Protocol-Version") != "" || h.Get("Mcp-Session-Id") != "" || h.Get("Authorization") != "Bearer alice-token" ||
		h.Get("Content-Type") != "application/json" || !strings.Contains(h.Get("Accept"), "text/event-stream") {
		t.Errorf("the initialize's headers: %v", h)
	}
	asAClientSends(t, "notifications/initialized", got[1], "SID", "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for name, answer := range map[string]func(http.ResponseWriter, *http.Request, string){
		"an initialize issuing no session": answerJSON("", `{"jsonrpc":"2.0","id":1,"result":{}}`),
		"an initialize refused": func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Mcp-Session-Id", "SID")
			http.Error(w, "no", http.StatusForbidden)
		},
		"the notification refused": func(w http.ResponseWriter, r *http.Request, body string) {
			if strings.Contains(body, `"initialize"`) {
				answerJSON("SID", `{}`)(w, r, body)
				return
			}
			http.Error(w, "no", http.StatusInternalServerError)
		},
	} {
		if id, err := openSession(ctx, newRecorder(t, answer).env(), "alice", "2025-11-25"); err == nil {
			t.Errorf("%s: opened %q", name, id)
		}
	}
}

// The raw requests of the session rows are a client's, with the session
// id as sent (even when not canonical) and the protocol version the rows
// speak; a DELETE carries no body.
func TestRawRequestsSendAsAClient(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, answerJSON("", `{"jsonrpc":"2.0","id":1,"result":{}}`))
	env := rec.env()
	hc := harness.HTTPClient("alice-token")
	if status, body, err := rawRequest(ctx, hc, http.MethodPost, env.ProjectURL(), "S1", pingBody); err != nil || status != http.StatusOK || !strings.Contains(body, "result") {
		t.Fatalf("rawRequest: %d %q %v", status, body, err)
	}
	if status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, "a b/../c", pingBody); err != nil || status != http.StatusOK || !strings.Contains(body, "result") {
		t.Fatalf("mcpRequest: %d %q %v", status, body, err)
	}
	if _, _, err := mcpRequest(ctx, env, "alice", http.MethodPost, "", pingBody); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rawRequest(ctx, hc, http.MethodDelete, env.ProjectURL(), "S2", ""); err != nil {
		t.Fatal(err)
	}
	got := rec.requests()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	asAClientSends(t, "rawRequest", got[0], "S1", "2025-11-25", pingBody)
	asAClientSends(t, "mcpRequest", got[1], "a b/../c", "2025-11-25", pingBody)
	asAClientSends(t, "mcpRequest without a session", got[2], "", "2025-11-25", pingBody)
	if d := got[3]; d.method != http.MethodDelete || d.header.Get("Mcp-Session-Id") != "S2" || d.header.Get("Content-Type") != "application/json" || d.body != "" {
		t.Errorf("the DELETE: %s %v %q", d.method, d.header, d.body)
	}
}

// rawMCP sends the target's client request with the session id and
// version given (none when ""), edit applied last, and gives back the
// session id the answer issued.
func TestRawMCPSendsAsAClientAndReadsTheIssuedSession(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, answerJSON("ISSUED", `{"jsonrpc":"2.0","id":1,"result":{}}`))
	env := rec.env()
	status, sid, body, err := rawMCP(ctx, env, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, "", "", pingBody)
	if err != nil || status != http.StatusOK || sid != "ISSUED" || !strings.Contains(body, "result") {
		t.Fatalf("rawMCP: %d %q %q %v", status, sid, body, err)
	}
	if _, _, _, err := rawMCP(ctx, env, nil, "tab\tid", "2025-06-18", pingBody); err != nil {
		t.Fatal(err)
	}
	got := rec.requests()
	asAClientSends(t, "rawMCP", got[0], "", "", pingBody)
	if got[0].header.Get("Origin") != "http://evil.example" {
		t.Errorf("the edit was not applied: Origin %q", got[0].header.Get("Origin"))
	}
	asAClientSends(t, "rawMCP on a session", got[1], "tab\tid", "2025-06-18", pingBody)
}

// A wire session sends what a client sends, under the id its first answer
// issued from then on, the version given (none when ""), edit applied.
func TestAWireSessionSendsUnderItsID(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, answerJSON("WIRE", `{"jsonrpc":"2.0","id":1,"result":{}}`))
	env := rec.env()
	w := &wireSession{env: env, hc: env.HTTPClient("alice"), endpoint: env.ServerURL("everything")}
	status, ctype, body, err := w.send(ctx, "", pingBody, nil)
	if err != nil || status != http.StatusOK || ctype != "application/json" || !strings.Contains(body, "result") || w.id != "WIRE" {
		t.Fatalf("send: %d %q %q %v, session %q", status, ctype, body, err, w.id)
	}
	if _, _, _, err := w.send(ctx, wireVersion, pingBody, func(r *http.Request) { r.Header.Set("X-Edit", "1") }); err != nil {
		t.Fatal(err)
	}
	got := rec.requests()
	asAClientSends(t, "the first send", got[0], "", "", pingBody)
	asAClientSends(t, "a send on the session", got[1], "WIRE", wireVersion, pingBody)
	if got[1].header.Get("X-Edit") != "1" {
		t.Error("the edit was not applied")
	}
}

// The API requests of the security rows go to the proxy's API as the user
// (or with the token) given: a chat turn POSTs JSON asking for a stream or
// not; a GET reads the path asked for; each gives back status and body.
func TestAPIRequestsGoAsTheUser(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
	})
	env := rec.env()
	for _, stream := range []bool{false, true} {
		status, body, err := chatTurn(ctx, env, "alice", stream)
		if err != nil || status != http.StatusTeapot || body != "POST /api/v1/chat" {
			t.Errorf("chatTurn: %d %q %v", status, body, err)
		}
	}
	if status, body, err := apiGet(ctx, env, "alice", "/api/v1/audit?trace=X"); err != nil || status != http.StatusTeapot || body != "GET /api/v1/audit" {
		t.Errorf("apiGet: %d %q %v", status, body, err)
	}
	if status, body, err := apiGetWith(ctx, env, "admin-token", "/api/v1/instances"); err != nil || status != http.StatusTeapot || body != "GET /api/v1/instances" {
		t.Errorf("apiGetWith: %d %q %v", status, body, err)
	}
	got := rec.requests()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for i, stream := range []string{"false", "true"} {
		r := got[i]
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Authorization") != "Bearer alice-token" || !strings.Contains(r.body, `"stream":`+stream) {
			t.Errorf("chat turn %d: %v %q", i, r.header, r.body)
		}
	}
	if got[2].header.Get("Authorization") != "Bearer alice-token" || got[3].header.Get("Authorization") != "Bearer admin-token" {
		t.Errorf("the GETs' tokens: %q, %q", got[2].header.Get("Authorization"), got[3].header.Get("Authorization"))
	}
}
