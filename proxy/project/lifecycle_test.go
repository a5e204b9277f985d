package project

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

func connectClient(ctx context.Context, t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callText(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("%s: %+v, %v", tool, res, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// A session initialized again under the id it had (the entry recreating a
// session its client still holds) replaces the project's state for that id:
// the old state's upstream sessions are closed, the new one opens its own.
func TestASessionInitializedAgainUnderItsIDClosesTheOldState(t *testing.T) {
	up := newCountingUpstream(t)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.NewServer("the-id") }, nil))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first := connectClient(ctx, t, srv.URL)
	if got, isErr := callText(ctx, t, first, "s_t"); got != "ok" || isErr {
		t.Fatalf("s_t: %q", got)
	}
	p.mu.Lock()
	old := p.clients["the-id"]
	p.mu.Unlock()
	second := connectClient(ctx, t, srv.URL)
	if second.ID() != "the-id" {
		t.Fatalf("the second session is %q", second.ID())
	}
	p.closing.Wait() // the old state's upstream sessions, closed in the background
	if n := up.deletes.Load(); n != 1 {
		t.Errorf("the upstream heard %d DELETEs once the id was initialized again, want 1: the old state's session", n)
	}
	old.mu.Lock()
	closed, conns := old.closed, len(old.conns)
	old.mu.Unlock()
	if !closed || conns != 0 {
		t.Errorf("the old state: closed %v with %d upstream sessions, want closed with none", closed, conns)
	}
	if got, isErr := callText(ctx, t, second, "s_t"); got != "ok" || isErr {
		t.Fatalf("s_t on the new session: %q", got)
	}
	if n := up.inits.Load(); n != 2 {
		t.Errorf("%d upstream initializes, want 2: the new state opens a session of its own", n)
	}
}

// A session initialized once the project is closed holds nothing upstream:
// it connects to no upstream, and its calls answer that the upstream
// connection is closed.
func TestASessionInitializedAfterCloseHoldsNothingUpstream(t *testing.T) {
	up := newCountingUpstream(t)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	url := serveProject(t, p)
	p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, url)
	got, isErr := callText(ctx, t, cs, "s_t")
	if want := regexp.MustCompile(`^upstream connection closed; retry, and if it keeps failing the upstream s may be down \[trace [0-9A-Z]+\]$`); !isErr || !want.MatchString(got) {
		t.Errorf("a call after Close answered %q (error %v), want %s", got, isErr, want)
	}
	if n := up.inits.Load(); n != 0 {
		t.Errorf("the upstream saw %d initializes after the project closed", n)
	}
	if n := p.UpstreamSessions(); n != 0 {
		t.Errorf("%d upstream sessions", n)
	}
}

// Release forgets the session: the project keeps no state for an id its
// client let go (idle expiry releases thousands), and a second Release is
// harmless.
func TestReleaseForgetsTheSession(t *testing.T) {
	up := newCountingUpstream(t)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	callText(ctx, t, cs, "s_t")
	p.Release(cs.ID())
	p.Release(cs.ID())
	p.mu.Lock()
	n := len(p.clients)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("the project holds %d sessions after Release, want 0", n)
	}
	p.closing.Wait()
	if d := up.deletes.Load(); d != 1 {
		t.Errorf("the upstream heard %d DELETEs, want 1", d)
	}
}

// Close closes every session and every connection to the upstreams: when it
// returns no session is left on its server and, once the sockets' closes
// are seen, no connection is left open upstream.
func TestCloseClosesTheSessionsAndTheUpstreamConnections(t *testing.T) {
	up := newCountingUpstream(t)
	logs := &logLines{}
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: logs.logger()})
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var servers []*mcp.Server
	for range 2 {
		cs := connectClient(ctx, t, url)
		callText(ctx, t, cs, "s_t")
		p.mu.Lock()
		servers = append(servers, p.clients[cs.ID()].srv)
		p.mu.Unlock()
	}
	// The go-sdk's client closes a call's event stream before its end, which
	// closes that connection; one request answered in full leaves its
	// connection idle in the project's pool for certain.
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, up.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: p.transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if up.open.Load() == 0 {
		t.Fatal("no connection open upstream")
	}
	p.Close()
	for i, s := range servers {
		for range s.Sessions() {
			t.Errorf("session %d's server still has a session after Close", i)
		}
	}
	// The closes cross loopback: 5 s is far more than they need.
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	if !waitFor(cctx, func() bool { return up.open.Load() == 0 }) {
		t.Errorf("%d connections still open upstream after Close", up.open.Load())
	}
	if lines := logs.with(t, "sessions still busy after the shutdown grace; leaving them"); len(lines) != 0 {
		t.Errorf("Close with no session busy logged %v", lines)
	}
}

// Close waits for a session's handlers to finish, up to the shutdown grace
// knob: past it, it says so and closes the session's upstream sessions
// anyway, which ends the stuck call.
func TestCloseLeavesABusySessionAfterTheShutdownGrace(t *testing.T) {
	const grace = 300 * time.Millisecond
	up := newCountingUpstream(t)
	logs := &logLines{}
	k := knobs.Defaults()
	k.ShutdownGrace = grace
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: k, Logger: logs.logger()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	answered := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_block", Arguments: map[string]any{}})
		answered <- err
	}()
	select {
	case <-up.blocked:
	case <-ctx.Done():
		t.Fatal("the call never reached the upstream")
	}
	start := time.Now()
	p.Close()
	took := time.Since(start)
	// At least the grace (its timer); at most the grace twice (the sessions',
	// then the upstream sessions' close) with 2 s for a loaded machine.
	if took < grace || took > 2*grace+2*time.Second {
		t.Errorf("Close took %v with a session busy, want the shutdown grace %v (at most %v)", took, grace, 2*grace+2*time.Second)
	}
	lines := logs.with(t, "sessions still busy after the shutdown grace; leaving them")
	if len(lines) != 1 || lines[0]["level"] != "ERROR" || lines[0]["grace"] != float64(grace) || lines[0]["project"] != "p" {
		t.Errorf("log lines %v, want one error naming the grace %v", lines, grace)
	}
	select {
	case <-answered:
	case <-ctx.Done():
		t.Error("the stuck call was never ended")
	}
}
