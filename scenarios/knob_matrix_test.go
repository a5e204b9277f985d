package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The knob matrix: for each knob, a spec where it alone decides the outcome.
// Every other bound is wide (wideKnobs: seconds), the knob under test is
// narrow (a few hundred milliseconds), and the spec checks the answer comes
// at the narrow value, not before and not later than Tolerance after it. A
// knob read and ignored, capped at another knob's value or swapped with a
// sibling would end the call at a wide value instead (or not at all), which
// the window tells apart. A spec is named after its knob's env var; the last
// spec of this file fails when a knob of proxy/knobs.Table has none.

// wideKnobs is every bound set well above any narrow value the matrix uses
// (the narrowest wide bound, 2.5 s, is above the widest narrow one, 1.5 s,
// plus matrixSlack), so that only the knob under test can end a call early.
func wideKnobs() knobs.Values {
	v := knobs.Defaults()
	v.LLMCallBudget = 3 * time.Second
	v.LLMProviderTimeout = 2500 * time.Millisecond
	v.StageLLMBudget = 4 * time.Second
	v.GateLLMTimeout = 4 * time.Second
	v.PaginationLLMTimeout = 4 * time.Second
	v.RequestDeadline = 8 * time.Second
	v.UpstreamCallTimeout = 6 * time.Second
	v.UpstreamConnect = 4 * time.Second
	v.ShutdownGrace = 3 * time.Second
	v.ChatBudget = 4 * time.Second
	v.AuditWriteTimeout = 3 * time.Second
	v.AuditQueryTimeout = 3 * time.Second
	v.ReadyTimeout = 3 * time.Second
	return v
}

// narrow returns wideKnobs with env set to d, as bounds.
func narrow(env string, d time.Duration) harness.Bounds {
	v := wideKnobs()
	Expect(v.Set(env, d)).To(BeTrue(), "%s is a duration knob", env)
	Expect(v.Check()).To(Succeed())
	return mcplocal.BoundsOf(v)
}

// matrixSlack is how late after its narrow bound a call may end and still
// count as ended by it: harness.KnobWindow, whose reason is written beside it
// in the one timeouts table.
const matrixSlack = harness.KnobWindow

// within checks took, a duration the proxy or the spec's own store measured,
// is the narrow bound d: not before it, at most matrixSlack after it.
func within(took, d time.Duration, what string) {
	GinkgoHelper()
	withinTimed(timing{wall: took}, d, what)
}

// withinTimed checks a part the spec timed by the wall clock is the narrow
// bound d: not before it by the wall clock (the proxy's timer runs whatever
// the client's load), and at most matrixSlack after it once the stalls the
// meter saw are taken out (the load made the answer late, not the proxy).
func withinTimed(t timing, d time.Duration, what string) {
	GinkgoHelper()
	Expect(t.wall).To(BeNumerically(">=", d-5*time.Millisecond), "%s: not before its bound %v", what, d)
	Expect(t.unstalled()).To(BeNumerically("<", d+matrixSlack),
		"%s: at its bound %v (+%v), not at a wider one (took %v, %v of it the machine's load, not counted)", what, d, matrixSlack, t.wall, t.stalled)
}

// timed runs f and returns how long it took by the wall clock.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// timing is a timed part: its wall-clock duration and the part of it the
// machine did not run this process (harness.StallMeter).
type timing struct{ wall, stalled time.Duration }

func (t timing) unstalled() time.Duration { return harness.Unstalled(t.wall, t.stalled) }

// metered runs f under a stall meter.
func metered(f func()) timing {
	m, start := harness.MeterStalls(), time.Now()
	f()
	wall := time.Since(start)
	return timing{wall: wall, stalled: m.Stop()}
}

var _ = Describe("The knob matrix", Label("knobs"), func() {
	const bound = 300 * time.Millisecond

	It("MCPCTL_PAGINATION_LLM_TIMEOUT_MS alone ends pagination's wait for titles", func(ctx SpecContext) {
		o := paginateFeature.Env
		o.Bounds = narrow("MCPCTL_PAGINATION_LLM_TIMEOUT_MS", bound)
		env := newWorld(o)
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		cs := connect(ctx, env, "alice-token")
		var a answer
		withinTimed(metered(func() { a = searchCall(ctx, cs) }), bound, "docmost_search")
		reason, _, _, ok := notice(a.Text, stage.TitlesFeature)
		Expect(ok).To(BeTrue(), a.Text)
		Expect(reason).To(Equal("no answer within 300ms"), "the notice names the pagination timeout")
	}, SpecTimeout(specTimeout))

	It("MCPCTL_GATE_LLM_TIMEOUT_MS alone ends begin_session's prompt ranking", func(ctx SpecContext) {
		o := gateFeature.Env
		o.Bounds = narrow("MCPCTL_GATE_LLM_TIMEOUT_MS", bound)
		env := newWorld(o)
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		cs := connect(ctx, env, "alice-token")
		var a answer
		withinTimed(metered(func() { a = beginCall(ctx, cs) }), bound, "begin_session")
		reason, _, _, ok := notice(a.Text, gateFeature.Name)
		Expect(ok).To(BeTrue(), a.Text)
		Expect(reason).To(Equal("no answer within 300ms"), "the notice names the gate timeout")
	}, SpecTimeout(specTimeout))

	It("MCPCTL_LLM_PROVIDER_TIMEOUT_MS alone ends one provider attempt, and the fallback answers", func(ctx SpecContext) {
		o := paginateFeature.Env
		o.Fallback = true
		o.Bounds = narrow("MCPCTL_LLM_PROVIDER_TIMEOUT_MS", bound)
		env := newWorld(o)
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		cs := connect(ctx, env, "alice-token")
		var a answer
		withinTimed(metered(func() { a = searchCall(ctx, cs) }), bound, "docmost_search through a failover")
		Expect(a.Text).To(ContainSubstring("1. Cluster notes\n"), "the fallback's titles: the chain went on after the attempt")
		Expect(a.Text).NotTo(ContainSubstring("⚠ " + stage.TitlesFeature))
	}, SpecTimeout(specTimeout))

	It("MCPCTL_LLM_CALL_BUDGET_MS alone ends the whole failover chain", func(ctx SpecContext) {
		o := paginateFeature.Env
		o.Fallback = true
		v := wideKnobs()
		// Two attempts of 1.2 s would end at 2.4 s; the budget ends the
		// chain at 1.5 s, in the middle of the second attempt.
		v.LLMProviderTimeout, v.LLMCallBudget = 1200*time.Millisecond, 1500*time.Millisecond
		o.Bounds = mcplocal.BoundsOf(v)
		env := newWorld(o)
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		Expect(env.Fallback.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		cs := connect(ctx, env, "alice-token")
		var a answer
		took := metered(func() { a = searchCall(ctx, cs) })
		withinTimed(took, v.LLMCallBudget, "docmost_search with every provider hanging")
		Expect(took.unstalled()).To(BeNumerically("<", 2*v.LLMProviderTimeout), "not two whole attempts")
		Expect(env.Fallback.Requests()).NotTo(BeEmpty(), "the second attempt had begun")
		_, _, _, ok := notice(a.Text, stage.TitlesFeature)
		Expect(ok).To(BeTrue(), a.Text)
	}, SpecTimeout(specTimeout))

	DescribeTable("MCPCTL_STAGE_LLM_BUDGET_MS bounds summarize-tree's whole recursion, unless the stage's own budgetMs says otherwise",
		func(ctx SpecContext, knob, budgetMs time.Duration) {
			o := summarizeFeature.Env
			o.LLMDefault = fakellm.SlowFor(100 * time.Millisecond)
			st := harness.Stage{Name: "summarize-tree"}
			want := knob
			if budgetMs > 0 {
				st.Options = map[string]any{"budgetMs": int(budgetMs.Milliseconds())}
				want = budgetMs
			}
			o.Pipeline = []harness.Stage{st}
			o.Bounds = narrow("MCPCTL_STAGE_LLM_BUDGET_MS", knob)
			env := newWorld(o)
			cs := connect(ctx, env, "alice-token")
			var a answer
			withinTimed(metered(func() { a = searchCall(ctx, cs) }), want, "docmost_search summarized by slow calls")
			m := regexp.MustCompile(`; (\d+) sections affected`).FindStringSubmatch(a.Text)
			Expect(m).NotTo(BeNil(), "some sections fell back: %s", a.Text)
		},
		Entry("the knob alone (MCPCTL_STAGE_LLM_BUDGET_MS=400)", 400*time.Millisecond, time.Duration(0)),
		Entry("budgetMs below the knob (MCPCTL_STAGE_LLM_BUDGET_MS=900, budgetMs 300)", 900*time.Millisecond, 300*time.Millisecond),
		Entry("budgetMs above the knob (MCPCTL_STAGE_LLM_BUDGET_MS=300, budgetMs 700)", 300*time.Millisecond, 700*time.Millisecond),
	)

	It("MCPCTL_REQUEST_DEADLINE_MS alone answers a handler that hangs", func(ctx SpecContext) {
		v := wideKnobs()
		v.RequestDeadline, v.UpstreamCallTimeout = 500*time.Millisecond, 400*time.Millisecond
		env := newWorld(harness.EnvOptions{Bounds: mcplocal.BoundsOf(v)})
		Expect(harness.HandlerHang{Tool: "docmost_update_page"}.Inject(ctx, env)).To(Succeed())
		cs := connect(ctx, env, "")
		var a answer
		withinTimed(metered(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }), v.RequestDeadline, "a hung handler")
		Expect(a.IsError).To(BeTrue())
	}, SpecTimeout(specTimeout))

	It("MCPCTL_UPSTREAM_CALL_TIMEOUT_MS alone ends a hanging upstream call", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Bounds: narrow("MCPCTL_UPSTREAM_CALL_TIMEOUT_MS", bound)})
		env.Docmost.Set("update_page", upstream.Behavior{Kind: upstream.Hang})
		cs := connect(ctx, env, "")
		var a answer
		withinTimed(metered(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }), bound, "a hanging upstream")
		Expect(a.IsError).To(BeTrue())
		rows, err := mcplocal.Audit(ctx, env, a.Code)
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindUpstreamCall), HaveField("Status", audit.StatusTimeout))))
	}, SpecTimeout(specTimeout))

	DescribeTable("MCPCTL_CHAT_BUDGET_MS alone ends a chat turn",
		func(ctx SpecContext, stream bool) {
			env := newWorld(harness.EnvOptions{LLM: true, Bounds: narrow("MCPCTL_CHAT_BUDGET_MS", bound)})
			Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
			args := []string{"chat", "--url", env.Target.URL(), "--timeout", "5s", "hello"}
			if stream {
				args = append(args, "--stream")
			}
			out, err := exec.CommandContext(ctx, mcpctlPath, args...).CombinedOutput()
			Expect(err).To(HaveOccurred(), "the turn fails: %s", out)
			m := regexp.MustCompile(`\[trace ([0-9A-Z]{8})\]`).FindSubmatch(out)
			Expect(m).NotTo(BeNil(), "%s", out)
			// The CLI may exit on the stream's end before the proxy has
			// recorded the turn: wait for the row, then judge its duration.
			var turn audit.Row
			Eventually(func() bool {
				rows, err := mcplocal.Audit(ctx, env, string(m[1]))
				Expect(err).NotTo(HaveOccurred())
				var ok bool
				turn, ok = rowOf(rows, audit.KindChatTurn, "")
				return ok
			}).WithTimeout(3*time.Second).Should(BeTrue(), "a chat_turn row under %s", m[1])
			within(turn.Duration, bound, "the chat turn (its audit row's duration)")
		},
		Entry("plain (MCPCTL_CHAT_BUDGET_MS)", false),
		Entry("streamed (MCPCTL_CHAT_BUDGET_MS)", true),
	)

	It("MCPCTL_MAX_BODY_BYTES alone decides which request bodies are refused", func(ctx SpecContext) {
		v := wideKnobs()
		v.MaxBodyBytes = 4096
		env := newWorld(harness.EnvOptions{Bounds: mcplocal.BoundsOf(v)})
		id := initSession(ctx, env, "")
		body := func(n int) string {
			head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"p","content":"`
			tail := `"}}}`
			return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
		}
		send := func(b string) int {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.ProjectURL(), strings.NewReader(b))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		Expect(send(body(4000))).To(Equal(http.StatusOK), "a body under the knob is served")
		Expect(send(body(4200))).To(Equal(http.StatusRequestEntityTooLarge), "a body over the knob is refused")
	}, SpecTimeout(specTimeout))

	It("MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS alone ends a connection to an upstream that never answers", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Bounds: narrow("MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS", bound)})
		// Each client session has upstream sessions of its own, and the
		// first one connects at initialize (the proxy learns the upstream's
		// capabilities); a second session connects on its first call.
		connect(ctx, env, "")
		By("the upstream accepts connections and never answers, before the session's first connection to it")
		Expect(harness.Blackhole{Link: harness.LinkDocmost}.Inject(ctx, env)).To(Succeed())
		cs := connect(ctx, env, "")
		var a answer
		withinTimed(metered(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }), bound, "a call that must connect first")
		Expect(a.IsError).To(BeTrue(), a.Text)
	}, SpecTimeout(specTimeout))

	It("MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS alone ends a connection whose handshake the upstream stops halfway", func(ctx SpecContext) {
		// The upstream hands out a session id and then answers nothing: the
		// SDK's clean-up of that half-open session (a DELETE under its own
		// 5 s) must not be the caller's wait.
		env := newWorld(harness.EnvOptions{Bounds: narrow("MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS", bound)})
		connect(ctx, env, "")
		Expect(harness.HandshakeStall{}.Inject(ctx, env)).To(Succeed())
		cs := connect(ctx, env, "")
		var a answer
		withinTimed(metered(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }), bound, "a call whose connect stops after initialize")
		Expect(a.IsError).To(BeTrue(), a.Text)
		Expect(env.Docmost.Stalled()).To(BeNumerically(">", 0), "the handshake's second half reached the upstream and was held")
	}, SpecTimeout(specTimeout))

	// The grace is what a request in flight keeps: it runs on for the grace
	// less the part kept to answer it (a quarter of the grace, at most
	// 250 ms: proxy.Close) and the whole stop ends within the grace. How soon
	// after the answer the stop ends is the path's business (the SDK path's
	// handler still runs, the relay's has returned), so the stop has no lower
	// bound of its own: the answer's time is the knob's.
	It("MCPCTL_SHUTDOWN_GRACE_MS alone bounds how long a stop waits for a request in flight", func(ctx SpecContext) {
		o := paginateFeature.Env
		o.Bounds = narrow("MCPCTL_SHUTDOWN_GRACE_MS", bound)
		env := newWorld(o)
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.HangBeforeHeaders))).To(Succeed())
		cs := connect(ctx, env, "alice-token")
		answered := make(chan time.Time, 1)
		go func() {
			defer GinkgoRecover()
			// The call hangs on the LLM (pagination's wide 4 s timeout); what
			// the stop answers it is not this spec's business.
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "find notes"}})
			answered <- time.Now()
		}()
		Eventually(env.LLM.Requests).ShouldNot(BeEmpty(), "the call is in flight, waiting on the LLM")
		stopping := time.Now()
		t := metered(func() { Expect(env.Target.Restart(ctx)).To(Succeed()) })
		Expect(t.unstalled()).To(BeNumerically("<", bound+matrixSlack),
			"a restart with a request in flight: within the grace %v (+%v), not a wider bound (took %v, %v of it the machine's load, not counted)", bound, matrixSlack, t.wall, t.stalled)
		var at time.Time
		Eventually(answered).Should(Receive(&at), "the request in flight was ended")
		kept := bound - min(bound/4, 250*time.Millisecond)
		Expect(at.Sub(stopping)).To(BeNumerically(">=", kept-5*time.Millisecond),
			"the request in flight ran on for the grace %v less its answering quarter (%v) before the stop answered it", bound, kept)
	}, SpecTimeout(specTimeout))

	// The drain is how long a stopping proxy keeps listening before its
	// shutdown grace: it says stopping on /readyz and refuses new requests
	// with a 503 a balancer may send elsewhere. With no request in flight
	// the grace ends at once, so the stop takes the drain: not less (the
	// balancer needs it to see the replica out), not a wider bound.
	It("MCPCTL_STOP_DRAIN_MS alone decides how long a stopping proxy keeps listening, refusing new requests", func(ctx SpecContext) {
		// Wider than the matrix's narrow bound: the spec asks /readyz and
		// sends a request inside it, on a machine that may be loaded.
		const drain = time.Second
		o := paginateFeature.Env
		o.Bounds = narrow("MCPCTL_STOP_DRAIN_MS", drain)
		env := newWorld(o)
		cs := connect(ctx, env, "alice-token")
		// Read before the restart: a target's URL waits for its restart.
		base, project := env.Target.URL(), env.ProjectURL()
		restarted := make(chan timing, 1)
		go func() {
			defer GinkgoRecover()
			restarted <- metered(func() { Expect(env.Target.Restart(ctx)).To(Succeed()) })
		}()
		readyz := func() string {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return err.Error()
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
		Eventually(readyz).WithPolling(5*time.Millisecond).
			Should(HavePrefix(`503 {"status":"stopping"}`), "/readyz says the stopping proxy is out")
		status, body := post(ctx, project, "alice-token", cs.ID(), `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		Expect(status).To(Equal(http.StatusServiceUnavailable), "a new request while draining is refused, not served: %v", body)
		Expect(fmt.Sprint(body)).To(ContainSubstring("not processed"), "and says it was not acted on")
		var t timing
		Eventually(restarted).WithTimeout(drain + 10*time.Second).Should(Receive(&t))
		Expect(t.wall).To(BeNumerically(">=", drain), "the stop kept listening for the drain %v (took %v)", drain, t.wall)
		Expect(t.unstalled()).To(BeNumerically("<", drain+matrixSlack),
			"the stop ended at the drain %v (+%v), not a wider drain (took %v, %v of it the machine's load, not counted)", drain, matrixSlack, t.wall, t.stalled)
	}, SpecTimeout(specTimeout))

	It("MCPCTL_PAUSE_MAX_WAIT_MS alone ends a request's wait on a paused project", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Bounds: narrow("MCPCTL_PAUSE_MAX_WAIT_MS", bound)})
		cs := connect(ctx, env, "")
		pauseAPI(ctx, env, "", "pause")
		var a answer
		withinTimed(metered(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }), bound, "a call on a paused project")
		Expect(a.IsError).To(BeTrue())
		Expect(a.Text).To(ContainSubstring("paused for longer than 300ms"))
	}, SpecTimeout(specTimeout))

	It("MCPCTL_PAUSE_QUEUE_MAX alone decides how many requests may wait on a paused project", func(ctx SpecContext) {
		v := wideKnobs()
		Expect(v.SetRaw("MCPCTL_PAUSE_QUEUE_MAX", 2)).To(BeTrue())
		env := newWorld(harness.EnvOptions{Bounds: mcplocal.BoundsOf(v)})
		cs := connect(ctx, env, "")
		pauseAPI(ctx, env, "", "pause")
		waited := make(chan answer, 2)
		for range 2 {
			go func() {
				defer GinkgoRecover()
				waited <- callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"})
			}()
		}
		Eventually(func() int { return pauseAPI(ctx, env, "", "pause") }).Should(Equal(2), "two requests wait")
		var third answer
		Expect(metered(func() { third = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) }).unstalled()).
			To(BeNumerically("<", matrixSlack), "the third is answered at once, not queued")
		Expect(third.IsError).To(BeTrue(), third.Text)
		pauseAPI(ctx, env, "", "resume")
		for range 2 {
			Expect((<-waited).IsError).To(BeFalse(), "the two that waited are served after the resume")
		}
	}, SpecTimeout(specTimeout))

	It("names a spec after every knob in proxy/knobs.Table", func(_ SpecContext) {
		// uncovered are knobs whose deciding spec is still to be written
		// the check fails if one gets a spec and stays listed.
		uncovered := map[string]string{
			"MCPCTL_CALL_NOTIFY_DRAIN_MS": "how long a call's result waits for the log and progress messages that came before it on its upstream stream: the routing scenarios hold the messages on their own call's stream, with the default drain; no spec yet where the knob alone decides",
			"MCPCTL_SHARED_POLL_MS":       "how soon a change through one replica (pause, servers, a DELETEd session) holds on the others: the package tests of proxy/shared hold it with two replicas on one PostgreSQL; no cluster scenario named after it yet",
		}
		named := knobsNamedBySpecs()
		var missing, stale []string
		for _, k := range knobs.Table {
			_, listed := uncovered[k.Env]
			switch {
			case named[k.Env] && listed:
				stale = append(stale, k.Env)
			case !named[k.Env] && !listed:
				missing = append(missing, k.Env)
			}
		}
		Expect(missing).To(BeEmpty(), "knobs with no spec named after them: write one where the knob alone decides the outcome")
		Expect(stale).To(BeEmpty(), "knobs that have a spec now: take them off the uncovered list")
		var gaps []string
		for env, why := range uncovered {
			gaps = append(gaps, env+": "+why)
		}
		sort.Strings(gaps)
		AddReportEntry("knobs without a deciding spec yet", strings.Join(gaps, "\n"))
	}, SpecTimeout(specTimeout))
})

// knobsNamedBySpecs returns every MCPCTL_ name that appears in the text of an
// It, Entry, DescribeTable, Describe or Context of this package's test files.
func knobsNamedBySpecs() map[string]bool {
	GinkgoHelper()
	files, err := filepath.Glob("*_test.go")
	Expect(err).NotTo(HaveOccurred())
	spec := regexp.MustCompile(`\b(?:It|Entry|DescribeTable|Describe|Context)\("([^"]*)"`)
	name := regexp.MustCompile(`MCPCTL_[A-Z_]+`)
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		for _, m := range spec.FindAllStringSubmatch(string(b), -1) {
			for _, env := range name.FindAllString(m[1], -1) {
				out[env] = true
			}
		}
	}
	// The catalogue's rows run as specs named after them (catalogue_test.go).
	for _, s := range catalogue.All() {
		for _, env := range name.FindAllString(s.Name(), -1) {
			out[env] = true
		}
	}
	Expect(out).NotTo(BeEmpty(), fmt.Sprintf("no spec names a knob in %d files", len(files)))
	return out
}

// pauseAPI posts /api/v1/projects/docmost/{action} (pause or resume) and
// returns how many requests wait on the project.
func pauseAPI(ctx context.Context, env *harness.Env, token, action string) int {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.Target.URL()+"/api/v1/projects/"+harness.Project+"/"+action, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := harness.HTTPClient(token).Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var st struct {
		Waiting int `json:"waiting"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&st)).To(Succeed())
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	return st.Waiting
}
