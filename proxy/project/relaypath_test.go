package project

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/relay"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// serveRelaying serves p as the entry does: with `relay: true`, a client's
// notifications/cancelled of a relayed call and the tools/calls RelayCall
// takes go to the raw relay, everything else to the go-sdk.
func serveRelaying(t *testing.T, p *Project) string {
	t.Helper()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodGet && id != "" {
			defer p.Listening(r.Context(), id)()
		}
		if r.Method == http.MethodPost && id != "" && p.Relaying() {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if p.CancelRelayed(id, body) || p.AnswerRelayed(id, body) {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			if rc, ok := relay.Parse(body); ok && p.RelayCall(w, r, id, rc) {
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// withTrace sets the proxy's trace header on every request, so both paths
// name their answers and rows by one code; and, when recreated is set, the
// header by which the entry says it recreated the session.
type withTrace struct{ code, recreated string }

func (c withTrace) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(trace.Header, c.code)
	if c.recreated != "" {
		r.Header.Set(HeaderRecreated, c.recreated)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// relayUpstream serves the tools a relayed call is held to: echo, fail (an
// isError result), chatty (progress, log messages at two levels), asks
// (ping, roots, sampling, elicitation of the client), slow (answers only
// when cancelled), each call's _meta echoed back. It takes the first
// logging/setLevel of a session and refuses the later ones, so it sends
// log messages the client's level no longer wants.
func relayUpstream(t *testing.T, started, cancelled chan<- string) string {
	url, _ := relayUpstreamForgetting(t, started, cancelled, nil)
	return url
}

func relayUpstreamCounting(t *testing.T, started, cancelled chan<- string, told *atomic.Int64) string {
	url, _ := relayUpstreamForgetting(t, started, cancelled, told)
	return url
}

// relayUpstreamForgetting is relayUpstream that also counts, in told, the
// notifications/cancelled it is sent, and returns forget, which makes it
// forget every session it holds (as a restarted upstream would).
func relayUpstreamForgetting(t *testing.T, started, cancelled chan<- string, told *atomic.Int64) (string, func()) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	var mu sync.Mutex
	leveled := map[string]bool{}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" && told != nil {
				told.Add(1)
			}
			if method == "logging/setLevel" {
				mu.Lock()
				again := leveled[req.GetSession().ID()]
				leveled[req.GetSession().ID()] = true
				mu.Unlock()
				if again {
					return nil, fmt.Errorf("this upstream keeps its first level")
				}
			}
			return next(ctx, method, req)
		}
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type in struct {
		S string `json:"s"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		meta, _ := json.Marshal(req.Params.Meta)
		return text(a.S + " meta=" + string(meta)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		r := text("it broke")
		r.IsError = true
		return r, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 2; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2}); err != nil {
				return nil, nil, err
			}
		}
		for _, l := range []mcp.LoggingLevel{"info", "warning", "error"} {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "up", Data: "said at " + string(l)}); err != nil {
				return nil, nil, err
			}
		}
		return text("done"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "asks"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		var out []string
		if err := req.Session.Ping(ctx, nil); err != nil {
			out = append(out, "ping: "+err.Error())
		}
		if r, err := req.Session.ListRoots(ctx, nil); err != nil {
			out = append(out, "roots: "+err.Error())
		} else {
			for _, root := range r.Roots {
				out = append(out, "root "+root.URI)
			}
		}
		if r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}); err != nil {
			out = append(out, "sampling: "+err.Error())
		} else {
			out = append(out, "sampled "+r.Content.(*mcp.TextContent).Text)
		}
		if r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}); err != nil {
			out = append(out, "elicit: "+err.Error())
		} else {
			out = append(out, fmt.Sprint("elicited ", r.Action, " ", r.Content))
		}
		return text(strings.Join(out, "; ")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		started <- a.S
		<-ctx.Done()
		cancelled <- a.S
		return nil, nil, ctx.Err()
	})
	var h atomic.Pointer[mcp.StreamableHTTPHandler]
	forget := func() { h.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)) }
	forget()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	return srv.URL, forget
}

// relaySeen is what a client and an auditor see of the calls.
type relaySeen struct {
	results  []string
	progress []string
	logs     []string // sorted: the SDK path delivers a call's log messages in no fixed order
	logOrder []string // as they arrived
	rows     []string
	relayed  int64
	gone     []string // the slow calls the upstream saw end
	told     int64    // notifications/cancelled the upstream was sent
}

// The raw relay answers a tools/call exactly as the SDK path does: the
// result or the upstream's refusal, progress and log messages (at the
// client's level) on the call's stream, sampling, elicitation, roots and
// ping asked of the client, the upstream call timeout, the client's
// cancellation told upstream, the audit rows. Calls RelayCall must leave
// to the SDK path (an unknown tool, a client that offers requests but holds
// no stream of its own) are still answered, by the SDK path.
func TestTheRelayAnswersAsTheSDKPathDoes(t *testing.T) {
	code := trace.New()
	run := func(relayOn bool) relaySeen {
		started, cancelled := make(chan string, 4), make(chan string, 4)
		rows := &rowsSeen{}
		k := knobs.Defaults()
		k.UpstreamCallTimeout = 400 * time.Millisecond
		k.RequestDeadline = 5 * time.Second // every handler ends by then, whatever a mutant does
		var told atomic.Int64
		p := New("p", Options{Servers: map[string]string{"s": relayUpstreamCounting(t, started, cancelled, &told)}, Relay: relayOn,
			Sessions: session.NewTable(), Audit: rows, Knobs: k, Logger: slog.New(slog.DiscardHandler)})
		defer p.Close()
		url := serveRelaying(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var mu sync.Mutex
		var seen relaySeen
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				seen.progress = append(seen.progress, fmt.Sprint(r.Params.ProgressToken, " ", r.Params.Progress, "/", r.Params.Total))
			},
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				mu.Lock()
				defer mu.Unlock()
				seen.logs = append(seen.logs, fmt.Sprint(r.Params.Level, " ", r.Params.Logger, " ", r.Params.Data))
			},
			CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled:" + r.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			},
		})
		c.AddRoots(&mcp.Root{URI: "file:///work"})
		hc := &http.Client{Transport: withTrace{code: code}}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		// The relay takes a client that offers requests only once it holds
		// its standalone stream.
		p.mu.Lock()
		cl := p.clients[cs.ID()]
		p.mu.Unlock()
		if !waitFor(ctx, cl.isListening) {
			t.Fatal("the client's standalone stream never reached the project")
		}
		for _, l := range []mcp.LoggingLevel{"debug", "warning"} {
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: l}); err != nil {
				t.Fatal(err)
			}
		}
		call := func(cs *mcp.ClientSession, ctx context.Context, name string, meta mcp.Meta) {
			params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"s": name}, Meta: meta}
			res, err := cs.CallTool(ctx, params)
			b, _ := json.Marshal(res)
			mu.Lock()
			seen.results = append(seen.results, fmt.Sprintf("%s: %s %v", name, b, err))
			mu.Unlock()
		}
		call(cs, ctx, "s_echo", mcp.Meta{"progressToken": "tok", "custom": 7})
		call(cs, ctx, "s_echo", mcp.Meta{trace.MetaKey: "client's own"})
		call(cs, ctx, "s_fail", nil)
		call(cs, ctx, "s_chatty", mcp.Meta{"progressToken": "tok"})
		call(cs, ctx, "s_asks", nil)
		call(cs, ctx, "s_nosuch", nil)
		call(cs, ctx, "nosuch", nil)
		call(cs, ctx, "s_slow", nil) // past the upstream call timeout
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			call(cs, cctx, "s_slow", nil)
		}()
		select {
		case gone := <-cancelled: // the first slow call, ended by the call timeout
			seen.gone = append(seen.gone, gone)
		case <-ctx.Done():
			t.Fatal("the upstream never saw the timed out call end")
		}
		// Cancel the second once it runs upstream.
		for range 2 { // the first call's start, then the second's
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatal("the slow calls never started upstream")
			}
		}
		ccancel()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("the cancelled call was never answered")
		}
		select {
		case g := <-cancelled:
			seen.gone = append(seen.gone, g)
		case <-ctx.Done():
			t.Error("the upstream never saw the cancelled call end")
		}

		// A client offering sampling without a stream of its own.
		bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "0"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "bare"}}, nil
			}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bare.Close()
		call(bare, ctx, "s_echo", nil)

		// A client offering nothing needs no stream: the relay takes it.
		plain, err := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		call(plain, ctx, "s_echo", nil)

		// A session the entry recreated owes its client a notice: its first
		// call takes the SDK path, which gives it; the next is relayed.
		again, err := mcp.NewClient(&mcp.Implementation{Name: "again", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withTrace{code: code, recreated: "the proxy restarted"}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		call(again, ctx, "s_echo", nil)
		call(again, ctx, "s_echo", nil)

		// Progress and log messages may arrive just after their call's answer.
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		defer wcancel()
		waitFor(wctx, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen.progress) >= 2 && len(seen.logs) >= 2
		})
		mu.Lock()
		defer mu.Unlock()
		rows.mu.Lock()
		for _, r := range rows.rows {
			if r.Kind == audit.KindMCPRequest {
				continue // initialize, setLevel: not the relay's
			}
			seen.rows = append(seen.rows, fmt.Sprintf("%s %s %s %s %q degraded=%v answer=%d %s", r.Kind, r.Server, r.Tool, r.Status, r.Detail, r.Degraded, r.Bytes, r.Content))
		}
		rows.mu.Unlock()
		sort.Strings(seen.rows)
		sort.Strings(seen.progress)
		seen.logOrder = slices.Clone(seen.logs)
		sort.Strings(seen.logs)
		seen.relayed = p.Relayed()
		seen.told = told.Load()
		return seen
	}
	sdk, relayed := run(false), run(true)
	if sdk.told != 2 || relayed.told != 2 {
		t.Errorf("the upstream was sent %d notifications/cancelled on the SDK path and %d on the relay, want 2 each: the timed out call and the cancelled one, not a call it answered", sdk.told, relayed.told)
	}
	if sdk.relayed != 0 || relayed.relayed != 10 {
		t.Errorf("the relay answered %d calls with relay: false and %d with relay: true, want 0 and 10 (nosuch, the streamless client's call and the recreated session's first take the SDK path)", sdk.relayed, relayed.relayed)
	}
	for _, c := range []struct {
		what      string
		sdk, rely []string
	}{
		{"results", sdk.results, relayed.results},
		{"progress", sdk.progress, relayed.progress},
		{"log messages", sdk.logs, relayed.logs},
		{"audit rows", sdk.rows, relayed.rows},
		{"calls the upstream saw end", sdk.gone, relayed.gone},
	} {
		if strings.Join(c.sdk, "\n") != strings.Join(c.rely, "\n") {
			t.Errorf("%s differ\nSDK path:\n  %s\nrelay:\n  %s", c.what, strings.Join(c.sdk, "\n  "), strings.Join(c.rely, "\n  "))
		}
	}
	// What both paths must say, not only say alike.
	want := []string{"tok 1/2", "tok 2/2"}
	if strings.Join(relayed.progress, "|") != strings.Join(want, "|") {
		t.Errorf("progress %q, want %q", relayed.progress, want)
	}
	// The relay passes them on in the upstream's order.
	if strings.Join(relayed.logOrder, "|") != "warning up said at warning|error up said at error" {
		t.Errorf("log messages %q, want only the ones at the client's level (warning) or above, in the upstream's order", relayed.logOrder)
	}
	// The recreated session's first call is marked degraded, why included.
	if !strings.Contains(strings.Join(relayed.rows, "\n"), `tool_call_trace s s_echo ok "" degraded=true`) {
		t.Errorf("no degraded row for the recreated session's first call: %q", relayed.rows)
	}
	if len(relayed.results) != 13 || !strings.Contains(relayed.results[4], "root file:///work; sampled sampled:hi; elicited accept map[ok:true]") ||
		!strings.Contains(relayed.results[11], "⚠ Session state unavailable (the proxy restarted)") || strings.Contains(relayed.results[12], "⚠") {
		t.Errorf("results %q", relayed.results)
	}
}

// RelayCall leaves to the SDK path, having written nothing, a call on a
// session the project does not hold.
func TestRelayCallLeavesAnUnknownSessionAlone(t *testing.T) {
	p := New("p", Options{Servers: map[string]string{"s": "http://127.0.0.1:1/mcp"}, Relay: true, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	rc, ok := relay.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s_t"}}`))
	if !ok {
		t.Fatal("the call does not parse")
	}
	w := httptest.NewRecorder()
	if p.RelayCall(w, httptest.NewRequest(http.MethodPost, "/", nil), "nosuch", rc) || w.Body.Len() != 0 || p.Relayed() != 0 {
		t.Errorf("RelayCall took a call on an unknown session (wrote %q)", w.Body.String())
	}
	if p.CancelRelayed("nosuch", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)) {
		t.Error("CancelRelayed took a cancel on an unknown session")
	}
}

// headersSeen is a client transport that keeps, for each tools/call, the
// answer's Content-Type and Cache-Control, and names the user as the entry
// does on the session's initialize only (later requests carry none).
type headersSeen struct {
	mu   sync.Mutex
	got  []string
	user string
	code string // the trace code, set on every request
}

func (h *headersSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(trace.Header, h.code)
	if r.Header.Get("Mcp-Session-Id") == "" {
		r.Header.Set(HeaderUser, h.user)
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && bytes.Contains(body, []byte(`"tools/call"`)) {
		h.mu.Lock()
		h.got = append(h.got, resp.Header.Get("Content-Type")+" "+resp.Header.Get("Cache-Control"))
		h.mu.Unlock()
	}
	return resp, err
}

// The relay answers as the SDK path does also with stages (the result they
// make, not the upstream's), past the request deadline (the proxy's own
// answer), for a user named only at initialize (its rows), for a client
// offering roots alone without a stream (the SDK path's), with a _meta that
// holds the trace key among others (the others go upstream), with the SDK's
// headers on a JSON and an event-stream answer.
func TestTheRelayAnswersAsTheSDKPathDoesWithStagesAndDeadlines(t *testing.T) {
	code := trace.New()
	run := func(relayOn bool) relaySeen {
		started, cancelled := make(chan string, 8), make(chan string, 8)
		rows := &rowsSeen{}
		k := knobs.Defaults()
		k.UpstreamCallTimeout = 3 * time.Second
		k.RequestDeadline = 300 * time.Millisecond // before the call timeout: the deadline answers
		pages := stage.NewPages()
		pl, err := stage.NewPipeline([]config.Stage{{Name: "paginate", Options: map[string]any{"thresholdBytes": 30, "pageBytes": 20}}},
			&stage.Shared{Knobs: k, Cache: stage.NewCache(8), Pages: pages, Audit: rows})
		if err != nil {
			t.Fatal(err)
		}
		upURL, forget := relayUpstreamForgetting(t, started, cancelled, nil)
		p := New("p", Options{Servers: map[string]string{"s": upURL}, Relay: relayOn, Pipeline: pl, Pages: pages,
			Sessions: session.NewTable(), Audit: rows, Knobs: k, Logger: slog.New(slog.DiscardHandler)})
		defer p.Close()
		url := serveRelaying(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var seen relaySeen
		hs := &headersSeen{user: "carol", code: code}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: hs}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		call := func(cs *mcp.ClientSession, name, arg string, meta mcp.Meta) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"s": arg}, Meta: meta})
			b, _ := json.Marshal(res)
			// A paginated result's handle is random.
			s := regexp.MustCompile(`\\"handle\\": \\"[A-Z2-7]+\\"`).ReplaceAllString(string(b), "HANDLE")
			seen.results = append(seen.results, fmt.Sprintf("%s: %s %v", name, strings.ReplaceAll(s, code, "TRACE"), err))
		}
		call(cs, "s_echo", "short", mcp.Meta{trace.MetaKey: "x", "custom": 1})
		forget() // the upstream restarted: the next call reconnects once and runs
		call(cs, "s_echo", "again", nil)
		call(cs, "s_echo", strings.Repeat("long ", 10), nil)       // paginated
		call(cs, "s_fail", "", nil)                                // an error: not paginated
		call(cs, "s_chatty", "", mcp.Meta{"progressToken": "tok"}) // an event stream
		call(cs, "s_slow", "", nil)                                // past the request deadline
		select {
		case <-cancelled: // the upstream was told
		case <-ctx.Done():
			t.Error("the upstream never saw the call past the deadline end")
		}
		roots, err := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withTrace{code: code}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer roots.Close()
		call(roots, "s_echo", "roots", nil)
		rows.mu.Lock()
		for _, r := range rows.rows {
			if r.Kind == audit.KindMCPRequest {
				continue
			}
			seen.rows = append(seen.rows, strings.ReplaceAll(fmt.Sprintf("%s %s %s %s %s %q degraded=%v %s", r.Kind, r.User, r.Server, r.Tool, r.Status, r.Detail, r.Degraded, r.DegradedReason), code, "TRACE"))
		}
		rows.mu.Unlock()
		sort.Strings(seen.rows)
		hs.mu.Lock()
		seen.progress = append(seen.progress, hs.got...) // the answers' headers
		hs.mu.Unlock()
		seen.relayed = p.Relayed()
		return seen
	}
	sdk, relayed := run(false), run(true)
	if sdk.relayed != 0 || relayed.relayed != 6 {
		t.Errorf("the relay answered %d calls with relay: false and %d with relay: true, want 0 and 6 (the roots client's takes the SDK path)", sdk.relayed, relayed.relayed)
	}
	for _, c := range []struct {
		what      string
		sdk, rely []string
	}{
		{"results", sdk.results, relayed.results},
		{"audit rows", sdk.rows, relayed.rows},
	} {
		if strings.Join(c.sdk, "\n") != strings.Join(c.rely, "\n") {
			t.Errorf("%s differ\nSDK path:\n  %s\nrelay:\n  %s", c.what, strings.Join(c.sdk, "\n  "), strings.Join(c.rely, "\n  "))
		}
	}
	// The relay answers with JSON until an event goes out first (the SDK
	// path always streams); its event stream carries the SDK's headers.
	if want := "application/json |application/json |application/json |application/json |text/event-stream no-cache, no-transform|application/json "; strings.Join(relayed.progress, "|") != want ||
		sdk.progress[4] != relayed.progress[4] {
		t.Errorf("the relay's answers' headers %q, want %q (the SDK path's stream: %q)", relayed.progress, want, sdk.progress)
	}
	if len(relayed.results) != 7 || !strings.Contains(relayed.results[0], `short meta={\"custom\":1}`) || !strings.Contains(relayed.results[1], `again meta=null`) ||
		!strings.Contains(relayed.results[2], "This result is 60 bytes in 3 pages") || !strings.Contains(relayed.results[5], "the request did not complete within 300ms") {
		t.Errorf("results %q", relayed.results)
	}
}

// CancelRelayed ends the relayed call a client's notifications/cancelled
// names, on that session only, and takes nothing else: another method, a
// request, no requestId, an id not being relayed (or no longer).
func TestCancelRelayedEndsTheCallItNames(t *testing.T) {
	p := New("p", Options{Servers: map[string]string{"s": "http://127.0.0.1:1/mcp"}, Relay: true, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	cl := &client{p: p, id: "sess", conns: map[string]*upstream.Conn{}}
	p.mu.Lock()
	p.clients["sess"] = cl
	p.mu.Unlock()
	t.Cleanup(func() { p.Release("sess") }) // before Close: this client has no server of its own
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := cl.relaying(json.RawMessage(`7`), cancel)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`,
	} {
		if p.CancelRelayed("sess", []byte(body)) || ctx.Err() != nil {
			t.Errorf("CancelRelayed took %s", body)
		}
	}
	cancelled := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"no"}}`
	if p.CancelRelayed("other", []byte(cancelled)) || ctx.Err() != nil {
		t.Error("CancelRelayed took another session's cancel")
	}
	if !p.CancelRelayed("sess", []byte(cancelled)) || ctx.Err() == nil {
		t.Error("CancelRelayed did not end the call its cancel names")
	}
	done()
	if p.CancelRelayed("sess", []byte(cancelled)) {
		t.Error("CancelRelayed took a cancel of a call no longer relayed")
	}
}
