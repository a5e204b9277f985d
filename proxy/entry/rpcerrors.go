package entry

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// JSON-RPC's own error codes, for refusals the SDK writes as plain text.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInternalError  = -32603
)

// rpcErrors turns the plain-text error answers the go-sdk handler writes
// before any MCP handler runs (unknown method, malformed JSON, wrong
// Content-Type or Accept, …) into JSON-RPC error bodies carrying a trace
// code, keeping the HTTP status. Everything else passes through untouched.
// finish must be called once the handler returned.
type rpcErrors struct {
	w       http.ResponseWriter
	id      json.RawMessage // the request's id, when the body had one
	status  int
	rewrite bool
	body    bytes.Buffer
}

// requestID reads the id of a single JSON-RPC message; nil when there is none.
func requestID(body []byte) json.RawMessage {
	m, ok := rpcread.Read(body).Single()
	if !ok || len(m.ID) == 0 {
		return nil
	}
	return m.ID
}

func (r *rpcErrors) Header() http.Header { return r.w.Header() }

func (r *rpcErrors) WriteHeader(status int) {
	if r.status != 0 {
		return
	}
	r.status = status
	// 404 is left alone: the entry answers unknown and deleted sessions
	// itself (adoption, or a JSON-RPC 404), and a bare 404 reaching the
	// client is the regression mutant 8 and the hang-1800s repro show.
	if status >= 400 && status != http.StatusNotFound && strings.HasPrefix(r.w.Header().Get("Content-Type"), "text/plain") {
		r.rewrite = true // held until finish, which knows the whole message
		return
	}
	r.w.WriteHeader(status)
}

func (r *rpcErrors) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.rewrite {
		if r.body.Len() < 4096 { // a refusal's text is a line; never grow without bound
			r.body.Write(b)
		}
		return len(b), nil
	}
	return r.w.Write(b)
}

func (r *rpcErrors) Flush() {
	if r.rewrite {
		return
	}
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *rpcErrors) Unwrap() http.ResponseWriter { return r.w }

// finish writes the JSON-RPC error for a held plain-text refusal.
func (r *rpcErrors) finish() {
	if !r.rewrite {
		return
	}
	msg := strings.TrimSpace(r.body.String())
	code := trace.New()
	var id any = r.id
	if r.id == nil {
		id = nil
	}
	h := r.w.Header()
	h.Del("X-Content-Type-Options")
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	r.w.WriteHeader(r.status)
	_ = json.NewEncoder(r.w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    rpcCode(r.status, msg),
			"message": msg + " [trace " + code + "]",
			"data":    map[string]string{trace.MetaKey: code},
		},
	})
}

// rpcCode maps a plain-text refusal to the JSON-RPC code that says the same.
func rpcCode(status int, msg string) int {
	switch {
	case strings.Contains(msg, "not handled"):
		return codeMethodNotFound
	case strings.HasPrefix(msg, "malformed payload"):
		return codeParseError
	case status >= 500:
		return codeInternalError
	}
	return codeInvalidRequest
}
