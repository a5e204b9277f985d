package load

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// request is one HTTP request a fakeServer received.
type request struct {
	HTTPMethod string
	Header     http.Header
	// The JSON-RPC message of a POST.
	Method    string
	ID        json.RawMessage
	Params    json.RawMessage
	HasParams bool
}

// reply is an answer a test scripts for one JSON-RPC request: status and
// body as they go on the wire, with a Content-Type.
type reply struct {
	Status      int
	ContentType string
	Body        string
}

// fakeServer is a minimal Streamable HTTP MCP server that records what it
// receives. initialize issues SessionID (none when ""); tools/call answers
// a result with two text parts, a non-text part, and the trace code
// "trace-<id>"; notifications get 202; DELETE gets 200. Script overrides
// the answer to a request by method.
type fakeServer struct {
	SessionID string
	// SSE answers requests as an event stream, a notification event first.
	SSE bool
	// Script, when it returns ok, answers the request instead.
	Script func(method string, id json.RawMessage) (reply, bool)
	// Stamp, when set, is sent as Mcp-Session-Id on every answer that is
	// not initialize's.
	Stamp string
	// Stream answers a GET (the standalone stream). Default: 200 and held
	// open until the client goes away.
	Stream func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	seen []request
	// gone is told when a held-open GET ended because the client left.
	gone chan struct{}
}

func newFakeServer(t *testing.T, f *fakeServer) (*fakeServer, *httptest.Server) {
	t.Helper()
	f.gone = make(chan struct{}, 4)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.seen...)
}

// posts are the JSON-RPC methods of the POSTs received, in order.
func (f *fakeServer) posts() []string {
	var out []string
	for _, r := range f.requests() {
		if r.HTTPMethod == http.MethodPost {
			out = append(out, r.Method)
		}
	}
	return out
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := request{HTTPMethod: r.Method, Header: r.Header.Clone()}
	var msg map[string]json.RawMessage
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &msg); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		_ = json.Unmarshal(msg["method"], &rec.Method)
		rec.ID = msg["id"]
		rec.Params, rec.HasParams = msg["params"]
	}
	f.mu.Lock()
	f.seen = append(f.seen, rec)
	f.mu.Unlock()

	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		if f.Stream != nil {
			f.Stream(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		f.gone <- struct{}{}
		return
	}
	if f.Stamp != "" && rec.Method != "initialize" {
		w.Header().Set("Mcp-Session-Id", f.Stamp)
	}
	if f.Script != nil {
		if a, ok := f.Script(rec.Method, rec.ID); ok {
			if a.ContentType != "" {
				w.Header().Set("Content-Type", a.ContentType)
			}
			w.WriteHeader(a.Status)
			_, _ = io.WriteString(w, a.Body)
			return
		}
	}
	if rec.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch rec.Method {
	case "initialize":
		if f.SessionID != "" {
			w.Header().Set("Mcp-Session-Id", f.SessionID)
		}
		result = map[string]any{"protocolVersion": ProtocolVersion, "capabilities": map[string]any{},
			"serverInfo": map[string]any{"name": "fake", "version": "1"}}
	case "tools/call":
		var p struct {
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(rec.Params, &p)
		result = map[string]any{
			"isError": p.Arguments["fail"] == true,
			"content": []map[string]any{
				{"type": "text", "text": "first"},
				{"type": "image", "data": "AAAA", "mimeType": "image/png"},
				{"type": "text", "text": "second"},
			},
			"_meta": map[string]any{trace.MetaKey: "trace-" + string(rec.ID)},
		}
	default:
		result = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rec.ID, "result": result})
	if f.SSE {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// rpcAnswer is a JSON-RPC answer body for id with the given member.
func rpcAnswer(id json.RawMessage, member string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,` + member + `}`
}

func hasHeader(h http.Header, name, want string) bool {
	return strings.Join(h.Values(name), ",") == want
}
