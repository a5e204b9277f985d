package project

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// logLines is a slog JSON handler's output, read back line by line.
type logLines struct{ buf syncbuf.Buffer }

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(&l.buf, nil)) }

// with returns the lines whose msg is msg, decoded.
func (l *logLines) with(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// An upstream may send something outside any request when it advertises a
// list that changes, subscriptions or logging, or when it does not yet know
// (never seen), or when the client offers what a server may ask for at any
// time (roots with list_changed, sampling, elicitation): each alone decides.
func TestMayHearUnpromptedByEachCapability(t *testing.T) {
	quiet := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Completions: &mcp.CompletionCapabilities{}}
	for _, c := range []struct {
		name string
		sc   *mcp.ServerCapabilities
		want bool
	}{
		{"no capabilities", nil, false},
		{"tools, prompts, resources without changes", quiet, false},
		{"logging", &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}, true},
		{"tools listChanged", &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}, true},
		{"prompts listChanged", &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{ListChanged: true}}, true},
		{"resources listChanged", &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{ListChanged: true}}, true},
		{"resources subscribe", &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}}, true},
	} {
		if got := sendsUnprompted(c.sc); got != c.want {
			t.Errorf("sendsUnprompted(%s) = %v, want %v", c.name, got, c.want)
		}
	}

	p := New("p", Options{Servers: map[string]string{"quiet": "http://127.0.0.1:1", "loud": "http://127.0.0.1:1", "unseen": "http://127.0.0.1:1"},
		Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	p.caps["quiet"] = quiet
	p.caps["loud"] = &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	rootsChanging := &mcp.ClientCapabilities{}
	rootsChanging.Roots.ListChanged = true
	for _, c := range []struct {
		name                string
		caps                *mcp.ClientCapabilities
		quiet, loud, unseen bool
	}{
		{"a client offering nothing", &mcp.ClientCapabilities{}, false, true, true},
		{"a client whose roots change", rootsChanging, true, true, true},
		{"a client with roots (RootsV2)", &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}, true, true, true},
		{"a client offering sampling", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, true, true, true},
		{"a client offering elicitation", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, true, true, true},
	} {
		cl := &client{p: p, caps: c.caps}
		for server, want := range map[string]bool{"quiet": c.quiet, "loud": c.loud, "unseen": c.unseen} {
			if got := cl.mayHearUnprompted(server); got != want {
				t.Errorf("%s, server %s: mayHearUnprompted = %v, want %v", c.name, server, got, want)
			}
		}
	}
}

// countingUpstream is an in-process upstream (advertising logging, so it may
// speak unprompted) that counts the initializes, standalone streams (GET)
// and DELETEs it was sent and the connections open to it; with refuse set
// it answers every new initialize 503. Its tool "t" answers at once, its
// tool "block" when the test ends.
type countingUpstream struct {
	url                  string
	inits, gets, deletes atomic.Int64
	open                 atomic.Int64  // connections open now
	blocked              chan struct{} // a "block" call arrived
	refuse               atomic.Bool
	srv                  *mcp.Server
	h                    http.Handler
	httpSrv              *httptest.Server
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	t.Helper()
	u := &countingUpstream{blocked: make(chan struct{}, 8), srv: mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}}})}
	mcp.AddTool(u.srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	ended := make(chan struct{})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "block"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		u.blocked <- struct{}{}
		<-ended
		return &mcp.CallToolResult{}, nil, nil
	})
	u.h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.srv }, nil)
	u.httpSrv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet:
			u.gets.Add(1)
		case r.Method == http.MethodDelete:
			u.deletes.Add(1)
		case r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "":
			if u.refuse.Load() {
				http.Error(w, "refused", http.StatusServiceUnavailable)
				return
			}
			u.inits.Add(1)
		}
		u.h.ServeHTTP(w, r)
	}))
	u.httpSrv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			u.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			u.open.Add(-1)
		}
	}
	u.httpSrv.Start()
	t.Cleanup(u.httpSrv.Close)
	t.Cleanup(func() { close(ended) }) // before the server's Close, which waits for its handlers
	u.url = u.httpSrv.URL
	return u
}

// waitFor polls cond until it holds or ctx ends; it reports whether it held.
func waitFor(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// An upstream session opens its standalone stream only while its client
// holds one at the proxy: a client without one costs no upstream stream; the
// client's first stream replaces each upstream session it holds with one
// that has its stream, before Listening returns; a replacement that fails is
// logged, once, naming the session and the server.
func TestUpstreamStreamsFollowTheClientsOwn(t *testing.T) {
	up := newCountingUpstream(t)
	logs := &logLines{}
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: logs.logger()})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const warn = "upstream standalone stream not opened; the next call reconnects with it"
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cs := connect()
	if n, g := up.inits.Load(), up.gets.Load(); n != 1 || g != 0 {
		t.Fatalf("a client without a standalone stream: the upstream saw %d initializes and %d GETs, want 1 and 0", n, g)
	}
	stop := p.Listening(ctx, cs.ID())
	if n := up.inits.Load(); n != 2 {
		t.Errorf("when Listening returned the upstream had seen %d initializes, want 2 (the session replaced by one with its stream)", n)
	}
	if !waitFor(ctx, func() bool { return up.gets.Load() == 1 }) {
		t.Errorf("the upstream saw %d GETs, want 1: the new upstream session's stream", up.gets.Load())
	}
	if n := len(logs.with(t, warn)); n != 0 {
		t.Errorf("%d warnings after a stream that opened", n)
	}
	stop()

	// A second client; its upstream session cannot be replaced.
	cs2 := connect()
	up.refuse.Store(true)
	before := up.inits.Load()
	p.Listening(ctx, cs2.ID())()
	if n := up.inits.Load(); n != before {
		t.Errorf("%d initializes accepted while refusing", n-before)
	}
	lines := logs.with(t, warn)
	if len(lines) != 1 || lines[0]["level"] != "WARN" || lines[0]["session"] != cs2.ID() || lines[0]["server"] != "s" || lines[0]["project"] != "p" ||
		!strings.Contains(lines[0]["err"].(string), "503") {
		t.Errorf("log lines %v, want one warning naming session %s and server s with the upstream's 503", lines, cs2.ID())
	}
	// An id the project does not hold: nothing to open.
	p.Listening(ctx, "nosuch")()
}

// A subscription the client made through the proxy is made again on every
// new upstream session of the server that holds the resource (here the one
// that replaces it when the client opens its stream), and on no other
// server's.
func TestSubscriptionsAreReplayedOnTheirServersNewSession(t *testing.T) {
	type subs struct {
		mu   sync.Mutex
		seen []string // "session uri"
	}
	upstream := func(name string) (string, *subs) {
		sb := &subs{}
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "0"}, &mcp.ServerOptions{
			SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
				sb.mu.Lock()
				defer sb.mu.Unlock()
				sb.seen = append(sb.seen, req.Session.ID()+" "+req.Params.URI)
				return nil
			},
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		s.AddResource(&mcp.Resource{Name: "doc", URI: "mem://" + name + "/doc"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
		})
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(srv.Close)
		return srv.URL, sb
	}
	aURL, a := upstream("a")
	bURL, b := upstream("b")
	p := New("p", Options{Servers: map[string]string{"a": aURL, "b": bURL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serveProject(t, p), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://a/doc"}); err != nil {
		t.Fatal(err)
	}
	p.Listening(ctx, cs.ID())() // replaces both upstream sessions with ones that have their stream
	a.mu.Lock()
	seenA := append([]string(nil), a.seen...)
	a.mu.Unlock()
	b.mu.Lock()
	seenB := append([]string(nil), b.seen...)
	b.mu.Unlock()
	if len(seenA) != 2 || !strings.HasSuffix(seenA[0], " mem://a/doc") || !strings.HasSuffix(seenA[1], " mem://a/doc") || seenA[0] == seenA[1] {
		t.Errorf("upstream a saw the subscriptions %q, want mem://a/doc on its first session and again on the one that replaced it", seenA)
	}
	if len(seenB) != 0 {
		t.Errorf("upstream b saw the subscriptions %q, want none", seenB)
	}
}

// A subscription the client ended is not made again on a new upstream
// session.
func TestAnEndedSubscriptionIsNotReplayed(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s := mcp.NewServer(&mcp.Implementation{Name: "a", Version: "0"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "subscribe "+req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "unsubscribe "+req.Params.URI)
			return nil
		},
	})
	s.AddResource(&mcp.Resource{Name: "doc", URI: "mem://a/doc"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	p := New("p", Options{Servers: map[string]string{"a": srv.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://a/doc"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://a/doc"}); err != nil {
		t.Fatal(err)
	}
	p.Listening(ctx, cs.ID())() // a new upstream session, with its stream
	if n := p.UpstreamSessions(); n != 1 {
		t.Fatalf("%d upstream sessions", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ","); got != "subscribe mem://a/doc,unsubscribe mem://a/doc" {
		t.Errorf("the upstream saw %s, want the subscribe and its end only", got)
	}
}
