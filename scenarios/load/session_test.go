package load

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testCtx bounds one test's calls: a client that never returns fails the
// test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestInitializeOpensTheSessionWithTheProtocolsHeaders(t *testing.T) {
	f, srv := newFakeServer(t, &fakeServer{SessionID: "sess-1"})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL, Token: "tok"}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if s.ID != "sess-1" {
		t.Errorf("ID = %q, want the Mcp-Session-Id initialize got", s.ID)
	}
	if got := f.posts(); strings.Join(got, " ") != "initialize notifications/initialized" {
		t.Fatalf("posts %q, want initialize then notifications/initialized", got)
	}
	reqs := f.requests()
	init, note := reqs[0], reqs[1]
	var p struct {
		ProtocolVersion string         `json:"protocolVersion"`
		ClientInfo      map[string]any `json:"clientInfo"`
	}
	if err := json.Unmarshal(init.Params, &p); err != nil || p.ProtocolVersion != ProtocolVersion || p.ClientInfo["name"] == nil {
		t.Errorf("initialize params %s (%v), want protocolVersion %s and clientInfo", init.Params, err, ProtocolVersion)
	}
	if string(init.ID) != "1" || note.ID != nil {
		t.Errorf("ids: initialize %s, notification %s; want 1 and none", init.ID, note.ID)
	}
	if note.HasParams {
		t.Errorf("notifications/initialized carries params %s, want none", note.Params)
	}
	for i, r := range reqs {
		for name, want := range map[string]string{
			"Content-Type":         "application/json",
			"Accept":               "application/json, text/event-stream",
			"Mcp-Protocol-Version": ProtocolVersion,
			"Authorization":        "Bearer tok",
		} {
			if !hasHeader(r.Header, name, want) {
				t.Errorf("request %d (%s): %s = %q, want %q", i, r.Method, name, r.Header.Values(name), want)
			}
		}
	}
	if init.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("initialize carries Mcp-Session-Id %q before the server issued one", init.Header.Get("Mcp-Session-Id"))
	}
	if !hasHeader(note.Header, "Mcp-Session-Id", "sess-1") {
		t.Errorf("notifications/initialized carries Mcp-Session-Id %q, want sess-1", note.Header.Values("Mcp-Session-Id"))
	}
	if s.LastID() != 1 {
		t.Errorf("LastID = %d after initialize, want 1 (notifications take no id)", s.LastID())
	}
}

func TestInitializeNeedsASessionIDUnlessStateless(t *testing.T) {
	_, srv := newFakeServer(t, &fakeServer{})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	err := s.Initialize(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "Mcp-Session-Id") {
		t.Fatalf("Initialize against a server that issues no id: err = %v, want one naming Mcp-Session-Id", err)
	}

	f, srv := newFakeServer(t, &fakeServer{})
	s = &Session{HTTP: NewHTTPClient(1), URL: srv.URL, Stateless: true}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatalf("stateless Initialize: %v", err)
	}
	if _, err := s.CallTool(testCtx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.requests() {
		if len(r.Header.Values("Mcp-Session-Id")) != 0 || len(r.Header.Values("Authorization")) != 0 {
			t.Errorf("%s carries Mcp-Session-Id %q, Authorization %q; want neither (no id, no token)",
				r.Method, r.Header.Values("Mcp-Session-Id"), r.Header.Values("Authorization"))
		}
	}
}

func TestInitializeFailsWhenEitherStepIsRefused(t *testing.T) {
	// The notification answered with an error status.
	_, srv := newFakeServer(t, &fakeServer{SessionID: "s", Script: func(m string, _ json.RawMessage) (reply, bool) {
		return reply{Status: http.StatusBadRequest, Body: "no"}, m == "notifications/initialized"
	}})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	err := s.Initialize(testCtx(t))
	var h *HTTPError
	if !errors.As(err, &h) || h.Status != http.StatusBadRequest || !strings.Contains(err.Error(), "notifications/initialized") {
		t.Errorf("refused notification: err = %v, want an HTTP 400 error naming notifications/initialized", err)
	}

	// initialize answered with a JSON-RPC error.
	f, srv := newFakeServer(t, &fakeServer{SessionID: "s", Script: func(m string, id json.RawMessage) (reply, bool) {
		return reply{Status: http.StatusOK, ContentType: "application/json",
			Body: rpcAnswer(id, `"error":{"code":-32602,"message":"unsupported version"}`)}, m == "initialize"
	}})
	s = &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	err = s.Initialize(testCtx(t))
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 || !strings.Contains(err.Error(), "initialize") {
		t.Errorf("refused initialize: err = %v, want JSON-RPC error -32602", err)
	}
	if got := f.posts(); len(got) != 1 {
		t.Errorf("after a refused initialize the client sent %q, want nothing more", got)
	}

	// initialize answered with JSON that is neither a result nor an error.
	_, srv = newFakeServer(t, &fakeServer{SessionID: "s", Script: func(m string, id json.RawMessage) (reply, bool) {
		return reply{Status: http.StatusOK, ContentType: "application/json", Body: `{"jsonrpc":"2.0","id":` + string(id) + `}`}, m == "initialize"
	}})
	s = &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	err = s.Initialize(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "not a JSON-RPC answer") || Answered(err) {
		t.Errorf("initialize answered with neither result nor error: err = %v, want a not-a-JSON-RPC-answer error", err)
	}
}

func TestCallToolReturnsTheResultsTextTraceAndStatus(t *testing.T) {
	for _, sse := range []bool{false, true} {
		f, srv := newFakeServer(t, &fakeServer{SessionID: "sess-9", SSE: sse})
		s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
		if err := s.Initialize(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		r, err := s.CallTool(testCtx(t), "docmost_search", map[string]any{"query": "q"})
		if err != nil {
			t.Fatalf("sse=%v: %v", sse, err)
		}
		want := Result{Text: "first\nsecond", Trace: "trace-2", Status: http.StatusOK}
		if r != want {
			t.Errorf("sse=%v: result %+v, want %+v", sse, r, want)
		}
		r, err = s.CallTool(testCtx(t), "docmost_search", map[string]any{"fail": true})
		if err != nil || !r.IsError || r.Trace != "trace-3" {
			t.Errorf("sse=%v: isError call: %+v, %v; want isError with trace-3", sse, r, err)
		}
		if s.LastID() != 3 {
			t.Errorf("LastID = %d after initialize and two calls, want 3", s.LastID())
		}
		call := f.requests()[2]
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal(call.Params, &p); err != nil || p.Name != "docmost_search" || p.Arguments["query"] != "q" {
			t.Errorf("tools/call params %s, want name and arguments", call.Params)
		}
		if !hasHeader(call.Header, "Mcp-Session-Id", "sess-9") {
			t.Errorf("tools/call carries Mcp-Session-Id %q, want sess-9", call.Header.Values("Mcp-Session-Id"))
		}
	}
}

// The session's id is the one initialize got: an answer to a later
// request carrying another does not replace it.
func TestTheSessionIDIsTheOneInitializeGot(t *testing.T) {
	f, srv := newFakeServer(t, &fakeServer{SessionID: "first", Stamp: "other"})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.CallTool(testCtx(t), "t", nil); err != nil {
			t.Fatal(err)
		}
	}
	if s.ID != "first" {
		t.Errorf("ID = %q, want first", s.ID)
	}
	if last := f.requests()[3]; !hasHeader(last.Header, "Mcp-Session-Id", "first") {
		t.Errorf("the second call carries Mcp-Session-Id %q, want first", last.Header.Values("Mcp-Session-Id"))
	}
}

func TestCallToolErrorsSayWhetherTheServerAnswered(t *testing.T) {
	long := strings.Repeat("x", 500)
	exact := strings.Repeat("y", 200)
	cases := []struct {
		name     string
		reply    func(id json.RawMessage) reply
		answered bool
		check    func(t *testing.T, r Result, err error)
	}{
		{"a JSON-RPC error", func(id json.RawMessage) reply {
			return reply{http.StatusOK, "application/json", rpcAnswer(id, `"error":{"code":-32001,"message":"deadline","data":{"x":1}}`)}
		}, true, func(t *testing.T, r Result, err error) {
			var rpc *RPCError
			if !errors.As(err, &rpc) || rpc.Code != -32001 || rpc.Message != "deadline" || string(rpc.Data) != `{"x":1}` {
				t.Errorf("err = %v, want the JSON-RPC error with its data", err)
			}
			if r.Status != http.StatusOK {
				t.Errorf("Status = %d, want 200", r.Status)
			}
		}},
		{"a JSON-RPC error with an error status", func(id json.RawMessage) reply {
			return reply{http.StatusNotFound, "application/json", rpcAnswer(id, `"error":{"code":-32600,"message":"no session"}`)}
		}, true, func(t *testing.T, r Result, err error) {
			var rpc *RPCError
			if !errors.As(err, &rpc) || rpc.Code != -32600 || r.Status != http.StatusNotFound {
				t.Errorf("err = %v, status %d; want JSON-RPC error -32600 with status 404", err, r.Status)
			}
		}},
		{"an error status with a plain body", func(json.RawMessage) reply {
			return reply{http.StatusServiceUnavailable, "text/plain", "overloaded\n"}
		}, true, func(t *testing.T, r Result, err error) {
			var h *HTTPError
			if !errors.As(err, &h) || h.Status != http.StatusServiceUnavailable || strings.TrimSpace(h.Body) != "overloaded" {
				t.Errorf("err = %v, want HTTP 503 with the body", err)
			}
			if err.Error() != "HTTP 503: overloaded" || r.Status != http.StatusServiceUnavailable {
				t.Errorf("err %q, status %d; want \"HTTP 503: overloaded\" and 503", err, r.Status)
			}
		}},
		{"an error status with a long body", func(json.RawMessage) reply {
			return reply{http.StatusBadGateway, "text/html", long}
		}, true, func(t *testing.T, _ Result, err error) {
			var h *HTTPError
			if !errors.As(err, &h) || h.Body != long[:200]+"…" {
				t.Errorf("err = %v, want the body's first 200 bytes and an ellipsis", err)
			}
		}},
		{"an error status with a body of exactly the excerpt's length", func(json.RawMessage) reply {
			return reply{http.StatusBadGateway, "text/html", exact}
		}, true, func(t *testing.T, _ Result, err error) {
			var h *HTTPError
			if !errors.As(err, &h) || h.Body != exact {
				t.Errorf("err = %v, want the whole body, not cut", err)
			}
		}},
		{"a 200 that is not JSON-RPC", func(json.RawMessage) reply {
			return reply{http.StatusOK, "application/json", "<html>hello</html>"}
		}, false, func(t *testing.T, _ Result, err error) {
			if err == nil || !strings.Contains(err.Error(), "not a JSON-RPC answer (HTTP 200): <html>hello</html>") {
				t.Errorf("err = %v, want a not-a-JSON-RPC-answer error quoting the body", err)
			}
		}},
		{"a result that is not a tool result", func(id json.RawMessage) reply {
			return reply{http.StatusOK, "application/json", rpcAnswer(id, `"result":"text"`)}
		}, false, func(t *testing.T, r Result, err error) {
			if err == nil || !strings.Contains(err.Error(), "tools/call result") || r.Status != http.StatusOK {
				t.Errorf("err = %v, status %d; want a tools/call result error with status 200", err, r.Status)
			}
		}},
		{"an event stream that ends without the answer", func(json.RawMessage) reply {
			return reply{http.StatusOK, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n\n"}
		}, false, func(t *testing.T, r Result, err error) {
			if !errors.Is(err, io.ErrUnexpectedEOF) || r.Status != http.StatusOK {
				t.Errorf("err = %v, status %d; want unexpected EOF with status 200", err, r.Status)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, srv := newFakeServer(t, &fakeServer{SessionID: "s", Script: func(m string, id json.RawMessage) (reply, bool) {
				if m != "tools/call" {
					return reply{}, false
				}
				return c.reply(id), true
			}})
			s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
			if err := s.Initialize(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			r, err := s.CallTool(testCtx(t), "t", map[string]any{})
			if err == nil {
				t.Fatalf("no error, result %+v", r)
			}
			if Answered(err) != c.answered {
				t.Errorf("Answered(%v) = %v, want %v", err, !c.answered, c.answered)
			}
			c.check(t, r, err)
		})
	}
}

func TestCallToolOnAServerThatIsGoneIsNoAnswer(t *testing.T) {
	_, srv := newFakeServer(t, &fakeServer{SessionID: "s"})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	r, err := s.CallTool(testCtx(t), "t", nil)
	if err == nil || Answered(err) || r.Status != 0 {
		t.Errorf("call to a closed server: %+v, %v; want a transport error, status 0", r, err)
	}
}

func TestNotifyPostsANotificationWithoutAnID(t *testing.T) {
	f, srv := newFakeServer(t, &fakeServer{SessionID: "s", Script: func(m string, _ json.RawMessage) (reply, bool) {
		return reply{Status: http.StatusNotFound, Body: "gone"}, m == "notifications/refused"
	}})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Notify(testCtx(t), "notifications/cancelled", map[string]any{"requestId": 7}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	err := s.Notify(testCtx(t), "notifications/refused", nil)
	var h *HTTPError
	if !errors.As(err, &h) || h.Status != http.StatusNotFound || h.Body != "gone" {
		t.Errorf("Notify answered 404: err = %v, want HTTP 404 with the server's body", err)
	}
	n := f.requests()[2]
	var p struct {
		RequestID int `json:"requestId"`
	}
	if n.Method != "notifications/cancelled" || n.ID != nil || json.Unmarshal(n.Params, &p) != nil || p.RequestID != 7 {
		t.Errorf("notification %+v (params %s), want notifications/cancelled with requestId 7 and no id", n, n.Params)
	}
	if s.LastID() != 1 {
		t.Errorf("LastID = %d, want 1: notifications take no id", s.LastID())
	}
}

func TestCloseDeletesTheSessionOnce(t *testing.T) {
	f, srv := newFakeServer(t, &fakeServer{SessionID: "sess-d"})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL, Token: "tok"}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if s.ID != "" {
		t.Errorf("ID = %q after Close, want empty", s.ID)
	}
	if err := s.Close(testCtx(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var deletes []request
	for _, r := range f.requests() {
		if r.HTTPMethod == http.MethodDelete {
			deletes = append(deletes, r)
		}
	}
	if len(deletes) != 1 {
		t.Fatalf("%d DELETEs, want 1", len(deletes))
	}
	d := deletes[0]
	if !hasHeader(d.Header, "Mcp-Session-Id", "sess-d") || !hasHeader(d.Header, "Authorization", "Bearer tok") ||
		!hasHeader(d.Header, "Content-Type", "application/json") {
		t.Errorf("DELETE headers %v, want the session id, the token and Content-Type application/json", d.Header)
	}

	// A session that never got an id sends nothing.
	f2, srv2 := newFakeServer(t, &fakeServer{})
	if err := (&Session{HTTP: NewHTTPClient(1), URL: srv2.URL}).Close(testCtx(t)); err != nil || len(f2.requests()) != 0 {
		t.Errorf("Close without an id: %v, %d requests; want nil and none", err, len(f2.requests()))
	}

	// A server that is gone: the DELETE's failure is returned.
	s = &Session{HTTP: NewHTTPClient(1), URL: srv.URL, ID: "x"}
	srv.Close()
	if err := s.Close(testCtx(t)); err == nil {
		t.Error("Close against a closed server returned nil")
	}
}

func TestListenHoldsTheStandaloneStreamUntilClose(t *testing.T) {
	f, srv := newFakeServer(t, &fakeServer{SessionID: "sess-l"})
	s := &Session{HTTP: NewHTTPClient(2), URL: srv.URL, Token: "tok"}
	if err := s.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var get *request
	for _, r := range f.requests() {
		if r.HTTPMethod == http.MethodGet {
			get = &r
		}
	}
	if get == nil {
		t.Fatal("Listen returned with no GET sent")
	}
	if !hasHeader(get.Header, "Accept", "text/event-stream") || len(get.Header.Values("Content-Type")) != 0 ||
		!hasHeader(get.Header, "Mcp-Session-Id", "sess-l") || !hasHeader(get.Header, "Authorization", "Bearer tok") {
		t.Errorf("GET headers %v, want Accept text/event-stream, no Content-Type, the session id and the token", get.Header)
	}
	// The stream stays open while the session calls.
	if _, err := s.CallTool(testCtx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.gone:
		t.Fatal("the stream ended before Close")
	default:
	}
	if err := s.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream was still open 5 s after Close")
	}
}

func TestListenReportsARefusedStream(t *testing.T) {
	_, srv := newFakeServer(t, &fakeServer{SessionID: "s", Stream: func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}})
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	err := s.Listen(testCtx(t))
	var h *HTTPError
	if !errors.As(err, &h) || h.Status != http.StatusMethodNotAllowed || !strings.Contains(h.Body, "method not allowed") ||
		!strings.Contains(err.Error(), "standalone stream") {
		t.Errorf("err = %v, want the standalone stream's HTTP 405 with its body", err)
	}

	srv.Close()
	if err := s.Listen(testCtx(t)); err == nil || Answered(err) || !strings.Contains(err.Error(), "standalone stream") {
		t.Errorf("Listen to a closed server: err = %v, want a transport error", err)
	}
}

// Listen gives up when its context ends before the server accepted the
// stream, and leaves no request behind.
func TestListenThatGivesUpLeavesNoRequestBehind(t *testing.T) {
	f := &fakeServer{SessionID: "s"}
	f.Stream = func(_ http.ResponseWriter, r *http.Request) { // never accepts
		<-r.Context().Done()
		f.gone <- struct{}{}
	}
	_, srv := newFakeServer(t, f)
	s := &Session{HTTP: NewHTTPClient(1), URL: srv.URL}
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	if err := s.Listen(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	select {
	case <-f.gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still held the GET 5 s after Listen gave up")
	}
}
