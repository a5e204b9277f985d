package entry

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

type discard struct{}

func (discard) Record(audit.Row) {}

// countingRecords is an in-memory Records that counts lookups.
type countingRecords struct {
	*audit.Memory
	lookups atomic.Int64
}

func (c *countingRecords) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	c.lookups.Add(1)
	return c.Memory.LookupSession(ctx, id)
}

// newServer serves one project "p" (no upstreams) with users alice and bob.
func newServer(t *testing.T, maxBody int64) (*httptest.Server, *countingRecords, *session.Registry) {
	t.Helper()
	reg := session.NewRegistry(session.Limits{})
	tbl := reg.Table("p")
	kv := knobs.Defaults()
	p := project.New("p", project.Options{Sessions: tbl, Audit: discard{}, Knobs: kv, Logger: nopLogger()})
	t.Cleanup(p.Close)
	recs := &countingRecords{Memory: audit.NewMemory()}
	h := New(Options{
		Projects: map[string]Project{"p": {P: p, Sessions: tbl}},
		Users:    map[string]string{"alice-token": "alice", "bob-token": "bob"},
		Registry: reg, Records: recs, Audit: discard{}, MaxBodyBytes: maxBody,
	})
	mux := http.NewServeMux()
	mux.Handle("/projects/{project}/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, recs, reg
}

type rpcAnswer struct {
	status int
	ct     string
	code   int
	msg    string
	header http.Header
	body   string
}

func send(t *testing.T, srv *httptest.Server, method string, hdr map[string]string, body string) rpcAnswer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/projects/p/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := rpcAnswer{status: resp.StatusCode, ct: resp.Header.Get("Content-Type"), header: resp.Header, body: string(b)}
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != nil && e.JSONRPC == "2.0" {
		a.code, a.msg = e.Error.Code, e.Error.Message
	} else {
		a.msg = "NOT JSON-RPC: " + string(b)
	}
	return a
}

var jsonHeaders = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

func with(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range jsonHeaders {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	users := map[string]string{"tok": "alice"}
	for _, h := range []string{"Bearer tok", "bearer tok", "BEARER tok", "  Bearer   tok "} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", h)
		if u, ok := Authenticate(r, users); !ok || u != "alice" {
			t.Errorf("Authorization %q: got %q, %v; want alice (RFC 6750: the scheme is case-insensitive)", h, u, ok)
		}
	}
	for _, h := range []string{"", "Basic tok", "Bearer", "Bearer other", "Bearer tok extra"} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", h)
		if u, ok := Authenticate(r, users); ok {
			t.Errorf("Authorization %q authenticated as %q", h, u)
		}
	}
}

func TestSDKPlainTextErrorsBecomeJSONRPC(t *testing.T) {
	srv, _, _ := newServer(t, 1024)
	cases := []struct {
		name    string
		method  string
		hdr     map[string]string
		body    string
		status  int
		code    int
		mention string
	}{
		{"malformed JSON", http.MethodPost, jsonHeaders, `{"jsonrpc":"2.0",`, 400, CodeParseError, ""},
		{"bad Content-Type", http.MethodPost, map[string]string{"Content-Type": "text/plain", "Accept": "application/json, text/event-stream"}, initBody, 415, CodeInvalidRequest, "Content-Type"},
		{"bad Accept", http.MethodPost, map[string]string{"Content-Type": "application/json", "Accept": "text/html"}, initBody, 400, CodeInvalidRequest, "Accept"},
		{"too large", http.MethodPost, jsonHeaders, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 2048) + `"}}`, 413, CodeInvalidRequest, "MCPCTL_MAX_BODY_BYTES"},
		{"method not allowed", http.MethodPut, jsonHeaders, initBody, 405, CodeInvalidRequest, ""},
		{"GET without a session", http.MethodGet, map[string]string{"Accept": "text/event-stream"}, "", 400, CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := send(t, srv, c.method, c.hdr, c.body)
			if a.status != c.status || a.code != c.code || a.ct != "application/json" {
				t.Fatalf("got %d %q code %d (%s); want %d application/json code %d", a.status, a.ct, a.code, a.msg, c.status, c.code)
			}
			if !strings.Contains(a.msg, "[trace ") || !strings.Contains(a.msg, c.mention) {
				t.Errorf("message %q should quote a trace code and mention %q", a.msg, c.mention)
			}
		})
	}
}

func TestInvalidSessionIDsAreRefusedBeforeAnyLookup(t *testing.T) {
	srv, recs, reg := newServer(t, 1<<20)
	for _, id := range []string{"ünï😀", "a b/../c", strings.Repeat("x", session.MaxIDBytes+1), "tab\tid", strings.Repeat("y", 1<<15)} {
		a := send(t, srv, http.MethodPost, with(map[string]string{"Mcp-Session-Id": id, "Authorization": "Bearer alice-token"}),
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if a.status != http.StatusBadRequest || a.code != CodeInvalidRequest {
			t.Errorf("id %.20q: got %d code %d (%s), want 400 -32600", id, a.status, a.code, a.msg)
		}
		if strings.Contains(a.msg, id) {
			t.Errorf("the error echoes the invalid id %.20q", id)
		}
	}
	if n := recs.lookups.Load(); n != 0 {
		t.Errorf("invalid ids caused %d store lookups, want none", n)
	}
	if reg.Len() != 0 {
		t.Errorf("invalid ids left %d sessions", reg.Len())
	}
}

func TestOnlyTheOwnerUsesOrClosesASession(t *testing.T) {
	srv, recs, _ := newServer(t, 1<<20)
	a := send(t, srv, http.MethodPost, with(map[string]string{"Authorization": "Bearer alice-token"}), initBody)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", a.status, a.msg)
	}
	got, err := recs.LookupSession(context.Background(), id)
	if err != nil || len(got) != 1 || got[0].Owner != "alice" {
		t.Fatalf("the owner was not recorded before the client got the id: %+v, %v", got, err)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	bob := with(map[string]string{"Authorization": "bearer bob-token", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	anon := with(map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	for who, hdr := range map[string]map[string]string{"bob": bob, "anonymous": anon} {
		if a := send(t, srv, http.MethodPost, hdr, list); a.status != http.StatusNotFound || a.code == 0 {
			t.Errorf("%s's request on alice's session: %d %s, want a JSON-RPC 404", who, a.status, a.msg)
		}
		if a := send(t, srv, http.MethodDelete, hdr, ""); a.status != http.StatusNotFound || a.code == 0 {
			t.Errorf("%s's DELETE of alice's session: %d %s, want a JSON-RPC 404", who, a.status, a.msg)
		}
	}
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || got[0].Tombstone() {
		t.Errorf("a refused DELETE tombstoned the id: %+v", got)
	}
	alice := with(map[string]string{"Authorization": "Bearer alice-token", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	if a := send(t, srv, http.MethodPost, alice, list); a.status != http.StatusOK {
		t.Fatalf("alice's own request after the attempts: %d %s", a.status, a.msg)
	}
	if a := send(t, srv, http.MethodDelete, alice, ""); a.status/100 != 2 {
		t.Fatalf("alice's DELETE: %d %s", a.status, a.msg)
	}
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || !got[0].Tombstone() {
		t.Errorf("alice's accepted DELETE left no tombstone: %+v", got)
	}
	if a := send(t, srv, http.MethodPost, alice, list); a.status != http.StatusNotFound || a.code == 0 {
		t.Errorf("alice's request on her DELETEd id: %d %s, want a JSON-RPC 404", a.status, a.msg)
	}
}

func TestPingIsAnswered(t *testing.T) {
	srv, _, _ := newServer(t, 1<<20)
	a := send(t, srv, http.MethodPost, jsonHeaders, initBody)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", a.status, a.msg)
	}
	hdr := with(map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	if a := send(t, srv, http.MethodPost, hdr, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); a.status != http.StatusOK || a.code != 0 {
		t.Fatalf("ping: %d code %d %s", a.status, a.code, a.msg)
	}
}

func TestIsAnswerEventTellsTheAnswerFromWhatPrecedesIt(t *testing.T) {
	cases := map[string]bool{
		"event: message\nid: 1_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n":                              true,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32001,\"message\":\"x\"}}\n\n":                 true,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"result\":1}}\n\n":            false,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sampling/createMessage\",\"params\":{\"error\":\"\"}}\n\n": false,
		": keep-alive\n\n": false,
	}
	for ev, want := range cases {
		if got := isAnswerEvent([]byte(ev)); got != want {
			t.Errorf("isAnswerEvent(%q) = %v, want %v", ev, got, want)
		}
	}
}
