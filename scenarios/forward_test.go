package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// fwdTimeout bounds one forwarding spec: a few loopback round trips.
const fwdTimeout = 30 * time.Second

// party is one client session of a two-client spec, with everything the
// proxy relayed to it.
type party struct {
	name string
	cs   *mcp.ClientSession

	mu       sync.Mutex
	events   []string // "progress", "result", in arrival order
	logs     []string
	updated  []string
	sampled  int
	elicited int
}

func (pt *party) note(list *[]string, s string) {
	pt.mu.Lock()
	*list = append(*list, s)
	pt.mu.Unlock()
}

func (pt *party) snapshot(list *[]string) []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return append([]string(nil), *list...)
}

// connectParty opens a session for a party whose sampling and elicitation
// handlers answer with its own name, and whose root is file:///NAME.
func connectParty(ctx context.Context, env *harness.Env, name string) *party {
	GinkgoHelper()
	pt := &party{name: name}
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			pt.mu.Lock()
			pt.sampled++
			pt.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "fake", Content: &mcp.TextContent{Text: "from " + name}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pt.mu.Lock()
			pt.elicited++
			pt.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			pt.note(&pt.logs, string(r.Params.Level))
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			pt.note(&pt.events, "progress")
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			pt.note(&pt.updated, r.Params.URI)
		},
	}
	cs, err := harness.SDKClientWith(ctx, env.ProjectURL(), "", opts, &mcp.Root{URI: "file:///" + name, Name: name})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cs.Close)
	pt.cs = cs
	return pt
}

func (pt *party) call(ctx context.Context, tool string, args map[string]any) string {
	GinkgoHelper()
	res, err := pt.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	Expect(err).NotTo(HaveOccurred(), "%s: %s", pt.name, tool)
	Expect(res.IsError).To(BeFalse(), "%s: %s: %s", pt.name, tool, textOf(res))
	return textOf(res)
}

var _ = Describe("The whole MCP surface through the proxy", Label("surface", "forward"), func() {
	var env *harness.Env
	BeforeEach(func() { env = newWorld(harness.EnvOptions{Everything: true}) })

	It("forwards resources, resource templates, prompts and completion, prefixing only names", func(ctx SpecContext) {
		a := connectParty(ctx, env, "a")
		cs := a.cs

		By("resources keep their URIs; text and binary read back whole")
		rl, err := cs.ListResources(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		var uris []string
		for _, r := range rl.Resources {
			uris = append(uris, r.URI)
		}
		Expect(uris).To(ContainElements(upstream.ReadmeURI, upstream.LogoURI))
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: upstream.ReadmeURI})
		Expect(err).NotTo(HaveOccurred())
		Expect(rr.Contents).To(HaveLen(1))
		Expect(rr.Contents[0].Text).To(Equal(upstream.ReadmeText))
		rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: upstream.LogoURI})
		Expect(err).NotTo(HaveOccurred())
		Expect(rr.Contents[0].Blob).To(Equal(upstream.LogoBlob))

		By("templates are prefixed by name, their URIs are not, and a URI they match is read from their server")
		tl, err := cs.ListResourceTemplates(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(tl.ResourceTemplates).To(ContainElement(And(
			HaveField("Name", "everything_item"), HaveField("URITemplate", upstream.ItemTemplate))))
		rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://items/42"})
		Expect(err).NotTo(HaveOccurred())
		Expect(rr.Contents[0].Text).To(Equal(upstream.ItemText("42")))

		By("prompts are prefixed, take arguments and carry embedded resources")
		pl, err := cs.ListPrompts(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, p := range pl.Prompts {
			names = append(names, p.Name)
		}
		Expect(names).To(ConsistOf("everything_"+upstream.GreetPrompt, "everything_"+upstream.ContextPrompt))
		gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything_greet", Arguments: map[string]string{"name": "bob"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(gp.Messages[0].Content.(*mcp.TextContent).Text).To(Equal("Hello, bob!"))
		gp, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything_with_context"})
		Expect(err).NotTo(HaveOccurred())
		Expect(gp.Messages[0].Content.(*mcp.EmbeddedResource).Resource.Text).To(Equal(upstream.ReadmeText))

		By("completion reaches the prompt's server under its own name")
		cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "everything_greet"},
			Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(cr.Completion.Values).To(ConsistOf("alice", "albert"))
	}, SpecTimeout(fwdTimeout))

	It("advertises the union of its upstreams' capabilities, never more", func(ctx SpecContext) {
		a := connectParty(ctx, env, "a")
		caps := a.cs.InitializeResult().Capabilities
		Expect(caps.Tools).NotTo(BeNil())
		Expect(caps.Resources).NotTo(BeNil())
		Expect(caps.Resources.Subscribe).To(BeTrue())
		Expect(caps.Prompts).NotTo(BeNil())
		Expect(caps.Completions).NotTo(BeNil())
		Expect(caps.Logging).NotTo(BeNil())

		plain := newWorld(harness.EnvOptions{}) // docmost only
		direct, err := harness.SDKClient(ctx, plain.Docmost.URL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(direct.Close)
		own := direct.InitializeResult().Capabilities
		cs, err := harness.SDKClient(ctx, plain.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		caps = cs.InitializeResult().Capabilities
		Expect(caps.Tools).NotTo(BeNil())
		Expect(caps.Resources == nil).To(Equal(own.Resources == nil), "resources as docmost says: %+v", own)
		Expect(caps.Prompts == nil).To(Equal(own.Prompts == nil), "prompts as docmost says")
		Expect(caps.Completions == nil).To(Equal(own.Completions == nil), "completion as docmost says")
		Expect(caps.Logging == nil).To(Equal(own.Logging == nil), "logging as docmost says")
		Expect(own.Resources).To(BeNil(), "the check means something: docmost has no resources")
	}, SpecTimeout(fwdTimeout))

	It("relays a long call's progress notifications before its result", func(ctx SpecContext) {
		a := connectParty(ctx, env, "a")
		res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_progress", Arguments: map[string]any{},
			Meta: mcp.Meta{"progressToken": "tok-1"}})
		a.note(&a.events, "result")
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsError).To(BeFalse(), textOf(res))
		want := append(strings.Split(strings.Repeat("progress,", upstream.ProgressSteps), ",")[:upstream.ProgressSteps], "result")
		Expect(a.snapshot(&a.events)).To(Equal(want), "every progress notification arrives, and before the result")
	}, SpecTimeout(fwdTimeout))

	It("passes logging/setLevel upstream and relays the log messages at or above it", func(ctx SpecContext) {
		a := connectParty(ctx, env, "a")
		Expect(a.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"})).To(Succeed())
		a.call(ctx, "everything_log", map[string]any{"text": "hi"})
		Eventually(func() []string { return a.snapshot(&a.logs) }).WithTimeout(2 * time.Second).
			Should(ConsistOf("warning", "error"))
	}, SpecTimeout(fwdTimeout))

	It("routes sampling, elicitation and roots to the client session that made the call, never the other", func(ctx SpecContext) {
		a, b := connectParty(ctx, env, "a"), connectParty(ctx, env, "b")
		got := map[string][]string{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, pt := range []*party{a, b} {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				out := []string{
					pt.call(ctx, "everything_sample", map[string]any{"prompt": "who are you?"}),
					pt.call(ctx, "everything_elicit", map[string]any{"question": "your name?"}),
					pt.call(ctx, "everything_roots", map[string]any{}),
				}
				mu.Lock()
				got[pt.name] = out
				mu.Unlock()
			}()
		}
		wg.Wait()
		for _, pt := range []*party{a, b} {
			Expect(got[pt.name]).To(Equal([]string{
				"sampled: from " + pt.name,
				"elicited: accept " + pt.name,
				"roots: file:///" + pt.name,
			}), "client %s got its own answers back", pt.name)
			pt.mu.Lock()
			Expect(pt.sampled).To(Equal(1), "client %s was asked to sample exactly once", pt.name)
			Expect(pt.elicited).To(Equal(1), "client %s was asked to elicit exactly once", pt.name)
			pt.mu.Unlock()
		}
	}, SpecTimeout(fwdTimeout))

	It("passes the client's notifications/roots/list_changed to its upstream session, which then sees the new roots", func(ctx SpecContext) {
		cl := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "0"}, nil)
		cl.AddRoots(&mcp.Root{URI: "file:///one"})
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ProjectURL(), HTTPClient: harness.HTTPClient(""), MaxRetries: -1}, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_roots", Arguments: map[string]any{}})
		Expect(err).NotTo(HaveOccurred())
		Expect(textOf(res)).To(Equal("roots: file:///one"))
		Expect(env.Everything.RootsChanged()).To(BeZero())
		cl.AddRoots(&mcp.Root{URI: "file:///two"})
		Eventually(env.Everything.RootsChanged).WithTimeout(2*time.Second).Should(Equal(1), "one roots/list_changed reached the upstream")
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_roots", Arguments: map[string]any{}})
		Expect(err).NotTo(HaveOccurred())
		Expect(textOf(res)).To(Equal("roots: file:///one, file:///two"), "the upstream sees the client's roots, never the proxy's placeholder")
	}, SpecTimeout(fwdTimeout))

	It("sends notifications/resources/updated to the subscriber only", func(ctx SpecContext) {
		a, b := connectParty(ctx, env, "a"), connectParty(ctx, env, "b")
		Expect(a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upstream.ReadmeURI})).To(Succeed())
		b.call(ctx, "everything_touch", map[string]any{"uri": upstream.ReadmeURI})
		Eventually(func() []string { return a.snapshot(&a.updated) }).WithTimeout(2*time.Second).
			Should(Equal([]string{upstream.ReadmeURI}), "the subscriber hears of the update, once")
		Consistently(func() []string { return b.snapshot(&b.updated) }).WithTimeout(300*time.Millisecond).
			Should(BeEmpty(), "a session that did not subscribe hears nothing")
		Expect(a.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: upstream.ReadmeURI})).To(Succeed())
	}, SpecTimeout(fwdTimeout))

	It("writes an mcp_request audit row, with trace code, session and server, for a request other than tools/call", func(ctx SpecContext) {
		a := connectParty(ctx, env, "a")
		rr, err := a.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: upstream.ReadmeURI})
		Expect(err).NotTo(HaveOccurred())
		code, _ := rr.Meta[trace.MetaKey].(string)
		Expect(trace.Valid(code)).To(BeTrue(), "resources/read carries its trace code in _meta: %v", rr.Meta)
		rows, err := mcplocal.Audit(ctx, env, code)
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(ContainElement(And(
			HaveField("Kind", audit.KindMCPRequest), HaveField("Tool", "resources/read"),
			HaveField("Server", "everything"), HaveField("SessionID", a.cs.ID()), HaveField("Status", "ok"))))
	}, SpecTimeout(fwdTimeout))
})

var _ = Describe("list_changed", Label("surface", "forward"), func() {
	It("tells the session its tools changed when begin_session opens the gate", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Gate: true, Prompts: []harness.Prompt{{Name: "start", Text: "read first", Priority: 1}}})
		var mu sync.Mutex
		changed := 0
		cs, err := harness.SDKClientWith(ctx, env.ProjectURL(), "", &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				mu.Lock()
				changed++
				mu.Unlock()
			}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		Expect(cs.InitializeResult().Capabilities.Tools.ListChanged).To(BeTrue(), "a gated project advertises tools.listChanged")
		count := func() int { mu.Lock(); defer mu.Unlock(); return changed }
		Consistently(count).WithTimeout(200 * time.Millisecond).Should(BeZero())
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gate.BeginSession, Arguments: map[string]any{"intent": "read"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsError).To(BeFalse(), textOf(res))
		Eventually(count).WithTimeout(2*time.Second).Should(Equal(1), "one notifications/tools/list_changed")
		tools, err := cs.ListTools(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(tools.Tools).To(ContainElement(HaveField("Name", "docmost_search")), "and the tools are there")
	}, SpecTimeout(fwdTimeout))
})

var _ = Describe("Upstream sessions per client session", Label("surface", "sessions"), func() {
	It("gives each client session its own upstream session, closed when the client session closes", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Everything: true})
		a, b := connectParty(ctx, env, "a"), connectParty(ctx, env, "b")
		ida, idb := a.call(ctx, "everything_whoami", nil), b.call(ctx, "everything_whoami", nil)
		Expect(ida).NotTo(Equal(idb), "two client sessions, two upstream sessions")
		Expect(a.call(ctx, "everything_whoami", nil)).To(Equal(ida), "a client session keeps its upstream session")
		Expect(env.Everything.SessionIDs()).To(ContainElements(ida, idb))
		Expect(a.cs.Close()).To(Succeed())
		Eventually(env.Everything.SessionIDs).WithTimeout(mcplocal.KnobsOf(env.Bounds()).ShutdownGrace+Tolerance).ShouldNot(ContainElement(ida),
			"the DELETE of a client session closes its upstream session")
		Expect(env.Everything.SessionIDs()).To(ContainElement(idb), "and only its")
		b.call(ctx, "everything_echo", map[string]any{"text": "still here"})
	}, SpecTimeout(fwdTimeout))

	It("refuses a new upstream session past MCPCTL_UPSTREAM_SESSIONS_MAX, readably, and serves again once one closes", func(ctx SpecContext) {
		kv := mcplocal.Compressed()
		kv.UpstreamSessionsMax = 2 // docmost and everything for one client session
		env := newWorld(harness.EnvOptions{Everything: true, Bounds: mcplocal.BoundsOf(kv)})
		a := connectParty(ctx, env, "a")
		a.call(ctx, "everything_echo", map[string]any{"text": "x"})
		b := connectParty(ctx, env, "b")
		res, err := b.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_echo", Arguments: map[string]any{"text": "y"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsError).To(BeTrue())
		Expect(textOf(res)).To(ContainSubstring(knobName(knobs.Table, "MCPCTL_UPSTREAM_SESSIONS_MAX")))
		Expect(a.cs.Close()).To(Succeed())
		Eventually(func() bool {
			r, err := b.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_echo", Arguments: map[string]any{"text": "y"}})
			return err == nil && !r.IsError
		}).WithTimeout(mcplocal.KnobsOf(env.Bounds()).ShutdownGrace+2*Tolerance).Should(BeTrue(), "a freed slot serves the next session")
	}, SpecTimeout(fwdTimeout))
})

// knobName returns env if the table has it, so a renamed knob fails here.
func knobName(table []knobs.Knob, env string) string {
	GinkgoHelper()
	for _, k := range table {
		if k.Env == env {
			return env
		}
	}
	Fail(fmt.Sprintf("no knob %s", env))
	return ""
}

// A client's capabilities are what its upstream sessions offer the upstream
// (sampling, elicitation, roots). A session recreated after a restart is the
// same client with the same capabilities: its upstream sessions offer them
// again, so what the upstream asks of it still reaches it.
var _ = Describe("A recreated session", Label("forward", "sessions", "restart", "capabilities"), func() {
	It("still offers the client's sampling, elicitation and roots upstream after a proxy restart", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Everything: true})
		pt := &party{name: "c"}
		opts := &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				pt.mu.Lock()
				pt.sampled++
				pt.mu.Unlock()
				return &mcp.CreateMessageResult{Role: "assistant", Model: "fake", Content: &mcp.TextContent{Text: "from c"}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				pt.mu.Lock()
				pt.elicited++
				pt.mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "c"}}, nil
			},
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-caps", Version: "0.1.0"}, opts)
		c.AddRoots(&mcp.Root{URI: "file:///c", Name: "c"})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ProjectURL(), HTTPClient: harness.HTTPClient(""),
			DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		pt.cs = cs
		id := cs.ID()
		ask := func() []string {
			return []string{
				pt.call(ctx, "everything_sample", map[string]any{"prompt": "who are you?"}),
				pt.call(ctx, "everything_elicit", map[string]any{"question": "your name?"}),
				pt.call(ctx, "everything_roots", map[string]any{}),
			}
		}
		Expect(ask()).To(Equal([]string{"sampled: from c", "elicited: accept c", "roots: file:///c"}), "before the restart")

		Expect(env.Target.Restart(ctx)).To(Succeed())
		after := ask()
		Expect(cs.ID()).To(Equal(id), "the session was recreated under its id")
		Expect(after[0]).To(ContainSubstring(catalogue.NoticePrefix), "the first call after the restart is told the session was recreated")
		Expect(after[0]).To(HaveSuffix("sampled: from c"), "the recreated session's sampling reached the client")
		Expect(after[1:]).To(Equal([]string{"elicited: accept c", "roots: file:///c"}), "elicitation and roots reached the client")
		pt.mu.Lock()
		defer pt.mu.Unlock()
		Expect(pt.sampled).To(Equal(2), "asked to sample once before the restart and once after")
		Expect(pt.elicited).To(Equal(2), "asked to elicit once before the restart and once after")
	}, SpecTimeout(fwdTimeout))
})
