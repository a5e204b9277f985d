package plainproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
)

// The stateless mode (Options.Stateless): no Mcp-Session-Id is issued or
// read, GET and DELETE are 405, and every POST stands alone. Each request is
// served by a client session of its own, opened for it and closed after its
// answer, so nothing one request does reaches the next: a log level, a
// subscription. What an upstream sends on the request's stream comes back on
// the client's: progress and log notifications as they are, and a request
// (sampling, elicitation, roots) under an id of this proxy's, which the
// client's answer (a POST of its own, with no session) names, and is routed
// by back to the request that asked while that request is in flight. The
// client's capabilities are not known between requests, so each request's
// session offers the upstream all of them (sampling, elicitation, roots): a
// client without one answers such a request with an error.

// statelessHandler serves inner, a stateful handler, one session per POST.
type statelessHandler struct {
	inner http.Handler
	// modern serves the requests of the newer revision (perRequestRevision).
	modern http.Handler

	next atomic.Uint64
	mu   sync.Mutex
	// asked maps this proxy's id of a request an upstream sent the client
	// to the session it came from and the request's own id there.
	asked map[string]ask
}

// ask is a request sent to the client, awaiting its answer.
type ask struct {
	session string
	id      json.RawMessage
}

func newStateless(inner, modern http.Handler) *statelessHandler {
	return &statelessHandler{inner: inner, modern: modern, asked: map[string]ask{}}
}

// assumedVersion is the protocol version a request without the header
// speaks (the MCP spec, Streamable HTTP).
const assumedVersion = "2025-03-26"

// clientCapabilities are those each request's session offers the upstream.
const clientCapabilities = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`

func (h *statelessHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed: this server is stateless", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Header.Del("Mcp-Session-Id") // a stateless server reads none
	if newerRevision(r, body) {
		h.modern.ServeHTTP(w, withBody(r, body, ""))
		return
	}
	if a, ok := h.answer(body); ok {
		h.relayAnswer(w, r, a, body)
		return
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
		sw := &streamRewriter{ResponseWriter: w, h: h}
		h.inner.ServeHTTP(sw, withBody(r, body, ""))
		h.end(sw.session)
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = assumedVersion
	}
	session, refused := h.open(r, version)
	if refused != nil { // the request itself is refused (its Host, say)
		for k, v := range refused.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Mcp-Session-Id")
		w.WriteHeader(refused.Code)
		_, _ = w.Write(refused.Body.Bytes())
		return
	}
	defer h.end(session)
	h.inner.ServeHTTP(&streamRewriter{ResponseWriter: w, h: h, session: session}, withBody(r, body, session))
}

// newerRevision reports whether a request speaks perRequestRevision or
// later, by its Mcp-Protocol-Version header or its _meta.
func newerRevision(r *http.Request, body []byte) bool {
	if r.Header.Get("Mcp-Protocol-Version") >= perRequestRevision {
		return true
	}
	var m struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	v, _ := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	return v >= perRequestRevision
}

// answer is the request r's body answers, if it is the client's answer
// to one this proxy sent it and is still awaiting.
func (h *statelessHandler) answer(body []byte) (ask, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != nil || len(m.ID) == 0 {
		return ask{}, false
	}
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return ask{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.asked[id]
	delete(h.asked, id)
	return a, ok
}

// relayAnswer gives the answer body to the session that asked, under the
// id it asked by.
func (h *statelessHandler) relayAnswer(w http.ResponseWriter, r *http.Request, a ask, body []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m["id"] = a.id
	b, err := json.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h.inner.ServeHTTP(w, withBody(r, b, a.session))
}

// open opens a session of inner for one request: an initialize at version
// offering every client capability, then notifications/initialized. If
// inner refuses, its answer is returned instead.
func (h *statelessHandler) open(r *http.Request, version string) (string, *httptest.ResponseRecorder) {
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"plainproxy-stateless","version":"0"}}}`,
		version, clientCapabilities)
	rec := httptest.NewRecorder()
	h.inner.ServeHTTP(rec, internal(r, init, "", ""))
	session := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || session == "" {
		if rec.Code == http.StatusOK {
			rec.Code = http.StatusInternalServerError
		}
		return "", rec
	}
	chosen := version
	if v := negotiated(rec.Body.String()); v != "" {
		chosen = v
	}
	rec = httptest.NewRecorder()
	h.inner.ServeHTTP(rec, internal(r, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session, chosen))
	if rec.Code/100 != 2 {
		h.end(session)
		return "", rec
	}
	return session, nil
}

// negotiated is the protocolVersion of an initialize's answer (JSON or SSE).
func negotiated(body string) string {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var m struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &m) == nil && m.Result.ProtocolVersion != "" {
			return m.Result.ProtocolVersion
		}
	}
	return ""
}

// end closes session (if any) and forgets the requests it sent the client.
func (h *statelessHandler) end(session string) {
	if session == "" {
		return
	}
	h.mu.Lock()
	for id, a := range h.asked {
		if a.session == session {
			delete(h.asked, id)
		}
	}
	h.mu.Unlock()
	req := httptest.NewRequest(http.MethodDelete, "/", nil)
	req.Header.Set("Mcp-Session-Id", session)
	h.inner.ServeHTTP(httptest.NewRecorder(), req)
}

// withBody is r with body and, if given, the session's id.
func withBody(r *http.Request, body []byte, session string) *http.Request {
	c := r.Clone(r.Context())
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.ContentLength = int64(len(body))
	if session != "" {
		c.Header.Set("Mcp-Session-Id", session)
	}
	return c
}

// internal is a request of this proxy's own to inner, made on behalf of r
// (its host, none of its other headers).
func internal(r *http.Request, body, session, version string) *http.Request {
	c := httptest.NewRequestWithContext(r.Context(), http.MethodPost, r.URL.Path, strings.NewReader(body))
	c.Host = r.Host
	c.RemoteAddr = r.RemoteAddr
	c.Header.Set("Content-Type", "application/json")
	c.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		c.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		c.Header.Set("Mcp-Protocol-Version", version)
	}
	return c
}

// streamRewriter passes inner's answer to the client without its session
// id; on an event stream, each request in it goes out under an id of this
// proxy's (recorded for the client's answer), and event ids are dropped (a
// stream of a stateless server cannot be resumed).
type streamRewriter struct {
	http.ResponseWriter
	h       *statelessHandler
	session string // learnt from the answer when ""

	sse     bool
	started bool
	buf     []byte
}

func (s *streamRewriter) WriteHeader(code int) {
	if s.started {
		return
	}
	s.started = true
	hd := s.ResponseWriter.Header()
	if s.session == "" {
		s.session = hd.Get("Mcp-Session-Id")
	}
	hd.Del("Mcp-Session-Id")
	s.sse = strings.HasPrefix(hd.Get("Content-Type"), "text/event-stream")
	s.ResponseWriter.WriteHeader(code)
}

func (s *streamRewriter) Write(b []byte) (int, error) {
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
	if !s.sse {
		return s.ResponseWriter.Write(b)
	}
	s.buf = append(s.buf, b...)
	for {
		i := bytes.Index(s.buf, []byte("\n\n"))
		if i < 0 {
			return len(b), nil
		}
		event := s.rewrite(s.buf[:i])
		s.buf = s.buf[i+2:]
		if _, err := s.ResponseWriter.Write(event); err != nil {
			return 0, err
		}
	}
}

// rewrite is one event, its "id:" lines dropped and a request in its data
// given an id of this proxy's.
func (s *streamRewriter) rewrite(event []byte) []byte {
	var out bytes.Buffer
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(event))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id:"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		default:
			out.WriteString(line + "\n")
		}
	}
	if len(data) > 0 {
		out.WriteString("data: " + s.renamed(strings.Join(data, "\n")) + "\n")
	}
	out.WriteString("\n")
	return out.Bytes()
}

// renamed is msg, a request under an id of this proxy's if it is one.
func (s *streamRewriter) renamed(msg string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(msg), &m) != nil || m["method"] == nil || m["id"] == nil {
		return msg
	}
	own := fmt.Sprintf("plainproxy-%d", s.h.next.Add(1))
	s.h.mu.Lock()
	s.h.asked[own] = ask{session: s.session, id: m["id"]}
	s.h.mu.Unlock()
	m["id"], _ = json.Marshal(own)
	b, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return string(b)
}

func (s *streamRewriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *streamRewriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
