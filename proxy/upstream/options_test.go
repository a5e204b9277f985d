package upstream

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pinging serves an MCP server whose tool "p" pings its client before
// answering and whose tool "echo" answers its raw arguments, wrapped by wrap
// (nil: none).
func pinging(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "p", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestReceivingMiddlewareSeesWhatTheUpstreamSends: Options.Receiving is
// installed on the client, so a request the upstream sends (here a ping)
// goes through it.
func TestReceivingMiddlewareSeesWhatTheUpstreamSends(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mw := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			seen = append(seen, method)
			mu.Unlock()
			return next(ctx, method, req)
		}
	}
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Receiving: []mcp.Middleware{mw}})
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "p", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "ping" {
		t.Errorf("the receiving middleware saw %q, want the upstream's ping", seen)
	}
}

// TestALostSessionIsLoggedOnTheGivenLogger: the Conn logs on the logger of
// its options (here the reconnection after the upstream forgot the session),
// and the lost session's slot serves the reconnection.
func TestALostSessionIsLoggedOnTheGivenLogger(t *testing.T) {
	var lose atomic.Bool
	url := pinging(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Session-Id") != "" && lose.CompareAndSwap(true, false) {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	var logs strings.Builder
	var mu sync.Mutex
	logger := slogTo(&mu, &logs)
	// A Limit of one: the lost session's slot must be given back for the
	// reconnection to get one.
	c := New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Logger: logger, Limit: NewLimit(1)})
	defer c.Close()
	var connects atomic.Int32
	c.OnConnect(func(context.Context, *mcp.ClientSession) { connects.Add(1) })
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	lose.Store(true)
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatalf("the call after a lost session: %v", err)
	}
	if n := connects.Load(); n != 2 {
		t.Errorf("OnConnect ran %d times, want 2 (the first session and the reconnection)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), `msg="upstream session lost; reconnecting" server=s`) {
		t.Errorf("no reconnection logged: %q", logs.String())
	}
}

// TestCloseWithoutAGraceGivesTheDELETEOneSecond: a CloseGrace of 0 means the
// default second, not none: a DELETE the upstream answers after 200 ms is
// answered, not aborted.
func TestCloseWithoutAGraceGivesTheDELETEOneSecond(t *testing.T) {
	answered := make(chan bool, 1)
	url := pinging(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				select {
				case <-time.After(200 * time.Millisecond):
					answered <- true
				case <-r.Context().Done():
					answered <- false
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	c := New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case ok := <-answered:
		if !ok {
			t.Error("the DELETE was aborted: a zero CloseGrace gave it no time")
		}
	case <-time.After(3 * time.Second):
		t.Error("no DELETE reached the upstream")
	}
}

// closeCounter is a shared transport that counts CloseIdleConnections.
type closeCounter struct {
	http.RoundTripper
	n atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.n.Add(1) }

// TestCloseLeavesASharedTransportsConnections: a Conn given a transport shares
// it with other sessions, so its Close does not close the transport's idle
// connections.
func TestCloseLeavesASharedTransportsConnections(t *testing.T) {
	shared := &closeCounter{RoundTripper: http.DefaultTransport.(*http.Transport).Clone()}
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Transport: shared})
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := shared.n.Load(); n != 0 {
		t.Errorf("Close closed the shared transport's idle connections %d time(s)", n)
	}
}

func slogTo(mu *sync.Mutex, b *strings.Builder) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{mu, b}, nil))
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestAFailedConnectGivesItsSessionSlotBack: a handshake the upstream refuses
// frees the slot it took from the Limit, so with a Limit of 1 the next
// connect fails for the same reason, not for the limit.
func TestAFailedConnectGivesItsSessionSlotBack(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer ts.Close()
	c := New("s", ts.URL, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Limit: NewLimit(1)})
	defer c.Close()
	for i := range 2 {
		err := c.Connect(context.Background())
		var le *LimitError
		if err == nil || errors.As(err, &le) || !strings.HasPrefix(err.Error(), "upstream s: connect: ") {
			t.Fatalf("connect %d: %v, want the upstream's refusal as a connect error (not the connect timeout's)", i+1, err)
		}
	}
}

// TestACallerWhoStopsWaitingIsNoConnectTimeout: when the caller's own context
// ends before the connect timeout, the error is a plain connect error, not
// "did not finish within" the connect timeout.
func TestACallerWhoStopsWaitingIsNoConnectTimeout(t *testing.T) {
	url, _ := halfAnswering(t)
	c := New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, CloseGrace: 50 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := c.Connect(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "upstream s: connect: ") {
		t.Fatalf("err = %v, want a plain connect error", err)
	}
}

// TestInitIsTheCurrentSessionsInitialize: Init is nil with no session and
// the upstream's initialize answer once connected.
func TestInitIsTheCurrentSessionsInitialize(t *testing.T) {
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer c.Close()
	if got := c.Init(); got != nil {
		t.Fatalf("Init before connecting = %+v, want nil", got)
	}
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.Init()
	if got == nil || got.ServerInfo == nil || got.ServerInfo.Name != "up" || got.ProtocolVersion != ProtocolVersion {
		t.Fatalf("Init = %+v, want the upstream's answer", got)
	}
}

// TestEachRootsChangeNotifiesTheUpstreamOnce: every NotifyRootsListChanged
// sends one notifications/roots/list_changed (the placeholder root toggles).
func TestEachRootsChangeNotifiesTheUpstreamOnce(t *testing.T) {
	got := make(chan struct{}, 10)
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { got <- struct{}{} },
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	c := New("s", ts.URL, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer c.Close()
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c.NotifyRootsListChanged()
		select {
		case <-got:
		case <-time.After(2 * time.Second):
			t.Fatalf("change %d: no roots/list_changed reached the upstream", i+1)
		}
	}
	select {
	case <-got:
		t.Fatal("more notifications than changes")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestCallToolPassesItsArgumentsOrAnEmptyObject: CallTool sends the raw
// arguments as they are, and {} when there are none.
func TestCallToolPassesItsArgumentsOrAnEmptyObject(t *testing.T) {
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer c.Close()
	for args, want := range map[string]string{`{"x":1}`: `{"x":1}`, "": `{}`} {
		res, err := c.CallTool(context.Background(), "echo", []byte(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != want {
			t.Errorf("arguments %q reached the upstream as %q, want %q", args, got, want)
		}
	}
}

// TestACallersCancelIsNotItsCause: when the caller cancels, do answers the
// call's own error, not context.Canceled (a deadline's cause, by contrast,
// replaces it: the TimeoutError specs).
func TestACallersCancelIsNotItsCause(t *testing.T) {
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	own := errors.New("the call's own error")
	err := c.do(ctx, false, func(context.Context, *mcp.ClientSession) error {
		cancel()
		return own
	})
	if err != own {
		t.Fatalf("err = %v, want the call's own error", err)
	}
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestResponseLimitPassesATransportErrorOn: a request that gets no response
// answers the transport's error as it is.
func TestResponseLimitPassesATransportErrorOn(t *testing.T) {
	refused := errors.New("connection refused")
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if resp, err := LimitResponses(failingTransport{refused}, 10).RoundTrip(r); resp != nil || err != refused {
		t.Fatalf("RoundTrip = %v, %v; want the transport's error", resp, err)
	}
}
