package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/entry"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// TestShutdownAnswersRequestsStillRunning: a tools/call still running when
// the shutdown grace is nearly spent is answered with an isError saying the
// proxy is shutting down (not an EOF, not an empty answer), within the
// grace, and its audit row says so; on the go-sdk path and on the raw relay.
func TestShutdownAnswersRequestsStillRunning(t *testing.T) {
	for _, relay := range []bool{false, true} {
		t.Run(pathName(relay), func(t *testing.T) { shutdownWithACallRunning(t, relay, false) })
	}
}

// TestShutdownEndsABegunSSEStreamWithAnAnswer: a tools/call whose answer
// had begun (an SSE stream carrying its progress) when the grace is nearly
// spent cannot get another HTTP answer; it gets, as the last event of its
// stream, the isError result saying the proxy is shutting down, and its
// row says so, instead of an EOF in the middle of the stream; on the go-sdk
// path and on the raw relay.
func TestShutdownEndsABegunSSEStreamWithAnAnswer(t *testing.T) {
	for _, relay := range []bool{false, true} {
		t.Run(pathName(relay), func(t *testing.T) { shutdownWithACallRunning(t, relay, true) })
	}
}

// pathName names the path a plain tools/call takes with the relay on or off.
func pathName(relay bool) string {
	if relay {
		return "relay"
	}
	return "sdk-path"
}

// shutdownWithACallRunning closes the proxy while a tools/call blocks
// upstream (after a progress notification, which begins the SSE stream of
// its answer, when progress is set), on the path relay chooses, and checks
// the answer and the rows.
func shutdownWithACallRunning(t *testing.T, relay, progress bool) {
	var before func(context.Context, *mcp.CallToolRequest) error
	if progress {
		before = func(ctx context.Context, req *mcp.CallToolRequest) error {
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "started"})
		}
	}
	upURL, entered := blockingUpstream(t, before)
	p, dsn, kv := startInFrontOf(t, upURL, &relay)
	progressed := make(chan struct{}, 1)
	// A go-sdk client offers roots: without its standalone stream (where
	// the relay would ask for them) its calls stay off the relay.
	copts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case progressed <- struct{}{}:
		default:
		}
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, copts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", DisableStandaloneSSE: !relay, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A first call connects the upstream session, so the relay (which
	// sends on a session the Conn holds) takes the call, when it is on.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	got := make(chan answer, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "s_block", Arguments: map[string]any{}}
		if progress {
			params.SetProgressToken("shutdown-progress")
		}
		res, err := cs.CallTool(context.Background(), params)
		got <- answer{res, err, time.Now()}
	}()
	<-entered
	if progress {
		<-progressed // the answer's SSE stream has begun
	}
	if relayed := p.projects["p"].Relayed() != 0; relayed != relay {
		t.Fatalf("the call was relayed: %v; this case is the %s's", relayed, pathName(relay))
	}
	start := time.Now()
	closed := make(chan struct{})
	go func() { _ = p.Close(context.Background()); close(closed) }()
	const tolerance = 300 * time.Millisecond
	var a answer
	select {
	case a = <-got:
	case <-time.After(kv.ShutdownGrace + 5*time.Second):
		t.Fatal("the call was never answered")
	}
	<-closed
	if a.err != nil {
		t.Fatalf("the call still running at shutdown failed (%v) instead of being answered", a.err)
	}
	text := ""
	for _, c := range a.res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !a.res.IsError || !strings.Contains(text, "shutting down") {
		t.Fatalf("answer at shutdown: isError=%v %q; want an isError saying the proxy is shutting down", a.res.IsError, text)
	}
	if took := a.at.Sub(start); took > kv.ShutdownGrace+tolerance {
		t.Errorf("answered %v after the shutdown began; MCPCTL_SHUTDOWN_GRACE_MS=%v + tolerance %v", took, kv.ShutdownGrace, tolerance)
	}
	rows := auditRows(t, dsn)
	found := false
	for _, r := range rows {
		if r.Kind == audit.KindToolCallTrace && r.Status == entry.StatusShutdown {
			found = true
			if onStream := strings.Contains(r.Detail, entry.AnsweredOnStream); onStream != progress {
				t.Errorf("the shutdown row's detail %q; want it to say whether the answer's SSE stream had begun (%v)", r.Detail, progress)
			}
		}
		if r.Kind == audit.KindToolCallTrace && r.Status == audit.StatusOK {
			t.Errorf("a tool_call_trace row of the interrupted call says ok: %+v", r)
		}
	}
	if !found {
		t.Errorf("no tool_call_trace row says %q; rows: %+v", entry.StatusShutdown, rows)
	}
}

// blockingUpstream serves one tool, "block", whose call runs before (if
// set), says so on entered, then blocks until it is cancelled or the test
// ends. The proxy cancels it upstream at shutdown
// (TestShutdownCancelsTheUpstreamsCallsStillRunning); the test's end stays
// a backstop, since a go-sdk server's DELETE waits for its calls in flight
// and a call never told would hold the upstream's Close, and the test, for
// good (it did, 1 run in 40, before the proxy cancelled such calls).
func blockingUpstream(t *testing.T, before func(context.Context, *mcp.CallToolRequest) error) (url string, entered <-chan struct{}) {
	t.Helper()
	in := make(chan struct{}, 1)
	testDone := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if before != nil {
			if err := before(ctx, req); err != nil {
				return nil, nil, err
			}
		}
		in <- struct{}{}
		select {
		case <-ctx.Done():
		case <-testDone:
		}
		return nil, nil, ctx.Err()
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(testDone) }) // runs before srv.Close: the call lets go first
	return srv.URL, in
}

// auditRows is every row of the audit store at dsn.
func auditRows(t *testing.T, dsn string) []audit.Row {
	t.Helper()
	store, err := audit.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// startInFrontOf starts a proxy with one project "p" whose one server "s"
// is upstream, its audit in a SQLite file (dsn), a 600 ms shutdown grace
// (kv) and relay as the config's `relay` (nil: the default).
func startInFrontOf(t *testing.T, upstream string, relay *bool) (p *Proxy, dsn string, kv knobs.Values) {
	t.Helper()
	dsn = "sqlite:" + filepath.Join(t.TempDir(), "audit.db")
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: dsn, Relay: relay,
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: upstream}}}},
	}
	kv = knobs.Defaults()
	kv.ShutdownGrace = 600 * time.Millisecond
	p, err := New(context.Background(), cfg, Options{Knobs: &kv, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return p, dsn, kv
}

// TestShutdownAnswersEveryRequestOfABatch: a client of protocol 2025-03-26
// (the last with JSON-RPC batches) sends a batch whose tools/call blocks
// upstream; when the proxy stops, every request of the batch has its
// answer, the blocked call an isError saying the proxy is shutting down,
// within the grace, instead of a connection closed under the batch.
func TestShutdownAnswersEveryRequestOfABatch(t *testing.T) {
	upURL, entered := blockingUpstream(t, nil)
	relay := true
	p, dsn, kv := startInFrontOf(t, upURL, &relay)
	url := "http://" + p.Addr() + "/projects/p/mcp"

	const version = "2025-03-26"
	post := func(session, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"batch","version":"0"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	resp = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	type answer struct {
		body string
		err  error
		at   time.Time
	}
	got := make(chan answer, 1)
	go func() {
		resp := post(session, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s_block","arguments":{}}},{"jsonrpc":"2.0","id":"b","method":"ping"}]`)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{string(b), err, time.Now()}
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch's tools/call never reached the upstream")
	}
	start := time.Now()
	closed := make(chan struct{})
	go func() { _ = p.Close(context.Background()); close(closed) }()
	const tolerance = 300 * time.Millisecond
	var a answer
	select {
	case a = <-got:
	case <-time.After(kv.ShutdownGrace + 5*time.Second):
		t.Fatal("the batch was never answered")
	}
	<-closed
	if a.err != nil {
		t.Fatalf("the batch still running at shutdown: reading its answer: %v (%q)", a.err, a.body)
	}
	// Every answer, whether the SSE stream's events or one JSON array.
	type rpc struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError bool                `json:"isError"`
			Content []map[string]string `json:"content"`
			Meta    map[string]string   `json:"_meta"`
		} `json:"result"`
		Error *json.RawMessage `json:"error"`
	}
	byID := map[string]rpc{}
	for _, line := range strings.Split(a.body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var one rpc
		if err := json.Unmarshal([]byte(data), &one); err != nil {
			t.Fatalf("an event of the batch's stream is no JSON-RPC answer: %q: %v", data, err)
		}
		byID[string(one.ID)] = one
	}
	if len(byID) != 2 {
		t.Fatalf("the batch's answers: %d, want one per request (2):\n%s", len(byID), a.body)
	}
	if ping := byID[`"b"`]; ping.Result == nil || ping.Error != nil {
		t.Errorf("the batch's ping is not answered with its result:\n%s", a.body)
	}
	call := byID["1"]
	if call.Result == nil || !call.Result.IsError || len(call.Result.Content) != 1 {
		t.Fatalf("the batch's blocked tools/call is not answered with one isError content:\n%s", a.body)
	}
	code := call.Result.Meta["traceCode"]
	if want := entry.ShuttingDown + " [trace " + code + "]"; len(code) != 8 || call.Result.Content[0]["text"] != want {
		t.Errorf("the blocked call's answer %q (trace code %q); want %q", call.Result.Content[0]["text"], code, want)
	}
	rows := auditRows(t, dsn)
	found := false
	for _, r := range rows {
		if r.Kind == audit.KindToolCallTrace && r.Status == entry.StatusShutdown && r.CorrelationID == code && r.SessionID == session && r.Project == "p" {
			found = true
		}
	}
	if !found {
		t.Errorf("no tool_call_trace row of the batch's call (trace %s, session %s) says %q; rows: %+v", code, session, entry.StatusShutdown, rows)
	}
	if took := a.at.Sub(start); took > kv.ShutdownGrace+tolerance {
		t.Errorf("answered %v after the shutdown began; MCPCTL_SHUTDOWN_GRACE_MS=%v + tolerance %v", took, kv.ShutdownGrace, tolerance)
	}
}
