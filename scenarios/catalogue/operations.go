package catalogue

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The operations every fault is tried with.
var (
	ListTools = Operation{Name: "tools/list", Do: func(ctx context.Context, env *harness.Env) Observation {
		return withSession(ctx, env, func(ctx context.Context, cs *mcp.ClientSession) Observation {
			stalls, start := harness.MeterStalls(), time.Now()
			res, err := cs.ListTools(ctx, nil)
			o := Observation{Latency: time.Since(start), Stalled: stalls.Stop(), Err: err}
			if err == nil {
				o.Trace, _ = res.Meta["traceCode"].(string)
			}
			return o
		})
	}}
	SmallCall = Operation{Name: "small tools/call", Do: func(ctx context.Context, env *harness.Env) Observation {
		return call(ctx, env, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "note"})
	}}
	PaginatingCall = Operation{Name: "paginating tools/call", Do: func(ctx context.Context, env *harness.Env) Observation {
		return call(ctx, env, env.Tool("search"), map[string]any{"query": "find notes"})
	}}
)

// withSession connects a go-sdk client (untimed), runs f, and closes it.
func withSession(ctx context.Context, env *harness.Env, f func(context.Context, *mcp.ClientSession) Observation) Observation {
	start := time.Now()
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		// What the client waited, for an answer to its initialize.
		return Observation{Err: err, Latency: time.Since(start)}
	}
	defer cs.Close()
	return f(ctx, cs)
}

// connect opens user's session with env.Connect; an error says it came
// from opening the session (the initialize), not from the request a row
// times (openError).
func connect(ctx context.Context, env *harness.Env, user string) (*mcp.ClientSession, error) {
	cs, err := env.Connect(ctx, user)
	if err != nil {
		return nil, openError{err}
	}
	return cs, nil
}

// openError is an error met opening a session: the initialize was not
// answered well, so no later request of the operation was sent.
type openError struct{ err error }

func (e openError) Error() string { return "opening the session (initialize): " + e.err.Error() }
func (e openError) Unwrap() error { return e.err }

// unansweredStep says, for a breach of a request never answered, that it
// was the session's initialize when err says so ("" otherwise).
func unansweredStep(err error) string {
	var oe openError
	if errors.As(err, &oe) {
		return ": the initialize that opens the session was never answered, so no call was sent"
	}
	return ""
}

// call performs one timed tools/call on a fresh session.
func call(ctx context.Context, env *harness.Env, tool string, args map[string]any) Observation {
	return withSession(ctx, env, func(ctx context.Context, cs *mcp.ClientSession) Observation {
		return timedCall(ctx, cs, tool, args)
	})
}

func timedCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) Observation {
	stalls, start := harness.MeterStalls(), time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	o := Observation{Latency: time.Since(start), Stalled: stalls.Stop(), Err: err}
	if err == nil {
		o.IsError, o.Text, o.Trace = res.IsError, textOf(res), traceOf(res)
	}
	return o
}
