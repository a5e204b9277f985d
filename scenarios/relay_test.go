package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// relayCase is one tools/call scenario of the differential spec: it makes
// its calls on a warmed party and returns their results.
type relayCase func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult

// relayObserved is what a client and an auditor see of a case, with trace
// codes (which differ between runs) replaced by TRACE.
type relayObserved struct {
	Results []string
	Rows    [][]string // per result: its audit rows, sorted
	Events  []string
	Logs    []string
	Sampled int
	Elicit  int
	// Cancelled counts the upstream's calls that ended cancelled.
	Cancelled int
}

func relayNormal(s, code string) string {
	if code != "" {
		s = regexp.MustCompile(regexp.QuoteMeta(code)).ReplaceAllString(s, "TRACE")
	}
	s = elapsed.ReplaceAllString(s, "after DURATION")
	return pageHandle.ReplaceAllString(s, "HANDLE")
}

// elapsed is how long an LLM attempt took, in its row's detail.
var elapsed = regexp.MustCompile(`after [0-9.]+(ns|µs|ms|s)`)

// pageHandle is a paginated result's handle: random on every call.
var pageHandle = regexp.MustCompile(`\b[A-Z2-7]{16}\b`)

// observeRelay runs c on a fresh world with the relay on or off.
func observeRelay(ctx context.Context, on bool, o harness.EnvOptions, c relayCase) (relayObserved, int64) {
	GinkgoHelper()
	o.Everything, o.Relay, o.NoRelay = true, on, !on
	env := newWorld(o)
	pt := connectParty(ctx, env, "a")
	// Warm: the first call to each server opens its upstream session (on
	// the SDK path); the case's calls then find one to relay on.
	if !o.Gate { // a gated session's calls are refused until begin_session
		pt.call(ctx, env.Tool("update_page"), map[string]any{"page_id": "warm", "content": "w"})
		pt.call(ctx, "everything_echo", map[string]any{"text": "warm"})
	}
	prx := env.Target.(*harness.InProcess).Proxy()
	before := prx.RelayedCalls()
	results := c(ctx, env, pt)
	now := env.Target.(*harness.InProcess).Proxy()
	relayed := now.RelayedCalls() - before
	if now != prx {
		relayed = now.RelayedCalls() // restarted: a new proxy counts from 0
	}
	var ob relayObserved
	for _, res := range results {
		code, _ := res.Meta[trace.MetaKey].(string)
		Expect(code).NotTo(BeEmpty(), "every answer carries its trace code in _meta")
		cp := *res
		cp.Meta = nil
		b, err := json.Marshal(&cp)
		Expect(err).NotTo(HaveOccurred())
		ob.Results = append(ob.Results, relayNormal(string(b), code))
		var rows []audit.Row
		Eventually(func(g Gomega) {
			var err error
			rows, err = mcplocal.Audit(ctx, env, code)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rows).To(ContainElement(HaveField("Kind", audit.KindToolCallTrace)))
			// The upstream_call row of a call answered at its deadline is
			// written when the upstream call ends, after the answer; a call
			// the gate refused never reaches an upstream.
			refused := slices.ContainsFunc(rows, func(r audit.Row) bool { return r.Status == audit.StatusRefused })
			if !refused {
				g.Expect(rows).To(ContainElement(HaveField("Kind", audit.KindUpstreamCall)))
			}
		}).WithTimeout(5 * time.Second).Should(Succeed())
		var norm []string
		for _, r := range rows {
			norm = append(norm, relayNormal(fmt.Sprintf("%s|%s|%s|%s|%s|%t|%s|%s|parent=%t|session=%t", r.Kind, r.Status, r.Server, r.Tool, r.User, r.Degraded, r.DegradedReason, r.Detail, r.ParentID != "", r.SessionID != ""), code))
		}
		sort.Strings(norm)
		ob.Rows = append(ob.Rows, norm)
	}
	ob.Events, ob.Logs = pt.snapshot(&pt.events), pt.snapshot(&pt.logs)
	sort.Strings(ob.Logs) // the SDK path delivers an upstream's log messages in no fixed order
	pt.mu.Lock()
	ob.Sampled, ob.Elicit = pt.sampled, pt.elicited
	pt.mu.Unlock()
	// A call the proxy gave up is cancelled upstream after its answer: wait
	// for the fakes to finish before counting.
	Eventually(func() int { return env.Docmost.InFlight() + env.Everything.InFlight() }).
		WithTimeout(5*time.Second).Should(BeZero(), "every upstream call ended")
	for _, c := range append(env.Docmost.Calls(), env.Everything.Calls()...) {
		if c.Cancelled {
			ob.Cancelled++
		}
	}
	return ob, relayed
}

func callOnce(ctx context.Context, pt *party, name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	GinkgoHelper()
	res, err := pt.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	Expect(err).NotTo(HaveOccurred(), "tools/call %s is answered with a result", name)
	return res
}

var _ = Describe("The raw tools/call relay", Label("relay"), func() {
	DescribeTable("answers and audits a tools/call exactly as the SDK path does",
		func(ctx SpecContext, want int, o harness.EnvOptions, c relayCase) {
			off, offRelayed := observeRelay(ctx, false, o, c)
			on, onRelayed := observeRelay(ctx, true, o, c)
			Expect(offRelayed).To(BeZero(), "relay off: nothing relayed")
			Expect(onRelayed).To(BeEquivalentTo(want), "relay on: the case's calls took the relay")
			for i := range off.Results {
				Expect(on.Results[i]).To(Equal(off.Results[i]), "result %d: the same with the relay on and off", i)
				Expect(on.Rows[i]).To(Equal(off.Rows[i]), "result %d: the same audit rows", i)
			}
			Expect(on).To(Equal(off), "relay on and off: the same answers, audit rows and notifications")
		},
		Entry("a plain call", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "hello"}, nil)}
		}),
		Entry("an isError result of the upstream", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			env.Docmost.Set("update_page", upstream.Behavior{Kind: upstream.ErrorResult})
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1"}, nil)}
		}),
		Entry("a tool the upstream does not have (its JSON-RPC error)", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("no_such_tool"), map[string]any{}, nil)}
		}),
		Entry("progress notifications before the result", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			res := callOnce(ctx, pt, "everything_progress", map[string]any{}, mcp.Meta{"progressToken": "tok-1"})
			pt.note(&pt.events, "result")
			return []*mcp.CallToolResult{res}
		}),
		Entry("log messages at or above the client's level", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			Expect(pt.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"})).To(Succeed())
			res := callOnce(ctx, pt, "everything_log", map[string]any{"text": "hi"}, nil)
			Eventually(func() []string { return pt.snapshot(&pt.logs) }).WithTimeout(2 * time.Second).Should(HaveLen(2))
			return []*mcp.CallToolResult{res}
		}),
		Entry("sampling, elicitation and roots asked of the client during the call", 3, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{
				callOnce(ctx, pt, "everything_sample", map[string]any{"prompt": "hi"}, nil),
				callOnce(ctx, pt, "everything_elicit", map[string]any{}, nil),
				callOnce(ctx, pt, "everything_roots", map[string]any{}, nil),
			}
		}),
		Entry("an upstream past the upstream call timeout (hanging)", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Hang})
			res := callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "q"}, nil)
			Eventually(func() bool {
				for _, c := range env.Docmost.Calls() {
					if c.Cancelled {
						return true
					}
				}
				return false
			}).WithTimeout(3*time.Second).Should(BeTrue(), "the upstream is told the call was given up")
			return []*mcp.CallToolResult{res}
		}),
		// A recreated session offers roots (the replayed initialize's), and
		// this client holds no standalone stream: both calls take the SDK
		// path, which the relay must leave them to.
		// The notice's call takes the SDK path (it owes the notice), the next one the relay.
		Entry("a session the proxy recreated after a restart: the notice, then the next call", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, warm *party) []*mcp.CallToolResult {
			Expect(warm.cs.Close()).To(Succeed()) // its standalone stream would not survive the restart
			// A client without the standalone stream, which a restart would end.
			// No capabilities: a client offering roots without a standalone
			// stream would be left to the SDK path (the next case).
			c := mcp.NewClient(&mcp.Implementation{Name: "relay-spec", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ProjectURL(), HTTPClient: harness.HTTPClient(""),
				MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(cs.Close)
			pt := &party{name: "r", cs: cs}
			callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "warm"}, nil)
			Expect(env.Target.(*harness.InProcess).Restart(ctx)).To(Succeed())
			first := callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "a"}, nil)
			second := callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "b"}, nil)
			return []*mcp.CallToolResult{first, second}
		}),
		Entry("a client offering sampling without a standalone stream: left to the SDK path, which asks on the call's stream", 0, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, _ *party) []*mcp.CallToolResult {
			c := mcp.NewClient(&mcp.Implementation{Name: "relay-spec", Version: "0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "fake", Content: &mcp.TextContent{Text: "from s"}}, nil
				}})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ProjectURL(), HTTPClient: harness.HTTPClient(""),
				MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(cs.Close)
			res := callOnce(ctx, &party{name: "s", cs: cs}, "everything_sample", map[string]any{"prompt": "hi"}, nil)
			Expect(res.IsError).To(BeFalse(), "sampled on the call's own stream: %s", textOf(res))
			return []*mcp.CallToolResult{res}
		}),
		Entry("the first call of a session, which opens its upstream session", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, _ *party) []*mcp.CallToolResult {
			fresh := connectParty(ctx, env, "fresh")
			return []*mcp.CallToolResult{callOnce(ctx, fresh, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "new"}, nil)}
		}),
		Entry("the request deadline before the upstream's answer", 1, harness.EnvOptions{Bounds: relayBounds(func(v *knobs.Values) {
			v.RequestDeadline, v.UpstreamCallTimeout = 600*time.Millisecond, 600*time.Millisecond
		})}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Hang})
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "q"}, nil)}
		}),
		Entry("an upstream answer past MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES", 1, harness.EnvOptions{Bounds: relayBounds(func(v *knobs.Values) {
			v.UpstreamMaxResponseBytes = 4096
		})}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "q"}, nil)}
		}),
		Entry("paginate over a large result, the LLM answering", 1, relayStages("paginate"), func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "find notes"}, nil)}
		}),
		Entry("paginate, the LLM hanging: the fallback and its ⚠ notice", 1, relayStages("paginate"), func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "find notes"}, nil)}
		}),
		Entry("summarize-tree, the LLM answering 500: the ⚠ notice", 1, relayStages("summarize-tree"), func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.ServerError))).To(Succeed())
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("search"), map[string]any{"query": "find notes"}, nil)}
		}),
		Entry("a small result through paginate (its text contents joined)", 1, relayStages("paginate"), func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			return []*mcp.CallToolResult{callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "small"}, nil)}
		}),
		Entry("a gated project: refused before begin_session (SDK path), relayed after it", 1, harness.EnvOptions{LLM: true, Gate: true, Prompts: orderPrompts}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			refused := callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "before"}, nil)
			callOnce(ctx, pt, gate.BeginSession, map[string]any{"intent": orderIntent}, nil)
			after := callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "after"}, nil)
			return []*mcp.CallToolResult{refused, after}
		}),
		Entry("a call that waited on a paused project", 1, harness.EnvOptions{}, func(ctx context.Context, env *harness.Env, pt *party) []*mcp.CallToolResult {
			pauseAPI(ctx, env, "", "pause")
			got := make(chan *mcp.CallToolResult, 1)
			go func() {
				defer GinkgoRecover()
				got <- callOnce(ctx, pt, env.Tool("update_page"), map[string]any{"page_id": "p1", "content": "held"}, nil)
			}()
			Eventually(func() int { return pauseAPI(ctx, env, "", "pause") }).Should(Equal(1), "the call waits")
			pauseAPI(ctx, env, "", "resume")
			return []*mcp.CallToolResult{<-got}
		}),
	)

	It("ends a relayed call the client cancels, and tells the upstream, as the SDK path does", func(ctx SpecContext) {
		observe := func(on bool) (string, int64) {
			env := newWorld(harness.EnvOptions{Relay: on, NoRelay: !on})
			pt := connectParty(ctx, env, "a")
			pt.call(ctx, env.Tool("update_page"), map[string]any{"page_id": "warm", "content": "w"})
			env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Hang})
			prx := env.Target.(*harness.InProcess).Proxy()
			before := prx.RelayedCalls()
			cctx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := pt.cs.CallTool(cctx, &mcp.CallToolParams{Name: env.Tool("search"), Arguments: map[string]any{"query": "q"}})
				errc <- err
			}()
			Eventually(env.Docmost.InFlight).Should(Equal(1), "the call reached the upstream")
			cancel() // the SDK client sends notifications/cancelled
			Expect(<-errc).To(HaveOccurred())
			Eventually(func() bool {
				for _, c := range env.Docmost.Calls() {
					if c.Tool == "search" && c.Cancelled {
						return true
					}
				}
				return false
			}).WithTimeout(3*time.Second).Should(BeTrue(), "the upstream's call was cancelled")
			var row audit.Row
			Eventually(func(g Gomega) {
				rows, err := mcplocal.AuditSession(ctx, env, pt.cs.ID())
				g.Expect(err).NotTo(HaveOccurred())
				found := false
				for _, r := range rows {
					if r.Kind == audit.KindToolCallTrace && r.Tool == env.Tool("search") {
						row, found = r, true
					}
				}
				g.Expect(found).To(BeTrue())
			}).WithTimeout(5 * time.Second).Should(Succeed())
			return row.Status + "|" + row.Detail, prx.RelayedCalls() - before
		}
		off, offN := observe(false)
		on, onN := observe(true)
		Expect(offN).To(BeZero())
		Expect(onN).To(BeEquivalentTo(1), "the cancelled call was relayed")
		Expect(on).To(Equal(off), "the tool_call_trace row says the same")
		Expect(on).To(HavePrefix("cancelled|"))
	}, SpecTimeout(30*time.Second))

	It("ends a call on the client's notifications/cancelled while its POST stays open, as the SDK path does", func(ctx SpecContext) {
		type seen struct {
			Answer   string
			Row      string
			Relayed  int64
			Upstream time.Duration // how long the upstream's call ran
		}
		observe := func(on bool) seen {
			env := newWorld(harness.EnvOptions{Relay: on, NoRelay: !on})
			s := &load.Session{HTTP: harness.HTTPClient(""), URL: env.ProjectURL()}
			Expect(s.Initialize(ctx)).To(Succeed())
			DeferCleanup(s.Close, context.Background())
			_, err := s.CallTool(ctx, env.Tool("update_page"), map[string]any{"page_id": "warm", "content": "w"})
			Expect(err).NotTo(HaveOccurred())
			env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Hang})
			prx := env.Target.(*harness.InProcess).Proxy()
			before := prx.RelayedCalls()
			type answer struct {
				r   load.Result
				err error
			}
			got := make(chan answer, 1)
			go func() {
				r, err := s.CallTool(ctx, env.Tool("search"), map[string]any{"query": "q"})
				got <- answer{r, err}
			}()
			Eventually(env.Docmost.InFlight).Should(Equal(1), "the call reached the upstream")
			Expect(s.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": s.LastID(), "reason": "spec"})).To(Succeed())
			var out seen
			select {
			case a := <-got:
				out.Answer = fmt.Sprintf("isError=%t %s err=%v", a.r.IsError, relayNormal(a.r.Text, a.r.Trace), a.err)
			case <-time.After(5 * time.Second):
				Fail("the call's POST was never answered or closed")
			}
			Eventually(func() bool {
				for _, c := range env.Docmost.Calls() {
					if c.Tool == "search" && c.Cancelled {
						out.Upstream = c.Duration
						return true
					}
				}
				return false
			}).WithTimeout(3*time.Second).Should(BeTrue(), "the upstream's call was cancelled")
			Eventually(func(g Gomega) {
				rows, err := mcplocal.AuditSession(ctx, env, s.ID)
				g.Expect(err).NotTo(HaveOccurred())
				out.Row = ""
				for _, r := range rows {
					if r.Kind == audit.KindToolCallTrace && r.Tool == env.Tool("search") {
						out.Row = r.Status + "|" + r.Detail
					}
				}
				g.Expect(out.Row).NotTo(BeEmpty())
			}).WithTimeout(5 * time.Second).Should(Succeed())
			out.Relayed = prx.RelayedCalls() - before
			return out
		}
		off, on := observe(false), observe(true)
		Expect(off.Relayed).To(BeZero())
		Expect(on.Relayed).To(BeEquivalentTo(1), "the call was relayed")
		timeout := mcplocal.Compressed().UpstreamCallTimeout
		Expect(off.Upstream).To(BeNumerically("<", timeout), "SDK path: the upstream's call ends at the cancel, not at its timeout")
		Expect(on.Upstream).To(BeNumerically("<", timeout), "relay: the upstream's call ends at the cancel, not at its timeout")
		Expect(on.Answer).To(Equal(off.Answer), "the open POST gets the same answer")
		Expect(on.Row).To(Equal(off.Row), "the tool_call_trace row says the same")
	}, SpecTimeout(30*time.Second))
})

// relayStages is a world whose project runs the named stage, with the fake
// LLM answering titles unless a case says otherwise.
func relayStages(name string) harness.EnvOptions {
	return harness.EnvOptions{LLM: true, LLMDefault: fakellm.Step{Kind: fakellm.OK, Text: catalogue.FakeTitles},
		Pipeline: []harness.Stage{{Name: name}}}
}

// relayBounds are the compressed knobs with f applied, as bounds.
func relayBounds(f func(*knobs.Values)) harness.Bounds {
	v := mcplocal.Compressed()
	f(&v)
	return mcplocal.BoundsOf(v)
}
