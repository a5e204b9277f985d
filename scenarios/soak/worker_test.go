package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// mcpServer stands in for the proxy: a Streamable HTTP MCP endpoint that
// counts sessions, calls and DELETEs, and refuses a call outside a session. Its first refuseInits initialize
// requests get a 503, as a proxy that is not up yet would.
type mcpServer struct {
	mu          sync.Mutex
	refuseInits int
	initsSeen   int
	sessions    int
	deletes     int
	calls       int
	tools       map[string]int
	perSession  map[string]int
	initsPer    map[string]int
	// atRestart is calls when a fakeTarget restarted, -1 before.
	atRestart int
}

func newMCPServer(t *testing.T, refuseInits int) (*mcpServer, string) {
	m := &mcpServer{refuseInits: refuseInits, tools: map[string]int{}, perSession: map[string]int{},
		initsPer: map[string]int{}, atRestart: -1}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

func (m *mcpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodDelete {
		m.deletes++
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	b, _ := io.ReadAll(r.Body)
	if json.Unmarshal(b, &msg) != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	var result any
	switch msg.Method {
	case "initialize":
		m.initsSeen++
		if m.initsSeen <= m.refuseInits {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		m.sessions++
		sid = "s" + strconv.Itoa(m.sessions)
		m.initsPer[sid]++
		w.Header().Set("Mcp-Session-Id", sid)
		result = map[string]any{"protocolVersion": load.ProtocolVersion}
	case "tools/call":
		m.calls++
		if m.initsPer[sid] == 0 {
			http.Error(w, "unknown session", http.StatusBadRequest)
			return
		}
		m.tools[msg.Params.Name]++
		m.perSession[sid]++
		result = map[string]any{"content": []map[string]any{{"type": "text", "text": "ok"}},
			"_meta": map[string]any{trace.MetaKey: fmt.Sprintf("T%d", m.calls)}}
	default:
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
}

func (m *mcpServer) snapshot() mcpServer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return mcpServer{initsSeen: m.initsSeen, sessions: m.sessions, deletes: m.deletes, calls: m.calls, atRestart: m.atRestart}
}

// steadyClock is a stall clock that reads the values given, in turn.
type steadyClock struct {
	mu       sync.Mutex
	readings []time.Duration
}

func (c *steadyClock) Stalled() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.readings) == 0 {
		return 0
	}
	v := c.readings[0]
	c.readings = c.readings[1:]
	return v
}

func newWorker(url string, every int) *worker {
	return &worker{clock: &steadyClock{}, url: url, hc: load.NewHTTPClient(1), every: every,
		giveUp: 5 * time.Second, rng: rand.New(rand.NewPCG(7, 1))}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestAWorkerOpensANewSessionEveryCallsPerSession(t *testing.T) {
	m, url := newMCPServer(t, 0)
	w := newWorker(url, 3)
	ctx := testCtx(t, 10*time.Second)
	for i := range 7 {
		c := w.do(ctx)
		if c.err != nil || c.res.Trace == "" {
			t.Fatalf("call %d: %+v, %v; want a result with a trace code", i, c.res, c.err)
		}
		if c.end.Before(c.start) {
			t.Errorf("call %d ended before it started", i)
		}
	}
	got := m.snapshot()
	if w.sessions != 3 || got.sessions != 3 {
		t.Errorf("7 calls, 3 per session: worker counted %d sessions, the server saw %d; want 3", w.sessions, got.sessions)
	}
	if got.deletes != 2 {
		t.Errorf("%d sessions closed while renewing, want 2", got.deletes)
	}
	m.mu.Lock()
	for sid, n := range m.perSession {
		if n > 3 || m.initsPer[sid] != 1 {
			t.Errorf("session %s: %d calls, %d initializes; want at most 3 calls after one initialize", sid, n, m.initsPer[sid])
		}
	}
	m.mu.Unlock()
	w.close()
	if got := m.snapshot().deletes; got != 3 {
		t.Errorf("after close %d sessions closed, want 3", got)
	}
}

// Four calls in five are the small update_page, one the paginating search.
func TestAWorkerSendsTheSearchOneCallInFive(t *testing.T) {
	m, url := newMCPServer(t, 0)
	w := newWorker(url, 1000)
	ctx := testCtx(t, 20*time.Second)
	const n = 300
	for range n {
		if c := w.do(ctx); c.err != nil {
			t.Fatal(c.err)
		}
	}
	w.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	search, update := m.tools["docmost_search"], m.tools["docmost_update_page"]
	if search+update != n {
		t.Fatalf("tools called %v, want only docmost_search and docmost_update_page", m.tools)
	}
	// 1 in 5 of 300 is 60; the bounds are 3.5 standard deviations wide.
	if search < 36 || search > 84 {
		t.Errorf("%d of %d calls were the search, want about 1 in 5", search, n)
	}
}

// A worker that cannot open its session (the proxy is restarting) tries
// again, initRetryDelay apart, and calls once it is open.
func TestAWorkerRetriesOpeningItsSessionWhileTheProxyIsDown(t *testing.T) {
	const refused = 4
	m, url := newMCPServer(t, refused)
	w := newWorker(url, 10)
	t0 := time.Now()
	c := w.do(testCtx(t, 10*time.Second))
	took := time.Since(t0)
	if c.err != nil {
		t.Fatalf("the call after %d refused initializes: %v", refused, c.err)
	}
	got := m.snapshot()
	if got.initsSeen != refused+1 || got.sessions != 1 || w.sessions != 1 {
		t.Errorf("%d initializes, %d sessions (worker %d); want %d and 1", got.initsSeen, got.sessions, w.sessions, refused+1)
	}
	// Sleeps never end early: the retries cannot take less than their delays.
	if took < refused*initRetryDelay {
		t.Errorf("%d retries took %v, want them %v apart", refused, took, initRetryDelay)
	}
}

// A proxy that never comes back: the worker gives up after initRetries
// retries, and the request is the initialize that failed: no tools/call
// goes out without a session, and the next request tries to open one again.
func TestAWorkerGivesUpOpeningASessionAfterItsRetries(t *testing.T) {
	m, url := newMCPServer(t, 1<<30)
	w := newWorker(url, 10)
	c := w.do(testCtx(t, 30*time.Second))
	if got := m.snapshot().initsSeen; got != initRetries+1 {
		t.Errorf("%d initializes, want the first and %d retries", got, initRetries)
	}
	var h *load.HTTPError
	if !errors.As(c.err, &h) || h.Status != http.StatusServiceUnavailable || m.snapshot().calls != 0 {
		t.Errorf("err %v, %d calls at the server; want the initialize's 503 and no call", c.err, m.snapshot().calls)
	}
	if w.sessions != 0 {
		t.Errorf("the worker counted %d sessions opened, want 0", w.sessions)
	}
	m.mu.Lock()
	m.refuseInits = 0
	m.mu.Unlock()
	if c := w.do(testCtx(t, 10*time.Second)); c.err != nil || w.sessions != 1 {
		t.Errorf("once the proxy is back: err %v, %d sessions; want the call answered in a new session", c.err, w.sessions)
	}
}

// An initialize the proxy never answers (its connection cut) is not turned
// into an answer by a session-less tools/call that the proxy refuses.
func TestAnInitializeCutIsNotCountedAnswered(t *testing.T) {
	m, _ := newMCPServer(t, 0)
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if json.Valid(b) && strings.Contains(string(b), `"initialize"`) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(cut.Close)
	w := newWorker(cut.URL, 10)
	c := w.do(testCtx(t, 30*time.Second)) // the retries end it, not the context
	if load.Answered(c.err) {
		t.Fatalf("err %v: an initialize whose connection was cut counted as answered", c.err)
	}
	if got := classify([]call{c}, nil, time.Minute, nil); got.Unanswered != 1 {
		t.Errorf("classified %+v, want one unanswered", got)
	}
	if got := m.snapshot().calls; got != 0 {
		t.Errorf("%d tools/call sent without a session, want 0", got)
	}
}

// A worker whose context has ended does not keep retrying a proxy that is down.
func TestAWorkerStopsRetryingWhenItsContextEnds(t *testing.T) {
	m, url := newMCPServer(t, 1<<30)
	w := newWorker(url, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := w.do(ctx)
	if c.err == nil || load.Answered(c.err) {
		t.Errorf("call with its context ended: err %v, want a failure to answer", c.err)
	}
	if got := m.snapshot().initsSeen; got > 1 {
		t.Errorf("%d initializes after the context ended, want at most 1", got)
	}
}

// A call's stall is the clock's reading at its end less the one at its start.
func TestAWorkerRecordsTheStallDuringEachCall(t *testing.T) {
	_, url := newMCPServer(t, 0)
	w := newWorker(url, 10)
	ctx := testCtx(t, 10*time.Second)
	w.do(ctx) // opens the session
	w.clock = &steadyClock{readings: []time.Duration{40 * time.Millisecond, 100 * time.Millisecond}}
	c := w.do(ctx)
	if c.err != nil {
		t.Fatal(c.err)
	}
	if c.stalled != 60*time.Millisecond {
		t.Errorf("stalled = %v, want 60ms (100ms at the end less 40ms at the start)", c.stalled)
	}
}

// fakeTarget is a proxy target whose Restart is recorded against what the
// server had seen by then.
type fakeTarget struct {
	m   *mcpServer
	err error
	mu  sync.Mutex
	n   int
}

func (f *fakeTarget) Name() string                              { return "fake" }
func (f *fakeTarget) Start(context.Context, harness.Spec) error { return nil }
func (f *fakeTarget) URL() string                               { return "" }
func (f *fakeTarget) Stop(context.Context) error                { return nil }
func (f *fakeTarget) Restart(context.Context) error {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	f.m.mu.Lock()
	f.m.atRestart = f.m.calls
	f.m.mu.Unlock()
	return f.err
}

func (f *fakeTarget) restarts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// countingFault is a fault that counts its injections; midway makes it
// strike during the epoch.
type countingFault struct {
	harness.None
	mu sync.Mutex
	n  int
}

func (f *countingFault) Inject(context.Context, *harness.Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return nil
}

func (f *countingFault) injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

type midwayFault struct{ countingFault }

func (*midwayFault) Midway() {}

func workersFor(url string, n int) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = newWorker(url, 4)
	}
	return ws
}

func TestAnEpochSendsItsRequestsOnceAcrossItsWorkers(t *testing.T) {
	m, url := newMCPServer(t, 0)
	f := &countingFault{}
	calls, ev := runEpoch(testCtx(t, 10*time.Second), nil, workersFor(url, 3), 5, 11, -1, f)
	if len(calls) != 11 || m.snapshot().calls != 11 {
		t.Fatalf("%d calls recorded, %d seen by the server; want 11", len(calls), m.snapshot().calls)
	}
	for i, c := range calls {
		if c.epoch != 5 || c.err != nil {
			t.Errorf("call %d: epoch %d, err %v; want epoch 5 and an answer", i, c.epoch, c.err)
		}
	}
	if ev != nil || f.injected() != 0 {
		t.Errorf("event %+v, %d injections; an epoch injects only a midway fault", ev, f.injected())
	}
}

// A midway fault strikes once, when the epoch reaches its request; a proxy
// restart is recorded as an event, with its error if it failed.
func TestAMidwayRestartStrikesAtItsRequestAndIsAnEvent(t *testing.T) {
	for _, restartErr := range []error{nil, errors.New("port taken")} {
		m, url := newMCPServer(t, 0)
		tgt := &fakeTarget{m: m, err: restartErr}
		env := &harness.Env{Target: tgt}
		t0 := time.Now()
		// One worker: requests go one after another, so by request 4 four
		// calls were answered.
		calls, ev := runEpoch(testCtx(t, 10*time.Second), env, workersFor(url, 1), 0, 6, 4, harness.ProxyRestart{})
		if len(calls) != 6 {
			t.Fatalf("%d calls, want 6", len(calls))
		}
		if tgt.restarts() != 1 {
			t.Fatalf("%d restarts, want 1", tgt.restarts())
		}
		if at := m.snapshot().atRestart; at < 4 {
			t.Errorf("the restart struck after %d calls, want at request 4 (4 calls before it)", at)
		}
		if ev == nil {
			t.Fatal("no event for the restart")
		}
		if ev.Kind != "proxy-restart" || ev.Start.Before(t0) || ev.End.Before(ev.Start) {
			t.Errorf("event %+v, want a proxy-restart within the epoch", ev)
		}
		wantErr := ""
		if restartErr != nil {
			wantErr = restartErr.Error()
		}
		if ev.Err != wantErr {
			t.Errorf("event error %q, want %q", ev.Err, wantErr)
		}
	}
}

func TestAMidwayFaultAtTheFirstRequestStrikesOnce(t *testing.T) {
	_, url := newMCPServer(t, 0)
	f := &midwayFault{}
	calls, ev := runEpoch(testCtx(t, 10*time.Second), nil, workersFor(url, 2), 1, 5, 0, f)
	if len(calls) != 5 || f.injected() != 1 {
		t.Errorf("%d calls, %d injections; want 5 and 1", len(calls), f.injected())
	}
	if ev != nil {
		t.Errorf("event %+v for a fault that does not stop the proxy", ev)
	}
}

func TestAnEpochWhoseContextEndedSendsNothing(t *testing.T) {
	m, url := newMCPServer(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &midwayFault{}
	calls, ev := runEpoch(ctx, nil, workersFor(url, 2), 0, 5, 2, f)
	if len(calls) != 0 || m.snapshot().calls != 0 || f.injected() != 0 || ev != nil {
		t.Errorf("%d calls, %d at the server, %d injections, event %v; want none", len(calls), m.snapshot().calls, f.injected(), ev)
	}
}
