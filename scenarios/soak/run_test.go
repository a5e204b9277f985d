package soak

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// runSoak runs a small in-process soak; its scratch directory goes with the test.
func runSoak(t *testing.T, ctx context.Context, o Options) (*Report, error) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	return Run(ctx, o)
}

// sumOf adds up the epochs' counts.
func sumOf(eps []Epoch) Counts {
	var s Counts
	for _, e := range eps {
		s.Requests += e.Requests
		s.InBudget += e.InBudget
		s.Late += e.Late
		s.ToolErrors += e.ToolErrors
		s.Unanswered += e.Unanswered
		s.Refused += e.Refused
		s.CutByRestart += e.CutByRestart
		s.LostToKill += e.LostToKill
	}
	return s
}

// Seed 89962 draws, after the warm-up epoch, a failing tool, then none, a
// graceful proxy restart, none, peer resets, none: faults that take effect
// at once, one that strikes midway, and epochs that must find them healed.
// (Its draw for the warm-up epoch is another fault, which the warm-up does
// not take.)
const faultySeed = 89962

func TestASoakCountsEveryRequestOnceUnderItsDrawnFaults(t *testing.T) {
	const requests, epoch, workers, perSession = 65, 10, 2, 4
	progress := &growAfterFirst{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	rep, err := runSoak(t, ctx, Options{Requests: requests, Seed: faultySeed, Workers: workers, Epoch: epoch,
		CallsPerSession: perSession, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	runtime.KeepAlive(progress.ballast)

	var faults []string
	for _, e := range rep.Epochs {
		faults = append(faults, e.Fault)
	}
	want := "none tool-error none proxy-restart none reset-peer none"
	if strings.Join(faults, " ") != want {
		t.Fatalf("epochs drew %q, want %q (the warm-up takes no fault; the rest are the seed's)", faults, want)
	}
	if rep.Seed != faultySeed || rep.Target != "inprocess" || rep.Budget != Knobs().RequestDeadline ||
		rep.Tolerance != catalogue.Tolerance {
		t.Errorf("report seed %d, target %q, budget %v, tolerance %v; want the run's and the default knobs'",
			rep.Seed, rep.Target, rep.Budget, rep.Tolerance)
	}

	// Every request is counted once, in one class, in its epoch too.
	if rep.Requests != requests {
		t.Errorf("%d requests counted, want %d", rep.Requests, requests)
	}
	if s := sumOf(rep.Epochs); s != rep.Counts {
		t.Errorf("the epochs add up to %+v, the whole soak says %+v", s, rep.Counts)
	}
	for i, e := range rep.Epochs {
		wantN := epoch
		if i == len(rep.Epochs)-1 {
			wantN = requests % epoch
		}
		if e.Index != i || e.Requests != wantN {
			t.Errorf("epoch %d: index %d, %d requests; want %d", i, e.Index, e.Requests, wantN)
		}
		if c := e.InBudget + e.Late + e.Unanswered + e.Refused + e.CutByRestart + e.LostToKill; c != e.Requests {
			t.Errorf("epoch %d: classes add up to %d of %d requests", i, c, e.Requests)
		}
	}

	// A fault injected for an epoch takes effect in it and is healed after it.
	for i, e := range rep.Epochs {
		switch {
		case e.Fault == "tool-error" || e.Fault == "reset-peer":
			if e.ToolErrors == 0 {
				t.Errorf("epoch %d under %s: no isError answer", i, e.Fault)
			}
			if e.Params == "" {
				t.Errorf("epoch %d: the fault's parameters are not reported", i)
			}
		case e.Fault == "none" && i > 0 && rep.Epochs[i-1].Fault != "proxy-restart":
			if 2*e.ToolErrors > e.Requests {
				t.Errorf("epoch %d (none) after %s: %d of %d answers isError: the fault was not healed",
					i, rep.Epochs[i-1].Fault, e.ToolErrors, e.Requests)
			}
		}
	}

	// The restart struck midway through its epoch and is the only event.
	if len(rep.Events) != 1 || rep.Events[0].Kind != "proxy-restart" || rep.Events[0].Err != "" {
		t.Fatalf("events %+v, want the one proxy restart", rep.Events)
	}
	if ev := rep.Events[0]; ev.Start.Before(rep.Started) || ev.End.Before(ev.Start) {
		t.Errorf("restart from %v to %v, soak started %v", ev.Start, ev.End, rep.Started)
	}

	// Each worker opens a new session every perSession calls.
	minS := (requests + perSession - 1) / perSession
	if rep.Sessions < minS || rep.Sessions > minS+workers-1 {
		t.Errorf("%d sessions, want %d to %d for %d requests, %d per session, %d workers",
			rep.Sessions, minS, minS+workers-1, requests, perSession, workers)
	}

	// Every answered request's row was looked up; none went missing.
	if !rep.AuditChecked || rep.RowsChecked == 0 || rep.RowsChecked > rep.InBudget+rep.Late || rep.RowsMissing != 0 {
		t.Errorf("audit: checked %v (%q), %d rows of %d answered, %d missing",
			rep.AuditChecked, rep.AuditNote, rep.RowsChecked, rep.InBudget+rep.Late, rep.RowsMissing)
	}
	if rep.GoroutinesAfter > rep.GoroutinesBefore {
		t.Errorf("goroutines %d before, %d after:\n%s", rep.GoroutinesBefore, rep.GoroutinesAfter, strings.Join(rep.Examples, "\n"))
	}
	// The warm RSS is the first epoch's end: the ballast came after it.
	if rep.RSSWarm <= 0 || rep.RSSEnd-rep.RSSWarm < ballast/2 {
		t.Errorf("RSS warm %d, end %d: want the warm one before the %d MiB ballast, the end one after it",
			rep.RSSWarm, rep.RSSEnd, ballast>>20)
	}
	for _, e := range rep.Examples {
		if strings.HasPrefix(e, "goroutines still running") || strings.HasPrefix(e, "tear-down") {
			t.Errorf("a clean soak reports %q", e)
		}
	}
	if rep.Took <= 0 || rep.Took > took {
		t.Errorf("took %v, the run took %v", rep.Took, took)
	}

	// One progress line per epoch.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != len(rep.Epochs) {
		t.Fatalf("%d progress lines for %d epochs:\n%s", len(lines), len(rep.Epochs), progress)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "soak: ") || !strings.Contains(l, rep.Epochs[i].Fault) {
			t.Errorf("progress line %d %q does not name epoch %d's fault", i, l, i)
		}
	}
	if !strings.Contains(lines[len(lines)-1], "65/65") {
		t.Errorf("the last progress line %q does not say all requests were sent", lines[len(lines)-1])
	}
}

// ballast is how much memory growAfterFirst takes once the first epoch ended.
const ballast = 64 << 20

// growAfterFirst keeps the progress lines, and after the first one grows
// the process's RSS by ballast bytes it touches.
type growAfterFirst struct {
	bytes.Buffer
	ballast []byte
}

func (g *growAfterFirst) Write(p []byte) (int, error) {
	if g.ballast == nil {
		g.ballast = make([]byte, ballast)
		for i := 0; i < len(g.ballast); i += 4096 {
			g.ballast[i] = 1
		}
	}
	return g.Buffer.Write(p)
}

// With no sizes given a soak runs DefaultWorkers sessions of up to
// DefaultCallsPerSession calls, in epochs of DefaultEpoch; knobs given are
// the ones it runs and judges with.
func TestASoakFillsInItsDefaults(t *testing.T) {
	// A deadline shorter than the tolerance: judged against anything but
	// deadline + tolerance, an instant answer would be late.
	kv := Knobs()
	kv.RequestDeadline = 250 * time.Millisecond
	kv.UpstreamCallTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const requests = 40
	rep, err := runSoak(t, ctx, Options{Requests: requests, Seed: 1, Knobs: &kv})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Epochs) != 1 || rep.Requests != requests || rep.Epochs[0].Fault != "none" {
		t.Errorf("%d epochs, %d requests; want one warm-up epoch of %d (DefaultEpoch is %d)",
			len(rep.Epochs), rep.Requests, requests, DefaultEpoch)
	}
	// Fewer calls than DefaultCallsPerSession each: one session per
	// worker that called, at most DefaultWorkers.
	if rep.Sessions < 2 || rep.Sessions > DefaultWorkers {
		t.Errorf("%d sessions, want one for each of up to %d workers", rep.Sessions, DefaultWorkers)
	}
	if rep.Budget != 250*time.Millisecond || rep.Target != "inprocess" {
		t.Errorf("budget %v, target %q; want the given 250ms and the in-process default", rep.Budget, rep.Target)
	}
	if rep.Late != 0 || rep.Epochs[0].Late != 0 || rep.InBudget == 0 {
		t.Errorf("%d late (%d in the epoch), %d in budget: every answer within 250ms + %v is in budget",
			rep.Late, rep.Epochs[0].Late, rep.InBudget, catalogue.Tolerance)
	}
}

func TestASoakNeedsRequests(t *testing.T) {
	for _, n := range []int{0, -1} {
		rep, err := Run(context.Background(), Options{Requests: n})
		if err == nil || rep != nil || !strings.Contains(err.Error(), "--requests must be positive") {
			t.Errorf("Requests %d: %v, %v; want an error and no report", n, rep, err)
		}
	}
}

// cancelAfterFirst cancels the soak's context when the first epoch's
// progress line arrives.
type cancelAfterFirst struct{ cancel context.CancelFunc }

func (c cancelAfterFirst) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// A soak whose context ends stops after the epoch under way, reports the
// context's error, and still tears its world down.
func TestACancelledSoakStopsAndTearsDownItsWorld(t *testing.T) {
	before, _, _ := goroutines()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := runSoak(t, ctx, Options{Requests: 100, Seed: 1, Workers: 2, Epoch: 10, Progress: cancelAfterFirst{cancel}})
	if !errors.Is(err, context.Canceled) || rep != nil {
		t.Fatalf("Run = %v, %v; want no report and the context's error", rep, err)
	}
	if n, _, stacks := settle(before); n > before {
		t.Errorf("%d goroutines after a cancelled soak, %d before:\n%s", n, before, stacks)
	}
}
