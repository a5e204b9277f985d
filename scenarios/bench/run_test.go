package bench

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// Progress gets one complete line per step: each target's turn in each
// round (the first target rotating), with its calls and their rate, then
// each kind of idle session on each target.
func TestRunSaysEachStepOnProgress(t *testing.T) {
	fake := docmost(t)
	var progress strings.Builder
	const turn = 100 * time.Millisecond
	_, err := Run(context.Background(), []Target{
		{Name: "a", URL: fake.URL(), Tool: "update_page"},
		{Name: "b", URL: fake.URL(), Tool: "update_page"},
	}, Options{Args: map[string]any{"page_id": "p"}, Sessions: []int{2}, Rounds: 2, Duration: turn, Idle: 1, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	turnLine := regexp.MustCompile(`^bench: 2 sessions, round (\d)/2, (\w) \.\.\. (\d+) calls, (\d+) req/s$`)
	var order []string
	for _, l := range lines[:min(4, len(lines))] {
		m := turnLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("progress line %q is not a whole turn", l)
		}
		order = append(order, m[1]+m[2])
		calls, _ := strconv.Atoi(m[3])
		rate, _ := strconv.Atoi(m[4])
		// A turn of 100 ms lasts well under a second (the tolerance), so
		// its rate is above its count of calls.
		if calls == 0 || rate < calls {
			t.Errorf("%q: %d calls in a %v turn at %d req/s", l, calls, turn, rate)
		}
	}
	if got := strings.Join(order, " "); got != "1a 1b 2b 2a" {
		t.Errorf("turns %s, want 1a 1b 2b 2a (the first target rotating each round)", got)
	}
	want := []string{
		"bench: 1 idle sessions (no stream) on a ...", "bench: 1 idle sessions (stream held) on a ...",
		"bench: 1 idle sessions (no stream) on b ...", "bench: 1 idle sessions (stream held) on b ...",
	}
	if len(lines) != 8 || strings.Join(lines[4:], "\n") != strings.Join(want, "\n") {
		t.Errorf("progress:\n%s\nwant 4 turns, then:\n%s", progress.String(), strings.Join(want, "\n"))
	}
}

// A target whose every call is refused (isError) is measured, not dropped:
// no latency, every call counted as an error, the first one said; a run
// without idle sessions measures none.
func TestRunCountsRefusedCallsAsErrorsAndSaysTheFirst(t *testing.T) {
	fake := docmost(t)
	fake.Set("update_page", upstream.Behavior{Kind: upstream.ErrorResult})
	var progress strings.Builder
	rep, err := Run(context.Background(), []Target{{Name: "refusing", URL: fake.URL(), Tool: "update_page"}},
		Options{Args: map[string]any{"page_id": "p"}, Sessions: []int{2}, Rounds: 2, Duration: 50 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Targets[0]
	l := tr.Latency[0]
	if l.Calls != 0 || l.Errors == 0 || !strings.HasPrefix(l.FirstError, "isError: ") || l.P50Ms != 0 || l.ReqPerSec != 0 {
		t.Errorf("every call refused: %+v, want no calls, the errors counted and the first said", l)
	}
	if len(tr.Idle) != 0 {
		t.Errorf("Idle 0 measured idle sessions: %+v", tr.Idle)
	}
	if rep.LoadAtEnd == "" || rep.Machine == "" {
		t.Errorf("the report does not say where it ran: %q, %q", rep.Machine, rep.LoadAtEnd)
	}
}

// A bench that fails ends its progress line before it returns.
func TestRunEndsItsProgressLineOnFailure(t *testing.T) {
	fake := docmost(t)
	var progress strings.Builder
	_, err := Run(context.Background(), []Target{{Name: "a", URL: fake.URL(), Tool: "no_such_tool"}},
		Options{Sessions: []int{1}, Duration: 50 * time.Millisecond, Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "bench a at 1 sessions") {
		t.Fatalf("error %v, want the target and concurrency named", err)
	}
	if p := progress.String(); !strings.HasSuffix(p, " ...\n") {
		t.Errorf("progress %q: the step that failed is not a line of its own", p)
	}
}

// Idle sessions on a process with profiles: a held stream costs the
// process goroutines, a session without one costs it none (the stand-in
// keeps nothing per session), and each figure is a growth per session.
func TestIdleSessionsAreChargedPerSessionToTheProcess(t *testing.T) {
	bareTemp(t)
	fake := docmost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := func(context.Context) (Target, func(), error) {
		m, err := StartMcplocal(ctx, standIn(t), fake.URL(), nil)
		if err != nil {
			return Target{}, nil, err
		}
		return Target{Name: "stand-in", URL: m.URL, Tool: "update_page", PID: m.PID(), Pprof: m.Pprof}, m.Stop, nil
	}
	target, stop, err := start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	target.Fresh = start
	const n = 10
	rep, err := Run(ctx, []Target{target}, Options{Args: map[string]any{"page_id": "p"}, Idle: n})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Targets[0]
	if tr.Before.Goroutines <= 0 || tr.After.Goroutines <= 0 || tr.Before.RSSBytes <= 0 || tr.After.HeapBytes <= 0 {
		t.Errorf("before %+v, after %+v: want the process's figures", tr.Before, tr.After)
	}
	for _, id := range tr.Idle {
		if id.Opened != n || id.HeapPerSession == -1 || id.RSSPerSession == -1 {
			t.Errorf("%s: %+v, want %d opened and every figure known", id.Kind, id, n)
		}
		// Growth per session: a held stream is a connection served and one
		// forwarded, a handful of goroutines (10 is the tolerance); the
		// whole process's figures, summed or multiplied, are far above.
		const mib = 1 << 20
		switch id.Kind {
		case IdleNoStream:
			if id.GoroutinesPerSession < -0.5 || id.GoroutinesPerSession >= 0.5 {
				t.Errorf("no stream: %.2f goroutines per session, want none", id.GoroutinesPerSession)
			}
		case IdleStream:
			if id.GoroutinesPerSession < 1 || id.GoroutinesPerSession > 10 {
				t.Errorf("stream held: %.2f goroutines per session, want 1 to 10", id.GoroutinesPerSession)
			}
		}
		// The growth of all n sessions is below the whole RSS of such a
		// process before any of them.
		if id.HeapPerSession > mib/4 || id.RSSPerSession*n > tr.Before.RSSBytes {
			t.Errorf("%s: heap %d and RSS %d bytes per session; a stand-in session is far below 256 KiB, and %d of them below the process's %d bytes", id.Kind, id.HeapPerSession, id.RSSPerSession, n, tr.Before.RSSBytes)
		}
	}
}

// A curve says each step on progress, reads the RSS of a target with a
// process at each point, marks no point that went well with an error, and
// runs no idle sweep without sessions calling beside the idle ones.
func TestRunCurveSaysEachStepAndReadsTheProcessRSS(t *testing.T) {
	bareTemp(t)
	fake := docmost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := StartMcplocal(ctx, standIn(t), fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	target := Target{Name: "p", URL: m.URL, Tool: "update_page", PID: m.PID()}
	var progress strings.Builder
	c, err := RunCurve(ctx, []Target{target}, CurveOptions{Args: map[string]any{"page_id": "p"}, Active: []int{1},
		Idle: []int{0, 2}, IdleActive: 1, Duration: 50 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 2 {
		t.Fatalf("%d series, want the active and the idle sweep", len(c.Series))
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.RSSBytes <= 0 || p.FirstError != "" {
				t.Errorf("%s sweep, point %+v: want the process's RSS and no error", s.Sweep, p)
			}
		}
	}
	step := `\d+ req/s, p99 \d+\.\d\d ms, RSS \d+\.\d MiB`
	want := regexp.MustCompile(`^curve: p, 1 active sessions \.\.\. ` + step + `\n` +
		`curve: p, opening idle sessions to 0 \(of at most 2\) \.\.\.\n` +
		`curve: p, 0 idle \+ 1 active sessions \.\.\. ` + step + `\n` +
		`curve: p, opening idle sessions to 2 \(of at most 2\) \.\.\.\n` +
		`curve: p, 2 idle \+ 1 active sessions \.\.\. ` + step + `\n$`)
	if !want.MatchString(progress.String()) {
		t.Errorf("progress:\n%s\nwant it to match:\n%s", progress.String(), want)
	}
	c, err = RunCurve(ctx, []Target{target}, CurveOptions{Args: map[string]any{"page_id": "p"}, Active: []int{1},
		Idle: []int{0, 2}, Duration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 1 || c.Series[0].Sweep != SweepActive {
		t.Errorf("no session calling beside the idle ones: series %+v, want the active sweep alone", c.Series)
	}
}
