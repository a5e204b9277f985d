package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

func TestRunMeasuresEveryTargetAtEveryConcurrency(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	targets := []Target{
		{Name: "a", URL: fake.URL(), Tool: "update_page"},
		{Name: "b", URL: fake.URL(), Tool: "update_page"},
	}
	rep, err := Run(context.Background(), targets, Options{
		Args: map[string]any{"page_id": "p"}, Sessions: []int{1, 4}, Rounds: 2, Duration: 100 * time.Millisecond, Idle: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Targets {
		if len(tr.Latency) != 2 {
			t.Fatalf("%s: %d concurrency levels, want 2", tr.Target.Name, len(tr.Latency))
		}
		for _, l := range tr.Latency {
			if l.Calls == 0 || l.Errors != 0 || l.ReqPerSec <= 0 {
				t.Errorf("%s at %d: %+v", tr.Target.Name, l.Sessions, l)
			}
			if !(l.P50Ms <= l.P90Ms && l.P90Ms <= l.P99Ms) {
				t.Errorf("%s at %d: percentiles out of order: %+v", tr.Target.Name, l.Sessions, l)
			}
		}
		if tr.IdleSessionsOpened != 5 {
			t.Errorf("%s: %d idle sessions opened, want 5 (%s)", tr.Target.Name, tr.IdleSessionsOpened, tr.IdleOpenFirstError)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "REQ/S vs BASE") {
		t.Errorf("table lacks the comparison columns:\n%s", b.String())
	}
}

func TestRunFailsOnAToolTheTargetDoesNotHave(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	_, err = Run(context.Background(), []Target{{Name: "a", URL: fake.URL(), Tool: "no_such_tool"}},
		Options{Sessions: []int{1}, Duration: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("a bench whose every call fails reported success")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond} {
		if got := pct(s, p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
}
