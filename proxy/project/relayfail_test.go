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
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// A way an upstream fails one tools/call POST on the wire.
type wireFault struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request)
	// want is in the broken call's answer on both paths (JSON, the
	// upstream's address as UPSTREAM): the go-sdk client's words.
	want string
	// fails: the go-sdk client fails its upstream session over it, so the
	// next call connects a new one.
	fails bool
}

// hangUp closes the client's connection without a word more: before any
// answer, or (flush) after what was written so far.
func hangUp(w http.ResponseWriter, flush bool) {
	if flush {
		w.(http.Flusher).Flush()
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// wireFaults are the upstream transport failures: each breaks the one
// tools/call POST it is armed for, the upstream behaving again after it.
var wireFaults = []wireFault{
	{"HTTP 500 with a plain body", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal trouble", http.StatusInternalServerError)
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": upstream answered 500 text/plain`, false},
	{"HTTP 500 with an empty JSON body", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
	}, `calling \"tools/call\": rejected by transport: sending \"tools/call\": Internal Server Error;`, false},
	{"HTTP 500 with a JSON-RPC error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		var e struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&e)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the upstream's database is down"}}`, e.ID)
	}, `calling \"tools/call\": rejected by transport: sending \"tools/call\": Internal Server Error;`, false},
	{"HTTP 400 with a JSON-RPC error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		var e struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&e)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no such argument"}}`, e.ID)
	}, `calling \"tools/call\": sending \"tools/call\": no such argument: rejected by transport: Bad Request;`, false},
	{"HTTP 400 with a JSON body that is not JSON-RPC", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"oops":true}`)
	}, `calling \"tools/call\": sending \"tools/call\": Bad Request;`, true},
	{"HTTP 503 with a plain body", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "over capacity, come back later", http.StatusServiceUnavailable)
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": upstream answered 503 text/plain`, false},
	{"HTTP 503 with a JSON body", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"over capacity"}`)
	}, `calling \"tools/call\": rejected by transport: sending \"tools/call\": Service Unavailable;`, false},
	{"the connection closed before any answer", func(w http.ResponseWriter, _ *http.Request) {
		hangUp(w, false)
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": EOF;`, false},
	{"an SSE stream ended before the answer", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": nothing yet\n\n")
	}, `calling \"tools/call\": request terminated without response;`, false},
	{"an SSE stream cut mid-event", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",")
		hangUp(w, true)
	}, `calling \"tools/call\": request terminated without response;`, false},
	{"a resumable SSE stream (event ids) ended before the answer", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: 1\ndata: \n\n")
	}, `sending \"tools/call\": failed to reconnect (session ID: SESSION): connection aborted after 0 attempts;`, true},
	{"a JSON body cut short", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "400")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"jsonrpc":"2.0","result":`)
		hangUp(w, true)
	}, `sending \"tools/call\": failed to read body: unexpected EOF;`, true},
	{"200 with a JSON body that is not JSON-RPC", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<<garbage>>")
	}, `sending \"tools/call\": failed to decode response: unmarshaling jsonrpc message: json: invalid character`, true},
	{"200 with an empty JSON body", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
	}, `sending \"tools/call\": failed to decode response: unmarshaling jsonrpc message: EOF;`, true},
	{"200 with no body and no Content-Type", func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = nil
		w.WriteHeader(http.StatusOK)
	}, `sending \"tools/call\": unsupported content type \"\";`, true},
	{"an SSE event that is not JSON-RPC", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: {not json}\n\n")
	}, `sending \"tools/call\": failed to decode event: unmarshaling jsonrpc message:`, true},
	{"200 with an HTML page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Welcome to the gateway</body></html>")
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": upstream answered 200 text/html`, false},
	{"200 with a plain body and a Content-Length", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "17")
		io.WriteString(w, "maintenance mode\n")
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": upstream answered 200 text/plain`, false},
	{"200 with an HTML page chunked (no Content-Length)", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "<html><body>Welcome")
		w.(http.Flusher).Flush()
		io.WriteString(w, " to the gateway</body></html>")
	}, `sending \"tools/call\": rejected by transport: Post \"http://UPSTREAM/mcp?REDACTED\": upstream answered 200 text/html`, false},
	{"404: the upstream forgot the session", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "session not found", http.StatusNotFound)
	}, `"text":"echo broken`, false},
	{"404 with a JSON-RPC error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		var e struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&e)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such tool here"}}`, e.ID)
	}, `sending \"tools/call\": no such tool here: rejected by transport: Not Found;`, false},
}

// faultyUpstream is an MCP server with one tool, echo, whose next
// tools/call POST fails as arm says; every later one is served. It counts
// the tools/call POSTs it was sent.
// faultyWorld is a project over faultyUpstream, with the relay on or off,
// and one client session through it that offers nothing and holds no
// standalone stream, its requests carrying the trace code code.
type faultyWorld struct {
	p            *Project
	cs           *mcp.ClientSession
	rows         *rowsSeen
	up           string
	arm          func(wireFault)
	posts, inits *atomic.Int64
	closers      []func()
}

func newFaultyWorld(ctx context.Context, t *testing.T, relayOn bool, code string, callTimeout time.Duration) *faultyWorld {
	t.Helper()
	w := &faultyWorld{rows: &rowsSeen{}}
	k := knobs.Defaults()
	k.UpstreamCallTimeout = callTimeout
	k.RequestDeadline = 8 * time.Second
	w.up, w.arm, w.posts, w.inits = faultyUpstream(t)
	w.p = New("p", Options{Servers: map[string]string{"s": w.up}, Relay: relayOn,
		Sessions: session.NewTable(), Audit: w.rows, Knobs: k, Logger: slog.New(slog.DiscardHandler)})
	w.closers = append(w.closers, w.p.Close)
	url := serveRelaying(t, w.p)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withTrace{code: code}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		w.close()
		t.Fatal(err)
	}
	w.cs = cs
	w.closers = append(w.closers, func() { _ = cs.Close() })
	return w
}

// close closes the client session, then the project.
func (w *faultyWorld) close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
}

func faultyUpstream(t *testing.T) (url string, arm func(wireFault), calls, inits *atomic.Int64) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	type in struct {
		S string `json:"s"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + a.S}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	var armed *wireFault
	calls, inits = &atomic.Int64{}, &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"initialize"`)) {
				inits.Add(1)
			}
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				calls.Add(1)
				mu.Lock()
				f := armed
				armed = nil
				mu.Unlock()
				if f != nil {
					f.serve(w, r)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// The address carries a key, as a config's may: no answer or row shows it.
	return srv.URL + "/mcp?apikey=s3cret", func(f wireFault) {
		mu.Lock()
		armed = &f
		mu.Unlock()
	}, calls, inits
}

// The raw relay answers an upstream's transport failure of a tools/call as
// the SDK path does: HTTP 5xx with and without a JSON-RPC error,
// a connection closed before any answer, an SSE stream ended or cut before
// the answer, a body that is not JSON-RPC, a forgotten session (reconnected
// once, the call then answered). For each, the client's answer, the
// upstream_call and tool_call_trace rows and how many tools/call POSTs the
// upstream was sent are the same on both paths, and the next call on the
// same client session is answered.
func TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes(t *testing.T) {
	code := trace.New()
	type seen struct {
		results, rows []string
		posts, inits  int64
	}
	run := func(relayOn bool) (map[string]seen, int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w := newFaultyWorld(ctx, t, relayOn, code, 5*time.Second)
		defer w.close()
		p, cs, rows, up, arm, posts, inits := w.p, w.cs, w.rows, w.up, w.arm, w.posts, w.inits
		upURL := regexp.QuoteMeta(strings.TrimPrefix(strings.TrimSuffix(up, "/mcp?apikey=s3cret"), "http://"))
		norm := func(s string) string {
			if strings.Contains(s, "s3cret") {
				t.Errorf("the upstream's key leaked: %s", s)
			}
			s = strings.ReplaceAll(s, code, "TRACE")
			s = regexp.MustCompile(`session ID: [A-Z0-9]+`).ReplaceAllString(s, "session ID: SESSION")
			return regexp.MustCompile(upURL).ReplaceAllString(s, "UPSTREAM")
		}
		out := map[string]seen{}
		var seenRows int
		for i, f := range append([]wireFault{{name: "a healthy upstream"}}, wireFaults...) {
			var sn seen
			before, initsBefore := posts.Load(), inits.Load()
			if f.serve != nil {
				arm(f)
			}
			for j, arg := range []string{"broken", "after"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": fmt.Sprint(arg, i)}})
				b, _ := json.Marshal(res)
				sn.results = append(sn.results, norm(fmt.Sprintf("%d: %s %v", j, b, err)))
			}
			sn.posts, sn.inits = posts.Load()-before, inits.Load()-initsBefore
			rows.mu.Lock()
			for _, r := range rows.rows[seenRows:] {
				if r.Kind == audit.KindMCPRequest {
					continue
				}
				sn.rows = append(sn.rows, norm(fmt.Sprintf("%s %s %s %s %q", r.Kind, r.Server, r.Tool, r.Status, r.Detail)))
			}
			seenRows = len(rows.rows)
			rows.mu.Unlock()
			sort.Strings(sn.rows)
			out[f.name] = sn
		}
		return out, p.Relayed()
	}
	sdk, sdkRelayed := run(false)
	rel, relRelayed := run(true)
	if sdkRelayed != 0 || relRelayed < int64(2*len(wireFaults)) {
		t.Errorf("the relay answered %d calls with relay: false and %d with relay: true, want 0 and at least %d", sdkRelayed, relRelayed, 2*len(wireFaults))
	}
	for _, f := range append([]wireFault{{name: "a healthy upstream"}}, wireFaults...) {
		s, r := sdk[f.name], rel[f.name]
		if strings.Join(s.results, "\n") != strings.Join(r.results, "\n") {
			t.Errorf("%s: results differ\nSDK path:\n  %s\nrelay:\n  %s", f.name, strings.Join(s.results, "\n  "), strings.Join(r.results, "\n  "))
		}
		if strings.Join(s.rows, "\n") != strings.Join(r.rows, "\n") {
			t.Errorf("%s: audit rows differ\nSDK path:\n  %s\nrelay:\n  %s", f.name, strings.Join(s.rows, "\n  "), strings.Join(r.rows, "\n  "))
		}
		if s.posts != r.posts {
			t.Errorf("%s: the upstream was sent %d tools/call POSTs on the SDK path and %d on the relay", f.name, s.posts, r.posts)
		}
		if s.inits != r.inits {
			t.Errorf("%s: the upstream saw %d new sessions on the SDK path and %d on the relay (a failed session is replaced on the next call)", f.name, s.inits, r.inits)
		}
		for _, got := range []seen{s, r} {
			// What both paths must say, not only say alike: the go-sdk
			// client's words with the trace code, the failure's rows.
			if len(got.results) != 2 || !strings.Contains(got.results[0], f.want) ||
				(f.serve != nil && !strings.HasPrefix(f.name, "404:") && !strings.Contains(got.results[0], "[trace TRACE]")) {
				t.Errorf("%s: the broken call's answer %q, want it to hold %q and the trace code", f.name, got.results, f.want)
			}
			// The next call on the same client session is answered.
			if len(got.results) != 2 || !strings.Contains(got.results[1], `"text":"echo after`) {
				t.Errorf("%s: the call after the failure was not answered: %q", f.name, got.results)
			}
			if want := int64(0); f.fails {
				if got.inits != 1 {
					t.Errorf("%s: the upstream saw %d new sessions, want 1: the failed one is replaced on the next call", f.name, got.inits)
				}
			} else if !strings.HasPrefix(f.name, "404:") && got.inits != want {
				t.Errorf("%s: the upstream saw %d new sessions, want none: the session lives on", f.name, got.inits)
			}
			if f.serve != nil && !strings.HasPrefix(f.name, "404:") && (len(got.rows) != 4 || !strings.HasPrefix(got.rows[0], "tool_call_trace s s_echo error ") || !strings.HasPrefix(got.rows[2], "upstream_call s echo error ")) {
				t.Errorf("%s: rows %q, want the broken call's tool_call_trace and upstream_call rows in error", f.name, got.rows)
			}
		}
	}
}

// The one difference left on purpose (docs/performance.md, "Transport
// failures mid-answer"): a JSON answer that is JSON-RPC but not the call's
// answer (a notification here). The go-sdk client waits for an answer that
// never comes, until the upstream call timeout; the relay says at once that
// the upstream ended its answer without a result. Both keep the session and
// answer the next call.
func TestTheRelayAnswersAJSONBodyWithoutTheAnswerAtOnce(t *testing.T) {
	code := trace.New()
	noAnswer := wireFault{name: "a JSON body holding a notification", serve: func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"not the answer"}}`)
	}}
	run := func(relayOn bool) (results, rows []string, inits int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		w := newFaultyWorld(ctx, t, relayOn, code, time.Second)
		defer w.close()
		cs, rs, arm, initCount := w.cs, w.rows, w.arm, w.inits
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": "first"}}); err != nil {
			t.Fatal(err) // connects the upstream session before the count starts
		}
		before := initCount.Load()
		arm(noAnswer)
		for _, arg := range []string{"broken", "after"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": arg}})
			b, _ := json.Marshal(res)
			results = append(results, strings.ReplaceAll(fmt.Sprintf("%s %v", b, err), code, "TRACE"))
		}
		rs.mu.Lock()
		for _, r := range rs.rows {
			if r.Kind == audit.KindUpstreamCall {
				rows = append(rows, fmt.Sprintf("%s %s %q", r.Tool, r.Status, r.Detail))
			}
		}
		rs.mu.Unlock()
		return results, rows, initCount.Load() - before
	}
	sdkRes, sdkRows, sdkInits := run(false)
	relRes, relRows, relInits := run(true)
	if len(sdkRes) != 2 || !strings.Contains(sdkRes[0], "the upstream s did not answer within 1s") || len(sdkRows) != 3 || !strings.HasPrefix(sdkRows[1], "echo timeout ") {
		t.Errorf("SDK path: %q, rows %q: want the upstream call timeout's answer and a timeout row", sdkRes, sdkRows)
	}
	if len(relRes) != 2 || !strings.Contains(relRes[0], `upstream s: calling \"tools/call\": the upstream ended its answer without a result; retry`) || !strings.Contains(relRes[0], "[trace TRACE]") ||
		len(relRows) != 3 || !strings.HasPrefix(relRows[1], "echo error ") {
		t.Errorf("relay: %q, rows %q: want the answer at once, an error row (not a timeout)", relRes, relRows)
	}
	for _, got := range [][]string{sdkRes, relRes} {
		if len(got) != 2 || !strings.Contains(got[1], `"text":"echo after"`) {
			t.Errorf("the call after the failure was not answered: %q", got)
		}
	}
	if sdkInits != 0 || relInits != 0 {
		t.Errorf("new upstream sessions: %d on the SDK path, %d on the relay; want none (the session lives on)", sdkInits, relInits)
	}
}
