// Package entry is where an MCP request enters the proxy: the HTTP handler
// for /projects/{project}/mcp.
//
// It authenticates the client, answers an unknown project or a deleted
// session with a JSON-RPC error body (never a bare 404), recreates sessions
// the proxy lost (after a restart) under the client's own id, and hands
// everything else to the go-sdk Streamable HTTP handler of the project.
package entry

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

const sessionHeader = "Mcp-Session-Id"

// Project is one routable project.
type Project struct {
	P           *project.Project
	RequireAuth bool
}

// Options configures the entry handler.
type Options struct {
	Projects map[string]Project
	Users    map[string]string // bearer token -> user name
	Sessions *session.Table
	Audit    project.Recorder
	// Strict answers unknown session ids with a JSON-RPC 404 instead of
	// recreating them.
	Strict bool
	Logger *slog.Logger
	// MaxBodyBytes bounds one POST body (knob MCPCTL_MAX_BODY_BYTES).
	MaxBodyBytes int64
}

// Handler serves /projects/{project}/mcp. It is safe for concurrent use.
type Handler struct {
	o        Options
	sdk      map[string]*mcp.StreamableHTTPHandler
	adopting sync.Map // session id -> *sync.Mutex, one adoption at a time per id
}

type adoptKey struct{}

// New returns the entry handler for the given projects.
func New(o Options) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = knobs.Defaults().MaxBodyBytes
	}
	h := &Handler{o: o, sdk: map[string]*mcp.StreamableHTTPHandler{}}
	for name, pr := range o.Projects {
		p := pr.P
		h.sdk[name] = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			if s, ok := r.Context().Value(adoptKey{}).(*mcp.Server); ok {
				return s
			}
			return p.Server()
		}, &mcp.StreamableHTTPOptions{Logger: o.Logger, MaxRequestBodyBytes: o.MaxBodyBytes}) // SSE answers: progress and server-to-client requests ride the call's own stream
	}
	return h
}

// ServeHTTP implements http.Handler for the pattern /projects/{project}/mcp.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("project")
	pr, ok := h.o.Projects[name]
	if !ok {
		known := make([]string, 0, len(h.o.Projects))
		for n := range h.o.Projects {
			known = append(known, n)
		}
		sort.Strings(known)
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("unknown project %q (projects: %s)", name, strings.Join(known, ", ")))
		return
	}
	r.Header.Del(project.HeaderUser)
	r.Header.Del(project.HeaderRecreated)
	r.Header.Del(trace.Header)
	user, ok := h.authenticate(r)
	if !ok && pr.RequireAuth {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcplocal"`)
		writeError(w, http.StatusUnauthorized, trace.New(), fmt.Sprintf("project %s requires a bearer token (Authorization: Bearer <token>)", name))
		return
	}
	if user != "" {
		r.Header.Set(project.HeaderUser, user)
	}
	rw := &rpcErrors{w: w} // the SDK's plain-text refusals become JSON-RPC errors
	defer rw.finish()
	w = rw
	sdk := h.sdk[name]
	id := r.Header.Get(sessionHeader)
	if id == "" {
		sdk.ServeHTTP(w, r)
		return
	}
	if h.o.Sessions.WasDeleted(id) {
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("session %s was closed by its client; initialize a new session", id))
		return
	}
	switch r.Method {
	case http.MethodDelete:
		h.delete(w, r, sdk, id)
		pr.P.Release(id)
	case http.MethodPost, http.MethodGet:
		h.serveSession(w, r, pr.P, sdk, id, user)
	default:
		sdk.ServeHTTP(w, r)
	}
}

// delete closes a session whatever the body and Content-Type say: some
// clients send Content-Type: application/json with an empty body, and
// rejecting that leaks the session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, sdk http.Handler, id string) {
	r.Body = http.NoBody
	iw := &intercept{w: w, h: http.Header{}}
	sdk.ServeHTTP(iw, r)
	h.o.Sessions.Delete(id)
	if iw.notFound {
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("session %s is not open; initialize a new session", id))
	}
}

// serveSession forwards a request on an existing session id. If the SDK does
// not know the id (the proxy restarted, or the session was lost), the session
// is recreated under that id and the request replayed on it.
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, p *project.Project, sdk http.Handler, id, user string) {
	var body []byte
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, trace.New(), fmt.Sprintf("request body: %v", err))
			return
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rw, ok := w.(*rpcErrors); ok {
			rw.id = requestID(body)
		}
	}
	iw := &intercept{w: w, h: http.Header{}}
	sdk.ServeHTTP(iw, r)
	if !iw.notFound {
		return
	}
	if h.o.Strict {
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("session %s is not known to this proxy (strict sessions); initialize a new session", id))
		return
	}
	code := trace.New()
	if err := h.adopt(r, p, sdk, id, user, code); err != nil {
		p.Release(id)
		writeError(w, http.StatusNotFound, code, fmt.Sprintf("session %s is not known and could not be recreated: %v", id, err))
		return
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.Header.Set(trace.Header, code) // the replayed request's rows share the recreation's code
	iw = &intercept{w: w, h: http.Header{}}
	sdk.ServeHTTP(iw, r)
	if iw.notFound {
		writeError(w, http.StatusNotFound, code, fmt.Sprintf("session %s was recreated but is gone again; initialize a new session", id))
	}
}

// RecreatedReason is what the ⚠ notice and the audit row say about an
// adopted session.
const RecreatedReason = "the proxy did not know this session id, most likely because it restarted"

// adopt recreates session id: it replays an initialize handshake through the
// SDK handler with a server that mints exactly id, registers the session with
// the requesting user, and writes a session_recreated audit row.
func (h *Handler) adopt(r *http.Request, p *project.Project, sdk http.Handler, id, user, code string) error {
	muAny, _ := h.adopting.LoadOrStore(id, &sync.Mutex{})
	mu := muAny.(*sync.Mutex)
	mu.Lock()
	defer func() {
		mu.Unlock()
		h.adopting.CompareAndDelete(id, mu)
	}()
	if _, ok := h.o.Sessions.Get(id); ok {
		return nil // a concurrent request on the same id adopted it first
	}
	start := time.Now()
	pv := r.Header.Get("Mcp-Protocol-Version")
	if !slices.Contains(project.ProtocolVersions, pv) {
		pv = "2025-03-26" // clients of the first Streamable HTTP version send no header
	}
	ctx := context.WithValue(r.Context(), adoptKey{}, p.NewServer(id))
	hdr := func(withSession bool) http.Header {
		hd := http.Header{}
		hd.Set("Content-Type", "application/json")
		hd.Set("Accept", "application/json, text/event-stream")
		hd.Set(project.HeaderRecreated, RecreatedReason)
		if user != "" {
			hd.Set(project.HeaderUser, user)
		}
		if withSession {
			hd.Set(sessionHeader, id)
			hd.Set("Mcp-Protocol-Version", pv)
		}
		return hd
	}
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":"mcplocal-recreate","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"recreated-session","version":"0"}}}`, pv)
	rec := &recorder{h: http.Header{}}
	sdk.ServeHTTP(rec, synthetic(ctx, r, hdr(false), init))
	if rec.status != http.StatusOK || rec.h.Get(sessionHeader) != id {
		return fmt.Errorf("replayed initialize answered %d with session %q: %s", rec.status, rec.h.Get(sessionHeader), strings.TrimSpace(rec.body.String()))
	}
	rec = &recorder{h: http.Header{}}
	sdk.ServeHTTP(rec, synthetic(ctx, r, hdr(true), `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if rec.status/100 != 2 {
		return fmt.Errorf("replayed notifications/initialized answered %d: %s", rec.status, strings.TrimSpace(rec.body.String()))
	}
	h.o.Audit.Record(audit.Row{
		Kind: audit.KindSessionRecreated, CorrelationID: code, SpanID: trace.NewSpanID(),
		SessionID: id, User: user, Project: p.Name, Start: start, Duration: time.Since(start),
		Status: audit.StatusOK, Degraded: true, DegradedReason: "session state unavailable: " + RecreatedReason,
	})
	h.o.Logger.Info("session recreated", "trace", code, "session", id, "user", user, "project", p.Name)
	return nil
}

func synthetic(ctx context.Context, orig *http.Request, hd http.Header, body string) *http.Request {
	r := orig.Clone(ctx)
	r.Method = http.MethodPost
	r.Header = hd
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

func (h *Handler) authenticate(r *http.Request) (string, bool) {
	return Authenticate(r, h.o.Users)
}

// Authenticate maps the request's bearer token to its user; ok is false
// when the token is missing or unknown. Tokens are compared in constant time.
func Authenticate(r *http.Request, users map[string]string) (string, bool) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || tok == "" {
		return "", false
	}
	for t, user := range users {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			return user, true
		}
	}
	return "", false
}

// writeError writes a JSON-RPC error body with id null, quoting the trace code.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code":    deadline.CodeRequestFailed,
			"message": fmt.Sprintf("%s [trace %s]", msg, code),
			"data":    map[string]string{trace.MetaKey: code},
		},
	})
}

// intercept passes a response through unless its status is 404, which the
// SDK's handler sends (as plain text) for a session id it does not know.
type intercept struct {
	w        http.ResponseWriter
	h        http.Header
	wrote    bool
	notFound bool
}

func (i *intercept) Header() http.Header { return i.h }

func (i *intercept) WriteHeader(status int) {
	if i.wrote || i.notFound {
		return
	}
	if status == http.StatusNotFound {
		i.notFound = true
		return
	}
	dst := i.w.Header()
	for k, v := range i.h {
		dst[k] = v
	}
	i.wrote = true
	i.w.WriteHeader(status)
}

func (i *intercept) Write(b []byte) (int, error) {
	if !i.wrote && !i.notFound {
		i.WriteHeader(http.StatusOK)
	}
	if i.notFound {
		return len(b), nil
	}
	return i.w.Write(b)
}

func (i *intercept) Flush() {
	if i.notFound {
		return
	}
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	if f, ok := i.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (i *intercept) Unwrap() http.ResponseWriter { return i.w }

// recorder captures the answer to a synthetic request.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}
