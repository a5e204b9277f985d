// Package soak is the seed's own metric as a test: many tools/calls over
// many sessions while faults drawn by a seed come and go (network faults,
// upstream misbehaviour and restarts, LLM failures from a seeded random
// plan, proxy restarts and, on process targets, SIGKILLs). Every request is
// classified: answered in budget, answered late, unanswered, refused or cut
// while the proxy was down, lost to a kill. Afterwards every answered
// request's audit row is looked up, and the process's goroutines must
// return to their baseline.
package soak

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // reads the proxy's audit database after the run

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/internal/stall"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/bench"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// Defaults of Options.
const (
	DefaultWorkers         = 16
	DefaultCallsPerSession = 25
	DefaultEpoch           = 250
	// LeakWait bounds how long goroutines may take to return to the
	// baseline after the world is torn down.
	LeakWait = 5 * time.Second
	// RSSGrowthLimit is how much the process's RSS may grow from the end of
	// the first epoch (warm) to the end of the run, in percent.
	RSSGrowthLimit = 10.0
)

// Knobs are the bounds a soak runs the proxy with: compressed so that a
// request that waits out its whole budget costs half a second.
func Knobs() knobs.Values {
	v := mcplocal.Compressed()
	v.RequestDeadline = 500 * time.Millisecond
	v.UpstreamCallTimeout = 300 * time.Millisecond
	v.UpstreamConnect = 300 * time.Millisecond
	v.PaginationLLMTimeout = 200 * time.Millisecond
	v.LLMCallBudget = 200 * time.Millisecond
	v.LLMProviderTimeout = 150 * time.Millisecond
	v.StageLLMBudget = 300 * time.Millisecond
	return v
}

// Options shape a soak.
type Options struct {
	// Requests is how many tools/calls to send in all.
	Requests int
	// Seed draws the faults, the tools and the fake LLM's random plan.
	Seed uint64
	// Target runs the proxy; default &harness.InProcess{}.
	Target harness.Target
	// Workers is how many sessions call at once (default DefaultWorkers).
	Workers int
	// CallsPerSession: a worker opens a new session after this many calls
	// (default DefaultCallsPerSession), so the soak spans many sessions.
	CallsPerSession int
	// Epoch is how many requests run under one drawn fault (default DefaultEpoch).
	Epoch int
	// Knobs; default Knobs().
	Knobs *knobs.Values
	// Progress gets one line per epoch; nil discards.
	Progress io.Writer
}

// Counts classify requests.
type Counts struct {
	Requests int `json:"requests"`
	// InBudget were answered (a result, isError or not, or a JSON-RPC
	// error) within the budget + tolerance; Late after it.
	InBudget int `json:"answeredInBudget"`
	Late     int `json:"answeredLate"`
	// ToolErrors of the answered ones came back isError: true (a fault's
	// readable recovery text): answered, counted for the reader.
	ToolErrors int `json:"toolErrors"`
	// Unanswered never got an answer while the proxy was up.
	Unanswered int `json:"unanswered"`
	// Refused were never accepted: the connection was refused while the
	// proxy was restarting.
	Refused int `json:"refusedWhileDown"`
	// CutByRestart were in flight when a graceful restart's shutdown grace
	// ran out.
	CutByRestart int `json:"cutByRestart"`
	// LostToKill were in flight at a SIGKILL.
	LostToKill int `json:"lostToKill"`
}

// Epoch is one stretch of the soak under one fault.
type Epoch struct {
	Index  int    `json:"index"`
	Fault  string `json:"fault"`
	Params string `json:"params,omitempty"`
	Counts
}

// Event is a proxy restart or kill: requests overlapping it are judged apart.
type Event struct {
	Kind  string    `json:"kind"` // proxy-restart, proxy-kill
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Err   string    `json:"error,omitempty"`
}

// Report is a whole soak.
type Report struct {
	Seed      uint64        `json:"seed"`
	Target    string        `json:"target"`
	Started   time.Time     `json:"started"`
	Took      time.Duration `json:"tookNs"`
	Budget    time.Duration `json:"budgetNs"`
	Tolerance time.Duration `json:"toleranceNs"`
	Sessions  int           `json:"sessions"`
	Counts
	Epochs []Epoch `json:"epochs"`
	Events []Event `json:"events"`
	// Audit: rows looked up for answered requests with a trace code.
	AuditChecked  bool   `json:"auditChecked"`
	AuditNote     string `json:"auditNote,omitempty"`
	RowsChecked   int    `json:"rowsChecked"`
	RowsMissing   int    `json:"rowsMissing"`
	RowsLostToKil int    `json:"rowsLostToKill"`
	// Goroutines of this process before the world was built and after it
	// was torn down (waiting up to LeakWait).
	GoroutinesBefore int `json:"goroutinesBefore"`
	GoroutinesAfter  int `json:"goroutinesAfter"`
	// HarnessGoroutines were left by the harness's toxiproxy, not counted above.
	HarnessGoroutines int `json:"harnessGoroutines"`
	// RSS of the proxy's process (this one for in-process targets) when
	// the first epoch ended and when the last did.
	RSSWarm int64 `json:"rssWarmBytes"`
	RSSEnd  int64 `json:"rssEndBytes"`
	// Examples of what went wrong, at most a few per kind.
	Examples []string `json:"examples,omitempty"`
}

// RSSGrowth is the RSS growth over the soak in percent (0 when unknown).
func (r *Report) RSSGrowth() float64 {
	if r.RSSWarm <= 0 || r.RSSEnd <= 0 {
		return 0
	}
	return 100 * float64(r.RSSEnd-r.RSSWarm) / float64(r.RSSWarm)
}

// Problems lists the soak's failures; none means it passed. RSS growth is
// reported but not judged here (see docs/performance.md).
func (r *Report) Problems() []string {
	var p []string
	if r.Unanswered > 0 {
		p = append(p, fmt.Sprintf("%d requests never answered while the proxy was up", r.Unanswered))
	}
	if r.Late > 0 {
		p = append(p, fmt.Sprintf("%d requests answered after their budget %v + tolerance %v", r.Late, r.Budget, r.Tolerance))
	}
	if r.RowsMissing > 0 {
		p = append(p, fmt.Sprintf("%d answered requests have no %s audit row", r.RowsMissing, audit.KindToolCallTrace))
	}
	if r.GoroutinesAfter > r.GoroutinesBefore {
		p = append(p, fmt.Sprintf("goroutines did not return to baseline: %d before, %d after", r.GoroutinesBefore, r.GoroutinesAfter))
	}
	if r.InBudget+r.Late+r.Unanswered+r.Refused+r.CutByRestart+r.LostToKill != r.Requests {
		p = append(p, "internal: the classes do not add up to the requests sent")
	}
	return p
}

// draw is one fault a soak may put in place for an epoch.
type draw struct {
	fault  harness.Fault
	weight int
}

// faults is the soak's catalogue: every fault a long-lived world can take
// and heal again. Handler failpoints are left out: a running process
// cannot be re-armed.
func faults(target harness.Target) []draw {
	d := []draw{
		{harness.None{}, 6},
		{harness.Latency{Ms: 50}, 2},
		{harness.Slicer{AvgBytes: 256, DelayUs: 100}, 1},
		{harness.LimitData{Bytes: 2048}, 1},
		{harness.ResetPeer{TimeoutMs: 1}, 1},
		{harness.Blackhole{}, 1},
		{harness.LinkDown{}, 1},
		{harness.ToolSlow{Tool: "update_page", Delay: 100 * time.Millisecond}, 1},
		{harness.ToolHang{Tool: "update_page"}, 1},
		{harness.ToolError{Tool: "update_page"}, 1},
		{harness.UpstreamRestart{}, 1},
		{harness.ProxyRestart{}, 2},
	}
	if _, ok := target.(harness.Killer); ok {
		d = append(d, draw{harness.ProxyKill{}, 2})
	}
	return d
}

func pick(r *rand.Rand, d []draw) harness.Fault {
	total := 0
	for _, x := range d {
		total += x.weight
	}
	n := r.IntN(total)
	for _, x := range d {
		if n < x.weight {
			return x.fault
		}
		n -= x.weight
	}
	return d[0].fault
}

// llmPlan is the fake LLM's seeded random plan: mostly answers, sometimes
// a hang, an overload or a missing model.
func llmPlan(seed uint64) fakellm.Random {
	return fakellm.Random{Seed: seed, Choices: []fakellm.Choice{
		{Step: fakellm.Step{Kind: fakellm.OK, Text: "Notes\nRunbook\nDrill\nPolicy\nPlan\nDNS\nAlerts"}, Weight: 0.9},
		{Step: fakellm.Step{Kind: fakellm.HangBeforeHeaders}, Weight: 0.04},
		{Step: fakellm.Step{Kind: fakellm.Overloaded}, Weight: 0.03},
		{Step: fakellm.Step{Kind: fakellm.NotFound}, Weight: 0.03},
	}}
}

// call is one request as the client saw it.
type call struct {
	epoch      int
	start, end time.Time
	// stalled is how long this process was kept from running between start
	// and end (internal/stall): the machine's load, not the proxy's time.
	stalled time.Duration
	err     error
	res     load.Result
}

// Run runs a soak and reports it. An error means the soak could not run
// (set-up), not that the proxy failed it: see Report.Problems.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Requests <= 0 {
		return nil, errors.New("soak: --requests must be positive")
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.CallsPerSession <= 0 {
		o.CallsPerSession = DefaultCallsPerSession
	}
	if o.Epoch <= 0 {
		o.Epoch = DefaultEpoch
	}
	if o.Target == nil {
		o.Target = &harness.InProcess{}
	}
	kv := Knobs()
	if o.Knobs != nil {
		kv = *o.Knobs
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	rep := &Report{Seed: o.Seed, Target: o.Target.Name(), Started: time.Now().UTC(), Budget: kv.RequestDeadline,
		Tolerance: catalogue.Tolerance}
	rep.GoroutinesBefore, _, _ = goroutines()
	dir, err := os.MkdirTemp("", "mcpchaos-soak-")
	if err != nil {
		return nil, err
	}
	env, err := harness.NewEnv(ctx, harness.EnvOptions{
		Target: o.Target, Bounds: mcplocal.BoundsOf(kv), Dir: dir, LLM: true,
		LLMDefault: fakellm.Step{Kind: fakellm.OK, Text: "Notes\nRunbook"},
		Pipeline:   []harness.Stage{{Name: "paginate"}},
	})
	if err != nil {
		return nil, fmt.Errorf("soak: set-up: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = env.Close(context.Background())
		}
	}()
	if err := env.LLM.SetRandom(fakellm.AnyModel, llmPlan(o.Seed)); err != nil {
		return nil, fmt.Errorf("soak: LLM plan: %w", err)
	}

	hc := load.NewHTTPClient(o.Workers)
	// Every call's lateness is judged less the time the machine's load kept
	// this process from running during it, as the catalogue's budget
	// verdicts are: a proxy late by its own doing is late still.
	clock := stall.StartClock()
	defer clock.Stop()
	giveUp := catalogue.OperationLimit(kv.RequestDeadline)
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed))
	catalog := faults(o.Target)
	workers := make([]*worker, o.Workers)
	for i := range workers {
		workers[i] = &worker{clock: clock, url: env.ProjectURL(), hc: hc, every: o.CallsPerSession, giveUp: giveUp,
			rng: rand.New(rand.NewPCG(o.Seed, uint64(i)+1))}
	}
	var (
		all    []call
		events []Event
	)
	start := time.Now()
	for e, sent := 0, 0; sent < o.Requests && ctx.Err() == nil; e++ {
		n := min(o.Epoch, o.Requests-sent)
		f := pick(rng, catalog)
		if e == 0 {
			f = harness.None{} // the first epoch warms up: its end is the RSS baseline
		}
		midway := -1
		if _, ok := f.(harness.Midway); ok {
			midway = rng.IntN(n)
		} else if err := f.Inject(ctx, env); err != nil {
			return nil, fmt.Errorf("soak: epoch %d: inject %s: %w", e, f.Name(), err)
		}
		calls, ev := runEpoch(ctx, env, workers, e, n, midway, f)
		if ev != nil {
			events = append(events, *ev)
		}
		heal(env)
		all = append(all, calls...)
		sent += n
		ep := Epoch{Index: e, Fault: f.Name(), Params: f.Params()}
		ep.Counts = classify(calls, events, kv.RequestDeadline+catalogue.Tolerance, nil)
		rep.Epochs = append(rep.Epochs, ep)
		rss := processRSS(env)
		if e == 0 {
			rep.RSSWarm = rss
		}
		rep.RSSEnd = rss
		fmt.Fprintf(o.Progress, "soak: %6d/%d  epoch %3d %-16s in budget %4d  late %d  unanswered %d  refused %d  cut %d  killed %d\n",
			sent, o.Requests, e, f.Name(), ep.InBudget, ep.Late, ep.Unanswered, ep.Refused, ep.CutByRestart, ep.LostToKill)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for _, w := range workers {
		w.close()
	}
	clock.Stop() // before the goroutines are counted
	rep.Took = time.Since(start)
	rep.Events = events
	for _, w := range workers {
		rep.Sessions += w.sessions
	}
	rep.Counts = classify(all, events, kv.RequestDeadline+catalogue.Tolerance, &rep.Examples)

	// Stop the proxy (its recorder flushes), then read its audit trail.
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_ = env.Target.Stop(sctx)
	cancel()
	if kept, ok := env.Target.(harness.AuditKeeper); ok {
		checkAuditRows(rep, all, events, kept.KeptTraces)
	} else {
		checkAudit(rep, all, events, filepath.Join(dir, "audit.db"))
	}
	hc.CloseIdleConnections()
	closed = true
	if err := env.Close(context.Background()); err != nil {
		rep.Examples = append(rep.Examples, "tear-down: "+err.Error())
	}
	var stacks string
	rep.GoroutinesAfter, rep.HarnessGoroutines, stacks = settle(rep.GoroutinesBefore)
	if stacks != "" {
		rep.Examples = append(rep.Examples, "goroutines still running:\n"+stacks)
	}
	return rep, nil
}

// heal takes every epoch fault away again.
func heal(env *harness.Env) {
	env.DocmostLink.Heal()
	_ = env.DocmostLink.Up() // after a LinkDown; an error means it was up
	env.Docmost.Reset()
}

// runEpoch sends n requests through the workers; at request midway (if >= 0)
// it injects f, recording a restart or kill as an Event.
func runEpoch(ctx context.Context, env *harness.Env, workers []*worker, epoch, n, midway int, f harness.Fault) ([]call, *Event) {
	var next atomic.Int64
	var mu sync.Mutex
	var out []call
	var ev *Event
	strike := make(chan struct{})
	var wg sync.WaitGroup
	if midway >= 0 {
		wg.Go(func() {
			select {
			case <-strike:
			case <-ctx.Done():
				return
			}
			e := Event{Kind: f.Name(), Start: time.Now()}
			if err := f.Inject(ctx, env); err != nil {
				e.Err = err.Error()
			}
			e.End = time.Now()
			switch f.(type) {
			case harness.ProxyRestart, harness.ProxyKill:
				ev = &e
			}
		})
	}
	var once sync.Once
	for _, w := range workers {
		wg.Go(func() {
			var mine []call
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					break
				}
				if i == midway {
					once.Do(func() { close(strike) })
				}
				c := w.do(ctx)
				c.epoch = epoch
				mine = append(mine, c)
			}
			mu.Lock()
			out = append(out, mine...)
			mu.Unlock()
		})
	}
	if midway < 0 {
		close(strike)
	}
	wg.Wait()
	return out, ev
}

// stalls is the running sum of the time this process was kept from
// running (a *stall.Clock); a worker reads it at both ends of each call.
type stalls interface {
	Stalled() time.Duration
}

// worker is one client session calling in a loop, renewed every `every` calls.
type worker struct {
	clock    stalls
	url      string
	hc       *http.Client
	every    int
	giveUp   time.Duration
	rng      *rand.Rand
	s        *load.Session
	calls    int
	sessions int
}

// initRetries bounds how often a worker tries to open a session while the
// proxy is down (restarting), initRetryDelay apart.
const (
	initRetries    = 200
	initRetryDelay = 25 * time.Millisecond
)

// do sends one tools/call: mostly the small update_page, sometimes the
// paginating search that goes through the LLM.
func (w *worker) do(ctx context.Context) call {
	if w.s == nil || w.calls >= w.every {
		w.close()
		var (
			s       *load.Session
			c       call
			stalled time.Duration
		)
		for try := 0; ; try++ {
			// Each try is a session of its own: one whose initialize
			// was answered but whose notifications/initialized was cut
			// holds an id the proxy would take for a second initialize.
			s = &load.Session{HTTP: w.hc, URL: w.url}
			c, stalled = call{start: time.Now()}, w.clock.Stalled()
			ictx, cancel := context.WithTimeout(ctx, w.giveUp)
			c.err = s.Initialize(ictx)
			cancel()
			if c.err == nil || try >= initRetries || ctx.Err() != nil {
				break
			}
			w.drop(s)
			time.Sleep(initRetryDelay)
		}
		if c.err != nil {
			// The session could not be opened: this request is the
			// last initialize tried, classified as its error says. A
			// tools/call sent without a session would be refused for
			// that, an answer that hides how the initialize ended.
			c.end, c.stalled = time.Now(), w.clock.Stalled()-stalled
			w.drop(s)
			return c
		}
		w.s = s
		w.sessions++
		w.calls = 0
	}
	w.calls++
	tool, args := "docmost_update_page", map[string]any{"page_id": "p1", "content": "soak"}
	if w.rng.IntN(5) == 0 {
		tool, args = "docmost_search", map[string]any{"query": "soak notes"}
	}
	cctx, cancel := context.WithTimeout(ctx, w.giveUp)
	defer cancel()
	c, stalled := call{start: time.Now()}, w.clock.Stalled()
	c.res, c.err = w.s.CallTool(cctx, tool, args)
	c.end, c.stalled = time.Now(), w.clock.Stalled()-stalled
	return c
}

// drop closes a session a failed initialize left open on the proxy (one
// answered before its notifications/initialized failed).
func (w *worker) drop(s *load.Session) {
	if s.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.giveUp)
	_ = s.Close(ctx)
	cancel()
}

func (w *worker) close() {
	if w.s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.giveUp)
	_ = w.s.Close(ctx)
	cancel()
	w.s = nil
}

// classify counts calls; examples (if not nil) collects a few of each problem.
func classify(calls []call, events []Event, limit time.Duration, examples *[]string) Counts {
	var c Counts
	seen := map[string]int{}
	note := func(kind string, x call) {
		if examples == nil || seen[kind] >= 3 {
			return
		}
		seen[kind]++
		msg := fmt.Sprintf("%s: epoch %d, started %s, after %v", kind, x.epoch, x.start.Format("15:04:05.000"), x.end.Sub(x.start).Round(time.Millisecond))
		if x.stalled > 0 {
			msg += fmt.Sprintf(" (%v of it the machine's load, not counted)", x.stalled.Round(time.Millisecond))
		}
		if x.err != nil {
			msg += ": " + x.err.Error()
		}
		*examples = append(*examples, msg)
	}
	for _, x := range calls {
		c.Requests++
		if load.Answered(x.err) && !balancerGaveUp(x.err) {
			if stall.Unstalled(x.end.Sub(x.start), x.stalled) > limit {
				c.Late++
				note("late", x)
			} else {
				c.InBudget++
			}
			if x.err == nil && x.res.IsError {
				c.ToolErrors++
			}
			continue
		}
		ev := overlapping(x, events)
		switch {
		case ev != nil && errors.Is(x.err, syscall.ECONNREFUSED):
			c.Refused++
		case ev != nil && ev.Kind == "proxy-kill":
			c.LostToKill++
		case ev != nil:
			c.CutByRestart++
		default:
			c.Unanswered++
			note("unanswered", x)
		}
	}
	return c
}

// restartSlack widens an event's window: a connection refused just after
// the restart returned, or cut just before it began, belongs to it.
const restartSlack = 50 * time.Millisecond

func overlapping(x call, events []Event) *Event {
	for i := range events {
		e := &events[i]
		if !x.start.After(e.End.Add(restartSlack)) && !x.end.Before(e.Start.Add(-restartSlack)) {
			return e
		}
	}
	return nil
}

// checkAudit looks up the tool_call_trace row of every answered request
// that carried a trace code.
func checkAudit(rep *Report, calls []call, events []Event, path string) {
	if _, err := os.Stat(path); err != nil {
		rep.AuditNote = "the target keeps no audit database the soak can read: rows not checked"
		return
	}
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		rep.AuditNote = "audit database: " + err.Error()
		return
	}
	defer db.Close()
	rows, err := db.Query(`SELECT correlation_id FROM `+audit.Table+` WHERE kind = ?`, string(audit.KindToolCallTrace))
	if err != nil {
		rep.AuditNote = "audit database: " + err.Error()
		return
	}
	have := map[string]bool{}
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			have[id] = true
		}
	}
	rows.Close()
	checkAuditRows(rep, calls, events, func() (map[string]bool, error) { return have, nil })
}

// checkAuditRows checks every answered call's trace code against have, the
// trace codes of the tool_call_trace rows the store kept.
func checkAuditRows(rep *Report, calls []call, events []Event, kept func() (map[string]bool, error)) {
	have, err := kept()
	if err != nil {
		rep.AuditNote = "audit store: " + err.Error()
		return
	}
	rep.AuditChecked = true
	stops := append([]Event(nil), events...)
	sort.Slice(stops, func(i, j int) bool { return stops[i].Start.Before(stops[j].Start) })
	for _, x := range calls {
		if x.err != nil || x.res.Trace == "" {
			continue
		}
		rep.RowsChecked++
		if have[x.res.Trace] {
			continue
		}
		// The process that answered owed the row. If the next stop of the
		// proxy after the answer was a SIGKILL, the row died with that
		// process (the recorder writes behind the answer); after a
		// graceful restart, or the final graceful stop, it must be there.
		lost, next := false, "none before the final stop"
		for _, e := range stops {
			// An answer that left while a kill was under way came from
			// the process being killed: a new one is up only at End.
			if e.End.After(x.end) {
				lost, next = e.Kind == "proxy-kill", e.Kind+" at "+e.Start.Format("15:04:05.000")
				break
			}
		}
		if lost {
			rep.RowsLostToKil++
			continue
		}
		rep.RowsMissing++
		if rep.RowsMissing <= 3 {
			rep.Examples = append(rep.Examples, fmt.Sprintf("row missing: trace %s, answered %s, next stop of the proxy: %s",
				x.res.Trace, x.end.Format("15:04:05.000"), next))
		}
	}
}

// harnessOwned marks goroutines of the harness's own toxiproxy: a
// reset_peer toxic can leave one NoopToxic.Pipe goroutine behind after the
// links are cleared (toxiproxy v2.5.0), which says nothing about the proxy.
const harnessOwned = "github.com/Shopify/toxiproxy/"

// suiteOwned marks the goroutines Ginkgo's parallel mode runs to capture a
// spec's output: it starts them anew around specs, so their number moves
// under a soak run as a spec, and says nothing about the proxy either.
const suiteOwned = "github.com/onsi/ginkgo/v2/internal.(*genericOutputInterceptor)"

// goroutines returns how many goroutines run, not counting the harness's
// toxiproxy ones and the suite's output capture (harness counts those), and
// the stacks of the counted ones.
func goroutines() (n, harness int, stacks string) {
	buf := make([]byte, 1<<20)
	for {
		k := runtime.Stack(buf, true)
		if k < len(buf) {
			buf = buf[:k]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var keep []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.TrimSpace(g) == "" {
			continue
		}
		if strings.Contains(g, harnessOwned) || strings.Contains(g, suiteOwned) {
			harness++
			continue
		}
		keep = append(keep, g)
	}
	return len(keep), harness, strings.Join(keep, "\n\n")
}

// settle waits up to LeakWait for the goroutine count to fall to baseline
// and returns the last count seen, and the stacks when above it.
func settle(baseline int) (n, harness int, stacks string) {
	deadline := time.Now().Add(LeakWait)
	for {
		http.DefaultClient.CloseIdleConnections()
		n, harness, stacks = goroutines()
		if n <= baseline {
			return n, harness, ""
		}
		if time.Now().After(deadline) {
			return n, harness, stacks
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processRSS is the RSS of the process running the proxy: the target's
// own process when it is one, else this process.
func processRSS(env *harness.Env) int64 {
	if b, ok := env.Target.(*harness.Binary); ok {
		if pid := b.PID(); pid > 0 {
			return bench.RSS(pid)
		}
		return -1
	}
	return bench.RSS(os.Getpid())
}

// balancerGaveUp reports whether err is a load balancer's own error page
// (HTTP 502, 503 or 504 with an HTML body, as HAProxy writes when the replica
// behind it died or none is up): no proxy answered the request.
func balancerGaveUp(err error) bool {
	var h *load.HTTPError
	if !errors.As(err, &h) {
		return false
	}
	switch h.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return strings.HasPrefix(strings.TrimSpace(h.Body), "<html>")
	}
	return false
}
