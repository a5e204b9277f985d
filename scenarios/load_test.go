package scenarios_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/internal/stall"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
	"github.com/mcpchaos/mcpchaos/scenarios/soak"
)

// Bounds under load: the tight-bounds target of docs/load.md.
const (
	// inFlight is how many requests are in flight at once.
	inFlight = 200
	// inFlightTarget is what docs/performance.md targets: a bounded answer
	// within its bound + 50 ms with inFlight requests in flight. The specs
	// report every run against it; they hold inFlightTolerance, because the
	// target holds only on a quiet machine (docs/performance.md).
	inFlightTarget = 50 * time.Millisecond
	// inFlightTolerance is what the specs hold past the bound meant to answer
	// (the upstream call timeout; the pagination LLM timeout). The 200
	// answers that time out together cost the non-race proxy 40-80 ms of CPU
	// in all (profiled, docs/performance.md); what they land past the bound
	// is the CPU share a loaded machine lends it, and the race detector's
	// several-fold cost in process. Measured on 2 shared cores at load
	// average 8-23 (2026-12-01): slowest up to 0.40 s past (binary) and
	// 0.55 s past (race-built in process, a soak running beside it); the
	// specs hold about one and a half times that.
	inFlightTolerance = 800 * time.Millisecond
	// auditRoom is the audit write timeout the load specs give: they check
	// that every row is kept, not the write bound (its own specs do that),
	// and the compressed 500 ms failed one batch of rows beside four busy
	// loops (Failed:1 in the writer's stats).
	auditRoom = 10 * time.Second
)

// fireTogether opens n sessions (untimed), then sends one tools/call on each
// at the same moment and returns every answer's latency and, for each, how
// long the machine's load kept this process from running while it was in
// flight (internal/stall): a proxy's record of an answer lies inside its
// client's call, so that is all the load can excuse of it. Any call that is
// not answered with a result fails the spec.
func fireTogether(ctx context.Context, url string, n int, arm func(), tool string, args map[string]any) ([]time.Duration, []load.Result, []time.Duration) {
	GinkgoHelper()
	hc := load.NewHTTPClient(n)
	DeferCleanup(hc.CloseIdleConnections)
	sessions := make([]*load.Session, n)
	for i := range sessions {
		sessions[i] = &load.Session{HTTP: hc, URL: url}
		Expect(sessions[i].Initialize(ctx)).To(Succeed())
	}
	// Warm every connection with a quick call that the fault does not touch.
	for _, s := range sessions {
		_, err := s.CallTool(ctx, "docmost_update_page", map[string]any{"page_id": "warm"})
		Expect(err).NotTo(HaveOccurred())
	}
	DeferCleanup(func() {
		for _, s := range sessions {
			_ = s.Close(context.Background())
		}
	})
	arm()
	lat, stalled := make([]time.Duration, n), make([]time.Duration, n)
	clock := stall.StartClock()
	defer clock.Stop()
	errs := make([]error, n)
	results := make([]load.Result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			<-start
			t0, s0 := time.Now(), clock.Stalled()
			results[i], errs[i] = s.CallTool(ctx, tool, args)
			lat[i], stalled[i] = time.Since(t0), clock.Stalled()-s0
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		Expect(errs[i]).NotTo(HaveOccurred(), "request %d of %d", i+1, n)
		Expect(results[i].Trace).NotTo(BeEmpty(), "request %d carries a trace code", i+1)
	}
	most := slices.Max(stalled)
	AddReportEntry("the machine's load", fmt.Sprintf("this process was kept from running up to %v while an answer was in flight: not counted against the bound", most.Round(time.Millisecond)))
	return lat, results, stalled
}

func report(lat []time.Duration, bound time.Duration) string {
	s := slices.Sorted(slices.Values(lat))
	over := 0
	for _, d := range s {
		if d > bound+inFlightTarget {
			over++
		}
	}
	return fmt.Sprintf("%d answers, bound %v: fastest %v, median %v, slowest %v (%+v past the bound); %d past bound + %v",
		len(s), bound, s[0].Round(time.Millisecond), s[len(s)/2].Round(time.Millisecond),
		s[len(s)-1].Round(time.Millisecond), (s[len(s)-1] - bound).Round(time.Millisecond), over, inFlightTarget)
}

var _ = Describe("Bounds under load", Label("load", "deadline"), Serial, func() {
	for _, t := range targets {
		Context("against the "+t.name+" target", Label(t.name), func() {
			boundsUnderLoad(t.make)
		})
	}
})

func boundsUnderLoad(target func() harness.Target) {
	It(fmt.Sprintf("answers %d requests in flight against a hanging upstream, each within MCPCTL_UPSTREAM_CALL_TIMEOUT_MS + %v", inFlight, inFlightTolerance), func(ctx SpecContext) {
		kv := mcplocal.Compressed()
		// The request deadline gets room past what the spec holds, so an
		// answer within it comes from the upstream call timeout.
		kv.RequestDeadline = 3 * time.Second
		kv.AuditWriteTimeout = auditRoom
		env := newWorld(harness.EnvOptions{Target: target(), Bounds: mcplocal.BoundsOf(kv)})
		bound := mcplocal.KnobsOf(env.Bounds()).UpstreamCallTimeout // the bound meant to answer, and the one the spec holds
		Expect(bound+inFlightTolerance).To(BeNumerically("<", mcplocal.KnobsOf(env.Bounds()).RequestDeadline),
			"the request deadline would answer first: the spec would not tell the upstream timeout from it")
		lat, res, stalled := fireTogether(ctx, env.ProjectURL(), inFlight, func() {
			Expect(harness.ToolHang{Tool: "search"}.Inject(ctx, env)).To(Succeed())
		}, "docmost_search", map[string]any{"query": "q"})
		held := rowDurations(ctx, env, res, audit.KindToolCallTrace, "")
		AddReportEntry("in the proxy (accept to answer)", report(held, bound))
		AddReportEntry("at the client", report(lat, bound))
		for i, r := range res {
			Expect(r.IsError).To(BeTrue(), "answer %d is a readable isError result: %s", i+1, r.Text)
			Expect(stall.Unstalled(held[i], stalled[i])).To(BeNumerically("<=", bound+inFlightTolerance), "answer %d, less %v of the machine's load: %s", i+1, stalled[i].Round(time.Millisecond), report(held, bound))
		}
	}, SpecTimeout(90*time.Second))

	It(fmt.Sprintf("bounds the paginate stage of %d requests in flight against a hanging LLM by MCPCTL_PAGINATION_LLM_TIMEOUT_MS + %v, and says so", inFlight, inFlightTolerance), func(ctx SpecContext) {
		kv := mcplocal.Compressed()
		// The upstream search and the outer deadline get room: what is held
		// here is the LLM's budget inside each request, not the search. The
		// 200 searches share the CPU with the race-built proxy and client in
		// process: beside four busy loops their answers reach the client in
		// 1-5 s, and in a flake-check stress run (with a .ci/run beside it) a
		// search once took past an 8 s upstream call timeout, so its answer
		// was an error with no pipeline run and the spec found no paginate
		// row. With a 2 s upstream call timeout, four busy loops reproduced
		// it on the first run.
		kv.RequestDeadline, kv.UpstreamCallTimeout = 60*time.Second, 55*time.Second
		// The stage budget gets room past what the spec holds, so a stage
		// within it was ended by the pagination LLM timeout.
		kv.StageLLMBudget = 3 * time.Second
		kv.AuditWriteTimeout = auditRoom
		env := newWorld(harness.EnvOptions{Target: target(), Bounds: mcplocal.BoundsOf(kv), LLM: true,
			LLMDefault: fakellm.Step{Kind: fakellm.OK, Text: "A\nB\nC"}, Pipeline: []harness.Stage{{Name: "paginate"}}})
		bound := mcplocal.KnobsOf(env.Bounds()).PaginationLLMTimeout // the bound meant to answer, and the one the spec holds
		Expect(bound+inFlightTolerance).To(BeNumerically("<", mcplocal.KnobsOf(env.Bounds()).StageLLMBudget),
			"the stage budget would answer first: the spec would not tell the pagination timeout from it")
		lat, res, stalled := fireTogether(ctx, env.ProjectURL(), inFlight, func() {
			Expect(harness.LLMFault{Step: fakellm.Step{Kind: fakellm.HangBeforeHeaders}}.Inject(ctx, env)).To(Succeed())
		}, "docmost_search", map[string]any{"query": "q"})
		held := rowDurations(ctx, env, res, audit.KindStageExecution, "paginate")
		AddReportEntry("paginate stage in the proxy", report(held, bound))
		AddReportEntry("whole request at the client", report(lat, bound))
		for i, r := range res {
			Expect(r.Text).To(ContainSubstring("⚠"), "answer %d says it is degraded: %.300s", i+1, r.Text)
			Expect(stall.Unstalled(held[i], stalled[i])).To(BeNumerically("<=", bound+inFlightTolerance), "answer %d, less %v of the machine's load: %s", i+1, stalled[i].Round(time.Millisecond), report(held, bound))
		}
	}, SpecTimeout(150*time.Second))
}

// rowDurations returns, for each answer, the duration of its audit row of
// kind (and stage, if given): the time the proxy spent between taking the
// request (or starting the stage) and answering it.
func rowDurations(ctx context.Context, env *harness.Env, res []load.Result, kind audit.Kind, stage string) []time.Duration {
	GinkgoHelper()
	if in, ok := env.Target.(*harness.InProcess); ok {
		Expect(in.Proxy().FlushAudit(ctx)).To(Succeed())
		st := in.Proxy().AuditStats()
		AddReportEntry("audit writer", fmt.Sprintf("%+v", st))
		Expect(st.Dropped+st.Failed).To(BeZero(), "the audit trail keeps every row under load: %+v", st)
	}
	out := make([]time.Duration, len(res))
	for i, r := range res {
		rows, err := mcplocal.Audit(ctx, env, r.Trace)
		Expect(err).NotTo(HaveOccurred())
		found := false
		for _, row := range rows {
			if row.Kind == kind && (stage == "" || row.Stage == stage) {
				out[i], found = row.Duration, true
			}
		}
		// The answer goes with the failure: a stress run of the flake check
		// once found one of 200 answers without its paginate row, and said
		// nothing of what that answer was (docs/scenarios.md, flake check).
		Expect(found).To(BeTrue(), "answer %d (trace %s) has a %s %s row; the answer: %.400s; its rows: %v", i+1, r.Trace, kind, stage, r.Text, rowKinds(rows))
	}
	return out
}

// rowKinds names each row as kind/stage/status, for a failure's message.
func rowKinds(rows []audit.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r.Kind) + "/" + r.Stage + "/" + r.Status
	}
	return out
}

var _ = Describe("The soak", Label("soak"), Serial, func() {
	It("sends 5,000 requests under seeded faults, restarts and kills, and leaves none unanswered or late, and no audit row missing", func(ctx SpecContext) {
		// Seed 6 draws two proxy restarts and two SIGKILLs among its 20 epochs.
		rep, err := soak.Run(ctx, soak.Options{Requests: 5000, Seed: 6,
			Target: &harness.Binary{Path: mcplocalPath, Stderr: nil}, Progress: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("soak", fmt.Sprintf("%+v", rep.Counts))
		AddReportEntry("proxy restarts and kills", rep.Events)
		Expect(rep.Problems()).To(BeEmpty(), "soak seed %d: %v", rep.Seed, rep.Examples)
		Expect(rep.AuditChecked).To(BeTrue(), rep.AuditNote)
		Expect(rep.RowsChecked).To(BeNumerically(">=", rep.InBudget-rep.ToolErrors), "every answered result's row was looked up")
		kinds := map[string]bool{}
		for _, e := range rep.Events {
			kinds[e.Kind] = true
			Expect(e.Err).To(BeEmpty(), "%s at %s", e.Kind, e.Start)
		}
		Expect(kinds).To(HaveKey("proxy-restart"), "the seed draws a graceful restart")
		Expect(kinds).To(HaveKey("proxy-kill"), "the seed draws a SIGKILL")
	}, SpecTimeout(3*time.Minute))
})
