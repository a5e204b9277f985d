package scenarios_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The audit knobs bound work off the request path, so their outcomes show in
// the audit store, not in an answer: these specs run mcplocal in-process over
// a store they can stall and watch (gatedStore), and read each knob's effect
// there: how long a stalled write is given, how a queued backlog is cut into
// commits, whether rows trickling in share one, and when an audit query
// gives up. Each knob under test is set apart from every other bound (the
// matrix's wideKnobs), so a knob read and ignored, left at its default or
// swapped with a sibling gives another result.

// storeWrite is one write call the proxy's audit writer made.
type storeWrite struct {
	rows  int
	start time.Time
	took  time.Duration
	err   error
}

// gatedStore is an in-memory audit store whose row writes can be held (they
// wait until released, or until their context ends) and whose queries and
// session record calls can be stalled, each kind alone (they wait for their
// context). It records every row write call and every stalled call.
type gatedStore struct {
	audit.Store
	mu       sync.Mutex
	hold     chan struct{}      // non-nil: row writes wait for it to close
	stalls   map[storeCall]bool // the calls Stall made wait for their context
	inFlight int
	writes   []storeWrite
	stalled  []storeWrite // session record calls that were stalled, each ended by its context
}

func newGatedStore() *gatedStore {
	return &gatedStore{Store: audit.NewMemory(), stalls: map[storeCall]bool{}}
}

// storeCall names a kind of store call the gated store can stall.
type storeCall int

const (
	storeQueries storeCall = iota // GET /api/v1/audit and /readyz's check
	storeClaims                   // a session owner's record (initialize, adoption)
	storeCloses                   // a DELETEd session's tombstone
	storeLookups                  // who owns an id the proxy does not hold
)

// Hold makes later row writes wait until Release (or their deadline).
func (s *gatedStore) Hold() {
	s.mu.Lock()
	s.hold = make(chan struct{})
	s.mu.Unlock()
}

// Release lets held writes, and later ones, through.
func (s *gatedStore) Release() {
	s.mu.Lock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
	s.mu.Unlock()
}

// Stall makes every later call of that kind wait for its context to end.
func (s *gatedStore) Stall(c storeCall) {
	s.mu.Lock()
	s.stalls[c] = true
	s.mu.Unlock()
}

// stalling reports whether calls of that kind are stalled.
func (s *gatedStore) stalling(c storeCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalls[c]
}

// stall waits for ctx to end, and records how long that took.
func (s *gatedStore) stall(ctx context.Context) error {
	start := time.Now()
	<-ctx.Done()
	s.mu.Lock()
	s.stalled = append(s.stalled, storeWrite{rows: 1, start: start, took: time.Since(start), err: ctx.Err()})
	s.mu.Unlock()
	return ctx.Err()
}

// Stalled are the session record calls stalled so far, once ended.
func (s *gatedStore) Stalled() []storeWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]storeWrite(nil), s.stalled...)
}

func (s *gatedStore) ClaimSession(ctx context.Context, rec audit.SessionRecord) (audit.SessionRecord, error) {
	if s.stalling(storeClaims) {
		return audit.SessionRecord{}, s.stall(ctx)
	}
	return s.Store.ClaimSession(ctx, rec)
}

func (s *gatedStore) CloseSession(ctx context.Context, rec audit.SessionRecord) error {
	if s.stalling(storeCloses) {
		return s.stall(ctx)
	}
	return s.Store.CloseSession(ctx, rec)
}

func (s *gatedStore) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	if s.stalling(storeLookups) {
		return nil, s.stall(ctx)
	}
	return s.Store.LookupSession(ctx, id)
}

// sharedStore is a gatedStore a second proxy uses too: closing that proxy
// leaves the store to the first.
type sharedStore struct{ *gatedStore }

func (sharedStore) Close() error { return nil }

// InFlight is how many row writes are waiting now.
func (s *gatedStore) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Writes are the row write calls so far, in the order they began.
func (s *gatedStore) Writes() []storeWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]storeWrite(nil), s.writes...)
}

func (s *gatedStore) Write(ctx context.Context, r audit.Row) error {
	return s.write(ctx, []audit.Row{r})
}

// WriteBatch makes the store a BatchWriter: the writer's batches reach it
// whole, one call per commit.
func (s *gatedStore) WriteBatch(ctx context.Context, rows []audit.Row) error {
	return s.write(ctx, rows)
}

func (s *gatedStore) write(ctx context.Context, rows []audit.Row) error {
	s.mu.Lock()
	hold := s.hold
	s.inFlight++
	i := len(s.writes)
	s.writes = append(s.writes, storeWrite{rows: len(rows), start: time.Now()})
	s.mu.Unlock()
	var err error
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	for _, r := range rows {
		if err != nil {
			break
		}
		err = s.Store.Write(ctx, r)
	}
	s.mu.Lock()
	s.inFlight--
	s.writes[i].took, s.writes[i].err = time.Since(s.writes[i].start), err
	s.mu.Unlock()
	return err
}

func (s *gatedStore) Query(ctx context.Context, f audit.Filter) ([]audit.Row, error) {
	if s.stalling(storeQueries) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.Query(ctx, f)
}

// auditWorld is mcplocal, in-process, serving project docmost (a fake
// docmost upstream) with the knobs v over store, and one client session
// (once open).
type auditWorld struct {
	p     *proxy.Proxy
	store *gatedStore
	cs    *mcp.ClientSession
	base  string
}

// newAuditWorld starts the proxy and opens the client session.
func newAuditWorld(ctx context.Context, v knobs.Values) *auditWorld {
	GinkgoHelper()
	w := newAuditProxy(ctx, v)
	w.open(ctx)
	return w
}

// newAuditProxy starts the proxy, without a client session yet.
func newAuditProxy(ctx context.Context, v knobs.Values) *auditWorld {
	GinkgoHelper()
	DeferCleanup(checkNoLeaks())
	up, err := upstream.NewDocmost(upstream.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(up.Close)
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		harness.Project: {Servers: map[string]*config.Server{"docmost": {URL: up.URL()}}},
	}}
	Expect(cfg.Validate()).To(Succeed())
	Expect(v.Check()).To(Succeed())
	w := &auditWorld{store: newGatedStore()}
	w.p, err = proxy.New(ctx, cfg, proxy.Options{Knobs: &v, AuditStore: w.store, Getenv: func(string) string { return "" }})
	Expect(err).NotTo(HaveOccurred())
	Expect(w.p.Start("")).To(Succeed())
	DeferCleanup(func() {
		w.store.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		Expect(w.p.Close(ctx)).To(Succeed())
	})
	w.base = "http://" + w.p.Addr()
	return w
}

// sibling starts a second mcplocal, in-process, over w's store and the same
// docmost upstream: it knows none of w's sessions, as w itself would not after
// a restart, while the store records their owners.
func (w *auditWorld) sibling(ctx context.Context, v knobs.Values, upURL string) *auditWorld {
	GinkgoHelper()
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		harness.Project: {Servers: map[string]*config.Server{"docmost": {URL: upURL}}},
	}}
	Expect(cfg.Validate()).To(Succeed())
	b := &auditWorld{store: w.store}
	var err error
	b.p, err = proxy.New(ctx, cfg, proxy.Options{Knobs: &v, AuditStore: sharedStore{w.store}, Getenv: func(string) string { return "" }})
	Expect(err).NotTo(HaveOccurred())
	Expect(b.p.Start("")).To(Succeed())
	DeferCleanup(func() {
		w.store.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		Expect(b.p.Close(ctx)).To(Succeed())
	})
	b.base = "http://" + b.p.Addr()
	return b
}

// send sends one MCP HTTP request on session id to the world's project and
// returns the answer's status and body.
func (w *auditWorld) send(ctx context.Context, method, id, body string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, w.base+"/projects/"+harness.Project+"/mcp", strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}

// stalledCall waits for the one stalled session record call to end and
// checks it ended at its deadline, at the bound d.
func (w *auditWorld) stalledCall(d time.Duration, what string) {
	GinkgoHelper()
	var got []storeWrite
	Eventually(func() []storeWrite {
		got = w.store.Stalled()
		return got
	}).WithTimeout(d+matrixSlack+time.Second).Should(HaveLen(1), "%s reached the store once and ended", what)
	Expect(got[0].err).To(MatchError(context.DeadlineExceeded), "%s ended at its deadline", what)
	within(got[0].took, d, what)
}

// open opens the client session and waits until whatever its opening wrote
// is in the store: the audit writer is idle after it.
func (w *auditWorld) open(ctx context.Context) {
	GinkgoHelper()
	var err error
	w.cs, err = harness.SDKClient(ctx, w.base+"/projects/"+harness.Project+"/mcp", "")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.cs.Close)
	Expect(w.p.FlushAudit(ctx)).To(Succeed())
}

// ping sends one ping: one request, one audit row (mcp_request).
func (w *auditWorld) ping(ctx context.Context) {
	GinkgoHelper()
	Expect(w.cs.Ping(ctx, nil)).To(Succeed())
}

// writesSince returns the row write calls from the n-th on.
func (w *auditWorld) writesSince(n int) []storeWrite {
	all := w.store.Writes()
	return all[min(n, len(all)):]
}

func sizes(ws []storeWrite) []int {
	out := make([]int, len(ws))
	for i, x := range ws {
		out[i] = x.rows
	}
	return out
}

var _ = Describe("The knob matrix: the audit trail's bounds", Label("knobs", "audit"), func() {
	It("MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds a write to a stalled audit store, off the request path", func(ctx SpecContext) {
		v := wideKnobs()
		v.AuditWriteTimeout = 1500 * time.Millisecond // above the 1 s default, below every wide bound
		w := newAuditWorld(ctx, v)
		before := len(w.store.Writes())
		w.store.Hold() // never released during the spec: the store is stalled
		took := timed(func() { w.ping(ctx) })
		Expect(took).To(BeNumerically("<", v.AuditWriteTimeout), "the ping is answered without waiting on the stalled store")
		var ws []storeWrite
		Eventually(func() []storeWrite {
			ws = w.writesSince(before)
			if len(ws) == 0 || ws[0].took == 0 {
				return nil
			}
			return ws
		}).WithTimeout(v.AuditWriteTimeout+matrixSlack+time.Second).ShouldNot(BeEmpty(), "the ping's row write gave up")
		Expect(ws[0].rows).To(Equal(1))
		Expect(ws[0].err).To(MatchError(context.DeadlineExceeded), "the write ended at its deadline, not by being let through")
		within(ws[0].took, v.AuditWriteTimeout, "the stalled row write")
		Expect(w.p.AuditStats().Failed).To(BeEquivalentTo(1), "the row is counted as lost")
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds recording a new session's owner in a stalled store", func(ctx SpecContext) {
		v := wideKnobs()
		v.AuditWriteTimeout = 1500 * time.Millisecond // above the 1 s default, below every wide bound
		w := newAuditProxy(ctx, v)
		w.store.Stall(storeClaims)
		// The owner is recorded before the client learns its session id, so
		// initialize waits for the record, as long as the knob allows; the
		// session opens anyway (unrecorded, logged).
		withinTimed(metered(func() { w.open(ctx) }), v.AuditWriteTimeout, "initialize over a stalled store")
		w.ping(ctx)
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds the tombstone of a DELETEd session in a stalled store", func(ctx SpecContext) {
		v := wideKnobs()
		v.AuditWriteTimeout = 1500 * time.Millisecond // above the 1 s default, below every wide bound
		w := newAuditWorld(ctx, v)
		w.store.Stall(storeCloses)
		// The tombstone is written before the DELETE is answered, so the
		// answer waits for it, as long as the knob allows; the session is
		// closed anyway (the tombstone's loss is logged).
		var status int
		t := metered(func() { status, _ = w.send(ctx, http.MethodDelete, w.cs.ID(), "") })
		Expect(status/100).To(Equal(2), "the session is closed")
		Expect(t.unstalled()).To(BeNumerically("<", v.AuditWriteTimeout+matrixSlack), "the DELETE is answered by the write's bound")
		w.stalledCall(v.AuditWriteTimeout, "the stalled tombstone write")
	}, SpecTimeout(30*time.Second))

	// staleOverStalledStore sends a ping on the session's id to a second
	// proxy over the same store, which does not know the session (as after
	// a restart), with the store call stall() names stalled, and holds its
	// answer to the write timeout's bound.
	staleOverStalledStore := func(ctx SpecContext, stall storeCall, what string, wantStatus int, wantBody string) {
		v := wideKnobs()
		v.AuditWriteTimeout = 1500 * time.Millisecond // above the 1 s default, below every wide bound
		up, err := upstream.NewDocmost(upstream.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(up.Close)
		w := newAuditWorld(ctx, v)
		b := w.sibling(ctx, v, up.URL())
		w.store.Stall(stall)
		var status int
		var body string
		withinTimed(metered(func() {
			status, body = b.send(ctx, http.MethodPost, w.cs.ID(), `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
		}), v.AuditWriteTimeout, "a stale session's request with "+what)
		Expect(status).To(Equal(wantStatus), "%s: %s", what, body)
		Expect(body).To(ContainSubstring(wantBody))
		w.stalledCall(v.AuditWriteTimeout, what)
	}

	It("MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds claiming a stale session's id to recreate it, in a stalled store", func(ctx SpecContext) {
		// The second proxy recreates the session for its owner, and first
		// claims its id in the store (the first claim wins): not recreated
		// without it.
		staleOverStalledStore(ctx, storeClaims, "the stalled adoption claim", http.StatusNotFound, "could not be recreated")
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds looking up who owns a stale session's id, in a stalled store", func(ctx SpecContext) {
		// Before anything else the second proxy asks the store who owns
		// the id, a read on the request's path: without an answer it cannot
		// check the owner.
		staleOverStalledStore(ctx, storeLookups, "the stalled owner lookup", http.StatusServiceUnavailable, "audit store is unavailable")
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_BATCH_MAX alone decides how many queued rows one commit takes", func(ctx SpecContext) {
		v := wideKnobs()
		Expect(v.SetRaw("MCPCTL_AUDIT_BATCH_MAX", 3)).To(BeTrue())
		w := newAuditWorld(ctx, v)
		before := len(w.store.Writes())
		w.store.Hold()
		By("one row's commit is held in the store, so the rows after it queue")
		w.ping(ctx)
		Eventually(w.store.InFlight).Should(Equal(1), "the first row's commit is waiting in the store")
		for range 7 {
			w.ping(ctx)
		}
		Eventually(func() int { return w.p.AuditStats().Queued }).Should(Equal(7), "seven rows queued behind it")
		w.store.Release()
		Expect(w.p.FlushAudit(ctx)).To(Succeed())
		ws := w.writesSince(before)
		Expect(sizes(ws)).To(Equal([]int{1, 3, 3, 1}), "the backlog of 7 is committed 3 rows at a time")
		for _, x := range ws {
			Expect(x.err).NotTo(HaveOccurred())
		}
		Expect(w.p.AuditStats().Failed).To(BeZero())
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_BATCH_WAIT_MS alone decides whether rows trickling in share a commit", func(ctx SpecContext) {
		const spacing = 50 * time.Millisecond // between requests: well above the 5 ms default wait
		v := wideKnobs()
		v.AuditBatchWait = 1500 * time.Millisecond
		w := newAuditWorld(ctx, v)
		before := len(w.store.Writes())
		first := time.Now()
		tick := time.NewTicker(spacing)
		defer tick.Stop()
		for i := range 5 {
			if i > 0 {
				<-tick.C
			}
			w.ping(ctx)
		}
		Expect(time.Since(first)).To(BeNumerically("<", v.AuditBatchWait), "the five requests came within one wait (else the spec proves nothing)")
		// No flush here: a flush ends the wait (a reader must not wait it out).
		var ws []storeWrite
		Eventually(func() int {
			ws = w.writesSince(before)
			n := 0
			for _, x := range ws {
				n += x.rows
			}
			return n
		}).WithTimeout(v.AuditBatchWait+matrixSlack+time.Second).Should(Equal(5), "the five rows are committed")
		Expect(sizes(ws)).To(Equal([]int{5}), "five rows %v apart share one commit", spacing)
		within(ws[0].start.Sub(first), v.AuditBatchWait, "the commit, after the first row")
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_READY_TIMEOUT_MS alone bounds /readyz's check of a stalled store", func(ctx SpecContext) {
		const bound = 300 * time.Millisecond
		v := mcplocal.KnobsOf(narrow("MCPCTL_READY_TIMEOUT_MS", bound)) // the write and query timeouts stay wide
		w := newAuditProxy(ctx, v)
		get := func() (int, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/readyz", nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			return resp.StatusCode, string(b)
		}
		Eventually(func() int { code, _ := get(); return code }).Should(Equal(http.StatusOK), "ready before the store stalls")
		w.store.Stall(storeQueries)
		var code int
		var body string
		withinTimed(metered(func() { code, body = get() }), bound, "/readyz over a stalled store")
		Expect(code).To(Equal(http.StatusServiceUnavailable), "not ready: %s", body)
		Expect(body).To(ContainSubstring("auditStore"))
	}, SpecTimeout(30*time.Second))

	It("MCPCTL_AUDIT_QUERY_TIMEOUT_MS alone bounds GET /api/v1/audit on a stalled store", func(ctx SpecContext) {
		v := wideKnobs()
		v.AuditQueryTimeout = 300 * time.Millisecond
		w := newAuditWorld(ctx, v)
		w.store.Stall(storeQueries)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/api/v1/audit?trace=ABCDEFGH", nil)
		Expect(err).NotTo(HaveOccurred())
		var resp *http.Response
		withinTimed(metered(func() { resp, err = http.DefaultClient.Do(req) }), v.AuditQueryTimeout, "the audit query")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable), "the query gave up: the store is unavailable")
		var body struct {
			Error string `json:"error"`
		}
		Expect(json.NewDecoder(resp.Body).Decode(&body)).To(Succeed())
		Expect(body.Error).To(ContainSubstring("deadline exceeded"))
	}, SpecTimeout(30*time.Second))
})
