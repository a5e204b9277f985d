// Package bench measures MCP targets side by side in one run: the same raw
// load client (package load), the same tool call, alternating rounds so
// that a noisy machine hurts every target alike. It reports latency
// percentiles and throughput per concurrency, the process's RSS and
// goroutines before and after, and what an idle session costs.
package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// Target is one MCP endpoint to measure.
type Target struct {
	// Name labels the target in the table ("direct", "mcplocal", ...).
	Name string `json:"name"`
	// URL is the MCP endpoint.
	URL string `json:"url"`
	// Tool is the tool to call there (a proxy may prefix the upstream's name).
	Tool string `json:"tool"`
	// PID, when set, is the process whose RSS is reported.
	PID int `json:"pid,omitempty"`
	// Pprof, when set, is the base URL of the target's /debug/pprof/: its
	// goroutine count and live heap are reported.
	Pprof string `json:"pprof,omitempty"`
	// Fresh, when set, starts a new process of the target (returning it and
	// its stop): each kind of idle session is measured on one, so that
	// neither the latency rounds nor the other kind leave it memory the
	// runtime keeps and reuses (RSS does not shrink when sessions close).
	Fresh func(context.Context) (Target, func(), error) `json:"-"`
}

// Options shape a run.
type Options struct {
	// Args are the tool's arguments (the same for every target).
	Args map[string]any
	// Sessions are the concurrency levels: that many sessions, each calling in a loop.
	Sessions []int
	// Rounds per concurrency level; targets alternate inside each round.
	Rounds int
	// Duration of one target's turn in one round.
	Duration time.Duration
	// Idle sessions to open (and leave idle) to measure memory per session; 0 skips it.
	Idle int
	// Progress receives one line per step; nil discards.
	Progress io.Writer
}

// Latency is the summary of one target at one concurrency.
type Latency struct {
	Sessions  int     `json:"sessions"`
	Calls     int     `json:"calls"`
	Errors    int     `json:"errors"`
	P50Ms     float64 `json:"p50Ms"`
	P90Ms     float64 `json:"p90Ms"`
	P99Ms     float64 `json:"p99Ms"`
	ReqPerSec float64 `json:"reqPerSec"`
	// FirstError is one error seen, for the reader.
	FirstError string `json:"firstError,omitempty"`
}

// Process is what a target's process looked like at one moment; -1 when unknown.
type Process struct {
	RSSBytes   int64 `json:"rssBytes"`
	Goroutines int   `json:"goroutines"`
	HeapBytes  int64 `json:"heapInuseBytes"`
}

// TargetReport is everything measured on one target.
type TargetReport struct {
	Target  Target    `json:"target"`
	Latency []Latency `json:"latency"`
	Before  Process   `json:"before"`
	After   Process   `json:"after"`
	// Idle is what an idle session cost, once per kind of client (IdleKinds).
	Idle []Idle `json:"idle,omitempty"`
}

// The kinds of idle client the bench measures, side by side in one run.
const (
	// IdleNoStream is a client that holds no standalone stream of its own
	// (a raw client: initialize, one call, nothing more).
	IdleNoStream = "no stream"
	// IdleStream is a client that holds its standalone stream (GET) open, as
	// the go-sdk and TypeScript clients do right after initialize.
	IdleStream = "stream held"
)

// IdleKinds are the kinds measured, in order.
var IdleKinds = []string{IdleNoStream, IdleStream}

// Idle is what Sessions idle sessions of one kind cost: the growth of the
// live heap (after a GC), of RSS and of goroutines, divided by the
// sessions opened; -1 when unknown.
type Idle struct {
	Kind                 string  `json:"kind"`
	Sessions             int     `json:"sessions"`
	Opened               int     `json:"opened"`
	HeapPerSession       int64   `json:"heapBytesPerSession"`
	RSSPerSession        int64   `json:"rssBytesPerSession"`
	GoroutinesPerSession float64 `json:"goroutinesPerSession"`
	FirstError           string  `json:"firstError,omitempty"`
}

// Report is a whole run.
type Report struct {
	Started  time.Time     `json:"started"`
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"turnDurationNs"`
	Machine  string        `json:"machine"`
	// LoadAtEnd is the load average when the run ended.
	LoadAtEnd string         `json:"loadAtEnd"`
	Targets   []TargetReport `json:"targets"`
	// AgainstFloor is every target but direct and the floor against the
	// floor, with the goal met or missed; empty when the run has no floor.
	AgainstFloor []Judged `json:"againstFloor,omitempty"`
}

// Run measures every target.
func Run(ctx context.Context, targets []Target, o Options) (*Report, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("bench: no target")
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	maxSessions := slices.Max(append([]int{1}, o.Sessions...))
	hc := load.NewHTTPClient(max(maxSessions, 8))
	defer hc.CloseIdleConnections()
	rep := &Report{Started: time.Now().UTC(), Rounds: o.Rounds, Duration: o.Duration, Machine: Machine()}
	for _, t := range targets {
		rep.Targets = append(rep.Targets, TargetReport{Target: t, Before: Snapshot(ctx, hc, t)})
	}
	for _, n := range o.Sessions {
		samples := make([][]time.Duration, len(targets))
		errs := make([]int, len(targets))
		first := make([]string, len(targets))
		var busy = make([]time.Duration, len(targets))
		for round := range o.Rounds {
			for k := range targets {
				i := (k + round) % len(targets) // rotate who goes first
				t := targets[i]
				fmt.Fprintf(o.Progress, "bench: %d sessions, round %d/%d, %s ...", n, round+1, o.Rounds, t.Name)
				lat, nerr, ferr, took, err := turn(ctx, hc, t, n, o, nil)
				if err != nil {
					fmt.Fprintln(o.Progress)
					return rep, fmt.Errorf("bench %s at %d sessions: %w", t.Name, n, err)
				}
				samples[i] = append(samples[i], lat...)
				errs[i] += nerr
				busy[i] += took
				if first[i] == "" {
					first[i] = ferr
				}
				fmt.Fprintf(o.Progress, " %d calls, %.0f req/s\n", len(lat), float64(len(lat))/took.Seconds())
			}
		}
		for i := range targets {
			rep.Targets[i].Latency = append(rep.Targets[i].Latency, summarize(n, samples[i], errs[i], first[i], busy[i]))
		}
	}
	for i, t := range targets {
		if o.Idle > 0 {
			for _, kind := range IdleKinds {
				fmt.Fprintf(o.Progress, "bench: %d idle sessions (%s) on %s ...\n", o.Idle, kind, t.Name)
				on, stop := t, func() {}
				if t.Fresh != nil {
					var err error
					if on, stop, err = t.Fresh(ctx); err != nil {
						return rep, fmt.Errorf("bench %s: a fresh process for idle sessions: %w", t.Name, err)
					}
				}
				rep.Targets[i].Idle = append(rep.Targets[i].Idle, idle(ctx, hc, on, o, kind))
				stop()
				// The closed sessions' keep-alive connections go before the
				// next kind's "before".
				hc.CloseIdleConnections()
			}
		}
		// Every session is closed by now; idle keep-alive connections would
		// each hold a goroutine in the target, so they go too.
		hc.CloseIdleConnections()
		rep.Targets[i].After = Snapshot(ctx, hc, t)
	}
	rep.LoadAtEnd = loadAverage()
	rep.AgainstFloor = judgeAgainstFloor(rep)
	return rep, nil
}

// newSession is a load client session on t. A target that issues no
// Mcp-Session-Id (a stateless server, which the MCP spec allows) is
// measured like any other.
func newSession(hc *http.Client, t Target) *load.Session {
	return &load.Session{HTTP: hc, URL: t.URL, Stateless: true}
}

// turn runs n sessions calling the target's tool in a loop for o.Duration.
// Sessions are opened (and closed) outside the timed part; atEnd, if set,
// runs once the timed part is over, while the sessions are still open.
func turn(ctx context.Context, hc *http.Client, t Target, n int, o Options, atEnd func()) (lat []time.Duration, nerr int, first string, took time.Duration, err error) {
	sessions := make([]*load.Session, n)
	for i := range sessions {
		s := newSession(hc, t)
		if err := s.Initialize(ctx); err != nil {
			return nil, 0, "", 0, err
		}
		sessions[i] = s
	}
	defer func() {
		for _, s := range sessions {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = s.Close(cctx)
			cancel()
		}
	}()
	// Warm each session with one call, untimed (the upstream session, caches).
	for _, s := range sessions {
		if _, err := s.CallTool(ctx, t.Tool, o.Args); err != nil {
			return nil, 0, "", 0, fmt.Errorf("warm-up call %s: %w", t.Tool, err)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(o.Duration)
	for _, s := range sessions {
		wg.Go(func() {
			var mine []time.Duration
			var bad int
			var ferr string
			for time.Now().Before(stop) && ctx.Err() == nil {
				t0 := time.Now()
				r, err := s.CallTool(ctx, t.Tool, o.Args)
				d := time.Since(t0)
				switch {
				case err != nil:
					bad++
					if ferr == "" {
						ferr = err.Error()
					}
				case r.IsError:
					bad++
					if ferr == "" {
						ferr = "isError: " + r.Text
					}
				default:
					mine = append(mine, d)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			nerr += bad
			if first == "" {
				first = ferr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	took = time.Since(start)
	if atEnd != nil {
		atEnd()
	}
	return lat, nerr, first, took, ctx.Err()
}

func summarize(n int, lat []time.Duration, nerr int, first string, busy time.Duration) Latency {
	slices.Sort(lat)
	l := Latency{Sessions: n, Calls: len(lat), Errors: nerr, FirstError: first}
	if len(lat) > 0 {
		l.P50Ms, l.P90Ms, l.P99Ms = ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99))
	}
	if busy > 0 {
		l.ReqPerSec = float64(len(lat)) / busy.Seconds()
	}
	return l
}

// pct is the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// idle opens o.Idle sessions of kind with one call each (so any upstream
// session behind them exists), measures the growth, and closes them.
func idle(ctx context.Context, hc *http.Client, t Target, o Options, kind string) Idle {
	r := Idle{Kind: kind, Sessions: o.Idle, HeapPerSession: -1, RSSPerSession: -1, GoroutinesPerSession: -1}
	before := settledSnapshot(ctx, hc, t)
	var open []*load.Session
	defer func() {
		for _, s := range open {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = s.Close(cctx)
			cancel()
		}
	}()
	for range o.Idle {
		s, err := openIdle(ctx, hc, t, o.Args, kind == IdleStream)
		if err != nil {
			r.FirstError = err.Error()
			break
		}
		open = append(open, s)
	}
	hc.CloseIdleConnections() // idle sessions hold no connection but their stream
	after := settledSnapshot(ctx, hc, t)
	r.Opened = len(open)
	if len(open) == 0 {
		return r
	}
	n := int64(len(open))
	if before.HeapBytes >= 0 && after.HeapBytes >= 0 {
		r.HeapPerSession = (after.HeapBytes - before.HeapBytes) / n
	}
	if before.RSSBytes >= 0 && after.RSSBytes >= 0 {
		r.RSSPerSession = (after.RSSBytes - before.RSSBytes) / n
	}
	if before.Goroutines >= 0 && after.Goroutines >= 0 {
		r.GoroutinesPerSession = float64(after.Goroutines-before.Goroutines) / float64(n)
	}
	return r
}

// openIdle opens one session on t with one call (so that any upstream
// session behind it exists), holding its standalone stream when stream is
// set; a session that fails is closed again.
func openIdle(ctx context.Context, hc *http.Client, t Target, args map[string]any, stream bool) (*load.Session, error) {
	s := newSession(hc, t)
	err := s.Initialize(ctx)
	if err == nil && stream {
		err = s.Listen(ctx)
	}
	if err == nil {
		_, err = s.CallTool(ctx, t.Tool, args)
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Close(cctx)
		cancel()
		return nil, err
	}
	return s, nil
}

// settleReads and settleGap bound how long settledSnapshot waits for a
// process's goroutine count to hold still.
const (
	settleReads = 25
	settleGap   = 20 * time.Millisecond
)

// settledSnapshot is t's Snapshot once its goroutine count is the same in
// two readings settleGap apart (at most settleReads readings): a
// connection the client has just closed is still served for a moment on a
// busy machine, and its goroutines belong to no session.
func settledSnapshot(ctx context.Context, hc *http.Client, t Target) Process {
	last := Snapshot(ctx, hc, t)
	for range settleReads {
		select {
		case <-ctx.Done():
			return last
		case <-time.After(settleGap):
		}
		next := Snapshot(ctx, hc, t)
		if next.Goroutines == last.Goroutines {
			return next
		}
		last = next
	}
	return last
}

// Snapshot reads the target's RSS (from /proc, when PID is known) and its
// goroutines and live heap (from pprof after a GC, when Pprof is known).
func Snapshot(ctx context.Context, hc *http.Client, t Target) Process {
	p := Process{RSSBytes: -1, Goroutines: -1, HeapBytes: -1}
	if t.PID > 0 {
		p.RSSBytes = RSS(t.PID)
	}
	if t.Pprof == "" {
		return p
	}
	if body, err := get(ctx, hc, t.Pprof+"/goroutine?debug=1"); err == nil {
		if rest, ok := strings.CutPrefix(body, "goroutine profile: total "); ok {
			p.Goroutines, _ = strconv.Atoi(strings.Fields(rest)[0])
		}
	}
	if body, err := get(ctx, hc, t.Pprof+"/heap?debug=1&gc=1"); err == nil {
		for line := range strings.Lines(body) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "# HeapInuse = "); ok {
				p.HeapBytes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
	}
	return p
}

func get(ctx context.Context, hc *http.Client, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// RSS is the resident set size of process pid in bytes, or -1 when it
// cannot be read (not Linux, process gone).
func RSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n * 1024
			}
		}
	}
	return -1
}

// Machine describes where the run happened: CPU model and count, memory,
// and the load average at the start (a busy machine makes noisy numbers).
func Machine() string {
	var parts []string
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n := 0
		model := ""
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "processor") {
				n++
			}
			if v, ok := strings.CutPrefix(line, "model name"); ok && model == "" {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
			}
		}
		parts = append(parts, fmt.Sprintf("%d× %s", n, model))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if v, ok := strings.CutPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			parts = append(parts, fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20)))
		}
	}
	if l := loadAverage(); l != "" {
		parts = append(parts, "load "+l)
	}
	return strings.Join(parts, ", ")
}

// loadAverage is the 1, 5 and 15 minute load average, "" when unknown.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}
