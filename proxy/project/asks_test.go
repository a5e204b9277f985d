package project

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// asksUpstream serves the tools "roots" (the roots it is given, or the
// error) and "ask" (an elicitation whose schema the go-sdk's own client
// refuses: a string format it does not know), and tells rootsChanged of
// each notifications/roots/list_changed.
func asksUpstream(t *testing.T, rootsChanged chan<- struct{}) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged <- struct{}{} },
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return text("error: " + err.Error()), nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(strings.Join(uris, ",")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "which ticket?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"ticket": map[string]any{"type": "string", "format": "uuid"}}}})
		if err != nil {
			return text("error: " + err.Error()), nil, nil
		}
		return text(res.Action), nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// What an upstream asks of the client goes to the client itself: roots/list
// is answered with the client's own roots (a client that offers none
// refuses, in the proxy's words), the client's roots/list_changed reaches
// the upstream, and an elicitation reaches the client as the upstream sent
// it, even in a form the go-sdk's own client would refuse.
func TestRootsAndElicitationAreTheClientsOwn(t *testing.T) {
	rootsChanged := make(chan struct{}, 4)
	p := New("p", Options{Servers: map[string]string{"s": asksUpstream(t, rootsChanged)}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("the test's middleware answers elicitations")
		},
	})
	// As a client that is not the go-sdk would: it reads the form itself.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" {
				mu.Lock()
				asked = append(asked, r.Params.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return next(ctx, method, req)
		}
	})
	c.AddRoots(&mcp.Root{URI: "file:///work"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isErr := callText(ctx, t, cs, "s_roots"); got != "file:///work" || isErr {
		t.Errorf("the upstream was given the roots %q, want the client's file:///work", got)
	}
	c.AddRoots(&mcp.Root{URI: "file:///more"})
	select {
	case <-rootsChanged:
	case <-ctx.Done():
		t.Fatal("the client's roots/list_changed never reached the upstream")
	}
	if got, _ := callText(ctx, t, cs, "s_roots"); got != "file:///more,file:///work" {
		t.Errorf("after the change the upstream was given %q", got)
	}
	if got, isErr := callText(ctx, t, cs, "s_ask"); got != "decline" || isErr {
		t.Errorf("the elicitation answered %q, want the client's own decline", got)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "which ticket?" {
		t.Errorf("the client was asked %q, want [which ticket?]", asked)
	}
	mu.Unlock()

	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if got, _ := callText(ctx, t, bare, "s_roots"); !strings.HasPrefix(got, "error: ") || !strings.HasSuffix(got, "the client behind this proxy offers no roots") {
		t.Errorf("a client without roots: the upstream got %q, want the proxy's refusal", got)
	}
}

// A client's logging/setLevel reaches, before it is answered, every upstream
// session it holds whose server does logging, and no other; an upstream
// that refuses it is logged and does not fail the client's request.
func TestSetLevelReachesEveryUpstreamSessionThatLogs(t *testing.T) {
	type seen struct {
		mu     sync.Mutex
		levels []string
	}
	upstream := func(logging, refuse bool) (string, *seen) {
		sn := &seen{}
		caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
		if logging {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{Capabilities: caps})
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if lp, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && method == "logging/setLevel" {
					sn.mu.Lock()
					sn.levels = append(sn.levels, string(lp.Level))
					sn.mu.Unlock()
					if refuse {
						return nil, fmt.Errorf("no levels here")
					}
				}
				return next(ctx, method, req)
			}
		})
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(srv.Close)
		return srv.URL, sn
	}
	logsURL, logs := upstream(true, false)
	quietURL, quiet := upstream(false, false)
	brokenURL, broken := upstream(true, true)
	lines := &logLines{}
	p := New("p", Options{Servers: map[string]string{"logs": logsURL, "quiet": quietURL, "broken": brokenURL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: lines.logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p)) // initialize connects every upstream: none was seen yet
	if n := p.UpstreamSessions(); n != 3 {
		t.Fatalf("%d upstream sessions, want 3", n)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatalf("setLevel: %v, want it answered although one upstream refused", err)
	}
	for name, c := range map[string]struct {
		s    *seen
		want string
	}{"logs": {logs, "warning"}, "quiet": {quiet, ""}, "broken": {broken, "warning"}} {
		c.s.mu.Lock()
		if got := strings.Join(c.s.levels, ","); got != c.want {
			t.Errorf("upstream %s was told the levels %q when setLevel was answered, want %q", name, got, c.want)
		}
		c.s.mu.Unlock()
	}
	warned := lines.with(t, "logging/setLevel: upstream failed")
	if len(warned) != 1 || warned[0]["level"] != "WARN" || warned[0]["server"] != "broken" || warned[0]["trace"] == "" ||
		!strings.Contains(fmt.Sprint(warned[0]["err"]), "no levels here") {
		t.Errorf("log lines %v, want one warning naming the server broken, the trace and its error", warned)
	}
}

// A client that initializes without a capabilities object (the go-sdk's
// clients always send one) is served as one that offers nothing.
func TestAnInitializeWithoutCapabilitiesOffersNothing(t *testing.T) {
	p := New("p", Options{Servers: map[string]string{"s": newCountingUpstream(t).url}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	req, err := http.NewRequest(http.MethodPost, serveProject(t, p), strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"raw","version":"0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	data := string(body)
	if i := strings.Index(data, "data: "); i >= 0 {
		data = strings.TrimSpace(strings.SplitN(data[i+len("data: "):], "\n", 2)[0])
	}
	var answer struct {
		Result *struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &answer); err != nil || answer.Result == nil || answer.Result.ServerInfo.Name != "mcplocal/p" {
		t.Fatalf("initialize without capabilities answered %d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	p.mu.Lock()
	cl := p.clients[id]
	p.mu.Unlock()
	if cl == nil || cl.caps == nil {
		t.Fatalf("the session %q has no capabilities recorded", id)
	}
	got, _ := json.Marshal(cl.caps)
	if none, _ := json.Marshal(&mcp.ClientCapabilities{}); string(got) != string(none) {
		t.Errorf("the session %q's capabilities: %s, want none (%s)", id, got, none)
	}
}

// What an upstream says changed reaches the client that holds the upstream
// session, on its standalone stream: tools, prompts and resources
// list_changed, and resources/updated for a resource the client subscribed
// to through the proxy.
func TestUpstreamChangesReachTheClient(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	}
	up.AddResource(&mcp.Resource{Name: "doc", URI: "mem://doc"}, read)
	up.AddPrompt(&mcp.Prompt{Name: "p0"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	mcp.AddTool(up, &mcp.Tool{Name: "t0"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	var gets atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(upSrv.Close)
	p := New("p", Options{Servers: map[string]string{"s": upSrv.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	heard := map[string]chan struct{}{"tools": make(chan struct{}, 16), "prompts": make(chan struct{}, 16), "resources": make(chan struct{}, 16), "updated": make(chan struct{}, 16)}
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { heard["tools"] <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { heard["prompts"] <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard["resources"] <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if r.Params.URI == "mem://doc" {
				heard["updated"] <- struct{}{}
			}
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serveProject(t, p), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://doc"}); err != nil {
		t.Fatal(err)
	}
	// The client's stream makes its upstream session open one: wait for it.
	if !waitFor(ctx, func() bool { return gets.Load() > 0 }) {
		t.Fatal("the upstream session never opened its standalone stream")
	}
	for i, change := range []struct {
		kind string
		do   func(n int)
	}{
		{"tools", func(n int) {
			mcp.AddTool(up, &mcp.Tool{Name: fmt.Sprint("t", n)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
		}},
		{"prompts", func(n int) {
			up.AddPrompt(&mcp.Prompt{Name: fmt.Sprint("p", n)}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		}},
		{"resources", func(n int) { up.AddResource(&mcp.Resource{Name: "more", URI: fmt.Sprint("mem://more/", n)}, read) }},
		{"updated", func(int) { _ = up.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "mem://doc"}) }},
	} {
		// The upstream's stream may still be settling at the proxy when the
		// first change is sent: a change is tried up to 5 times, each given
		// 2 s (the go-sdk delays a list_changed by 10 ms).
		got := false
		for try := 0; try < 5 && !got; try++ {
			change.do(10*i + try + 1)
			select {
			case <-heard[change.kind]:
				got = true
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
			}
		}
		if !got {
			t.Errorf("the upstream's %s change never reached the client", change.kind)
		}
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range prompts.Prompts {
		if strings.Contains(pr.Name, listSentinel) {
			t.Errorf("the client lists the proxy's placeholder %q", pr.Name)
		}
	}
}
