package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// The two sweeps of a curve.
const (
	// SweepActive varies the sessions calling in a loop, with no idle one.
	SweepActive = "active"
	// SweepIdle varies the idle sessions held open beside a fixed number of
	// calling ones.
	SweepIdle = "idle"
)

// CurveOptions shape a curve: how cost grows with active and idle sessions.
type CurveOptions struct {
	// Args are the tool's arguments.
	Args map[string]any
	// Active are the steps of the active sweep (sessions calling in a loop).
	Active []int
	// Idle are the steps of the idle sweep (idle sessions held open), in
	// ascending order; sessions are added to reach each step.
	Idle []int
	// IdleActive is the number of sessions calling in a loop at each step of
	// the idle sweep.
	IdleActive int
	// Stream makes every idle session hold its standalone stream (a GET), as
	// the go-sdk and TypeScript clients do.
	Stream bool
	// Openers open idle sessions concurrently (at least 1).
	Openers int
	// Duration of one target's turn at one step.
	Duration time.Duration
	// Progress receives one line per step; nil discards.
	Progress io.Writer
}

// CurvePoint is one target at one step of a sweep. RSSBytes is read at the
// end of the turn, while its sessions (and the idle ones) are still open;
// -1 when unknown.
type CurvePoint struct {
	Active     int     `json:"active"`
	Idle       int     `json:"idle"`
	Calls      int     `json:"calls"`
	Errors     int     `json:"errors"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	ReqPerSec  float64 `json:"reqPerSec"`
	RSSBytes   int64   `json:"rssBytes"`
	FirstError string  `json:"firstError,omitempty"`
}

// CurveSeries is one target's points along one sweep.
type CurveSeries struct {
	Target string       `json:"target"`
	Sweep  string       `json:"sweep"`
	Points []CurvePoint `json:"points"`
}

// Curve is a whole curve run.
type Curve struct {
	Started time.Time `json:"started"`
	// Machine is where it ran, with the load average at the start;
	// LoadAtEnd is the load average when it ended.
	Machine    string        `json:"machine"`
	LoadAtEnd  string        `json:"loadAtEnd"`
	Duration   time.Duration `json:"turnDurationNs"`
	IdleActive int           `json:"idleActive"`
	Stream     bool          `json:"idleStreamHeld"`
	Series     []CurveSeries `json:"series"`
}

// RunCurve measures every target along both sweeps. The active sweep runs
// on the targets as given, alternating which goes first at each step. The
// idle sweep runs on a fresh process of each target (Target.Fresh, when
// set), one target after the other: idle sessions pile up to each step,
// and a step that cannot be reached (a refusal, a descriptor limit) ends
// that target's sweep with the error on its last point.
func RunCurve(ctx context.Context, targets []Target, o CurveOptions) (*Curve, error) {
	if len(targets) == 0 {
		return nil, errors.New("bench: no target")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	o.Openers = max(o.Openers, 1)
	if !slices.IsSorted(o.Idle) {
		return nil, fmt.Errorf("bench: idle steps %v are not in ascending order", o.Idle)
	}
	maxActive := slices.Max(append([]int{1, o.IdleActive}, o.Active...))
	maxIdle := 0
	if len(o.Idle) > 0 {
		maxIdle = slices.Max(o.Idle)
	}
	hc := load.NewHTTPClient(max(maxActive, o.Openers, 8))
	defer hc.CloseIdleConnections()
	c := &Curve{Started: time.Now().UTC(), Machine: Machine(), Duration: o.Duration, IdleActive: o.IdleActive, Stream: o.Stream}
	defer func() { c.LoadAtEnd = loadAverage() }()
	bo := Options{Args: o.Args, Duration: o.Duration}

	active := make([]CurveSeries, len(targets))
	for i, t := range targets {
		active[i] = CurveSeries{Target: t.Name, Sweep: SweepActive}
	}
	for step, n := range o.Active {
		for k := range targets {
			i := (k + step) % len(targets)
			fmt.Fprintf(o.Progress, "curve: %s, %d active sessions ...", targets[i].Name, n)
			p, err := point(ctx, hc, targets[i], n, 0, bo)
			if err != nil {
				fmt.Fprintln(o.Progress)
				return c, err
			}
			fmt.Fprintf(o.Progress, " %.0f req/s, p99 %.2f ms, RSS %s\n", p.ReqPerSec, p.P99Ms, size(p.RSSBytes))
			active[i].Points = append(active[i].Points, p)
		}
	}
	c.Series = append(c.Series, active...)

	if len(o.Idle) > 0 && o.IdleActive > 0 {
		for _, t := range targets {
			s, err := idleSweep(ctx, hc, t, o, bo, maxIdle)
			c.Series = append(c.Series, s)
			if err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// point is one turn of n calling sessions on t, its RSS read at the end.
func point(ctx context.Context, hc *http.Client, t Target, n, idle int, o Options) (CurvePoint, error) {
	p := CurvePoint{Active: n, Idle: idle, RSSBytes: -1}
	lat, nerr, first, took, err := turn(ctx, hc, t, n, o, func() {
		if t.PID > 0 {
			p.RSSBytes = RSS(t.PID)
		}
	})
	if err != nil {
		return p, fmt.Errorf("bench %s at %d active, %d idle sessions: %w", t.Name, n, idle, err)
	}
	l := summarize(n, lat, nerr, first, took)
	p.Calls, p.Errors, p.P50Ms, p.P99Ms, p.ReqPerSec, p.FirstError = l.Calls, l.Errors, l.P50Ms, l.P99Ms, l.ReqPerSec, l.FirstError
	return p, nil
}

// idleSweep piles idle sessions up on a fresh process of t, to each step
// of o.Idle, and measures a point at each.
func idleSweep(ctx context.Context, hc *http.Client, t Target, o CurveOptions, bo Options, maxIdle int) (CurveSeries, error) {
	s := CurveSeries{Target: t.Name, Sweep: SweepIdle}
	on, stop := t, func() {}
	if t.Fresh != nil {
		var err error
		if on, stop, err = t.Fresh(ctx); err != nil {
			return s, fmt.Errorf("bench %s: a fresh process for the idle sweep: %w", t.Name, err)
		}
	}
	defer stop()
	var open []*load.Session
	defer func() { closeAll(open, o.Openers) }()
	for _, want := range o.Idle {
		fmt.Fprintf(o.Progress, "curve: %s, opening idle sessions to %d (of at most %d) ...\n", t.Name, want, maxIdle)
		more, ferr := openMany(ctx, hc, on, o, want-len(open))
		open = append(open, more...)
		hc.CloseIdleConnections() // idle sessions hold no connection but their stream
		fmt.Fprintf(o.Progress, "curve: %s, %d idle + %d active sessions ...", t.Name, len(open), o.IdleActive)
		p, err := point(ctx, hc, on, o.IdleActive, len(open), bo)
		if err != nil {
			// The target refused the step (a bound it keeps, a descriptor
			// limit): the sweep ends there, said on its last point.
			fmt.Fprintf(o.Progress, " %v\n", err)
			if ctx.Err() != nil {
				return s, err
			}
			p.FirstError = err.Error()
			s.Points = append(s.Points, p)
			break
		}
		fmt.Fprintf(o.Progress, " %.0f req/s, p99 %.2f ms, RSS %s\n", p.ReqPerSec, p.P99Ms, size(p.RSSBytes))
		if ferr != "" {
			p.FirstError = fmt.Sprintf("opened %d of %d idle sessions: %s", len(open), want, ferr)
		}
		s.Points = append(s.Points, p)
		if ferr != "" {
			break
		}
	}
	return s, nil
}

// openMany opens n idle sessions on t with o.Openers at once; it stops at
// the first failure and returns it as text.
func openMany(ctx context.Context, hc *http.Client, t Target, o CurveOptions, n int) ([]*load.Session, string) {
	var (
		mu     sync.Mutex
		out    []*load.Session
		first  string
		wg     sync.WaitGroup
		issued int
	)
	for range o.Openers {
		wg.Go(func() {
			for {
				mu.Lock()
				if issued >= n || first != "" || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				issued++
				mu.Unlock()
				s, err := openIdle(ctx, hc, t, o.Args, o.Stream)
				mu.Lock()
				if err != nil {
					if first == "" {
						first = err.Error()
					}
				} else {
					out = append(out, s)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out, first
}

// closeAll closes sessions with workers at once, each within 5 s.
func closeAll(sessions []*load.Session, workers int) {
	next := make(chan *load.Session)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for s := range next {
				cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = s.Close(cctx)
				cancel()
			}
		})
	}
	for _, s := range sessions {
		next <- s
	}
	close(next)
	wg.Wait()
}

// sessionKnobs are mcplocal's bounds on sessions and connections that a
// curve's idle sessions may reach.
var sessionKnobs = []string{"MCPCTL_SESSIONS_MAX", "MCPCTL_SESSIONS_PER_USER_MAX", "MCPCTL_UPSTREAM_SESSIONS_MAX", "MCPCTL_CONNS_MAX"}

// RaisedKnobs is the environment an mcplocal needs to hold sessions open
// sessions of one user at once: each of its session and connection bounds
// whose default is below that, raised to it, unless getenv says the bound
// is set already (the user's setting wins).
func RaisedKnobs(sessions int, getenv func(string) string) []string {
	defaults := knobs.Defaults().Environ()
	var env []string
	for _, k := range sessionKnobs {
		if getenv(k) != "" {
			continue
		}
		for _, kv := range defaults {
			name, v, _ := strings.Cut(kv, "=")
			if n, err := strconv.Atoi(v); name == k && err == nil && n < sessions {
				env = append(env, fmt.Sprintf("%s=%d", k, sessions))
			}
		}
	}
	return env
}
