// Package upstream serves fake upstream MCP servers for the harness: a
// docmost-like wiki server whose search result is large enough to cross a
// pagination threshold, with per-tool behaviours (hang, slow, error) that can
// be switched at run time in-process or over a small HTTP control API.
package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind names one behaviour of a fake tool.
type Kind string

// The behaviours a fake tool can be switched to.
const (
	// OK answers normally.
	OK Kind = "ok"
	// Slow answers normally after Behavior.Delay.
	Slow Kind = "slow"
	// Hang never answers; it ends only when the caller cancels or the fake closes.
	Hang Kind = "hang"
	// ErrorResult answers with isError: true and a readable message.
	ErrorResult Kind = "error"
)

// Behavior is what a tool does when called.
type Behavior struct {
	Kind  Kind          `json:"kind"`
	Delay time.Duration `json:"delayNs,omitempty"` // for Slow
	// Shape, if set, replaces the tool's own answer (OK, Slow) or error
	// (ErrorResult) by a synthetic one of that shape (Synthetic).
	Shape *Shape `json:"shape,omitempty"`
}

// Call is one recorded tool call.
type Call struct {
	Tool      string        `json:"tool"`
	Behavior  Kind          `json:"behavior"`
	Start     time.Time     `json:"start"`
	Duration  time.Duration `json:"durationNs"`
	Cancelled bool          `json:"cancelled"` // the caller went away before the answer
}

// Server is one fake upstream MCP server. All methods are safe for concurrent use.
type Server struct {
	name  string
	mcp   *mcp.Server
	http  *http.Server
	ln    net.Listener
	done  chan struct{} // closed by Close: unblocks hanging tools
	close sync.Once
	wg    sync.WaitGroup // serving goroutine

	mu        sync.Mutex
	tools     map[string]bool // the tools add registered: Serves
	behaviors map[string]Behavior
	calls     []Call
	inflight  sync.WaitGroup
	running   atomic.Int64 // calls in run now: InFlight
	sse       bool         // answer with SSE streams (the everything fake), not JSON

	rootsChanged int // notifications/roots/list_changed received (everything)

	stallHandshakes atomic.Bool // StallHandshakes
	stalled         atomic.Int64
	listeners       atomic.Int64 // standalone SSE streams (GET /mcp) open now: Listeners
}

// Options configures a fake upstream.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0.
	Addr string
	// Logger for the MCP server; default discards.
	Logger *slog.Logger
	// Capabilities, if set, are what the fake advertises instead of its
	// own: e.g. none it could send unprompted (no listChanged, no
	// subscriptions, no logging), as many servers built without those
	// features do. The go-sdk still fills a nil Tools, Prompts or Resources
	// with listChanged for a fake that has some, so say {} for "without".
	// Its messages are sent regardless: what it advertises is the test.
	Capabilities *mcp.ServerCapabilities
}

// NewDocmost starts a docmost-like MCP server at /mcp with tools search,
// update_page and get_page.
func NewDocmost(opts Options) (*Server, error) {
	s := newServer("docmost", opts)
	s.add(&mcp.Tool{Name: "search", Description: "Search the wiki; returns matching pages in full.",
		InputSchema: objectSchema(map[string]string{"query": "string"}, "query")},
		func(args map[string]any) string { return SearchText(str(args["query"])) })
	s.add(&mcp.Tool{Name: "update_page", Description: "Replace a page's content.",
		InputSchema: objectSchema(map[string]string{"page_id": "string", "content": "string"}, "page_id")},
		func(args map[string]any) string {
			return fmt.Sprintf("updated page %s (%d bytes)", str(args["page_id"]), len(str(args["content"])))
		})
	return s, s.start(opts.Addr)
}

// NewNamed starts a fake MCP server at /mcp named name, serving tools
// that each answer a short neutral text (or as their behaviour says): the
// stand-in a replay builds for any upstream a recording names.
func NewNamed(name string, tools ...string) (*Server, error) {
	s := newServer(name, Options{})
	for _, tool := range tools {
		s.add(&mcp.Tool{Name: tool, Description: "A stand-in for " + name + "'s " + tool + ".", InputSchema: map[string]any{"type": "object"}},
			func(map[string]any) string { return fmt.Sprintf("fake %s: %s answered", name, tool) })
	}
	return s, s.start("")
}

// Serves reports whether the fake has tool (one its constructor added
// with a switchable behaviour).
func (s *Server) Serves(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools[tool]
}

func newServer(name string, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		name:      name,
		done:      make(chan struct{}),
		tools:     map[string]bool{},
		behaviors: map[string]Behavior{},
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "fake-" + name, Version: "1.0.0"}, &mcp.ServerOptions{Logger: logger, Capabilities: opts.Capabilities})
	return s
}

func (s *Server) add(t *mcp.Tool, answer func(map[string]any) string) {
	s.mu.Lock()
	s.tools[t.Name] = true
	s.mu.Unlock()
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult("arguments are not a JSON object: " + err.Error()), nil
			}
		}
		return s.run(ctx, t.Name, func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(args)}}}
		}), nil
	})
}

// run applies the tool's behaviour and records the call.
func (s *Server) run(ctx context.Context, tool string, answer func() *mcp.CallToolResult) *mcp.CallToolResult {
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.running.Add(1)
	defer s.running.Add(-1)
	b := s.Behavior(tool)
	start := time.Now()
	rec := func(cancelled bool) {
		s.mu.Lock()
		s.calls = append(s.calls, Call{Tool: tool, Behavior: b.Kind, Start: start, Duration: time.Since(start), Cancelled: cancelled})
		s.mu.Unlock()
	}
	wait := func(d <-chan time.Time) bool { // false when the caller or the fake went away
		select {
		case <-d:
			return true
		case <-ctx.Done():
		case <-s.done:
		}
		rec(true)
		return false
	}
	switch b.Kind {
	case Hang:
		wait(nil)
		return errorResult("fake upstream: hang ended by cancel or close")
	case Slow:
		t := time.NewTimer(b.Delay)
		defer t.Stop()
		if !wait(t.C) {
			return errorResult("fake upstream: slow call cancelled")
		}
	case ErrorResult:
		rec(false)
		if b.Shape != nil {
			sh := *b.Shape
			sh.IsError = true
			return Synthetic(sh)
		}
		return errorResult(fmt.Sprintf("fake upstream %s: %s failed on purpose", s.name, tool))
	}
	var r *mcp.CallToolResult
	if b.Shape != nil {
		r = Synthetic(*b.Shape)
	} else {
		r = answer()
	}
	rec(false)
	return r
}

// Set switches tool to behaviour b until changed again.
func (s *Server) Set(tool string, b Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors[tool] = b
}

// Reset returns every tool to OK and forgets recorded calls.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors = map[string]Behavior{}
	s.calls = nil
}

// Behavior returns tool's current behaviour (OK unless set).
func (s *Server) Behavior(tool string) Behavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.behaviors[tool]; ok {
		return b
	}
	return Behavior{Kind: OK}
}

// Calls returns a copy of every recorded call, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// InFlight is how many tool calls the fake is serving now: a scenario waits
// on it to know a call has reached the upstream (and so passed the proxy).
func (s *Server) InFlight() int { return int(s.running.Load()) }

// Sessions is how many MCP sessions the fake holds open now.
func (s *Server) Sessions() int { return len(s.SessionIDs()) }

// SessionIDs are the ids of the MCP sessions the fake holds open now.
func (s *Server) SessionIDs() []string {
	var ids []string
	for ss := range s.mcp.Sessions() {
		ids = append(ids, ss.ID())
	}
	return ids
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the MCP endpoint, http://ADDR/mcp.
func (s *Server) URL() string { return "http://" + s.Addr() + "/mcp" }

func (s *Server) start(addr string) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake upstream %s: %w", s.name, err)
	}
	s.ln = ln
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.stalling(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{JSONResponse: !s.sse})))
	mux.HandleFunc("PUT /_fake/tools/{tool}", s.handleSet)
	mux.HandleFunc("GET /_fake/calls", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Calls())
	})
	mux.HandleFunc("DELETE /_fake/calls", func(w http.ResponseWriter, r *http.Request) { s.Reset(); w.WriteHeader(http.StatusNoContent) })
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(ln)
	}()
	return nil
}

// StallHandshakes switches the fake to answering initialize (with a new
// session id) and holding every other request at /mcp, the handshake's
// notifications/initialized and the session's DELETE included, until its
// caller goes away or the fake closes: an upstream that dies, or a link that
// goes dark, between handing out a session and finishing the handshake.
func (s *Server) StallHandshakes(on bool) { s.stallHandshakes.Store(on) }

// Stalled counts the requests StallHandshakes has held.
func (s *Server) Stalled() int { return int(s.stalled.Load()) }

// Listeners is how many standalone SSE streams (the GET a client keeps open
// for what the server sends outside any request) are open at the fake now.
func (s *Server) Listeners() int { return int(s.listeners.Load()) }

func (s *Server) stalling(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			s.listeners.Add(1)
			defer s.listeners.Add(-1)
		}
		if s.stallHandshakes.Load() {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				return
			}
			var msg struct {
				Method string `json:"method"`
			}
			if r.Method != http.MethodPost || json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
				s.stalled.Add(1)
				select {
				case <-r.Context().Done():
				case <-s.done:
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleSet(w http.ResponseWriter, r *http.Request) {
	var b Behavior
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, "want {\"kind\": \"ok|slow|hang|error\", \"delayNs\": N}: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch b.Kind {
	case OK, Slow, Hang, ErrorResult:
	default:
		http.Error(w, fmt.Sprintf("unknown behaviour %q (want ok, slow, hang or error)", b.Kind), http.StatusBadRequest)
		return
	}
	s.Set(r.PathValue("tool"), b)
	w.WriteHeader(http.StatusNoContent)
}

// Close stops the server: hanging tools return, connections close, and the
// serving goroutine ends before Close returns. Close may be called more than once.
func (s *Server) Close() error {
	var err error
	s.close.Do(func() {
		close(s.done)
		for ss := range s.mcp.Sessions() {
			_ = ss.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if e := s.http.Shutdown(ctx); e != nil && !errors.Is(e, context.DeadlineExceeded) {
			err = e
		}
		_ = s.http.Close()
		s.wg.Wait()
		s.inflight.Wait()
		// An initialize that raced the first sweep (a proxy reconnecting
		// while the fake stops) made a session after it: close those too,
		// now that nothing can arrive any more.
		for ss := range s.mcp.Sessions() {
			_ = ss.Close()
		}
	})
	return err
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func objectSchema(props map[string]string, required ...string) map[string]any {
	p := map[string]any{}
	for k, t := range props {
		p[k] = map[string]any{"type": t}
	}
	return map[string]any{"type": "object", "properties": p, "required": required}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
