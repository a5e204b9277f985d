package deadline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// passed stands for a result passed on as its bytes, as the raw relay's
// upstream answer is.
type passed struct {
	*mcp.CallToolResult
}

func (p *passed) Shown() *mcp.CallToolResult { return p.CallToolResult }

// outcomeCase is one way a tools/call's work can end, with what the guard
// must make of it. work gets the stop's trigger (stopNow) and a channel
// the case waits on (release, closed when the test ends).
type outcomeCase struct {
	name      string
	stopFirst bool // the stop is done before the request arrives
	work      func(ctx context.Context, stopNow func(), release <-chan struct{}) (mcp.Result, error)
	outcome   Outcome
	detail    string // the Answer's detail, as a prefix
	text      string // the answer's text, as a prefix ("" for a result passed as it is)
}

// outcomes is the one outcome table of every request's guard: each path a
// request can take (the go-sdk's Middleware, the raw relay's own call of
// Guard) is checked against it.
var outcomes = []outcomeCase{
	{name: "a result", outcome: OK,
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
		}},
	{name: "an isError result", outcome: Failed, detail: "it broke",
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
		}},
	{name: "an error", outcome: Failed, detail: "upstream down", text: "upstream down",
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			return nil, errors.New("upstream down")
		}},
	{name: "a panic", outcome: Panicked, detail: "panic: boom", text: "the proxy hit an internal error",
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) { panic("boom") }},
	{name: "no result", outcome: Failed, detail: "handler returned no result", text: "the proxy produced no result",
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) { return nil, nil }},
	{name: "a nil result of its type", outcome: Failed, detail: "handler returned no result", text: "the proxy produced no result",
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			return (*mcp.CallToolResult)(nil), nil
		}},
	{name: "a hang", outcome: Timeout, detail: "no answer within", text: "the request did not complete within",
		work: func(_ context.Context, _ func(), release <-chan struct{}) (mcp.Result, error) {
			<-release
			return nil, nil
		}},
	{name: "running at the stop", outcome: Cancelled, detail: StoppedText, text: StoppedText,
		work: func(ctx context.Context, stopNow func(), _ <-chan struct{}) (mcp.Result, error) {
			stopNow()
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	{name: "the stop's own error", outcome: Cancelled, detail: StoppedText, text: StoppedText,
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			return nil, fmt.Errorf("upstream s: %w", ErrStopped) // work that saw the project close before the guard did
		}},
	{name: "arriving after the stop", stopFirst: true, outcome: Cancelled, detail: StoppedText, text: StoppedText,
		work: func(context.Context, func(), <-chan struct{}) (mcp.Result, error) {
			panic("a request that arrived after the stop was run")
		}},
}

// guardPath is one way into the guard: it runs work as the tools/call of
// trace code code and returns the answer and the Answer reported.
type guardPath struct {
	name string
	run  func(ctx context.Context, o Options, code string, work Work) (mcp.Result, error)
}

var guardPaths = []guardPath{
	{name: "go-sdk middleware", run: func(ctx context.Context, o Options, code string, work Work) (mcp.Result, error) {
		h := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) { return work(ctx) }
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}, Extra: &mcp.RequestExtra{Header: http.Header{trace.Header: {code}}}}
		return Middleware(o)(h)(ctx, "tools/call", req)
	}},
	{name: "raw relay", run: func(ctx context.Context, o Options, code string, work Work) (mcp.Result, error) {
		// The relay has no go-sdk request, and passes the upstream's own
		// result on as its bytes.
		relayed := func(ctx context.Context) (mcp.Result, error) {
			res, err := work(ctx)
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				return &passed{r}, err
			}
			return res, err
		}
		return Guard(ctx, o, Request{Method: "tools/call", Header: http.Header{trace.Header: {code}}}, relayed)
	}},
}

// TestEveryPathIsAnsweredByTheOneGuard: the go-sdk path and the raw relay
// answer every way a call can end (a result, an isError result, an error,
// a panic, no result, a hang, the stop while it runs, the stop's error,
// the stop before it came) as the one outcome table says, under the trace code its HTTP
// header carries.
func TestEveryPathIsAnsweredByTheOneGuard(t *testing.T) {
	code := trace.New()
	for _, path := range guardPaths {
		for _, c := range outcomes {
			t.Run(path.name+"/"+c.name, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				stop, stopNow := context.WithCancel(context.Background())
				defer stopNow()
				if c.stopFirst {
					stopNow()
				}
				var got Answer
				const deadline = 100 * time.Millisecond
				o := Options{Deadline: deadline, Stop: stop, OnAnswer: func(_ context.Context, a Answer) { got = a }}
				type answer struct {
					res mcp.Result
					err error
				}
				answered := make(chan answer, 1)
				go func() {
					res, err := path.run(context.Background(), o, code, func(ctx context.Context) (mcp.Result, error) {
						return c.work(ctx, stopNow, release)
					})
					answered <- answer{res, err}
				}()
				// The guard answers by the deadline whatever the work does;
				// the watchdog's margin only keeps a guard that does not from
				// hanging the test.
				const watchdog = deadline + 5*time.Second
				var res mcp.Result
				var err error
				select {
				case a := <-answered:
					res, err = a.res, a.err
				case <-time.After(watchdog):
					t.Fatalf("no answer %v after the call began, with a %v deadline: the guard left it unanswered", watchdog, deadline)
				}
				if err != nil {
					t.Fatalf("a tools/call answered the error %v; want a result", err)
				}
				if got.Outcome != c.outcome || !strings.HasPrefix(got.Detail, c.detail) || got.Trace != code {
					t.Errorf("answer reported: outcome %s, detail %q, trace %q; want %s, %q…, %q", got.Outcome, got.Detail, got.Trace, c.outcome, c.detail, code)
				}
				if c.outcome == Panicked && !strings.Contains(string(got.Stack), "goroutine") {
					t.Errorf("a panic's answer carries no stack for the log: %q", got.Stack)
				}
				r, ok := toolResult(res)
				if !ok || r == nil {
					t.Fatalf("answered %#v; want a tools/call result", res)
				}
				if m := res.GetMeta(); m[trace.MetaKey] != code {
					t.Errorf("the answer's _meta %v lacks the trace code %s", m, code)
				}
				if c.text == "" {
					return
				}
				text := firstText(r)
				if !r.IsError || !strings.HasPrefix(text, c.text) || !strings.Contains(text, code) {
					t.Errorf("answered isError=%v %q; want an isError saying %q… and quoting %s", r.IsError, text, c.text, code)
				}
			})
		}
	}
}

// A request that arrives after the stop is answered and never run, on
// every path, every time: the run would race the stop's own answer, so a
// guard that ran it would still answer "stopped" in some rounds; twenty
// rounds per path leave it no round to hide in.
func TestARequestArrivingAfterTheStopIsNeverRun(t *testing.T) {
	code := trace.New()
	for _, path := range guardPaths {
		var ran atomic.Int32
		for round := 0; round < 20; round++ {
			stop, stopNow := context.WithCancel(context.Background())
			stopNow()
			var got Answer
			o := Options{Deadline: 100 * time.Millisecond, Stop: stop, OnAnswer: func(_ context.Context, a Answer) { got = a }}
			_, _ = path.run(context.Background(), o, code, func(context.Context) (mcp.Result, error) {
				ran.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
			})
			if got.Outcome != Cancelled || !strings.HasPrefix(got.Detail, StoppedText) {
				t.Fatalf("%s, round %d: a request after the stop was answered %s %q, want %s %q", path.name, round, got.Outcome, got.Detail, Cancelled, StoppedText)
			}
		}
		if n := ran.Load(); n > 0 {
			t.Errorf("%s: %d of 20 requests that arrived after the stop were run", path.name, n)
		}
	}
}
