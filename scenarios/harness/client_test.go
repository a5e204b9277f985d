package harness

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// seen records each request's method, JSON-RPC method and headers.
type seen struct {
	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	method, rpc string
	header      http.Header
}

func (s *seen) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		s.mu.Lock()
		s.reqs = append(s.reqs, seenRequest{r.Method, m.Method, r.Header.Clone()})
		s.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		next.ServeHTTP(w, r)
	})
}

func (s *seen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}

func (s *seen) all() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.reqs...)
}

// mcpServer is an MCP server with one tool, behind a recorder.
func mcpServer(t *testing.T) (*httptest.Server, *seen) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	rec := &seen{}
	ts := httptest.NewServer(rec.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(ts.Close)
	return ts, rec
}

// The clients send the bearer token and the target's headers on every
// request, and nothing of either when there is none.
func TestClientsSendTheTokenAndTheHeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ts, rec := mcpServer(t)
	for _, c := range []struct {
		token   string
		headers map[string]string
	}{
		{"tok", nil},
		{"", map[string]string{"X-Api-Key": "k"}},
		{"tok", map[string]string{"X-Api-Key": "k", "Authorization": "Bearer overridden"}},
		{"", nil},
	} {
		rec.reset()
		hc := &http.Client{Transport: bearer{token: c.token, headers: c.headers, next: http.DefaultTransport}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		h := rec.all()[0].header
		wantAuth := ""
		if c.token != "" {
			wantAuth = "Bearer " + c.token
		}
		if got := h.Get("Authorization"); got != wantAuth {
			t.Errorf("%+v: Authorization %q, want %q", c, got, wantAuth)
		}
		if got := h.Get("X-Api-Key"); got != c.headers["X-Api-Key"] {
			t.Errorf("%+v: X-Api-Key %q", c, got)
		}
		if req.Header.Get("Authorization") != "" || req.Header.Get("X-Api-Key") != "" {
			t.Errorf("%+v: the caller's request was changed", c)
		}
	}

	rec.reset()
	cs, err := SDKClient(ctx, ts.URL, "sdk-token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	for _, r := range rec.all() {
		if r.header.Get("Authorization") != "Bearer sdk-token" {
			t.Errorf("the go-sdk client's %s %s carries %q", r.method, r.rpc, r.header.Get("Authorization"))
		}
	}
}

// The mcp-go client initializes with the token, or, given a session id,
// takes it without initializing.
func TestMark3ClientInitializesOrTakesTheSessionGiven(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ts, rec := mcpServer(t)
	c, err := Mark3Client(ctx, ts.URL, "m3-token", "")
	if err != nil {
		t.Fatal(err)
	}
	id := c.GetSessionId()
	if _, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "ping"}}); err != nil {
		t.Fatal(err)
	}
	var rpcs []string
	for _, r := range rec.all() {
		rpcs = append(rpcs, r.rpc)
		if r.header.Get("Authorization") != "Bearer m3-token" {
			t.Errorf("%s %s carries %q", r.method, r.rpc, r.header.Get("Authorization"))
		}
	}
	if len(rpcs) == 0 || rpcs[0] != "initialize" || id == "" {
		t.Errorf("requests %v, session %q: want an initialize first", rpcs, id)
	}

	rec.reset()
	again, err := Mark3Client(ctx, ts.URL, "", id)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := again.GetSessionId(); got != id {
		t.Errorf("session %q, want the given %q", got, id)
	}
	if _, err := again.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "ping"}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.all() {
		if r.rpc == "initialize" {
			t.Error("a client given a session id initialized")
		}
		if r.header.Get("Mcp-Session-Id") != id && r.method == http.MethodPost {
			t.Errorf("%s %s: session %q, want %q", r.method, r.rpc, r.header.Get("Mcp-Session-Id"), id)
		}
		if r.header.Get("Authorization") != "" {
			t.Errorf("a client without a token sent %q", r.header.Get("Authorization"))
		}
	}
	_ = c.Close()
	if _, err := Mark3Client(ctx, "http://127.0.0.1:1/mcp", "", ""); err == nil {
		t.Error("a client connected to nothing")
	}
}

// A client given roots answers the server's roots/list with them.
func TestClientsWithRootsAnswerRootsList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := upstream.NewEverything(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	root := &mcp.Root{URI: "file:///work/here", Name: "here"}
	text := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots"})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("roots: %v %+v", err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	cs, err := SDKClientWith(ctx, ev.URL(), "", nil, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(cs); !strings.Contains(got, root.URI) {
		t.Errorf("SDKClientWith's roots: %q", got)
	}
	_ = cs.Close()
	e := JudgedOn(&Live{MCP: ev.URL()}, CompressedBounds())
	cs, err = e.ConnectWith(ctx, "", ev.URL(), nil, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(cs); !strings.Contains(got, root.URI) {
		t.Errorf("ConnectWith's roots: %q", got)
	}
	_ = cs.Close()
}

// The env's clients send the user's token and the target's headers.
func TestTheEnvsClientsSendTheUsersTokenAndTheTargetsHeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ts, rec := mcpServer(t)
	f := mustParseForeign(t, "name: h\ncommand: [x]\nendpoint: /\nheaders: {X-Api-Key: 'key-{{.Port}}'}").Target(nil).(*Foreign)
	f.vars = ForeignVars{Listen: strings.TrimPrefix(ts.URL, "http://"), Port: "42"}
	e := JudgedOn(f, CompressedBounds())
	e.Users = map[string]string{"alice": "alice-token"}
	cs, err := e.Connect(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	reqs := rec.all()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, r := range reqs {
		if r.header.Get("Authorization") != "Bearer alice-token" || r.header.Get("X-Api-Key") != "key-42" {
			t.Errorf("%s %s: Authorization %q X-Api-Key %q", r.method, r.rpc, r.header.Get("Authorization"), r.header.Get("X-Api-Key"))
		}
	}
	if got := e.Tool("search"); got != "docmost_search" {
		t.Errorf("tool %q", got)
	}
}
