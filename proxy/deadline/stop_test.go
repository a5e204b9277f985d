package deadline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stopCall runs one request through Middleware with a Stop context and
// returns the answer and what the handler's context ended with.
func stopCall(t *testing.T, method string, stop context.Context, h mcp.MethodHandler) (mcp.Result, error, Answer, time.Duration) {
	t.Helper()
	return callWith(t, method, Options{Deadline: 5 * time.Second, Stop: stop}, h)
}

// TestAStopEndsTheRequestsStillRunning: when Stop ends, a handler still
// running has its context ended with cause ErrStopped at once (so what it
// waits on upstream is given up now), and the request is answered with
// StoppedText, not at its deadline: an isError result for tools/call, a
// JSON-RPC error for other methods.
func TestAStopEndsTheRequestsStillRunning(t *testing.T) {
	for _, method := range []string{"tools/call", "tools/list"} {
		stop, stopNow := context.WithCancel(context.Background())
		entered := make(chan struct{})
		cause := make(chan error, 1)
		h := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			close(entered)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return nil, ctx.Err()
		}
		go func() { <-entered; stopNow() }()
		res, err, a, took := stopCall(t, method, stop, h)
		if c := <-cause; !errors.Is(c, ErrStopped) {
			t.Errorf("%s: the handler's context ended with %v; want ErrStopped", method, c)
		}
		if took > time.Second {
			t.Errorf("%s: answered %v after the call began; a stop must answer at once, not at the 5s deadline", method, took)
		}
		if a.Outcome != Cancelled || a.Detail != StoppedText {
			t.Errorf("%s: outcome %s %q; want %s %q", method, a.Outcome, a.Detail, Cancelled, StoppedText)
		}
		checkStopped(t, method, res, err, a.Trace)
	}
}

// TestARequestAfterTheStopIsNotRun: a request that arrives once Stop has
// ended is answered StoppedText without its handler being run.
func TestARequestAfterTheStopIsNotRun(t *testing.T) {
	stop, stopNow := context.WithCancel(context.Background())
	stopNow()
	for _, method := range []string{"tools/call", "tools/list"} {
		ran := false
		h := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			ran = true
			return &mcp.CallToolResult{}, nil
		}
		res, err, a, _ := stopCall(t, method, stop, h)
		if ran {
			t.Errorf("%s: the handler ran after the stop", method)
		}
		if a.Outcome != Cancelled {
			t.Errorf("%s: outcome %s; want %s", method, a.Outcome, Cancelled)
		}
		checkStopped(t, method, res, err, a.Trace)
	}
}

// TestNoStopLeavesTheDeadlineToAnswer: a Stop that has not ended changes
// nothing: the handler's answer stands, and a handler that hangs is
// answered at the deadline with the deadline's words.
func TestNoStopLeavesTheDeadlineToAnswer(t *testing.T) {
	stop, stopNow := context.WithCancel(context.Background())
	defer stopNow()
	want := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	ok := func(context.Context, string, mcp.Request) (mcp.Result, error) { return want, nil }
	if res, err, a, _ := stopCall(t, "tools/call", stop, ok); err != nil || res != want || a.Outcome != OK {
		t.Fatalf("a live Stop changed a handler's answer: %v %v %s", res, err, a.Outcome)
	}
	var got Answer
	hangs := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	m := Middleware(Options{Deadline: 50 * time.Millisecond, Stop: stop, OnAnswer: func(_ context.Context, a Answer) { got = a }})(hangs)
	res, err := m(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}})
	if err != nil || got.Outcome != Timeout {
		t.Fatalf("a hanging handler under a live Stop: %v %v outcome %s; want a timeout", res, err, got.Outcome)
	}
	if text := res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text; strings.Contains(text, StoppedText) {
		t.Fatalf("a timeout under a live Stop says %q", text)
	}
}

func checkStopped(t *testing.T, method string, res mcp.Result, err error, code string) {
	t.Helper()
	want := StoppedText + " [trace " + code + "]"
	if method == "tools/call" {
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || r.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("%s: answered %v, %v; want an isError saying %q", method, res, err, want)
		}
		return
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeRequestFailed || werr.Message != want {
		t.Errorf("%s: answered %v, %v; want JSON-RPC %d %q", method, res, err, CodeRequestFailed, want)
	}
}
