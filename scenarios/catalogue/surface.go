package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// The whole MCP surface, one operation per method family, each against the
// everything fake (server "everything" of the project). Every one checks
// afterwards that the proxy process still serves.
var (
	Ping = surfaceOp("ping", []string{harness.MethodPing}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		err := s.cs.Ping(ctx, nil)
		return clk.stop(Observation{Err: err})
	})
	ReadResource = surfaceOp("resources/read", []string{harness.MethodRead}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: upstream.ReadmeURI})
		o := clk.stop(Observation{Err: err})
		if err == nil {
			traced(&o, res.Meta)
			if len(res.Contents) != 1 || res.Contents[0].Text != upstream.ReadmeText {
				o.Broken = append(o.Broken, fmt.Sprintf("resources/read returned %d contents, not the readme", len(res.Contents)))
			}
		}
		return o
	})
	GetPrompt = surfaceOp("prompts/get", []string{harness.MethodPrompt}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		res, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: s.env.EverythingPrompt(upstream.GreetPrompt), Arguments: map[string]string{"name": "ana"}})
		o := clk.stop(Observation{Err: err})
		if err == nil {
			traced(&o, res.Meta)
			if len(res.Messages) == 0 {
				o.Broken = append(o.Broken, "prompts/get returned no messages")
			}
		}
		return o
	})
	Complete = surfaceOp("completion/complete", []string{harness.MethodComplete}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		res, err := s.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: s.env.EverythingPrompt(upstream.GreetPrompt)},
			Argument: mcp.CompleteParamsArgument{Name: "name", Value: "b"}})
		o := clk.stop(Observation{Err: err})
		if err == nil {
			traced(&o, res.Meta)
			if len(res.Completion.Values) != 1 || res.Completion.Values[0] != "bob" {
				o.Broken = append(o.Broken, fmt.Sprintf("completion of b gave %v, not [bob]", res.Completion.Values))
			}
		}
		return o
	})
	SetLevelAndLog = surfaceOpOr("logging/setLevel + a log message", []string{harness.MethodSetLevel}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		if err := s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
			return clk.stop(Observation{Err: err})
		}
		o := s.timedCall(ctx, clk, s.env.EverythingTool("log"), map[string]any{"text": "catalogue"})
		if o.Err == nil && !o.IsError && !s.waitFor(ctx, func() bool { return len(s.logs) > 0 }) {
			o.Broken = append(o.Broken, "7 the error-level log message never reached the client")
		}
		return o
	}, levelInMeta)
	ProgressCall = surfaceOp("tools/call with progress", []string{harness.MethodProgress}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: s.env.EverythingTool("progress"), Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "cat"}})
		o := observeCall(clk, res, err)
		if err == nil && !res.IsError {
			// The go-sdk client hands a notification to its handler on
			// another goroutine, and a response to the caller at once: the
			// progress events the proxy wrote just before the result (one
			// read apart, as behind a load balancer that coalesces them) may
			// be handled a moment after CallTool returns. They are counted
			// for that moment (progressHandled), no longer: the client's
			// order, not the wire's, is what an SDK can observe.
			var n int
			s.waitForWithin(ctx, progressHandled, func() bool { n = s.progress; return n == upstream.ProgressSteps })
			if n != upstream.ProgressSteps {
				o.Broken = append(o.Broken, fmt.Sprintf("7 %d of %d progress notifications arrived with the result", n, upstream.ProgressSteps))
			}
		}
		return o
	})
	Sampling = surfaceOp("sampling round trip", []string{harness.MethodSampling}, func(ctx context.Context, s *surfaceSession) Observation {
		o := s.timedCall(ctx, startClock(), s.env.EverythingTool("sample"), map[string]any{"prompt": "hi"})
		if o.Err == nil && !o.IsError && o.Text != "sampled: "+samplingReply {
			o.Broken = append(o.Broken, "7 the sampling answer did not come back: "+excerpt(o.Text))
		}
		return o
	})
	Elicitation = surfaceOp("elicitation round trip", []string{harness.MethodElicit}, func(ctx context.Context, s *surfaceSession) Observation {
		o := s.timedCall(ctx, startClock(), s.env.EverythingTool("elicit"), map[string]any{"question": "name?"})
		if o.Err == nil && !o.IsError && o.Text != "elicited: accept "+samplingReply {
			o.Broken = append(o.Broken, "7 the elicitation answer did not come back: "+excerpt(o.Text))
		}
		return o
	})
	SubscribeUpdate = surfaceOpOr("resources/subscribe + update", []string{harness.MethodSubscribe}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upstream.ReadmeURI}); err != nil {
			return clk.stop(Observation{Err: err})
		}
		o := s.timedCall(ctx, clk, s.env.EverythingTool("touch"), map[string]any{"uri": upstream.ReadmeURI})
		if o.Err == nil && !o.IsError && !s.waitFor(ctx, func() bool { return s.updated > 0 }) {
			o.Broken = append(o.Broken, "7 notifications/resources/updated never reached the subscriber")
		}
		return o
	}, listenStream)
)

// levelInMeta is the log row the newer revision's way
// (harness.PerRequestRevision), for a stateless proxy speaking it: the
// call carries its level (error) in its own _meta, and the upstream's
// messages at that level and above, and only those, reach the client.
func levelInMeta(ctx context.Context, s *surfaceSession) Observation {
	clk := startClock()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: s.env.EverythingTool("log"), Arguments: map[string]any{"text": "catalogue"},
		Meta: mcp.Meta{mcp.MetaKeyLogLevel: "error"}})
	o := observeCall(clk, res, err)
	if o.Err != nil || o.IsError {
		return o
	}
	// The upstream sends debug, info, warning, error in that order: once
	// error has come, any below it would have come first.
	if !s.waitFor(ctx, func() bool { return slices.Contains(s.logs, "error") }) {
		o.Broken = append(o.Broken, "7 the error-level log message its call's _meta asked for never reached the client")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if below := slices.DeleteFunc(slices.Clone(s.logs), func(l string) bool { return l == "error" }); len(below) > 0 {
		o.Broken = append(o.Broken, fmt.Sprintf("7 log messages below the level its call's _meta asked for (error) reached the client: %v", below))
	}
	return o
}

// listenStream is the subscription row the newer revision's way
// (harness.PerRequestRevision), for a stateless proxy speaking it: the
// client opens a subscriptions/listen stream naming the readme, and once
// the proxy has acknowledged it (untimed, bounded by the request budget), a
// call that touches the readme must bring its update down that stream. The
// listen's own answer comes only when the stream ends, so a proxy that
// cannot subscribe (its upstream down) is judged by the touch's answer, as
// the older row is by the subscribe's.
func listenStream(ctx context.Context, s *surfaceSession) Observation {
	if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upstream.ReadmeURI}); err != nil {
		return Observation{Err: err}
	}
	acked := s.waitForWithin(ctx, harness.BudgetsOf(s.env.Target, s.env.Bounds()).D(harness.BoundRequest), func() bool {
		return slices.Contains(s.acked, upstream.ReadmeURI)
	})
	o := s.timedCall(ctx, startClock(), s.env.EverythingTool("touch"), map[string]any{"uri": upstream.ReadmeURI})
	if o.Err == nil && !o.IsError && !s.waitFor(ctx, func() bool { return s.updated > 0 }) {
		if !acked {
			o.Broken = append(o.Broken, "7 the subscriptions/listen stream for the readme was never acknowledged, and its update never came")
		} else {
			o.Broken = append(o.Broken, "7 notifications/resources/updated never reached the subscriptions/listen stream")
		}
	}
	return o
}

// SurfaceOperations are the surface operations, in catalogue order.
var SurfaceOperations = []Operation{Ping, ReadResource, GetPrompt, Complete, SetLevelAndLog, ProgressCall, Sampling, Elicitation, SubscribeUpdate,
	ListResources, ReadTemplate, ListPrompts, Roots, Cancel}

// samplingReply is what the catalogue's client answers to sampling and
// elicitation.
const samplingReply = "catalogue"

// notifyWait bounds the wait for a notification the upstream sent during a
// call that has already answered.
const notifyWait = time.Second

// progressHandled bounds the wait, after a call's result, for the client's
// handler goroutine to run the progress notifications that came before it.
const progressHandled = 250 * time.Millisecond

// surfaceSession is a client session with handlers for everything the
// upstream may send through the proxy, counting what arrived.
type surfaceSession struct {
	cs  *mcp.ClientSession
	env *harness.Env

	mu       sync.Mutex
	progress int
	logs     []string
	updated  int
	// acked are the resources the proxy acknowledged a subscriptions/listen
	// stream for (notifications/subscriptions/acknowledged).
	acked []string
}

func (s *surfaceSession) waitFor(ctx context.Context, cond func() bool) bool {
	return s.waitForWithin(ctx, notifyWait, cond)
}

// waitForWithin is waitFor bounded by d; cond runs under s.mu.
func (s *surfaceSession) waitForWithin(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// timedCall makes one tools/call, the end of the timed part clk began.
func (s *surfaceSession) timedCall(ctx context.Context, clk *clock, tool string, args map[string]any) Observation {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return observeCall(clk, res, err)
}

// observeCall ends the timed part clk began with a tools/call's answer.
func observeCall(clk *clock, res *mcp.CallToolResult, err error) Observation {
	o := clk.stop(Observation{Err: err})
	if err == nil {
		o.IsError, o.Text = res.IsError, textOf(res)
		if o.IsError { // its checker reads the code its text must quote
			o.Trace = traceOf(res)
		} else {
			traced(&o, res.Meta)
		}
	}
	return o
}

// traced records the trace code a surface result carries in its _meta. A
// result without one breaks mcplocal's trace code promise, held to targets
// that claim it: the checkers of these rows cannot tell a missing code from
// a result that carries none (ping's); the operation can. (A malformed code
// is its checker's breach.)
func traced(o *Observation, meta mcp.Meta) {
	o.Trace, _ = meta[smoke.TraceMetaKey].(string)
	if o.Trace == "" {
		o.Breached = append(o.Breached, *noTraceCode("").(*Breach))
	}
}

// surfaceOp wraps f: a session with every client handler is opened
// (untimed) on the endpoint that reaches the everything fake, f runs, and
// the proxy must still serve afterwards. forwards are the methods f needs
// the proxy to forward.
func surfaceOp(name string, forwards []string, f func(context.Context, *surfaceSession) Observation) Operation {
	return surfaceOpOr(name, forwards, f, nil)
}

// surfaceOpOr is surfaceOp, but on a target that harness.PerRequest (a
// stateless proxy speaking harness.PerRequestRevision) it runs perRequest
// instead, on a session of that revision: the same feature asked for that
// revision's way.
func surfaceOpOr(name string, forwards []string, f, perRequest func(context.Context, *surfaceSession) Observation) Operation {
	return Operation{Name: name, Forwards: forwards, Do: func(ctx context.Context, env *harness.Env) Observation {
		revision, do := harness.ClientRevision, f
		if perRequest != nil && harness.PerRequest(env.Target) {
			revision, do = harness.PerRequestRevision, perRequest
		}
		s := &surfaceSession{env: env}
		opts := &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "catalogue", Content: &mcp.TextContent{Text: samplingReply}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": samplingReply}}, nil
			},
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				s.mu.Lock()
				s.progress++
				s.mu.Unlock()
			},
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				s.mu.Lock()
				s.logs = append(s.logs, string(r.Params.Level))
				s.mu.Unlock()
			},
			ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
				s.mu.Lock()
				s.updated++
				s.mu.Unlock()
			},
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-sdk", Version: "0.1.0"}, opts)
		c.AddRoots(&mcp.Root{URI: catalogueRoot, Name: "catalogue"})
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
					s.mu.Lock()
					s.acked = append(s.acked, p.Notifications.ResourceSubscriptions...)
					s.mu.Unlock()
				}
				return next(ctx, method, req)
			}
		})
		cs, err := env.ConnectAt(ctx, c, "alice", env.ServerURL("everything"), revision)
		if err != nil {
			return Observation{Err: err}
		}
		s.cs = cs
		o := do(ctx, s)
		_ = cs.Close()
		if why := dead(ctx, env); why != "" {
			o.Broken = append(o.Broken, why)
		}
		return o
	}}
}

// dead says why the proxy no longer serves ("" when it does): a fresh
// client's initialize on the project's endpoint is answered, as any MCP
// proxy answers it.
func dead(ctx context.Context, env *harness.Env) string {
	// An answer at all, not a fast one: a proxy may open each session
	// slowly (a child process per session). Only silence past the limit a
	// client gives any operation is dead.
	ctx, cancel := context.WithTimeout(ctx, OperationLimit(harness.BudgetsOf(env.Target, env.Bounds()).D(harness.BoundRequest)))
	defer cancel()
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return "1 the proxy no longer answers an initialize after the operation: " + err.Error()
	}
	_ = cs.Close()
	return ""
}

// answeredOrRPCError: the request was answered (generic): it succeeded, or
// failed as the promise says: a tools/call as an isError result quoting its
// trace code, any other method as a JSON-RPC error carrying the trace code in
// error.data (mcplocal's trace codes). Never silence, never an HTTP-level
// failure.
func answeredOrRPCError(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	if o.Err == nil {
		if o.IsError {
			return answeredWithRecovery(o)
		}
		return nil
	}
	// What unanswered leaves here is a JSON-RPC error: an answer, which
	// holds mcplocal's trace code in its data.
	var werr *jsonrpc.Error
	errors.As(o.Err, &werr)
	var data map[string]string
	if json.Unmarshal(werr.Data, &data) != nil || !smoke.ValidTraceCode(data[smoke.TraceMetaKey]) {
		return brokeOwn(harness.CapTraceCode, PromiseTraceCode, "JSON-RPC error %d without a trace code in error.data: %s", werr.Code, excerpt(werr.Message))
	}
	if !strings.Contains(werr.Message, data[smoke.TraceMetaKey]) {
		return brokeOwn(harness.CapTraceCode, PromiseTraceCode, "JSON-RPC error does not quote its trace code: %s", excerpt(werr.Message))
	}
	return nil
}

// answeredWithTrace: the request was answered (generic) and succeeded; a
// trace code the result carries in its _meta is a valid one (mcplocal's
// own). A result without one passes: ping's empty result has no _meta, and
// the observation does not say whether another result had one.
func answeredWithTrace(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	if o.Err != nil {
		return broke(PromiseSuccess, "answered with a JSON-RPC error instead of the result: %s", rpcText(o.Err))
	}
	if o.IsError {
		return broke(PromiseSuccess, "isError result: %s", excerpt(o.Text))
	}
	if o.Trace != "" && !smoke.ValidTraceCode(o.Trace) {
		return noTraceCode(o.Trace)
	}
	return nil
}

// surfaceScenarios: every surface operation on a healthy link, then under
// the network faults on the everything fake's link and a hung upstream tool.
func surfaceScenarios() []Scenario {
	env := harness.EnvOptions{Everything: true}
	var out []Scenario
	for _, op := range SurfaceOperations {
		out = append(out, Scenario{Fault: harness.None{}, Operation: op, Promise: "7 every method forwarded and answered",
			Labels: []string{"surface", "baseline"}, Env: env, Budget: requestDeadline, Expect: answeredWithTrace})
	}
	faults := []harness.Fault{
		harness.Latency{Link: harness.LinkEverything, Ms: 100},
		harness.LinkDown{Link: harness.LinkEverything},
		harness.ResetPeer{Link: harness.LinkEverything, TimeoutMs: 1},
		harness.Blackhole{Link: harness.LinkEverything},
	}
	for _, f := range faults {
		for _, op := range SurfaceOperations {
			out = append(out, Scenario{Fault: f, Operation: op, Promise: "1 answered within budget, 7 never a dead proxy",
				Labels: []string{"surface", "network", "deadline"}, Env: env, Budget: requestDeadline, Expect: answeredOrRPCError})
		}
	}
	out = append(out, Scenario{Fault: harness.ToolHang{Tool: "progress", Server: harness.LinkEverything}, Operation: ProgressCall,
		Promise: "1 answered within budget", Labels: []string{"surface", "upstream", "deadline"}, Env: env,
		Budget: requestDeadline, Expect: answeredWithRecovery})
	return out
}
