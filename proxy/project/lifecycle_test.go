package project

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/deadline"
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

// A client that comes once the project is closed is refused at initialize
// ("shutting down ... retry it": the requests the project's stop ended and
// the ones after it are answered alike) and holds nothing upstream.
func TestAnInitializeAfterCloseIsRefusedAndHoldsNothingUpstream(t *testing.T) {
	up := newCountingUpstream(t)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	url := serveProject(t, p)
	p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err == nil {
		cs.Close()
		t.Fatal("initialize after Close was answered; want it refused")
	}
	if want := regexp.MustCompile(regexp.QuoteMeta(deadline.StoppedText) + ` \[trace [0-9A-Z]+\]`); !want.MatchString(err.Error()) {
		t.Errorf("initialize after Close failed with %q, want %s", err, want)
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

// Close first ends the requests still running (the project's stop): a
// call stuck upstream is answered at once, not after the shutdown grace, and
// the session is not left busy. (The upstream's tool here ignores its
// cancel, so its session's DELETE still takes the grace.) On the go-sdk path
// and on the raw relay alike: both answer it as one guard decides, and its
// tool_call_trace row says so.
func TestCloseEndsABusySessionAtOnce(t *testing.T) {
	for _, relayOn := range []bool{false, true} {
		name := "sdk-path"
		if relayOn {
			name = "relay"
		}
		t.Run(name, func(t *testing.T) { closeEndsABusySession(t, relayOn) })
	}
}

func closeEndsABusySession(t *testing.T, relayOn bool) {
	const grace = 300 * time.Millisecond
	up := newCountingUpstream(t)
	logs := &logLines{}
	rows := &rowsSeen{}
	k := knobs.Defaults()
	k.ShutdownGrace = grace
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: rows, Knobs: k, Logger: logs.logger(), Relay: relayOn})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var cs *mcp.ClientSession
	if relayOn {
		// A client holding its standalone stream, as go-sdk clients do: one
		// that offers roots without it stays off the relay.
		var err error
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: serveRelaying(t, p), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
	} else {
		cs = connectClient(ctx, t, serveProject(t, p))
	}
	type answer struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_block", Arguments: map[string]any{}})
		answered <- answer{res, err, time.Now()}
	}()
	select {
	case <-up.blocked:
	case <-ctx.Done():
		t.Fatal("the call never reached the upstream")
	}
	if want := map[bool]int64{false: 0, true: 1}[relayOn]; p.Relayed() != want {
		t.Fatalf("the relay took %d calls, want %d", p.Relayed(), want)
	}
	start := time.Now()
	p.Close()
	took := time.Since(start)
	if took > 2*grace+2*time.Second {
		t.Errorf("Close took %v, want at most %v", took, 2*grace+2*time.Second)
	}
	if lines := logs.with(t, "sessions still busy after the shutdown grace; leaving them"); len(lines) != 0 {
		t.Errorf("Close left a session busy: %v", lines)
	}
	const tolerance = 200 * time.Millisecond // well under the grace: at once, not after it
	select {
	case a := <-answered:
		if after := a.at.Sub(start); after > tolerance {
			t.Errorf("the stuck call was answered %v after Close began, want within %v (the grace is %v)", after, tolerance, grace)
		}
		text := ""
		if a.res != nil && len(a.res.Content) == 1 {
			if tc, ok := a.res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		// The session may close under the answer (here no entry answers
		// in-flight requests first, as the proxy's does: see
		// proxy.TestShutdownAnswersRequestsStillRunning); an answer that
		// came says why.
		if a.err == nil && (!a.res.IsError || !strings.HasPrefix(text, deadline.StoppedText)) {
			t.Errorf("the stuck call was answered %+v (%q); want an isError saying %q", a.res, text, deadline.StoppedText)
		}
	case <-ctx.Done():
		t.Error("the stuck call was never answered")
	}
	want := "s|s_block|" + string(deadline.Cancelled) + "|" + deadline.StoppedText + "|"
	if got := rows.of(audit.KindToolCallTrace); len(got) != 1 || got[0] != want {
		t.Errorf("tool_call_trace rows %q, want one: %q", got, want)
	}
}
