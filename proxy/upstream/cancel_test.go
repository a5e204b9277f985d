package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heard is what an upstream received that the cancel specs judge, in
// order: "call <id> @<session>", "cancel <id> @<session>", "delete @<session>".
type heard struct {
	mu sync.Mutex
	ev []string
}

func (h *heard) add(e string) { h.mu.Lock(); h.ev = append(h.ev, e); h.mu.Unlock() }

func (h *heard) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ev...)
}

// count is how many events start with prefix.
func (h *heard) count(prefix string) int {
	n := 0
	for _, e := range h.all() {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

// cancelUpstream is a go-sdk upstream with a tool "block" that waits for
// its cancel (reporting it on cancelled) and a tool "ok"; with
// holdCancels the notifications/cancelled POSTs it hears are noted and then
// held unanswered (and never reach the go-sdk) until the caller lets go.
func cancelUpstream(t *testing.T, holdCancels bool) (url string, h *heard, entered, cancelled chan struct{}) {
	t.Helper()
	h = &heard{}
	entered, cancelled = make(chan struct{}, 4), make(chan struct{}, 4)
	done := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		entered <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
		case <-done:
		}
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "ok"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := " @" + r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodDelete {
			h.add("delete" + at)
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name      string          `json:"name"`
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &m)
			switch m.Method {
			case "tools/call":
				h.add("call " + string(m.ID) + at)
			case "notifications/cancelled":
				h.add("cancel " + string(m.Params.RequestID) + at)
				if holdCancels {
					select {
					case <-r.Context().Done():
					case <-done:
					}
					return
				}
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(done) }) // before ts.Close, which waits for its handlers
	return ts.URL, h, entered, cancelled
}

func newCancelConn(url string) *Conn {
	return New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 10 * time.Second, CloseGrace: 2 * time.Second})
}

// toldBeforeDelete checks that the upstream heard a cancel for its one
// block call, on the call's session and before that session's DELETE.
func toldBeforeDelete(t *testing.T, h *heard) {
	t.Helper()
	var call, sess string
	cancelAt, deleteAt := -1, -1
	ev := h.all()
	for i, e := range ev {
		switch {
		case strings.HasPrefix(e, "call ") && call == "":
			call, sess = strings.TrimPrefix(e, "call "), e[strings.LastIndex(e, " @"):]
		case call != "" && e == "cancel "+call && cancelAt < 0:
			cancelAt = i
		case call != "" && e == "delete"+sess && deleteAt < 0:
			deleteAt = i
		}
	}
	if cancelAt < 0 || deleteAt < 0 || deleteAt < cancelAt {
		t.Fatalf("the upstream heard %v; want a cancel of the call, on its session, then its DELETE", ev)
	}
}

// giveUpABlockedCall calls "block" on c, gives the call up once the
// upstream has it, and returns when CallTool has.
func giveUpABlockedCall(c *Conn, entered <-chan struct{}) {
	ctx, giveUp := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.CallTool(ctx, "block", nil, nil); errc <- err }()
	<-entered
	giveUp()
	<-errc
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCloseTellsTheUpstreamOfACallStillRunning: a call still running when
// the Conn closes is cancelled upstream, on its session, before the
// DELETE; the upstream's tool ends.
func TestCloseTellsTheUpstreamOfACallStillRunning(t *testing.T) {
	url, h, entered, cancelled := cancelUpstream(t, false)
	c := newCancelConn(url)
	go func() { _, _ = c.CallTool(context.Background(), "block", nil, nil) }()
	<-entered
	within(t, 3*time.Second, "Close", func() { _ = c.Close() })
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatalf("the upstream's tool still runs after Close; it heard %v", h.all())
	}
	toldBeforeDelete(t, h)
}

// TestTheListKeepsAGivenUpCallUntilItIsTold: what the list holds, call by
// call: an answered call leaves it, a given-up one that reached the
// upstream stays until a cancel for it goes out or its session is dropped,
// and one given up before its POST went leaves at once.
func TestTheListKeepsAGivenUpCallUntilItIsTold(t *testing.T) {
	ok := rtFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 202, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
	})
	post := func(t *testing.T, tr tracking, ctx context.Context, msg string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://up/mcp", strings.NewReader(msg))
		req.Header.Set(sessionHeader, "S1")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	const callMsg = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`
	const cancelMsg = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`
	for _, tc := range []struct {
		name    string
		sent    bool   // its tools/call POST went out
		givenUp bool   // end(true), else end(false)
		then    string // "cancel": a cancel goes out under its context; "drop S1"/"drop S2": that session is dropped
		want    int    // calls left on the list
	}{
		{"answered", true, false, "", 0},
		{"given up, untold", true, true, "", 1},
		{"given up before its POST", false, true, "", 0},
		{"given up, then its cancel goes", true, true, "cancel", 0},
		{"given up, its session dropped", true, true, "drop S1", 0},
		{"given up, another session dropped", true, true, "drop S2", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l pendingCalls
			tr := tracking{base: ok, calls: &l}
			ctx, end := l.track(context.Background(), false)
			if tc.sent {
				post(t, tr, ctx, callMsg)
			}
			end(tc.givenUp)
			switch tc.then {
			case "cancel":
				post(t, tr, context.WithoutCancel(ctx), cancelMsg)
			case "drop S1", "drop S2":
				l.forgetSession(strings.TrimPrefix(tc.then, "drop "))
			}
			if n := l.len(); n != tc.want {
				t.Fatalf("%d calls on the list, want %d", n, tc.want)
			}
		})
	}
}

// TestAnAnsweredCallLeavesTheList: a call the upstream answered is not
// kept, and Close tells the upstream of nothing.
func TestAnAnsweredCallLeavesTheList(t *testing.T) {
	url, h, _, _ := cancelUpstream(t, false)
	c := newCancelConn(url)
	for range 3 {
		if _, err := c.CallTool(context.Background(), "ok", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.pending.len(); n != 0 {
		t.Fatalf("%d calls on the list after every call was answered", n)
	}
	_ = c.Close()
	if n := h.count("cancel "); n != 0 {
		t.Fatalf("Close cancelled answered calls: %v", h.all())
	}
}

// TestAGivenUpCallLeavesTheListWhenItsCancelGoes: outside Close, the
// go-sdk client cancels a given-up call whose answer had begun; the Conn
// sees that cancel go and lets the call go, so Close does not tell the
// upstream twice.
func TestAGivenUpCallLeavesTheListWhenItsCancelGoes(t *testing.T) {
	url, h, entered, cancelled := cancelUpstream(t, false)
	c := newCancelConn(url)
	giveUpABlockedCall(c, entered)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatalf("the go-sdk client never cancelled the call; the upstream heard %v", h.all())
	}
	waitUntil(t, "the told call leaves the list", func() bool { return c.pending.len() == 0 })
	_ = c.Close()
	if n := h.count("cancel "); n != 1 {
		t.Fatalf("the upstream heard %d cancels, want 1: %v", n, h.all())
	}
}

// TestADroppedSessionTakesItsCallsOffTheList: a given-up call whose
// cancel has not gone through (the upstream holds it) leaves the list when
// the Conn lets its session go (the upstream forgot it, a failed answer):
// Close tells no session that is gone.
func TestADroppedSessionTakesItsCallsOffTheList(t *testing.T) {
	url, h, entered, _ := cancelUpstream(t, true)
	c := newCancelConn(url)
	giveUpABlockedCall(c, entered)
	waitUntil(t, "the go-sdk's own cancel reaches the upstream", func() bool { return h.count("cancel ") == 1 })
	if n := c.pending.len(); n != 1 {
		t.Fatalf("%d calls on the list while its cancel is held, want 1", n)
	}
	rs, ok := c.Raw()
	if !ok {
		t.Fatal("no session")
	}
	c.Forget(rs)
	if n := c.pending.len(); n != 0 {
		t.Fatalf("%d calls on the list after their session was dropped, want 0", n)
	}
	_ = c.Close()
	if n := h.count("cancel "); n != 1 {
		t.Fatalf("the upstream heard %d cancels, want only the go-sdk's: %v", n, h.all())
	}
}

// TestTrackingPassesEveryBodyOnWhole: the tracking transport reads a
// tracked POST's body through GetBody and passes the request on with its
// body whole; other requests are not read at all.
func TestTrackingPassesEveryBodyOnWhole(t *testing.T) {
	var got []string
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		return &http.Response{StatusCode: 202, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
	})
	var l pendingCalls
	tr := tracking{base: base, calls: &l}
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`
	ctx, end := l.track(context.Background(), false)
	for _, c := range []context.Context{context.Background(), ctx} {
		req, _ := http.NewRequestWithContext(c, http.MethodPost, "http://up/mcp", strings.NewReader(msg))
		req.Header.Set(sessionHeader, "S1")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0] != msg || got[1] != msg {
		t.Fatalf("the base transport got bodies %q; want the message twice, whole", got)
	}
	taken := l.take()
	if len(taken) != 1 {
		t.Fatalf("%d calls noted, want the tracked one", len(taken))
	}
	if id, s := taken[0].sentAs(); string(id) != "7" || s != "S1" {
		t.Fatalf("noted id %s on session %q; want 7 on S1", id, s)
	}
	end(false)
}

// TestARelayedCallIsNotedByItsSender: a call the raw relay tracks (Track)
// says what it sent (Sent) and when its cancel went (Told): the transport
// reads none of its bodies (the relay's hot path decodes each body once, in
// the relay), yet Close has its id, and a told call leaves the list.
func TestARelayedCallIsNotedByItsSender(t *testing.T) {
	read := 0
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 202, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
	})
	c := New("s", "http://up/mcp", Options{Transport: base})
	const msg = `{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"name":"x"}}`
	ctx, end := c.Track(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://up/mcp", strings.NewReader(msg))
	get := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) { read++; return get() }
	req.Header.Set(sessionHeader, "S1")
	if resp, err := c.httpClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if read != 0 {
		t.Fatalf("the transport read a relayed call's body %d times, want none", read)
	}
	Sent(ctx, json.RawMessage(`"r-1"`), "S1")
	end(true)
	if n := c.pending.len(); n != 1 {
		t.Fatalf("%d calls on the list after a given-up relayed call, want 1", n)
	}
	Told(context.WithoutCancel(ctx))
	if n := c.pending.len(); n != 0 {
		t.Fatalf("%d calls on the list after its cancel went, want 0", n)
	}
	ctx2, end2 := c.Track(context.Background())
	Sent(ctx2, json.RawMessage(`"r-2"`), "S1")
	end2(true)
	taken := c.pending.take()
	if len(taken) != 1 {
		t.Fatalf("%d calls for Close to tell, want the untold one", len(taken))
	}
	if id, s := taken[0].sentAs(); string(id) != `"r-2"` || s != "S1" {
		t.Fatalf("Close would tell %s on %q; want \"r-2\" on S1", id, s)
	}
}
