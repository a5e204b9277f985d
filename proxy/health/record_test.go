package health

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// recorder is a Prober holding instances only: record and Instances,
// without probe loops.
func recorder(keys ...[2]string) *Prober {
	p := &Prober{instances: map[string]*Instance{}, probes: map[string]*probing{}}
	for _, k := range keys {
		p.instances[key(k[0], k[1])] = &Instance{Project: k[0], Server: k[1], Status: Unknown}
	}
	return p
}

// TestFastProbeNoteIsBelowLocalOnlyLatency: a readiness probe faster than
// LocalOnlyLatency is noted with its latency rounded to 0.1 ms; one of
// exactly LocalOnlyLatency is not.
func TestFastProbeNoteIsBelowLocalOnlyLatency(t *testing.T) {
	p := recorder([2]string{"p", "s"})
	tg := Target{Project: "p", Server: "s", Check: &config.HealthCheck{Tool: "list_sites"}}
	p.record(tg, 3*time.Millisecond+37*time.Microsecond, nil)
	in := p.Instances()[0]
	want := "answered in 3ms: a probe this fast is likely reading a local table, not reaching the server's upstream; pick a tool that round-trips"
	if in.Status != Healthy || in.Note != want {
		t.Fatalf("status %s note %q, want healthy with %q", in.Status, in.Note, want)
	}
	p.record(tg, LocalOnlyLatency, nil)
	if in := p.Instances()[0]; in.Note != "" {
		t.Fatalf("a probe of exactly %v got the note %q", LocalOnlyLatency, in.Note)
	}
}

// TestChangedAtMovesOnlyWithTheStatus: the time of the last change stays
// while the status stays, and moves when it changes.
func TestChangedAtMovesOnlyWithTheStatus(t *testing.T) {
	p := recorder([2]string{"p", "s"})
	tg := Target{Project: "p", Server: "s", Check: &config.HealthCheck{FailureThreshold: 3}}
	p.record(tg, time.Second, nil)
	first := p.Instances()[0]
	if first.Status != Live || !first.ChangedAt.Equal(first.CheckedAt) {
		t.Fatalf("first probe: %+v, want live, changed when checked", first)
	}
	p.record(tg, time.Second, nil)
	second := p.Instances()[0]
	if !second.ChangedAt.Equal(first.ChangedAt) {
		t.Fatalf("same status again: changedAt moved from %v to %v", first.ChangedAt, second.ChangedAt)
	}
	p.record(tg, time.Second, errors.New("boom"))
	third := p.Instances()[0]
	if third.Status != Degraded || !third.ChangedAt.Equal(third.CheckedAt) {
		t.Fatalf("a failure: %+v, want degraded, changed when checked", third)
	}
}

// TestInstancesAreSortedByProjectThenServer.
func TestInstancesAreSortedByProjectThenServer(t *testing.T) {
	p := recorder([2]string{"b", "a"}, [2]string{"a", "z"}, [2]string{"a", "b"}, [2]string{"c", "a"}, [2]string{"a", "m"})
	var got []string
	for _, in := range p.Instances() {
		got = append(got, in.Project+"/"+in.Server)
	}
	want := []string{"a/b", "a/m", "a/z", "b/a", "c/a"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("Instances() order %v, want %v", got, want)
		}
	}
}

// TestRemoveForgetsTheServer: a removed server is no longer listed, and
// putting it back probes it afresh.
func TestRemoveForgetsTheServer(t *testing.T) {
	down := Target{Project: "p", Server: "gone", URL: "http://127.0.0.1:1/mcp", Check: &config.HealthCheck{IntervalSeconds: 60, TimeoutSeconds: 1}}
	keep := Target{Project: "p", Server: "kept", URL: "http://127.0.0.1:1/mcp", Check: &config.HealthCheck{IntervalSeconds: 60, TimeoutSeconds: 1}}
	p := Start([]Target{down, keep}, time.Second, 100*time.Millisecond)
	defer p.Stop()
	p.Remove("p", "gone")
	got := p.Instances()
	if len(got) != 1 || got[0].Server != "kept" {
		t.Fatalf("after Remove: %+v, want only p/kept", got)
	}
	if len(p.probes) != 1 {
		t.Fatalf("%d probe loops after Remove, want 1", len(p.probes))
	}
}

// TestStateIsReadableAfterStop: Stop leaves the last states readable (the
// admin API may still be answering while the proxy shuts down).
func TestStateIsReadableAfterStop(t *testing.T) {
	p := Start([]Target{{Project: "p", Server: "s", URL: "http://127.0.0.1:1/mcp", Check: &config.HealthCheck{IntervalSeconds: 60, TimeoutSeconds: 1}}}, time.Second, 100*time.Millisecond)
	p.Stop()
	got := make(chan int, 1)
	go func() { got <- len(p.Instances()) }()
	select {
	case n := <-got:
		if n != 1 {
			t.Fatalf("%d instances after Stop, want 1", n)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Instances() did not return within 2 s after Stop")
	}
}
