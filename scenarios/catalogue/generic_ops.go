package catalogue

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// More of the whole MCP surface, against the everything fake, for any proxy
// that claims the method: the lists (resources, templates, prompts), roots
// and cancellation.
var (
	ListResources = surfaceOp("resources/list", []string{harness.MethodListResources}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		var uris []string
		var err error
		for r, e := range s.cs.Resources(ctx, nil) {
			if err = e; e != nil {
				break
			}
			uris = append(uris, r.URI)
		}
		o := clk.stop(Observation{Err: err})
		if err == nil && (!slices.Contains(uris, upstream.ReadmeURI) || !slices.Contains(uris, upstream.LogoURI)) {
			o.Broken = append(o.Broken, fmt.Sprintf("7 resources/list gave %v, without the everything fake's readme and logo", uris))
		}
		return o
	})
	ReadTemplate = surfaceOp("resources/templates/list + a templated read", []string{harness.MethodListTemplates, harness.MethodRead}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		var templates []string
		var err error
		for t, e := range s.cs.ResourceTemplates(ctx, nil) {
			if err = e; e != nil {
				break
			}
			templates = append(templates, t.URITemplate)
		}
		if err != nil {
			return clk.stop(Observation{Err: err})
		}
		res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://items/7"})
		o := clk.stop(Observation{Err: err})
		if !slices.Contains(templates, upstream.ItemTemplate) {
			o.Broken = append(o.Broken, fmt.Sprintf("7 resources/templates/list gave %v, without %s", templates, upstream.ItemTemplate))
		}
		if err == nil && (len(res.Contents) != 1 || res.Contents[0].Text != upstream.ItemText("7")) {
			o.Broken = append(o.Broken, "7 reading fake://items/7 did not give the item")
		}
		return o
	})
	ListPrompts = surfaceOp("prompts/list", []string{harness.MethodListPrompts}, func(ctx context.Context, s *surfaceSession) Observation {
		clk := startClock()
		var names []string
		var err error
		for p, e := range s.cs.Prompts(ctx, nil) {
			if err = e; e != nil {
				break
			}
			names = append(names, p.Name)
		}
		o := clk.stop(Observation{Err: err})
		if want := s.env.EverythingPrompt(upstream.GreetPrompt); err == nil && !slices.Contains(names, want) {
			o.Broken = append(o.Broken, fmt.Sprintf("7 prompts/list gave %v, without %s", names, want))
		}
		return o
	})
	Roots = surfaceOp("roots round trip", []string{harness.MethodRoots}, func(ctx context.Context, s *surfaceSession) Observation {
		o := s.timedCall(ctx, startClock(), s.env.EverythingTool("roots"), map[string]any{})
		if o.Err == nil && !o.IsError && !strings.Contains(o.Text, catalogueRoot) {
			o.Broken = append(o.Broken, "7 the client's roots did not reach the upstream: "+excerpt(o.Text))
		}
		return o
	})
	Cancel = surfaceOp("a cancelled call, then the next", []string{harness.MethodCancel}, func(ctx context.Context, s *surfaceSession) Observation {
		cctx, cancel := context.WithTimeout(ctx, cancelAfter)
		_, _ = s.cs.CallTool(cctx, &mcp.CallToolParams{Name: s.env.EverythingTool("progress"), Arguments: map[string]any{}})
		cancel()
		o := s.timedCall(ctx, startClock(), s.env.EverythingTool("echo"), map[string]any{"text": "after"})
		if o.Err == nil && !o.IsError && o.Text != "after" {
			o.Broken = append(o.Broken, "7 the call after a cancelled one got another answer: "+excerpt(o.Text))
		}
		return o
	})
)

// catalogueRoot is the root the catalogue's client offers (roots/list).
const catalogueRoot = "file:///catalogue"

// cancelAfter is when the cancelled call is given up: before the hung
// upstream could answer, after the proxy has it in flight.
const cancelAfter = 200 * time.Millisecond

// The operations on the docmost endpoint that hold any proxy to what a
// client needs: concurrent calls each answered with their own result, a
// malformed request answered, a fresh session after the proxy restarts.
var (
	ConcurrentCalls = Operation{Name: "concurrent tools/calls on one session and on several", Do: func(ctx context.Context, env *harness.Env) Observation {
		shared, err := connect(ctx, env, "alice")
		if err != nil {
			return Observation{Err: err}
		}
		defer shared.Close()
		var (
			mu     sync.Mutex
			wg     sync.WaitGroup
			broken []string
			first  error
		)
		clk := startClock()
		for i := range concurrentCalls {
			wg.Go(func() {
				cs := shared
				if i%2 == 1 { // every other call on a session of its own
					own, err := connect(ctx, env, "alice")
					if err != nil {
						mu.Lock()
						broken = append(broken, fmt.Sprintf("session %d: %v", i, err))
						mu.Unlock()
						return
					}
					defer own.Close()
					cs = own
				}
				page := fmt.Sprintf("page-%d", i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: env.Tool("update_page"), Arguments: map[string]any{"page_id": page, "content": "c"}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					if first == nil {
						first = err
					}
				case res.IsError:
					broken = append(broken, fmt.Sprintf("call %d: isError: %s", i, excerpt(textOf(res))))
				case !strings.Contains(textOf(res), page):
					broken = append(broken, fmt.Sprintf("call %d for %s got another call's answer: %s", i, page, excerpt(textOf(res))))
				}
			})
		}
		wg.Wait()
		o := clk.stop(Observation{Err: first})
		o.Broken = broken
		return o
	}}
	MalformedRequests = Operation{Name: "malformed requests answered", Do: func(ctx context.Context, env *harness.Env) Observation {
		status, sid, body, err := rawMCP(ctx, env, nil, "", "", initialize)
		if err != nil || status != http.StatusOK {
			return Observation{Err: fmt.Errorf("initialize: %d %v %s", status, err, excerpt(body))}
		}
		version := negotiatedVersion(status, body)
		if _, _, _, err := rawMCP(ctx, env, nil, sid, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return Observation{Err: err}
		}
		var o Observation
		clk := startClock()
		for i, bad := range []string{`{not json`, `{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`,
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"not an object"}`, `[]`} {
			status, _, body, err := rawMCP(ctx, env, nil, sid, version, bad)
			if i == 0 {
				o.Err = err
				clk.into(&o)
			}
			switch {
			case err != nil:
				o.Broken = append(o.Broken, fmt.Sprintf("%s: %v", bad, err))
			case status/100 == 4:
			case status == http.StatusOK && strings.Contains(body, `"error"`):
			case bad == `[]` && status == http.StatusAccepted && strings.TrimSpace(body) == "":
				// No request in it to answer: accepted as a body of
				// notifications alone is (the TypeScript SDK's reading).
			default:
				o.Broken = append(o.Broken, fmt.Sprintf("%s answered %d, want a 4xx or a JSON-RPC error: %s", bad, status, excerpt(body)))
			}
		}
		if why := dead(ctx, env); why != "" {
			o.Broken = append(o.Broken, why)
		}
		return o
	}}
	FreshAfterRestart = Operation{Name: "a new session after the restart", Do: func(ctx context.Context, env *harness.Env) Observation {
		if o := call(ctx, env, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "before"}); o.Err != nil || o.IsError {
			o.Broken = append(o.Broken, "the call before the restart failed")
			return o
		}
		if _, err := env.Strike(ctx); err != nil {
			return Observation{Err: err}
		}
		return call(ctx, env, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "after"})
	}}
)

// concurrentCalls is how many calls ConcurrentCalls makes at once.
const concurrentCalls = 8

// genericScenarios are the generic rows beyond the surface: lists under the
// network faults, concurrency, malformed input and a restart.
func genericScenarios() []Scenario {
	var out []Scenario
	for _, f := range []harness.Fault{harness.Latency{Ms: 100}, harness.LinkDown{}, harness.ResetPeer{TimeoutMs: 1}, harness.Blackhole{}} {
		out = append(out, Scenario{Fault: f, Operation: ListTools, Promise: "1 answered within budget",
			Labels: []string{"network", "deadline"}, Budget: requestDeadline, Expect: answeredOrRPCError})
	}
	for _, f := range []harness.Fault{harness.None{}, harness.Latency{Ms: 100}} {
		out = append(out, Scenario{Fault: f, Operation: ConcurrentCalls, Promise: "9 concurrent calls each answered with their own result",
			Labels: []string{"upstream"}, Budget: requestDeadline, Expect: answeredWithTrace})
	}
	out = append(out,
		Scenario{Fault: harness.None{}, Operation: MalformedRequests, Promise: "1 a malformed request is answered, the proxy still serves",
			Labels: []string{"proxy", "shape"}, Budget: requestDeadline, Expect: sessionAnswered},
		Scenario{Fault: harness.ProxyRestart{}, Operation: FreshAfterRestart, Promise: "1 a restarted proxy serves a new session",
			Labels: []string{"proxy", "restart"}, Budget: requestDeadline, Expect: answeredWithTrace},
		Scenario{Fault: harness.ToolHang{Tool: "progress", Server: harness.LinkEverything}, Operation: Cancel,
			Promise: "7 a cancelled call leaves the session serving", Labels: []string{"surface", "upstream"},
			Env: harness.EnvOptions{Everything: true}, Budget: requestDeadline, Expect: answeredWithTrace},
	)
	return out
}
