package scenarios_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// unprompted is everything the surface promises a client hears outside any
// request of its own: what the everything fake's announce and touch tools
// make the upstream send.
var unprompted = []string{
	"notifications/message",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
	"notifications/resources/updated",
	"notifications/tools/list_changed",
}

// idleNoticeWait bounds how long an unprompted message may take to travel
// fake -> proxy -> client on loopback, on a loaded machine.
const idleNoticeWait = 3 * time.Second

// heard collects the methods of the messages a client received, deduplicated.
type heard struct {
	mu  sync.Mutex
	got map[string]bool
}

func (h *heard) add(method string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.got == nil {
		h.got = map[string]bool{}
	}
	h.got[method] = true
}

func (h *heard) methods() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []string{}
	for _, m := range unprompted {
		if h.got[m] {
			out = append(out, m)
		}
	}
	return out
}

// listen opens the raw session's standalone stream (GET) and records the
// method of every message that arrives on it until the spec ends.
func (s *rawSession) listen(ctx context.Context, h *heard) {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(ctx)
	DeferCleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := s.hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "the proxy opens the session's standalone stream")
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil && m.Method != "" {
				h.add(m.Method)
			}
		}
	}()
}

// announce makes the everything fake send every session each unprompted
// message, through a session of its own (another client's).
func announce(ctx context.Context, env *harness.Env) {
	GinkgoHelper()
	other := connectParty(ctx, env, "other")
	other.call(ctx, "everything_touch", map[string]any{"uri": upstream.ReadmeURI})
	other.call(ctx, "everything_announce", map[string]any{"text": "hello"})
}

// The memory an idle session costs (docs/performance.md, "Idle sessions"):
// the upstream's standalone stream is three goroutines and an HTTP
// connection per upstream session, and it only matters while the client
// holds a standalone stream of its own at the proxy: without one, what the
// upstream sends outside a request has nowhere to go.
var _ = Describe("Idle sessions", Label("surface", "forward", "idle"), func() {
	var env *harness.Env
	BeforeEach(func() { env = newWorld(harness.EnvOptions{Everything: true}) })

	It("hear everything an upstream sends outside a request while they idle", func(ctx SpecContext) {
		var h heard
		note := func(m string) func() { return func() { h.add(m) } }
		pt := &party{name: "idle"}
		cs, err := harness.SDKClientWith(ctx, env.ProjectURL(), "", &mcp.ClientOptions{
			LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { note("notifications/message")() },
			ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
				note("notifications/resources/updated")()
			},
			ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note("notifications/tools/list_changed")() },
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note("notifications/prompts/list_changed")() },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note("notifications/resources/list_changed")() },
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		pt.cs = cs
		Expect(cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})).To(Succeed())
		Expect(cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upstream.ReadmeURI})).To(Succeed())
		pt.call(ctx, "everything_echo", map[string]any{"text": "then idle"})
		// Idle: nothing of this session in flight from here on.
		announce(ctx, env)
		Eventually(h.methods).WithTimeout(idleNoticeWait).Should(Equal(unprompted),
			"an idle session hears every list_changed, resources/updated and log message its upstream sends")
	}, SpecTimeout(fwdTimeout))

	It("hold no upstream standalone stream for a session without one of its own, and open it when the session opens its own", func(ctx SpecContext) {
		s := openRaw(ctx, env.ProjectURL())
		s.request(ctx, 2, "logging/setLevel", `{"level":"debug"}`)
		s.request(ctx, 3, "resources/subscribe", `{"uri":"`+upstream.ReadmeURI+`"}`) // opens its upstream session
		Expect(env.Everything.Listeners()).To(Equal(0),
			"an idle session without a standalone stream of its own holds none at the upstream (three goroutines and a connection each)")

		By("the session opens its standalone stream after its upstream session exists")
		var h heard
		s.listen(ctx, &h)
		Eventually(env.Everything.Listeners).WithTimeout(idleNoticeWait).Should(Equal(1),
			"once the client listens, its upstream session listens too")
		announce(ctx, env)
		Eventually(h.methods).WithTimeout(idleNoticeWait).Should(Equal(unprompted),
			"a session that opened its stream late hears everything (its subscription and log level survive)")
	}, SpecTimeout(fwdTimeout))
})

// openRawOffering is openRaw for a client that offers capabilities (a JSON
// object) in its initialize.
func openRawOffering(ctx context.Context, url, capabilities string) *rawSession {
	GinkgoHelper()
	s := &rawSession{url: url, hc: harness.HTTPClient("")}
	DeferCleanup(s.hc.CloseIdleConnections)
	status, hdr, body := s.send(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":`+
		capabilities+`,"clientInfo":{"name":"raw","version":"0"}}}`)
	Expect(status).To(Equal(http.StatusOK), "initialize: %s", body)
	s.id = hdr.Get("Mcp-Session-Id")
	Expect(s.id).NotTo(BeEmpty(), "initialize names a session")
	status, _, body = s.send(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	Expect(status).To(Equal(http.StatusAccepted), "notifications/initialized: %s", body)
	return s
}

// quietCaps are capabilities with nothing an upstream could send unprompted:
// its tools, prompts and resources without listChanged or subscriptions, no
// logging.
func quietCaps() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
}

// streamOpenWindow is how long a standalone stream that is not opened must
// stay unopened: on loopback the go-sdk opens one within milliseconds of its
// session's connect (the spec's positive entries wait for it with
// idleNoticeWait); a third of that on a loaded machine.
const streamOpenWindow = idleNoticeWait / 3

// Even a client that holds its standalone stream (the go-sdk and TypeScript
// clients open one right after initialize) needs its upstream sessions to
// hold theirs only when the upstream may send something outside a request:
// what it advertises (list_changed, resource subscriptions, logging), or a
// request the client offers to answer (roots, sampling, elicitation). Each
// stream is three goroutines and an HTTP connection per upstream session
// (docs/performance.md, "Idle sessions").
var _ = Describe("Idle sessions holding a standalone stream", Label("surface", "forward", "idle"), func() {
	It("hold no upstream standalone stream when the upstream advertises nothing it could send unprompted and the client offers nothing it could be asked", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Everything: true, EverythingAdvertises: quietCaps()})
		s := openRawOffering(ctx, env.ProjectURL(), `{}`)
		s.request(ctx, 2, "tools/call", `{"name":"everything_echo","arguments":{"text":"then idle"}}`)
		var h heard
		s.listen(ctx, &h)
		Consistently(env.Everything.Listeners).WithTimeout(streamOpenWindow).Should(Equal(0),
			"a session in front of an upstream that can send it nothing unprompted holds no stream there, even while it holds its own")
	}, SpecTimeout(fwdTimeout))

	DescribeTable("hold one upstream standalone stream, and hear what comes on it, when the upstream advertises",
		func(ctx SpecContext, caps func(*mcp.ServerCapabilities), setup, want string) {
			c := quietCaps()
			caps(c)
			env := newWorld(harness.EnvOptions{Everything: true, EverythingAdvertises: c})
			s := openRawOffering(ctx, env.ProjectURL(), `{}`)
			if setup != "" {
				method, params, _ := strings.Cut(setup, " ")
				s.request(ctx, 2, method, params)
			}
			s.request(ctx, 3, "tools/call", `{"name":"everything_echo","arguments":{"text":"then idle"}}`)
			var h heard
			s.listen(ctx, &h)
			Eventually(env.Everything.Listeners).WithTimeout(idleNoticeWait).Should(Equal(1),
				"the upstream may send this session something unprompted: its session holds the stream")
			announce(ctx, env)
			Eventually(h.methods).WithTimeout(idleNoticeWait).Should(ContainElement(want), "the idle session hears it")
		},
		Entry("tools listChanged", func(c *mcp.ServerCapabilities) { c.Tools.ListChanged = true }, "",
			"notifications/tools/list_changed", SpecTimeout(fwdTimeout)),
		Entry("prompts listChanged", func(c *mcp.ServerCapabilities) { c.Prompts.ListChanged = true }, "",
			"notifications/prompts/list_changed", SpecTimeout(fwdTimeout)),
		Entry("resources listChanged", func(c *mcp.ServerCapabilities) { c.Resources.ListChanged = true }, "",
			"notifications/resources/list_changed", SpecTimeout(fwdTimeout)),
		Entry("resource subscriptions", func(c *mcp.ServerCapabilities) { c.Resources.Subscribe = true },
			`resources/subscribe {"uri":"`+upstream.ReadmeURI+`"}`, "notifications/resources/updated", SpecTimeout(fwdTimeout)),
		Entry("logging", func(c *mcp.ServerCapabilities) { c.Logging = &mcp.LoggingCapabilities{} },
			`logging/setLevel {"level":"debug"}`, "notifications/message", SpecTimeout(fwdTimeout)),
	)

	DescribeTable("hold one upstream standalone stream when the client offers to answer requests an upstream may send unprompted:",
		func(ctx SpecContext, offers string) {
			env := newWorld(harness.EnvOptions{Everything: true, EverythingAdvertises: quietCaps()})
			s := openRawOffering(ctx, env.ProjectURL(), offers)
			s.request(ctx, 2, "tools/call", `{"name":"everything_echo","arguments":{"text":"then idle"}}`)
			var h heard
			s.listen(ctx, &h)
			Eventually(env.Everything.Listeners).WithTimeout(idleNoticeWait).Should(Equal(1),
				"the upstream may ask this client something outside a request: its session holds the stream")
		},
		Entry("roots with listChanged", `{"roots":{"listChanged":true}}`, SpecTimeout(fwdTimeout)),
		Entry("sampling", `{"sampling":{}}`, SpecTimeout(fwdTimeout)),
		Entry("elicitation", `{"elicitation":{}}`, SpecTimeout(fwdTimeout)),
	)
})
