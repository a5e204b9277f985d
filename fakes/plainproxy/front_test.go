package plainproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// fakes starts the docmost and everything fakes.
func fakes(t *testing.T) map[string]string {
	t.Helper()
	doc, err := upstream.NewDocmost(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = doc.Close() })
	every, err := upstream.NewEverything(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = every.Close() })
	return map[string]string{"docmost": doc.URL(), "everything": every.URL()}
}

// An aggregating front names each server's tools SERVER__NAME and carries
// what the upstream sends during a call (progress, sampling) back to the
// client session that made it.
func TestAggregateForwardsEachServerUnderItsPrefix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx, Options{Addr: "127.0.0.1:0", Servers: fakes(t), Separator: "__", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	var progress atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "t", Content: &mcp.TextContent{Text: "yes"}}, nil
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL(), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"docmost__search", "docmost__update_page", "everything__echo", "everything__sample"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__progress", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "t"}})
	if err != nil || res.IsError {
		t.Fatalf("progress: %v %v", err, res)
	}
	if n := progress.Load(); n != upstream.ProgressSteps {
		t.Errorf("%d progress notifications before the result, want %d", n, upstream.ProgressSteps)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__sample", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "sampled: yes" {
		t.Errorf("sampling round trip: %v %+v", err, res)
	}
	g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__" + upstream.GreetPrompt, Arguments: map[string]string{"name": "ana"}})
	if err != nil || len(g.Messages) == 0 {
		t.Errorf("prompt: %v", err)
	}
}

// One path per server, stateless: each server under its own unprefixed
// names, no session id issued, a foreign Origin refused.
func TestStatelessPathsServeEachServerOnItsOwnPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx, Options{Addr: "127.0.0.1:0", Servers: fakes(t), Path: "/{server}/mcp", Stateless: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	base := strings.TrimSuffix(p.URL(), "/{server}/mcp")
	post := func(path, origin, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return http.DefaultClient.Do(req)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	resp, err := post("/docmost/mcp", "", init)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("initialize: %d, session id %q; want 200 and none", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	if resp, err := post("/docmost/mcp", "http://evil.example", init); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Origin: %v %v, want 403", err, resp.StatusCode)
	}
	for path, tool := range map[string]string{"/docmost/mcp": "search", "/everything/mcp": "echo"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path, DisableStandaloneSSE: true, MaxRetries: -1}, legacy)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tl.Name)
		}
		prefixed := slices.ContainsFunc(names, func(n string) bool {
			return strings.HasPrefix(n, "docmost") || strings.HasPrefix(n, "everything")
		})
		if !slices.Contains(names, tool) || prefixed {
			t.Errorf("%s serves %v: want %s, unprefixed", path, names, tool)
		}
		_ = cs.Close()
	}
}

// A stateless front carries an upstream's requests on the call's stream and
// the client's answers, each a POST with no session, back to the upstream
// that asked (sampling, elicitation, roots), concurrent calls each to its
// own; it keeps nothing between requests: no session id, GET and DELETE
// refused, a log level set by one request unknown to the next.
func TestStatelessCarriesTheUpstreamsRequestsWithinACall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	endpoint := statelessEverything(ctx, t)
	var logs atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			said := r.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: "assistant", Model: "t", Content: &mcp.TextContent{Text: "re " + said}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ana"}}, nil
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logs.Add(1) },
	})
	c.AddRoots(&mcp.Root{URI: "file:///t", Name: "t"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" {
		t.Errorf("a stateless front issued session id %q", cs.ID())
	}
	call := func(tool string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "error: " + err.Error()
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	var wg sync.WaitGroup
	for i := range 4 { // concurrent calls: each answer reaches the call that asked
		wg.Go(func() {
			said := fmt.Sprintf("hi %d", i)
			if got := call("sample", map[string]any{"prompt": said}); got != "sampled: re "+said {
				t.Errorf("sampling round trip %d: %q", i, got)
			}
		})
	}
	wg.Wait()
	if got := call("elicit", map[string]any{"question": "name?"}); got != "elicited: accept ana" {
		t.Errorf("elicitation round trip: %q", got)
	}
	if got := call("roots", map[string]any{}); got != "roots: file:///t" {
		t.Errorf("roots round trip: %q", got)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if got := call("log", map[string]any{"text": "x"}); got != "logged" || logs.Load() != 0 {
		t.Errorf("a log call after a log level set by another request: %q, %d messages; want none: the level is not kept", got, logs.Load())
	}
	// A raw client that answers no request: a call that needs none of its
	// capabilities asks it nothing, and gets its result.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint,
		strings.NewReader(`{"jsonrpc":"2.0","id":"raw","method":"tools/call","params":{"name":"echo","arguments":{"text":"plain"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `"text":"plain"`) || strings.Contains(string(raw), `"isError":true`) || strings.Contains(string(raw), `"method"`) {
		t.Errorf("a raw client's echo: %d %s", resp.StatusCode, raw)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequestWithContext(ctx, method, endpoint, nil)
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s answered %d, want 405", method, resp.StatusCode)
		}
	}
}

// legacy has a client speak the revision before perRequestRevision, whose
// requests a stateless front serves each on a session it opens for it.
var legacy = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// A client of the newer revision (perRequestRevision) is served by a
// stateless front without an initialize: a log message reaches it at the
// level its call's _meta carries, and none without one; a resource update
// reaches the subscriptions/listen stream it opened, the front keeping an
// upstream subscription for as long as that stream lasts.
func TestStatelessCarriesTheNewerRevisionsLevelAndListenStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	endpoint := statelessEverything(ctx, t)
	var mu sync.Mutex
	var levels []string
	acked := make(chan []string, 1)
	updated := make(chan string, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			levels = append(levels, string(r.Params.Level))
			mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updated <- r.Params.URI:
			default:
			}
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				acked <- p.Notifications.ResourceSubscriptions
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: perRequestRevision})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != perRequestRevision {
		t.Fatalf("negotiated %s, want %s", v, perRequestRevision)
	}
	logAt := func(meta mcp.Meta) []string {
		mu.Lock()
		levels = nil
		mu.Unlock()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"text": "x"}, Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("log: %v %+v", err, res.Content[0])
		}
		// The client hands a notification to its handler on a goroutine
		// of its own: what came before the result is counted for a moment.
		deadline := time.Now().Add(time.Second)
		for {
			mu.Lock()
			got := slices.Clone(levels)
			mu.Unlock()
			if len(got) >= 2 || time.Now().After(deadline) {
				return got
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := logAt(mcp.Meta{mcp.MetaKeyLogLevel: "warning"}); !slices.Equal(got, []string{"warning", "error"}) {
		t.Errorf("a call at level warning got messages %v, want [warning error]", got)
	}
	if got := logAt(nil); len(got) != 0 {
		t.Errorf("a call without a level got messages %v, want none", got)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upstream.ReadmeURI}); err != nil {
		t.Fatal(err)
	}
	select {
	case uris := <-acked:
		if !slices.Equal(uris, []string{upstream.ReadmeURI}) {
			t.Fatalf("subscription acknowledged for %v, want %s", uris, upstream.ReadmeURI)
		}
	case <-ctx.Done():
		t.Fatal("the listen stream was never acknowledged")
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": upstream.ReadmeURI}}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != upstream.ReadmeURI {
			t.Errorf("update for %s, want %s", uri, upstream.ReadmeURI)
		}
	case <-time.After(5 * time.Second):
		t.Error("notifications/resources/updated never reached the listen stream")
	}
}

// A request the go-sdk refused because its client session was closing never
// left: it may be sent again on a new session. Any other failure may have
// reached the upstream, and is not.
func TestOnlyARequestNeverSentIsSentAgain(t *testing.T) {
	closing := fmt.Errorf("calling \"tools/call\": %w: %w", mcp.ErrConnectionClosed, &jsonrpc.Error{Code: clientClosing, Message: "client is closing"})
	if !neverSent(closing) {
		t.Errorf("a request refused while the client closed: %v, want it taken as never sent", closing)
	}
	for _, err := range []error{
		mcp.ErrConnectionClosed,
		fmt.Errorf("calling \"tools/call\": %w", &jsonrpc.Error{Code: -32603, Message: "internal"}),
		errors.New("EOF"),
	} {
		if neverSent(err) {
			t.Errorf("%v taken as never sent: it may have reached the upstream", err)
		}
	}
}

// A stateless front ends each request's client session with its answer:
// none is left open, nor an upstream session of one.
func TestStatelessLeavesNoSessionOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := newFront(ctx, []*backend{{name: "everything", url: fakes(t)["everything"]}}, 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(f.handler())
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "t", Content: &mcp.TextContent{Text: "yes"}}, nil
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"echo", "sample", "echo"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x", "prompt": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	_ = cs.Close()
	open := func() (clients, upstreams int) {
		for range f.srv.Sessions() {
			clients++
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, m := range f.sessions {
			upstreams += len(m)
		}
		return clients, upstreams
	}
	// Upstream sessions are released by a goroutine once their client
	// session has ended: wait for that, bounded.
	for ctx.Err() == nil {
		if c, u := open(); c == 0 && u == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	c0, u0 := open()
	t.Errorf("%d client sessions and %d upstream sessions still open after the requests", c0, u0)
}

// statelessEverything starts a stateless front of one path per server, closed
// at the test's end, and returns the everything fake's endpoint through it.
func statelessEverything(ctx context.Context, t *testing.T) string {
	t.Helper()
	p, err := Start(ctx, Options{Addr: "127.0.0.1:0", Servers: fakes(t), Path: "/{server}/mcp", Stateless: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return strings.TrimSuffix(p.URL(), "/{server}/mcp") + "/everything/mcp"
}
