// Package deadline is where every MCP request the proxy accepts is bounded
// and guaranteed an answer.
//
// Middleware mints the request's trace code, puts an outer deadline on it,
// runs the handler in its own goroutine and answers on the request's own id
// whatever the handler does: returns, errors, panics or hangs. tools/call
// failures become results with isError: true and recovery text; other methods
// get JSON-RPC error -32001 with the trace code in error.data.
package deadline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Options configures Middleware.
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

// Middleware returns the go-sdk receiving middleware that bounds every request.
// Notifications pass through untouched.
func Middleware(o Options) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return notify(ctx, next, method, req)
			}
			return handle(ctx, o, next, method, req)
		}
	}
}

type outcome struct {
	res   mcp.Result
	err   error
	panic any
	stack []byte
}

func handle(ctx context.Context, o Options, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	start := time.Now()
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if c := ex.Header.Get(trace.Header); trace.Valid(c) {
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
		out.res, out.err = next(ctx, method, req)
	}()

	a := Answer{Trace: code, Span: span, Method: method, Request: req, Start: start}
	var res mcp.Result
	var err error
	select {
	case out := <-done:
		switch {
		case out.panic != nil:
			a.Outcome, a.Detail, a.Stack = Panicked, fmt.Sprintf("panic: %v", out.panic), out.stack
			res, err = failure(method, code, "the proxy hit an internal error while handling this request; retry, and if it persists report the trace code")
		case errors.Is(out.err, ErrStopped) || (out.err != nil && errors.Is(context.Cause(ctx), ErrStopped)):
			a.Outcome, a.Detail = Cancelled, StoppedText
			res, err = failure(method, code, StoppedText)
		case out.err != nil:
			a.Outcome, a.Detail = Failed, out.err.Error()
			if ctx.Err() != nil && errors.Is(context.Cause(ctx), errDeadline) {
				a.Outcome = Timeout
			}
			res, err = fromError(method, code, out.err, o.Deadline)
		case isNil(out.res):
			a.Outcome, a.Detail = Failed, "handler returned no result"
			res, err = failure(method, code, "the proxy produced no result for this request; retry, and if it persists report the trace code")
		default:
			a.Outcome = OK
			res = out.res
			if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				a.Outcome, a.Detail = Failed, FirstText(r)
			}
		}
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), errDeadline) {
			a.Outcome, a.Detail = Timeout, fmt.Sprintf("no answer within %v", o.Deadline)
			res, err = failure(method, code, ExpiredText(o.Deadline))
		} else if errors.Is(context.Cause(ctx), ErrStopped) {
			a.Outcome, a.Detail = Cancelled, StoppedText
			res, err = failure(method, code, StoppedText)
		} else {
			a.Outcome, a.Detail = Cancelled, context.Cause(ctx).Error()
			res, err = failure(method, code, "the request was cancelled")
		}
	}
	return settle(ctx, o, a, res, err)
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

// ErrDeadline is the cause of a request context whose deadline expired: the
// raw relay (proxy/relay) bounds its calls with it, as Middleware does.
var ErrDeadline = errDeadline

// ExpiredText is what a request still running at its deadline is told.
func ExpiredText(d time.Duration) string {
	return fmt.Sprintf("the request did not complete within %v; retry, or narrow the request (for searches: a more specific query)", d)
}

// Failure is the answer for a request that could not be completed, as
// Middleware gives it: exported for the raw relay, which answers tools/call
// without the SDK.
func Failure(method, code, text string) (mcp.Result, error) { return failure(method, code, text) }

// FromError is the answer Middleware gives for a handler's error.
func FromError(method, code string, err error, d time.Duration) (mcp.Result, error) {
	return fromError(method, code, err, d)
}

// Stamp puts the trace code in a result's _meta, as Middleware does.
func Stamp(res mcp.Result, code string) { stamp(res, code) }

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

// FirstText is the text of a result's first text content: the detail of a
// failed call's audit row (here, and on the raw relay's path).
func FirstText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
