// Package deadline is where every MCP request the proxy accepts is bounded
// and guaranteed an answer.
//
// Guard is the one guard of every request, whichever way it came in: the
// go-sdk's receiving middleware (Middleware) and the raw tools/call relay
// (proxy/project) both run their work through it. It mints the request's
// trace code, holds it while its project is paused, puts an outer deadline
// on it, ends it at the proxy's stop, runs the work in its own goroutine and
// decides the answer whatever the work does: returns, errors, panics,
// returns nothing or hangs. tools/call failures become results with
// isError: true and recovery text; other methods get JSON-RPC error -32001
// with the trace code in error.data.
package deadline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// CodeRequestFailed is the JSON-RPC error code for requests the proxy could
// not complete: timeouts, panics, lost sessions. The spec defines no code for
// these; -32001 is the TypeScript SDK's RequestTimeout, which clients already
// recognise.
const CodeRequestFailed = -32001

// Outcome classifies how a request ended.
type Outcome string

// Outcomes of a request.
const (
	OK        Outcome = "ok"
	Failed    Outcome = "error"     // the handler returned an error or an isError result
	Timeout   Outcome = "timeout"   // the outer deadline expired first
	Panicked  Outcome = "panic"     // the handler panicked
	Cancelled Outcome = "cancelled" // the client cancelled the request
)

// Answer describes one finished request, for logging and audit.
type Answer struct {
	Trace    string
	Span     string // the request's root span; spans inside the handler are its children
	Method   string
	Request  mcp.Request
	Result   mcp.Result
	Err      error // the JSON-RPC error sent, if any
	Outcome  Outcome
	Detail   string // why, for failures
	Start    time.Time
	Duration time.Duration
	// Stack is the goroutine stack of a handler that panicked, for the log.
	Stack []byte
}

// Options configures Guard, and Middleware, which runs it.
type Options struct {
	// Deadline bounds every request (knob MCPCTL_REQUEST_DEADLINE_MS).
	Deadline time.Duration
	// Begin, if set, may attach per-request state to the context before the
	// handler runs; the same context reaches OnAnswer.
	Begin func(ctx context.Context, method string, req mcp.Request) context.Context
	// OnAnswer, if set, is called once per request after its answer is decided.
	// It runs on the request path: keep it non-blocking.
	OnAnswer func(context.Context, Answer)
	// Hold, if set, runs after Begin and before the deadline's clock starts:
	// the pause queue (proxy/pause) keeps a request of a paused project
	// waiting there, so the wait is suspended from its deadline, not exempted
	// from it; the request then gets Deadline minus what it spent before the
	// hold. A non-nil error answers the request with it.
	Hold func(ctx context.Context, method string, req mcp.Request) error
	// Stop, if set, ends every request still running when it is done (the
	// project closing): their handlers' contexts end with cause ErrStopped,
	// so what they wait on upstream is given up (and the upstream told)
	// now, not at the deadline. A request that arrives once Stop is done
	// is answered StoppedText without being run.
	Stop context.Context
}

// ErrStopped is the cause of a request context Options.Stop ended.
var ErrStopped = errors.New("the proxy is shutting down")

// StoppedText is what a request ended by Options.Stop is told: the words
// the entry's shutdown answer uses (entry.ShuttingDown).
const StoppedText = "the proxy is shutting down and this request did not complete; retry it"

// Middleware returns the go-sdk receiving middleware that bounds every request
// with Guard. Notifications pass through untouched.
func Middleware(o Options) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return notify(ctx, next, method, req)
			}
			var h http.Header
			if ex := req.GetExtra(); ex != nil {
				h = ex.Header
			}
			return Guard(ctx, o, Request{Method: method, Req: req, Header: h}, func(ctx context.Context) (mcp.Result, error) {
				return next(ctx, method, req)
			})
		}
	}
}

// Request is what Guard knows of the request it bounds.
type Request struct {
	Method string
	// Req is the go-sdk's request; nil for a request that does not go
	// through the go-sdk (the raw relay's tools/call). Begin, Hold and the
	// Answer get it.
	Req mcp.Request
	// Header is the request's HTTP header: a valid trace code in it
	// (trace.Header) is the request's own.
	Header http.Header
}

// Work is a request's handler as Guard runs it: in a goroutine of its own,
// under a context that ends at the deadline, at the stop, or when the
// client gives the request up.
type Work func(ctx context.Context) (mcp.Result, error)

// Passed is a tools/call result whose bytes the proxy passes on as they
// came (the raw relay's upstream answer): Guard reads the outcome and its
// detail from Shown, the decoded result it stands for.
type Passed interface {
	mcp.Result
	Shown() *mcp.CallToolResult
}

type outcome struct {
	res   mcp.Result
	err   error
	panic any
	stack []byte
}

// Guard is every request's one guard, on the go-sdk path (Middleware) and
// on the raw relay alike: it gives the request its trace code and root
// span, runs Begin, holds it (Hold) before its deadline's clock starts,
// ends it at the deadline or at the stop, runs work in a goroutine of its
// own that recovers a panic (with its stack, for the log), and decides the
// answer, whatever work does: returns, errors, panics, returns nothing or
// hangs. The answer is stamped with the trace code and given to OnAnswer.
func Guard(ctx context.Context, o Options, r Request, work Work) (mcp.Result, error) {
	start := time.Now()
	method, req := r.Method, r.Req
	if r.Header != nil {
		if c := r.Header.Get(trace.Header); trace.Valid(c) {
			ctx = trace.With(ctx, c)
		}
	}
	ctx, code := trace.Ensure(ctx)
	ctx, span, _ := trace.StartSpan(ctx)
	if o.Begin != nil {
		ctx = o.Begin(ctx, method, req)
	}
	var held error
	budget := o.Deadline
	if o.Hold != nil {
		budget -= time.Since(start) // the clock ran until the hold, and stops during it
		held = o.Hold(ctx, method, req)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, budget, errDeadline)
	defer cancel()
	if o.Stop != nil {
		var stopped context.CancelCauseFunc
		ctx, stopped = context.WithCancelCause(ctx)
		defer stopped(nil)
		defer context.AfterFunc(o.Stop, func() { stopped(ErrStopped) })()
		if o.Stop.Err() != nil && held == nil {
			held = ErrStopped // arrived after the stop: answered, not run
		}
	}

	done := make(chan outcome, 1) // buffered: a late handler never blocks on it
	go func() {
		var out outcome
		defer func() {
			if p := recover(); p != nil {
				out = outcome{panic: p, stack: debug.Stack()}
			}
			done <- out
		}()
		if held != nil {
			out.err = held
			return
		}
		out.res, out.err = work(ctx)
	}()

	a := Answer{Trace: code, Span: span, Method: method, Request: req, Start: start}
	var res mcp.Result
	var err error
	select {
	case out := <-done:
		res, err = decide(ctx, o, &a, out)
	case <-ctx.Done():
		res, err = ended(ctx, o, &a)
	}
	return settle(ctx, o, a, res, err)
}

// decide is the answer to a request whose handler ended with out. A
// handler that failed once the client had given the request up (its
// upstream call cut short) is a cancelled request, as it is when the guard
// sees the client leave first: the two arrive together, and the answer
// must not depend on which the guard sees first.
func decide(ctx context.Context, o Options, a *Answer, out outcome) (mcp.Result, error) {
	method, code := a.Method, a.Trace
	switch {
	case out.panic != nil:
		a.Outcome, a.Detail, a.Stack = Panicked, fmt.Sprintf("panic: %v", out.panic), out.stack
		return failure(method, code, "the proxy hit an internal error while handling this request; retry, and if it persists report the trace code")
	case errors.Is(out.err, ErrStopped) || (out.err != nil && errors.Is(context.Cause(ctx), ErrStopped)):
		a.Outcome, a.Detail = Cancelled, StoppedText
		return failure(method, code, StoppedText)
	case failed(out) && clientGaveUp(ctx):
		return ended(ctx, o, a)
	case out.err != nil:
		a.Outcome, a.Detail = Failed, out.err.Error()
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errDeadline) {
			a.Outcome = Timeout
		}
		return fromError(method, code, out.err, o.Deadline)
	case isNil(out.res):
		a.Outcome, a.Detail = Failed, "handler returned no result"
		return failure(method, code, "the proxy produced no result for this request; retry, and if it persists report the trace code")
	}
	a.Outcome = OK
	if r, ok := toolResult(out.res); ok && r.IsError {
		a.Outcome, a.Detail = Failed, firstText(r)
	}
	return out.res, nil
}

// ended is the answer to a request whose context ended before its handler
// did: at the deadline, at the stop, or given up by the client.
func ended(ctx context.Context, o Options, a *Answer) (mcp.Result, error) {
	method, code := a.Method, a.Trace
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errDeadline):
		a.Outcome, a.Detail = Timeout, fmt.Sprintf("no answer within %v", o.Deadline)
		return failure(method, code, expiredText(o.Deadline))
	case errors.Is(cause, ErrStopped):
		a.Outcome, a.Detail = Cancelled, StoppedText
		return failure(method, code, StoppedText)
	default:
		a.Outcome, a.Detail = Cancelled, cause.Error()
		return failure(method, code, "the request was cancelled")
	}
}

// failed says whether the handler's outcome is a failure: an error, or a
// tools/call isError result.
func failed(out outcome) bool {
	if out.err != nil {
		return true
	}
	if isNil(out.res) {
		return false
	}
	r, ok := toolResult(out.res)
	return ok && r != nil && r.IsError
}

// clientGaveUp says whether ctx ended because the client gave the request
// up: neither the deadline nor the stop.
func clientGaveUp(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return ctx.Err() != nil && !errors.Is(cause, errDeadline) && !errors.Is(cause, ErrStopped)
}

// toolResult is res as a tools/call result, if it is one: itself, or the
// result a Passed stands for.
func toolResult(res mcp.Result) (*mcp.CallToolResult, bool) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r, true
	case Passed:
		s := r.Shown()
		return s, s != nil
	}
	return nil, false
}

// settle stamps the answer and reports it. A recover guards all of it: the
// request has an answer by now, and nothing done after the handler (stamping
// a result type the proxy did not expect, an OnAnswer hook) may take the
// process down with it.
func settle(ctx context.Context, o Options, a Answer, res mcp.Result, err error) (out mcp.Result, outErr error) {
	out, outErr = res, err // decided: a panic below leaves the answer standing
	defer func() { _ = recover() }()
	if res != nil {
		stamp(res, a.Trace)
	}
	a.Result, a.Err, a.Duration = res, err, time.Since(a.Start)
	if o.OnAnswer != nil {
		o.OnAnswer(ctx, a)
	}
	return res, err
}

// notify runs a notification's handler. A notification has no answer, but a
// panic in its handler must not end the process either.
func notify(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (res mcp.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%s: panic: %v", method, p)
		}
	}()
	return next(ctx, method, req)
}

var errDeadline = errors.New("request deadline expired")

// expiredText is what a request still running at its deadline is told.
func expiredText(d time.Duration) string {
	return fmt.Sprintf("the request did not complete within %v; retry, or narrow the request (for searches: a more specific query)", d)
}

// fromError turns a handler's error into the answer the client gets.
func fromError(method, code string, err error, deadline time.Duration) (mcp.Result, error) {
	if errors.Is(err, errDeadline) {
		return failure(method, code, fmt.Sprintf("the request did not complete within %v; retry, or narrow the request", deadline))
	}
	var werr *jsonrpc.Error
	if method != "tools/call" && errors.As(err, &werr) {
		// A protocol error the SDK or a handler chose deliberately (invalid
		// params, unknown method): keep its code and data, add the trace code
		// to both the data and the message, as every other error has it.
		out := *werr
		out.Data = withTrace(out.Data, code)
		if !strings.Contains(out.Message, code) {
			out.Message = fmt.Sprintf("%s [trace %s]", out.Message, code)
		}
		return nil, &out
	}
	return failure(method, code, err.Error())
}

// failure is the answer for a request that could not be completed: an isError
// result for tools/call, JSON-RPC error -32001 otherwise. Both quote the code.
func failure(method, code, text string) (mcp.Result, error) {
	text = redact.Text(text) // an upstream's URL (with ?apikey=...) may be in the error
	if method == "tools/call" {
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s [trace %s]", text, code)}},
		}, nil
	}
	return nil, &jsonrpc.Error{
		Code:    CodeRequestFailed,
		Message: fmt.Sprintf("%s [trace %s]", text, code),
		Data:    traceData(code),
	}
}

// withTrace adds the trace code to an error's data: a JSON object keeps its
// fields and gains traceCode; anything else (nothing, a string, a list) is
// kept under "data" next to it.
func withTrace(data json.RawMessage, code string) json.RawMessage {
	if len(data) == 0 {
		return traceData(code)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		obj = map[string]any{"data": data}
	}
	obj[trace.MetaKey] = code
	b, err := json.Marshal(obj)
	if err != nil {
		return traceData(code)
	}
	return b
}

func traceData(code string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{trace.MetaKey: code})
	return b
}

// stamp puts the trace code in the result's _meta. Some results have no
// _meta: the SDK's empty result (ping, logging/setLevel, resources/subscribe)
// panics on GetMeta. Those are answered as they are, so stamp recovers.
func stamp(res mcp.Result, code string) {
	defer func() { _ = recover() }()
	m := res.GetMeta()
	if m == nil {
		m = map[string]any{}
	}
	m[trace.MetaKey] = code
	res.SetMeta(m)
}

func isNil(r mcp.Result) bool {
	if r == nil {
		return true
	}
	v := reflect.ValueOf(r)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// firstText is the text of a result's first text content: the detail of
// a failed call's audit row.
func firstText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
