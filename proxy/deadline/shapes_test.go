package deadline

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// withCode is a tools/call request carrying the trace code c in its header.
func withCode(c string) *mcp.CallToolRequest {
	h := http.Header{}
	h.Set(trace.Header, c)
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}, Extra: &mcp.RequestExtra{Header: h}}
}

func answer(h mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error, Answer) {
	var got Answer
	m := Middleware(Options{Deadline: time.Second, OnAnswer: func(_ context.Context, a Answer) { got = a }})(h)
	res, err := m(context.Background(), method, req)
	return res, err, got
}

func toolText(t *testing.T, res mcp.Result) string {
	t.Helper()
	r, ok := res.(*mcp.CallToolResult)
	if !ok || !r.IsError || len(r.Content) != 1 {
		t.Fatalf("result %#v, want one isError text", res)
	}
	return r.Content[0].(*mcp.TextContent).Text
}

// TestToolsCallFailuresWholeShape: each way a tools/call fails is an isError
// result whose whole text ends in the trace code (the client's own, when its
// header carries a valid one), with its outcome and detail.
func TestToolsCallFailuresWholeShape(t *testing.T) {
	const code = "ABCDEFGH"
	var typedNil *mcp.CallToolResult
	for _, c := range []struct {
		name    string
		h       mcp.MethodHandler
		text    string
		outcome Outcome
		detail  string
	}{
		{"error", func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return nil, errors.New("dial http://u:pw@h/?apikey=k")
		}, "dial http://u:REDACTED@h/?REDACTED [trace ABCDEFGH]", Failed, "dial http://u:pw@h/?apikey=k"},
		{"nil result", func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, nil },
			"the proxy produced no result for this request; retry, and if it persists report the trace code [trace ABCDEFGH]", Failed, "handler returned no result"},
		{"typed nil result", func(context.Context, string, mcp.Request) (mcp.Result, error) { return typedNil, nil },
			"the proxy produced no result for this request; retry, and if it persists report the trace code [trace ABCDEFGH]", Failed, "handler returned no result"},
		{"deadline error", func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			return nil, errDeadline
		}, "the request did not complete within 1s; retry, or narrow the request [trace ABCDEFGH]", Failed, "request deadline expired"},
	} {
		res, err, a := answer(c.h, "tools/call", withCode(code))
		if err != nil {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if got := toolText(t, res); got != c.text || a.Outcome != c.outcome || a.Detail != c.detail || a.Trace != code || a.Method != "tools/call" || a.Span == "" {
			t.Errorf("%s:\n got %q %s %q trace %q\nwant %q %s %q", c.name, got, a.Outcome, a.Detail, a.Trace, c.text, c.outcome, c.detail)
		}
	}
}

// TestAnIsErrorResultIsAFailureWithItsFirstText: an isError result passes
// as it is, stamped with the trace code, its first text the detail.
func TestAnIsErrorResultIsAFailureWithItsFirstText(t *testing.T) {
	r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png"}, &mcp.TextContent{Text: "first"}, &mcp.TextContent{Text: "second"}}}
	res, err, a := answer(func(context.Context, string, mcp.Request) (mcp.Result, error) { return r, nil }, "tools/call", withCode("ABCDEFGH"))
	if err != nil || res != r || a.Outcome != Failed || a.Detail != "first" || r.Meta[trace.MetaKey] != "ABCDEFGH" {
		t.Fatalf("%v %v %s %q meta %v", res, err, a.Outcome, a.Detail, r.Meta)
	}
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}
	if _, _, a := answer(func(context.Context, string, mcp.Request) (mcp.Result, error) { return ok, nil }, "tools/call", withCode("ABCDEFGH")); a.Outcome != OK || a.Detail != "" || a.Result != ok {
		t.Fatalf("ok: %+v", a)
	}
}

// TestJSONRPCErrorsKeepTheirCodeAndGainTheTrace: outside tools/call a
// handler's JSON-RPC error keeps its code; its message gains the trace code
// once, and its data the trace key (an object's merged, anything else kept
// under "data").
func TestJSONRPCErrorsKeepTheirCodeAndGainTheTrace(t *testing.T) {
	const code = "ABCDEFGH"
	for _, c := range []struct {
		name     string
		in       *jsonrpc.Error
		msg      string
		dataWant string
	}{
		{"no data", &jsonrpc.Error{Code: -32602, Message: "bad"}, "bad [trace ABCDEFGH]", `{"traceCode":"ABCDEFGH"}`},
		{"object data", &jsonrpc.Error{Code: -32602, Message: "bad", Data: json.RawMessage(`{"k":1}`)}, "bad [trace ABCDEFGH]", `{"k":1,"traceCode":"ABCDEFGH"}`},
		{"array data", &jsonrpc.Error{Code: -32602, Message: "bad", Data: json.RawMessage(`[1]`)}, "bad [trace ABCDEFGH]", `{"data":[1],"traceCode":"ABCDEFGH"}`},
		{"null data", &jsonrpc.Error{Code: -32602, Message: "bad", Data: json.RawMessage(`null`)}, "bad [trace ABCDEFGH]", `{"data":null,"traceCode":"ABCDEFGH"}`},
		{"code already in the message", &jsonrpc.Error{Code: 7, Message: "bad ABCDEFGH"}, "bad ABCDEFGH", `{"traceCode":"ABCDEFGH"}`},
	} {
		req := &mcp.ListToolsRequest{Extra: withCode(code).Extra}
		_, err, _ := answer(func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, c.in }, "tools/list", req)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != c.in.Code || werr.Message != c.msg || string(werr.Data) != c.dataWant {
			t.Errorf("%s: %#v, want code %d %q %s", c.name, err, c.in.Code, c.msg, c.dataWant)
		}
	}
	// A plain error outside tools/call is -32001 with the trace in data.
	_, err, _ := answer(func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, errors.New("plain") }, "tools/list", &mcp.ListToolsRequest{Extra: withCode(code).Extra})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeRequestFailed || werr.Message != "plain [trace ABCDEFGH]" || string(werr.Data) != `{"traceCode":"ABCDEFGH"}` {
		t.Errorf("plain: %#v", err)
	}
}

// TestAnInvalidTraceHeaderIsReplaced: a header that is no trace code is not
// adopted; the answer gets a fresh valid one.
func TestAnInvalidTraceHeaderIsReplaced(t *testing.T) {
	_, _, a := answer(func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.ListToolsResult{}, nil }, "tools/list", &mcp.ListToolsRequest{Extra: withCode("not a code").Extra})
	if a.Trace == "not a code" || !trace.Valid(a.Trace) {
		t.Fatalf("trace %q", a.Trace)
	}
}

// TestACancelledRequestWholeShape: the client's cancel answers at once with
// the cancelled outcome and its cause as the detail.
func TestACancelledRequestWholeShape(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var got Answer
	m := Middleware(Options{Deadline: 5 * time.Second, OnAnswer: func(_ context.Context, a Answer) { got = a }})(
		func(context.Context, string, mcp.Request) (mcp.Result, error) { <-release; return nil, nil })
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the client sent notifications/cancelled"))
	res, err := m(ctx, "tools/call", withCode("ABCDEFGH"))
	if err != nil || toolText(t, res) != "the request was cancelled [trace ABCDEFGH]" || got.Outcome != Cancelled || got.Detail != "the client sent notifications/cancelled" {
		t.Fatalf("%v %v %+v", res, err, got)
	}
}

// TestBeginAndHold: Begin's context reaches the handler; a Hold's error is
// the answer without running the handler, and the time spent held does not
// count against the deadline.
func TestBeginAndHold(t *testing.T) {
	type key struct{}
	ran := false
	h := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		ran = ctx.Value(key{}) == "begun"
		return &mcp.ListToolsResult{}, nil
	}
	begin := func(ctx context.Context, _ string, _ mcp.Request) context.Context {
		return context.WithValue(ctx, key{}, "begun")
	}
	m := Middleware(Options{Deadline: time.Second, Begin: begin})(h)
	if _, err := m(context.Background(), "tools/list", &mcp.ListToolsRequest{}); err != nil || !ran {
		t.Fatalf("Begin's context did not reach the handler: %v", err)
	}
	ran = false
	m = Middleware(Options{Deadline: time.Second, Begin: begin, Hold: func(context.Context, string, mcp.Request) error { return errors.New("paused") }})(h)
	_, err := m(context.Background(), "tools/list", &mcp.ListToolsRequest{})
	var werr *jsonrpc.Error
	if ran || !errors.As(err, &werr) || len(werr.Message) < 6 || werr.Message[:6] != "paused" {
		t.Fatalf("held: ran %v, err %v", ran, err)
	}
	// Held for 150 ms of a 100 ms deadline, then answered at once: not a timeout.
	m = Middleware(Options{Deadline: 100 * time.Millisecond, Hold: func(context.Context, string, mcp.Request) error {
		time.Sleep(150 * time.Millisecond) // the hold itself: what is measured is that it does not count
		return nil
	}})(func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.ListToolsResult{}, nil })
	if _, err := m(context.Background(), "tools/list", &mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("the hold counted against the deadline: %v", err)
	}
}

// TestAHandlerFailingAsTheClientGivesUpIsCancelled: a handler that fails
// because the client gave its request up (its upstream call cut short: an
// error, or a tool's isError result) ends together with the client's
// cancellation, and the guard may see either first. Seen from the handler's
// side, the answer is still the cancelled one, not a failure of the
// upstream; a handler that answered keeps its answer.
func TestAHandlerFailingAsTheClientGivesUpIsCancelled(t *testing.T) {
	cause := errors.New("the client sent notifications/cancelled")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	o := Options{Deadline: time.Second}
	for name, out := range map[string]outcome{
		"an error": {err: context.Canceled},
		"an isError result": {res: &mcp.CallToolResult{IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: "context canceled; retry, and if it keeps failing the upstream s may be down"}}}},
	} {
		a := Answer{Method: "tools/call", Trace: "ABCDEFGH"}
		res, err := decide(ctx, o, &a, out)
		if err != nil || toolText(t, res) != "the request was cancelled [trace ABCDEFGH]" || a.Outcome != Cancelled || a.Detail != cause.Error() {
			t.Errorf("%s: %v %v, outcome %s %q; want the cancelled answer", name, res, err, a.Outcome, a.Detail)
		}
	}
	a := Answer{Method: "tools/call", Trace: "ABCDEFGH"}
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	if res, err := decide(ctx, o, &a, outcome{res: ok}); err != nil || res != ok || a.Outcome != OK {
		t.Errorf("a handler that answered as the client left: %v %v, outcome %s; want its answer", res, err, a.Outcome)
	}
	deadlined, stop := context.WithTimeoutCause(context.Background(), 0, errDeadline)
	defer stop()
	<-deadlined.Done()
	a = Answer{Method: "tools/call", Trace: "ABCDEFGH"}
	decide(deadlined, o, &a, outcome{err: errors.New("upstream cut short")})
	if a.Outcome != Timeout {
		t.Errorf("a handler failing at the deadline: outcome %s, want %s", a.Outcome, Timeout)
	}
}
