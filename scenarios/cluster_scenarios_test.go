package scenarios_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// The cluster scenarios that run on any proxy's cluster, mcplocal's or a
// foreign one's, judged by what the target claims: mcplocal's replicas share
// a store and adopt a session with one ⚠ notice, and keep audit rows; a
// foreign proxy is held to that only where its spec claims it, and
// otherwise to the MCP spec's promise: a session its replica lost is
// answered, recreated or refused with 404 (the client then initializes
// again).

const (
	clusterKillSpec    = "a replica SIGKILLed mid-call: its calls in flight fail at the client as connection errors, and its sessions continue on another replica, recreated for their owner with one notice"
	clusterRollingSpec = "a rolling restart under load: nothing accepted by a live replica goes unanswered, and no audit row is lost"
)

// clusterScenario is one cluster scenario of scenarios/cluster_test.go, by
// the name its spec starts with, and why a target cannot run it ("" when it
// can).
type clusterScenario struct {
	name  string
	needs func(harness.Target) string
}

// clusterScenarios are every cluster scenario, with what each needs beyond
// a cluster of any proxy.
var clusterScenarios = []clusterScenario{
	{"a replica SIGKILLed mid-call", nil},
	{"a rolling restart under load", nil},
	// Judged by mcplocal's audit trail (the rows it drops and counts) and
	// its /readyz, on a store link cut.
	{"one replica partitioned from Postgres", needsAll(harness.Unshared, harness.Needs(harness.CapAuditAPI))},
	// Judged by owners and tombstones kept in the shared store.
	{"Postgres restarted", needsAll(harness.Unshared, harness.Needs(harness.CapSessionAdoption))},
	// Judged by the ⚠ notice of a session recreated on another replica.
	{"the load balancer restarted", harness.Needs(harness.CapSessionAdoption)},
	{"a stale session id after every replica restarted", needsAll(harness.Unshared, harness.Needs(harness.CapSessionAdoption))},
	// Judged by the audit rows kept at Stop (harness.AuditKeeper).
	{"the soak on 3 replicas", harness.Needs(harness.CapAuditAPI)},
}

// needsAll joins the reasons of every hook that finds one.
func needsAll(hooks ...func(harness.Target) string) func(harness.Target) string {
	return func(t harness.Target) string {
		why := ""
		for _, h := range hooks {
			if w := h(t); w != "" {
				if why != "" {
					why += "; "
				}
				why += w
			}
		}
		return why
	}
}

// clusterNotApplicable is, by scenario name, why t cannot run each cluster
// scenario it cannot run.
func clusterNotApplicable(t harness.Target) map[string]string {
	out := map[string]string{}
	for _, s := range clusterScenarios {
		if s.needs == nil {
			continue
		}
		if why := s.needs(t); why != "" {
			out[s.name] = why
		}
	}
	return out
}

// callOrRecover is one tools/call on s. Where t is not held to recreating
// sessions, a 404 (the MCP spec's answer to a session the server does not
// know) has the client initialize again and send the call once more, as
// the spec tells a client to: refused says it did.
func callOrRecover(ctx context.Context, t harness.Target, s *clusterSession, tool string, args map[string]any) (r load.Result, refused bool, err error) {
	r, err = s.CallTool(ctx, tool, args)
	if err == nil || harness.AdoptsAcrossReplicas(t) || r.Status != http.StatusNotFound {
		return r, false, err
	}
	s.ID = ""
	if err := s.Initialize(ctx); err != nil {
		return r, true, fmt.Errorf("initialize again after a 404: %w", err)
	}
	r, err = s.CallTool(ctx, tool, args)
	return r, true, err
}

// clusterKillMidCall: a replica SIGKILLed mid-call. Its calls in flight fail
// at the client as connection errors; the next request of each of its
// sessions is answered by another replica (recreated with one notice, where
// the target claims it; or refused with 404, then answered on a session
// opened again).
func clusterKillMidCall(ctx context.Context, env *harness.Env, c *harness.Cluster) {
	GinkgoHelper()
	search, query := env.Tool("search"), map[string]any{"query": "cluster"}
	sessions := openSessions(ctx, env.ProjectURL(), env.Token("alice"), 4)
	on := map[string][]*clusterSession{}
	for _, s := range sessions {
		r := replicaOf(ctx, env.ProjectURL(), env.Token("alice"), s.ID)
		on[r] = append(on[r], s)
	}
	Expect(on).To(HaveLen(2), "round robin spreads 4 sessions over both replicas: %v", on)
	victim := on[harness.ReplicaName(0)]
	Expect(victim).NotTo(BeEmpty())

	env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Slow, Delay: 1500 * time.Millisecond})
	type outcome struct {
		s   *clusterSession
		err error
		r   load.Result
	}
	results := make(chan outcome, len(sessions))
	for _, s := range sessions {
		go func() {
			defer GinkgoRecover()
			r, err := s.CallTool(ctx, search, query)
			results <- outcome{s, err, r}
		}()
	}
	Eventually(env.Docmost.InFlight).WithTimeout(5*time.Second).WithPolling(10*time.Millisecond).
		Should(Equal(len(sessions)), "every call reached the upstream")
	Expect(c.KillReplica(ctx, 0)).To(Succeed())

	lost := 0
	for range sessions {
		var o outcome
		Eventually(results).WithTimeout(10 * time.Second).Should(Receive(&o))
		if o.s.victimOf(victim) {
			Expect(lostInFlight(o.err)).To(BeTrue(), "a call in flight on the killed replica ends as a connection error, not a silent hang nor a fake answer: %v %+v", o.err, o.r)
			lost++
			continue
		}
		Expect(o.err).NotTo(HaveOccurred(), "a call on the live replica is answered")
		Expect(o.r.IsError).To(BeFalse(), o.r.Text)
	}
	Expect(lost).To(Equal(len(victim)), "every call in flight on the killed replica is counted")
	AddReportEntry("calls lost with the killed replica", lost)

	env.Docmost.Set("search", upstream.Behavior{Kind: upstream.OK})
	refusals := 0
	for _, s := range victim {
		r, refused, err := callOrRecover(ctx, env.Target, s, search, query)
		Expect(err).NotTo(HaveOccurred(), "the next request of a killed replica's session is answered by another")
		Expect(r.IsError).To(BeFalse(), r.Text)
		if refused {
			refusals++
		}
		if harness.AdoptsAcrossReplicas(env.Target) {
			Expect(noticeCount(r)).To(Equal(1), "recreated with one notice: %s", r.Text)
		}
		Expect(replicaOf(ctx, env.ProjectURL(), env.Token("alice"), s.ID)).To(Equal(harness.ReplicaName(1)))
		again, err := s.CallTool(ctx, search, query)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.IsError).To(BeFalse(), again.Text)
		if harness.AdoptsAcrossReplicas(env.Target) {
			Expect(noticeCount(again)).To(BeZero(), "one notice, not one per call: %s", again.Text)
		}
		if harness.Lacks(env.Target, harness.CapAuditAPI) == "" {
			rows, err := mcplocal.Audit(ctx, env, r.Trace)
			Expect(err).NotTo(HaveOccurred())
			Expect(rows).NotTo(BeEmpty())
			for _, row := range rows {
				Expect(row.User).To(Equal("alice"), "the recreated session is its owner's")
			}
		}
	}
	AddReportEntry("sessions refused with 404, then opened again", refusals)
}

// clusterRollingRestart: a rolling restart under load. Every request is
// answered (a 404 for a session its restarted replica lost, where the
// target is not held to recreating it, is an answer: the client opens a
// session again and its call is answered); where the target keeps
// mcplocal's audit rows, none is lost.
func clusterRollingRestart(ctx context.Context, env *harness.Env, c harness.Target) {
	GinkgoHelper()
	search, query := env.Tool("search"), map[string]any{"query": "cluster"}
	sessions := openSessions(ctx, env.ProjectURL(), env.Token("alice"), 4)
	// Each session calls at least perSession times, and on until the
	// rolling restart is over: the load covers every replica's restart.
	const perSession = 40
	var mu sync.Mutex
	var traces []string
	var problems []string
	refusals, calls := 0, 0
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := 0; ; i++ {
				if i >= perSession {
					select {
					case <-stop:
						return
					default:
					}
				}
				r, refused, err := callOrRecover(ctx, env.Target, s, search, query)
				mu.Lock()
				calls++
				if refused {
					refusals++
				}
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("session %s call %d: %v", s.ID, i, err))
				case r.IsError:
					problems = append(problems, fmt.Sprintf("session %s call %d: isError: %s", s.ID, i, r.Text))
				default:
					traces = append(traces, r.Trace)
				}
				mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	restarted := c.Restart(ctx)
	close(stop)
	wg.Wait()
	Expect(restarted).To(Succeed(), "a rolling restart of every replica")
	Expect(problems).To(BeEmpty(), "every request was answered: %d answered", len(traces))
	Expect(traces).To(HaveLen(calls))
	Expect(calls).To(BeNumerically(">=", len(sessions)*perSession))
	AddReportEntry("calls during the rolling restart", calls)
	AddReportEntry("sessions refused with 404, then opened again", refusals)
	if harness.Lacks(env.Target, harness.CapAuditAPI) != "" {
		return
	}
	for _, code := range traces {
		Expect(code).NotTo(BeEmpty())
		Eventually(func() (int, error) { rows, err := mcplocal.Audit(ctx, env, code); return len(rows), err }).
			WithTimeout(10*time.Second).Should(BeNumerically(">", 0), "the audit rows of %s", code)
	}
}
