package deadline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

func call(t *testing.T, method string, h mcp.MethodHandler, deadline time.Duration) (mcp.Result, error, Answer, time.Duration) {
	t.Helper()
	return callWith(t, method, Options{Deadline: deadline}, h)
}

// callWith runs one request of method (tools/call, or a list) through
// Middleware(o) and returns its answer, the Answer reported and how long
// it took.
func callWith(t *testing.T, method string, o Options, h mcp.MethodHandler) (mcp.Result, error, Answer, time.Duration) {
	t.Helper()
	var got Answer
	o.OnAnswer = func(_ context.Context, a Answer) { got = a }
	m := Middleware(o)(h)
	var req mcp.Request = &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}}
	if method != "tools/call" {
		req = &mcp.ListToolsRequest{}
	}
	start := time.Now()
	res, err := m(context.Background(), method, req)
	return res, err, got, time.Since(start)
}

// A panicking handler is answered at once, not when the deadline expires.
func TestPanicIsAnsweredPromptly(t *testing.T) {
	panics := func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") }
	res, err, a, took := call(t, "tools/call", panics, 2*time.Second)
	if err != nil || took > 100*time.Millisecond {
		t.Fatalf("answered after %v with err %v; a panic must be answered at once", took, err)
	}
	r := res.(*mcp.CallToolResult)
	if !r.IsError || a.Outcome != Panicked || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, a.Trace) {
		t.Fatalf("result %+v, outcome %s", r, a.Outcome)
	}
}

// A hanging handler is answered at the deadline: an isError result for
// tools/call, JSON-RPC -32001 with the trace code in data for the rest.
func TestHangIsAnsweredAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hangs := func(context.Context, string, mcp.Request) (mcp.Result, error) { <-release; return nil, nil }

	res, err, a, took := call(t, "tools/call", hangs, 50*time.Millisecond)
	if err != nil || !res.(*mcp.CallToolResult).IsError || a.Outcome != Timeout {
		t.Fatalf("tools/call: %v %v %s", res, err, a.Outcome)
	}
	if took < 50*time.Millisecond || took > 50*time.Millisecond+40*time.Millisecond {
		t.Fatalf("answered after %v; deadline 50ms + 40ms tolerance", took)
	}

	_, err, a, _ = call(t, "tools/list", hangs, 50*time.Millisecond)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeRequestFailed {
		t.Fatalf("tools/list: err %v", err)
	}
	var data map[string]string
	if json.Unmarshal(werr.Data, &data) != nil || data[trace.MetaKey] != a.Trace || !trace.Valid(a.Trace) {
		t.Fatalf("error data %s lacks the trace code %s", werr.Data, a.Trace)
	}
}

func TestNotificationsPassThrough(t *testing.T) {
	called := false
	h := func(context.Context, string, mcp.Request) (mcp.Result, error) { called = true; return nil, nil }
	m := Middleware(Options{Deadline: time.Second})(h)
	if _, err := m(context.Background(), "notifications/initialized", &mcp.InitializedRequest{}); err != nil || !called {
		t.Fatalf("notification: err %v called %v", err, called)
	}
}

// metaless stands for the SDK's empty result (ping, logging/setLevel), whose
// GetMeta and SetMeta panic: it has no _meta to stamp.
type metaless struct{ *mcp.ListToolsResult }

func (metaless) GetMeta() map[string]any { panic("no _meta on this result") }
func (metaless) SetMeta(map[string]any)  { panic("no _meta on this result") }

// A result without _meta is answered as it is, and a panicking OnAnswer
// hook does not take the answer (or the process) with it.
func TestWorkAfterTheHandlerNeverPanics(t *testing.T) {
	want := metaless{&mcp.ListToolsResult{}}
	h := func(context.Context, string, mcp.Request) (mcp.Result, error) { return want, nil }
	for _, hook := range []func(context.Context, Answer){nil, func(context.Context, Answer) { panic("hook") }} {
		m := Middleware(Options{Deadline: time.Second, OnAnswer: hook})(h)
		res, err := m(context.Background(), "ping", &mcp.ListToolsRequest{})
		if err != nil || res != want {
			t.Fatalf("ping answered %v, %v; want the handler's own result", res, err)
		}
	}
}

// A panicking notification handler is recovered: notifications have no
// answer, but the process must outlive them.
func TestNotificationPanicIsRecovered(t *testing.T) {
	h := func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") }
	m := Middleware(Options{Deadline: time.Second})(h)
	if _, err := m(context.Background(), "notifications/cancelled", &mcp.InitializedRequest{}); err == nil {
		t.Fatal("a panicking notification handler reported no error")
	}
}
