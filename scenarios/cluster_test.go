package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
	"github.com/mcpchaos/mcpchaos/scenarios/soak"
)

// The cluster scenarios: N mcplocal replicas sharing one Postgres, behind
// HAProxy running the shipped docs/deploy/haproxy.cfg (harness.Cluster), each
// spec named by the promise it holds (promise 10: replicas behind a load
// balancer are one service).

// clusterStartCap bounds building the cluster's world: a throwaway Postgres
// (initdb), N replicas and HAProxy, on a loaded machine. It is no budget.
const clusterStartCap = 90 * time.Second

// sessionNotice is the ⚠ notice of a recreated session (promise 2).
const sessionNotice = "⚠ Session state unavailable"

// clusterKnobs are the compressed knobs with room for a slow upstream call
// held in flight while a replica is killed.
func clusterKnobs() mcplocal.Knobs {
	k := mcplocal.Compressed()
	k.UpstreamCallTimeout = 4 * time.Second
	k.RequestDeadline = 5 * time.Second
	k.AuditWriteTimeout = 5 * time.Second
	return k
}

// newCluster starts a world whose target is a cluster of n mcplocal
// replicas, for alice (and the auditor), and tears it down after the spec.
func newCluster(n int) (*harness.Env, *harness.Cluster) {
	GinkgoHelper()
	c := &harness.Cluster{Path: mcplocalPath, Replicas: n, Stderr: GinkgoWriter}
	return startCluster(c), c
}

// startCluster starts a world for alice (and the auditor) whose target is
// the cluster c, and tears it down after the spec.
func startCluster(c harness.Target) *harness.Env {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterStartCap)
	defer cancel()
	env, err := harness.NewEnv(ctx, harness.EnvOptions{Users: alice.Users, Target: c, Bounds: mcplocal.BoundsOf(clusterKnobs())})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		Expect(env.Close(ctx)).To(Succeed())
	})
	return env
}

// clusterSession is one client session through the balancer.
type clusterSession struct {
	*load.Session
	hc *http.Client
}

func openSessions(ctx context.Context, url, token string, n int) []*clusterSession {
	GinkgoHelper()
	out := make([]*clusterSession, n)
	for i := range out {
		hc := load.NewHTTPClient(2)
		DeferCleanup(hc.CloseIdleConnections)
		out[i] = &clusterSession{Session: &load.Session{HTTP: hc, URL: url, Token: token}, hc: hc}
		Expect(out[i].Initialize(ctx)).To(Succeed())
	}
	return out
}

// replicaOf is the replica (r1, r2, ...) the balancer routes session id to:
// the X-Mcplocal-Replica header of the answer to a ping on it.
func replicaOf(ctx context.Context, url, token, id string) string {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":"where","method":"ping"}`))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", load.ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+token)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "ping on %s: %s", id, body)
	return resp.Header.Get("X-Mcplocal-Replica")
}

// lostInFlight reports whether err is what a client sees of a call in flight
// on a replica that died: no answer from any proxy, a transport error or the
// balancer's own 502/503/504 page (not a JSON-RPC body).
func lostInFlight(err error) bool {
	if err == nil {
		return false
	}
	var h *load.HTTPError
	if errors.As(err, &h) {
		return h.Status == http.StatusBadGateway || h.Status == http.StatusServiceUnavailable || h.Status == http.StatusGatewayTimeout
	}
	return !load.Answered(err)
}

// noticeCount is how many ⚠ session notices a result carries.
func noticeCount(r load.Result) int { return strings.Count(r.Text, sessionNotice) }

var _ = Describe("A cluster of mcplocal replicas behind HAProxy", Label("cluster"), Serial, func() {
	const search = "docmost_search"
	query := map[string]any{"query": "cluster"}

	It(clusterKillSpec, func(ctx SpecContext) {
		env, c := newCluster(2)
		clusterKillMidCall(ctx, env, c)
	}, SpecTimeout(2*time.Minute))

	It("two catalogue rows of a warm run share one cluster, ready by every replica's probe and HAProxy's", func(ctx SpecContext) {
		runTwoWarm(ctx, func() harness.Target {
			return &harness.Cluster{Path: mcplocalPath, Replicas: 2, Stderr: GinkgoWriter}
		})
	}, SpecTimeout(2*time.Minute))

	It(clusterRollingSpec, func(ctx SpecContext) {
		env, c := newCluster(2)
		clusterRollingRestart(ctx, env, c)
	}, SpecTimeout(3*time.Minute))

	It("one replica partitioned from Postgres: it answers within budgets, reports not-ready and is drained; healed, it rejoins", func(ctx SpecContext) {
		env, c := newCluster(2)
		Expect(c.PartitionStore(0)).To(Succeed())
		s := &load.Session{HTTP: load.NewHTTPClient(2), URL: c.ReplicaURL(0) + "/projects/" + harness.Project + "/mcp", Token: env.Token("alice")}
		DeferCleanup(s.HTTP.CloseIdleConnections)
		start := time.Now()
		Expect(s.Initialize(ctx)).To(Succeed(), "the partitioned replica still opens a session")
		r, err := s.CallTool(ctx, search, query)
		took := time.Since(start)
		Expect(err).NotTo(HaveOccurred(), "the partitioned replica answers")
		Expect(r.IsError).To(BeFalse(), r.Text)
		Expect(took).To(BeNumerically("<", mcplocal.KnobsOf(env.Bounds()).RequestDeadline*2+harness.Tolerance), "within budgets")
		Eventually(func() string { return c.ReplicaLogs(0) }).WithTimeout(mcplocal.KnobsOf(env.Bounds()).AuditWriteTimeout+10*time.Second).WithPolling(100*time.Millisecond).
			Should(ContainSubstring(`msg="audit rows lost"`), "the rows it could not write are dropped and counted")

		ready := func() int { return statusOf(ctx, c.ReplicaURL(0)+"/readyz") }
		Eventually(ready).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(Equal(http.StatusServiceUnavailable), "reports not-ready")
		states := func() string { st, _ := c.BalancerStates(ctx); return st[harness.ReplicaName(0)] }
		Eventually(states).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(HavePrefix("DOWN"), "HAProxy drains it")
		for _, ns := range openSessions(ctx, env.ProjectURL(), env.Token("alice"), 4) {
			Expect(replicaOf(ctx, env.ProjectURL(), env.Token("alice"), ns.ID)).To(Equal(harness.ReplicaName(1)), "no new session lands on the drained replica")
		}

		Expect(c.HealStore(0)).To(Succeed())
		Eventually(ready).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(Equal(http.StatusOK), "healed, ready again")
		Eventually(states).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(Equal("UP"), "and back in HAProxy")
	}, SpecTimeout(2*time.Minute))

	It("Postgres restarted: every replica keeps answering, and owners and tombstones written before are honoured after", func(ctx SpecContext) {
		env, c := newCluster(2)
		sessions := openSessions(ctx, env.ProjectURL(), env.Token("alice"), 2)
		closed := openSessions(ctx, env.ProjectURL(), env.Token("alice"), 1)[0]
		closedID := closed.ID
		Expect(closed.Close(ctx)).To(Succeed())

		home := map[string]string{}
		for _, s := range sessions {
			home[s.ID] = replicaOf(ctx, env.ProjectURL(), env.Token("alice"), s.ID)
		}
		outage := make(chan error, 1)
		go func() { outage <- c.RestartStore(ctx, 2*time.Second) }()
		calls := 0
		for done := false; !done; {
			select {
			case err := <-outage:
				Expect(err).NotTo(HaveOccurred())
				done = true
			default:
			}
			for _, s := range sessions {
				r, err := s.CallTool(ctx, search, query)
				Expect(err).NotTo(HaveOccurred(), "answered while the store restarts and after")
				Expect(r.IsError).To(BeFalse(), r.Text)
				Expect(replicaOf(ctx, env.ProjectURL(), env.Token("alice"), s.ID)).To(Equal(home[s.ID]),
					"a session stays on its replica, drained or not: it answers from memory, while any other replica would need the store to recreate it")
				calls++
			}
			Expect(calls).To(BeNumerically("<", 2000), "bounded")
		}
		for i := range c.ReplicaCount() {
			endpoint := c.ReplicaURL(i) + "/projects/" + harness.Project + "/mcp"
			status, _ := post(ctx, endpoint, env.Token("alice"), closedID, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			Expect(status).To(Equal(http.StatusNotFound), "replica %s: a DELETEd id is not adopted again", harness.ReplicaName(i))
			status, _ = post(ctx, endpoint, env.Token(harness.Auditor), sessions[0].ID, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			Expect(status).To(BeNumerically(">=", 400), "replica %s: alice's session is not another user's", harness.ReplicaName(i))
		}
	}, SpecTimeout(2*time.Minute))

	It("the load balancer restarted: clients reconnect and their sessions continue, each on one replica", func(ctx SpecContext) {
		env, c := newCluster(2)
		url, token := env.ProjectURL(), env.Token("alice")
		sessions := openSessions(ctx, url, token, 4)
		for _, s := range sessions {
			Expect(replicaOf(ctx, url, token, s.ID)).To(Equal(replicaOf(ctx, url, token, s.ID)), "a session's requests land on one replica")
		}
		Expect(c.RestartBalancer(ctx)).To(Succeed())
		// Back to front: the new balancer's round robin owes nothing to the
		// order the sessions were opened in.
		for i := len(sessions) - 1; i >= 0; i-- {
			s := sessions[i]
			s.hc.CloseIdleConnections() // the balancer closed them: the client dials again
			notices := 0
			for range 3 {
				r, err := s.CallTool(ctx, search, query)
				Expect(err).NotTo(HaveOccurred(), "session %s continues", s.ID)
				Expect(r.IsError).To(BeFalse(), r.Text)
				notices += noticeCount(r)
			}
			Expect(notices).To(BeNumerically("<=", 1), "a session moved by the restart is recreated once, then stays")
			Expect(replicaOf(ctx, url, token, s.ID)).To(Equal(replicaOf(ctx, url, token, s.ID)), "and its requests land on one replica again")
		}
	}, SpecTimeout(2*time.Minute))

	It("a stale session id after every replica restarted: recreated, as with one replica", func(ctx SpecContext) {
		env, c := newCluster(2)
		sessions := openSessions(ctx, env.ProjectURL(), env.Token("alice"), 2)
		Expect(c.KillRestartAll(ctx)).To(Succeed())
		for _, s := range sessions {
			r, err := s.CallTool(ctx, search, query)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.IsError).To(BeFalse(), r.Text)
			Expect(noticeCount(r)).To(Equal(1), "recreated with one notice: %s", r.Text)
		}
	}, SpecTimeout(2*time.Minute))

	It("the soak on 3 replicas: 5,000 requests under seeded faults, rolling restarts and SIGKILLs, none unanswered but those in flight on a killed replica, no audit row missing", Label("soak"), func(ctx SpecContext) {
		rep, err := soak.Run(ctx, soak.Options{Requests: 5000, Seed: 6,
			Target: &harness.Cluster{Path: mcplocalPath, Replicas: 3}, Progress: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("cluster soak", fmt.Sprintf("%+v", rep.Counts))
		AddReportEntry("rolling restarts and kills", rep.Events)
		Expect(rep.Problems()).To(BeEmpty(), "soak seed %d: %v", rep.Seed, rep.Examples)
		Expect(rep.AuditChecked).To(BeTrue(), rep.AuditNote)
		Expect(rep.RowsChecked).To(BeNumerically(">=", rep.InBudget-rep.ToolErrors), "every answered result's row was looked up")
		kinds := map[string]bool{}
		for _, e := range rep.Events {
			kinds[e.Kind] = true
			Expect(e.Err).To(BeEmpty(), "%s at %s", e.Kind, e.Start)
		}
		Expect(kinds).To(HaveKey("proxy-restart"), "the seed draws a rolling restart")
		Expect(kinds).To(HaveKey("proxy-kill"), "the seed draws a SIGKILL of one replica")
	}, SpecTimeout(5*time.Minute))
})

func (s *clusterSession) victimOf(on []*clusterSession) bool {
	for _, v := range on {
		if v == s {
			return true
		}
	}
	return false
}

// statusOf is the HTTP status of GET url (0 on a transport error).
func statusOf(ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}
