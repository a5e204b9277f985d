package project

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/bycall"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// callStreams is a client's HTTP transport that keeps, for each tools/call
// it posts (named by its argument "id"), the progress and log notifications
// that arrived on that call's own response stream.
type callStreams struct {
	mu  sync.Mutex
	got map[string][]string // call id -> "progress <token>" / "log <data>"
}

func (s *callStreams) RoundTrip(r *http.Request) (*http.Response, error) {
	id := ""
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					ID string `json:"id"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &m) == nil && m.Method == "tools/call" {
			id = m.Params.Arguments.ID
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || id == "" {
		return resp, err
	}
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		sc := bufio.NewScanner(io.TeeReader(body, pw))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					Token any    `json:"progressToken"`
					Data  string `json:"data"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(data), &m) != nil {
				continue
			}
			s.mu.Lock()
			switch m.Method {
			case "notifications/progress":
				s.got[id] = append(s.got[id], fmt.Sprint("progress ", m.Params.Token))
			case "notifications/message":
				s.got[id] = append(s.got[id], "log "+m.Params.Data)
			}
			s.mu.Unlock()
		}
		_, _ = io.Copy(pw, body)
		pw.CloseWithError(sc.Err())
		body.Close()
	}()
	resp.Body = pr
	return resp, nil
}

func (s *callStreams) on(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.got[id]...)
	sort.Strings(out)
	return out
}

func (s *callStreams) has(id, msg string) bool {
	for _, m := range s.on(id) {
		if m == msg {
			return true
		}
	}
	return false
}

// scriptedUpstream serves the tool "work": each call (argument "id") says it
// arrived, then on each "say" sends progress under the call's token and a
// log message naming the call, and on "end" answers.
type scriptedUpstream struct {
	arrived chan string
	quit    chan struct{} // closed at the test's end: every call still running answers
	mu      sync.Mutex
	cmds    map[string]chan string
}

func (u *scriptedUpstream) commands(id string) chan string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cmds[id] == nil {
		u.cmds[id] = make(chan string, 4)
	}
	return u.cmds[id]
}

func (u *scriptedUpstream) serve(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		ID string `json:"id"`
	}) (*mcp.CallToolResult, any, error) {
		cmds := u.commands(in.ID)
		u.arrived <- in.ID
		for {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-u.quit:
				return nil, nil, fmt.Errorf("the test ended")
			case cmd := <-cmds:
				if cmd == "end" {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.ID}}}, nil, nil
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1}); err != nil {
					return nil, nil, err
				}
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.ID}); err != nil {
					return nil, nil, err
				}
			}
		}
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// With several calls in flight, what an upstream sends while it works goes
// on the stream of the call it belongs to (promise 9, routing by call):
// progress and log messages alike on the call whose upstream stream carried
// them, never on another call to the same server or to another server;
// when that is the only call left, still on it.
func TestUpstreamMessagesRideTheirOwnCallAmongSeveral(t *testing.T) {
	up := &scriptedUpstream{arrived: make(chan string, 8), quit: make(chan struct{}), cmds: map[string]chan string{}}
	p := New("p", Options{Servers: map[string]string{"s1": up.serve(t), "s2": up.serve(t)}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	streams := &callStreams{got: map[string][]string{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: serveProject(t, p), HTTPClient: &http.Client{Transport: streams}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(up.quit) // first: a call left running must not hold the closes
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	answered := map[string]chan string{}
	call := func(id, server string) {
		done := make(chan string, 1)
		answered[id] = done
		go func() {
			params := &mcp.CallToolParams{Name: server + "_work", Arguments: map[string]any{"id": id}}
			params.SetProgressToken("tok-" + id)
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError || len(res.Content) != 1 {
				done <- fmt.Sprintf("%+v %v", res, err)
				return
			}
			done <- res.Content[0].(*mcp.TextContent).Text
		}()
		select {
		case got := <-up.arrived:
			if got != id {
				t.Fatalf("call %s arrived upstream, want %s", got, id)
			}
		case <-ctx.Done():
			t.Fatalf("call %s never reached the upstream", id)
		}
	}
	end := func(id string) {
		up.commands(id) <- "end"
		if got := <-answered[id]; got != id {
			t.Fatalf("call %s answered %s", id, got)
		}
	}
	expect := func(step string, id string, msgs ...string) {
		t.Helper()
		// Each notification crosses loopback twice: 5 s is far more than it
		// needs, even on a loaded machine.
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for _, m := range msgs {
			if !waitFor(sctx, func() bool { return streams.has(id, m) }) {
				t.Fatalf("%s: %q never came on call %s's stream; its stream has %q", step, m, id, streams.on(id))
			}
		}
	}
	call("A", "s1")
	call("B", "s2")
	call("C", "s1") // in flight, oldest first: A (s1), B (s2), C (s1)

	up.commands("A") <- "say"
	expect("A says", "A", "progress tok-A", "log A") // not C's, the newest call to s1
	up.commands("C") <- "say"
	expect("C says", "C", "progress tok-C", "log C")
	up.commands("B") <- "say"
	expect("B says", "B", "progress tok-B", "log B")
	end("A")
	end("C")
	up.commands("B") <- "say" // B is now the only call in flight
	expect("B says again", "B", "log B", "progress tok-B")
	sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
	waitFor(sctx, func() bool { return len(streams.on("B")) == 4 })
	scancel()
	end("B")

	for id, want := range map[string][]string{
		"A": {"log A", "progress tok-A"},
		"B": {"log B", "log B", "progress tok-B", "progress tok-B"},
		"C": {"log C", "progress tok-C"},
	} {
		if got := streams.on(id); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("call %s's stream carried %q, want %q", id, got, want)
		}
	}
}

// related finds the call a message from an upstream belongs to by the
// stream it came on (its tag), else, for one on no call's stream, by its
// progress token; never by a guess (the newest call, another server's).
func TestRelatedFindsTheCallByItsStreamElseByItsToken(t *testing.T) {
	a := &inflight{server: "s", token: "ta", call: bycall.NewCall("1")}
	b := &inflight{server: "s", token: "tb", call: bycall.NewCall("2")}
	other := &inflight{server: "t", call: bycall.NewCall("3")}
	cl := &client{active: []*inflight{a, b, other}}
	for _, c := range []struct {
		server, tag string
		token       any
		want        *inflight
	}{
		{"s", "1", nil, a},
		{"s", "2", "ta", b}, // the stream decides, whatever the token says
		{"s", "", "ta", a},
		{"s", "", "tb", b},
		{"s", "", nil, nil},  // on no call's stream, no token: the standalone stream
		{"s", "3", nil, nil}, // another server's call
		{"t", "1", nil, nil},
		{"s", "9", nil, nil}, // a call already answered
	} {
		got, ok := cl.related(c.server, c.tag, c.token)
		if got != c.want || ok != (c.want != nil) {
			t.Errorf("related(%q, %q, %v) = %v, %v; want %v", c.server, c.tag, c.token, got, ok, c.want)
		}
	}
}
