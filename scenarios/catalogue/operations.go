package catalogue

import (
	"context"
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
	cs, err := env.Connect(ctx, "alice")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	return f(ctx, cs)
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
