package project

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// upstreamSeen is an in-process upstream MCP server (a go-sdk server on
// loopback; the proxy's tests may not import the harness's fakes) that
// keeps the capabilities each of its sessions was initialized with.
type upstreamSeen struct {
	srv  *httptest.Server
	mu   sync.Mutex
	caps []*mcp.ClientCapabilities
}

func newUpstreamSeen(t *testing.T) *upstreamSeen {
	t.Helper()
	u := &upstreamSeen{}
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.caps = append(u.caps, req.Session.InitializeParams().Capabilities)
		}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		S string `json:"s"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.S}}}, nil, nil
	})
	u.srv = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstreamSeen) seen() []*mcp.ClientCapabilities {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*mcp.ClientCapabilities(nil), u.caps...)
}

// serveProject serves p as the entry would, without its checks.
func serveProject(t *testing.T, p *Project) string {
	t.Helper()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server() }, nil)
	// As the entry does: a client's standalone stream (GET) is announced to
	// the project, which opens its upstream sessions' streams for it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodGet && id != "" {
			defer p.Listening(r.Context(), id)()
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type discardRows struct{}

func (discardRows) Record(audit.Row) {}

// rowsSeen is an audit sink that keeps every row it is given.
type rowsSeen struct {
	mu   sync.Mutex
	rows []audit.Row
}

func (s *rowsSeen) Record(r audit.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, r)
}

// of returns the rows of kind, each as "server|tool|status|detail|degraded-reason".
func (s *rowsSeen) of(kind audit.Kind) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.rows {
		if r.Kind == kind {
			out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s", r.Server, r.Tool, r.Status, r.Detail, r.DegradedReason))
		}
	}
	return out
}

// An upstream session carries the client's own capabilities, no more; the
// project holds one upstream session per client session and server, and
// Release lets it go.
func TestUpstreamSessionMirrorsTheClientAndIsReleased(t *testing.T) {
	up := newUpstreamSeen(t)
	tbl := session.NewTable()
	p := New("p", Options{Servers: map[string]string{"s": up.srv.URL}, Sessions: tbl, Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{}, nil
		}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": "hi"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("s_echo: %+v, %v", res, err)
	}
	seen := up.seen()
	if len(seen) != 1 || seen[0] == nil || seen[0].Sampling == nil || seen[0].Elicitation != nil {
		t.Fatalf("the upstream's session was initialized with %+v, want the client's own capabilities (sampling, no elicitation)", seen)
	}
	if n := p.UpstreamSessions(); n != 1 {
		t.Fatalf("%d upstream sessions, want 1", n)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": "again"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(up.seen()); n != 1 {
		t.Errorf("a second call opened another upstream session (%d)", n)
	}
	p.Release(cs.ID())
	if n := p.UpstreamSessions(); n != 0 {
		t.Errorf("%d upstream sessions after Release, want 0", n)
	}
}

// A session is told what its upstreams can do, no more: each capability of
// the initialize answer is the upstreams' union (plus the proxy's tools).
func TestInitializeAdvertisesTheUpstreamsUnion(t *testing.T) {
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "0"}, nil)
	mcp.AddTool(plain, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	rich := mcp.NewServer(&mcp.Implementation{Name: "rich", Version: "0"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	rich.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	rich.AddResource(&mcp.Resource{Name: "r", URI: "mem://r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	serve := func(s *mcp.Server) string {
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	plainURL, richURL := serve(plain), serve(rich)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	capsOf := func(url string) *mcp.ServerCapabilities {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		return cs.InitializeResult().Capabilities
	}
	richCaps := capsOf(richURL)
	if richCaps.Prompts == nil || richCaps.Resources == nil || !richCaps.Resources.Subscribe || richCaps.Completions == nil {
		t.Fatalf("the rich upstream advertises %+v", richCaps)
	}
	for _, c := range []struct {
		name    string
		servers map[string]string
		want    mcp.ServerCapabilities
	}{
		{"tools only", map[string]string{"a": plainURL}, *capsOf(plainURL)},
		{"rich", map[string]string{"b": richURL}, *richCaps},
		{"both", map[string]string{"a": plainURL, "b": richURL}, *richCaps},
	} {
		p := New("p", Options{Servers: c.servers, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
		got := capsOf(serveProject(t, p))
		p.Close()
		w := c.want
		if got.Tools == nil || w.Tools != nil && got.Tools.ListChanged != w.Tools.ListChanged ||
			(got.Prompts == nil) != (w.Prompts == nil) || (got.Completions == nil) != (w.Completions == nil) || (got.Logging == nil) != (w.Logging == nil) ||
			(got.Resources == nil) != (w.Resources == nil) || got.Resources != nil && *got.Resources != *w.Resources ||
			got.Prompts != nil && *got.Prompts != *w.Prompts {
			t.Errorf("%s: advertised %+v, want the upstreams' %+v", c.name, got, w)
		}
	}
}

// A logging level the client set before its upstream session existed is
// set on that session when it connects.
func TestLoggingLevelIsReplayedOnANewUpstreamSession(t *testing.T) {
	var mu sync.Mutex
	var levels []string
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if lp, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && method == "logging/setLevel" {
				mu.Lock()
				levels = append(levels, string(lp.Level))
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	p := New("p", Options{Servers: map[string]string{"s": up.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	connect() // learns the upstream's capabilities: later sessions connect upstream on first use
	cs := connect()
	if p.UpstreamSessions() != 1 {
		t.Fatalf("%d upstream sessions before the second client's first call, want the first client's only", p.UpstreamSessions())
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(levels) != 1 || levels[0] != "warning" {
		t.Errorf("the upstream was told the levels %v, want [warning] once, on the session that connected after it was set", levels)
	}
}

// Close returns once every upstream session of the project is closed: the
// upstream has heard each DELETE by then.
func TestCloseWaitsForTheUpstreamSessionsToClose(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	var mu sync.Mutex
	deletes := 0
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			mu.Lock()
			deletes++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(upSrv.Close)
	p := New("p", Options{Servers: map[string]string{"s": upSrv.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
	}
	if n := p.UpstreamSessions(); n != 2 {
		t.Fatalf("%d upstream sessions, want 2", n)
	}
	p.Close()
	mu.Lock()
	got := deletes
	mu.Unlock()
	if got != 2 {
		t.Errorf("the upstream had heard %d DELETEs when Close returned, want 2", got)
	}
	if n := p.UpstreamSessions(); n != 0 {
		t.Errorf("%d upstream sessions after Close", n)
	}
}
