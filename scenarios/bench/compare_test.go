package bench

import (
	"strings"
	"testing"
)

// A run of three targets with round figures: direct, the floor, mcplocal.
func threeTargets() *Report {
	at := func(n int, p50, p99, rps float64) Latency {
		return Latency{Sessions: n, Calls: 100, P50Ms: p50, P90Ms: p50, P99Ms: p99, ReqPerSec: rps}
	}
	return &Report{Targets: []TargetReport{
		{Target: Target{Name: Direct}, Latency: []Latency{at(1, 0.5, 2, 1000), at(64, 10, 40, 4000)}},
		{Target: Target{Name: Floor}, Latency: []Latency{at(1, 1.2, 3, 800), at(64, 20, 60, 2600)}},
		{Target: Target{Name: "mcplocal"}, Latency: []Latency{at(1, 1.5, 4.5, 600), at(64, 22, 63, 2470)}},
	}}
}

func TestAgainstComparesWithTheNamedBaseAtEachConcurrency(t *testing.T) {
	rep := threeTargets()
	got := Against(rep, "mcplocal", Floor)
	want := []Overhead{
		{Target: "mcplocal", Base: Floor, Sessions: 1, AddedP50Ms: 0.3, ReqPerSecRatio: 0.75, P99Ratio: 1.5},
		{Target: "mcplocal", Base: Floor, Sessions: 64, AddedP50Ms: 2, ReqPerSecRatio: 0.95, P99Ratio: 1.05},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Target != w.Target || g.Base != w.Base || g.Sessions != w.Sessions ||
			!near(g.AddedP50Ms, w.AddedP50Ms) || !near(g.ReqPerSecRatio, w.ReqPerSecRatio) || !near(g.P99Ratio, w.P99Ratio) {
			t.Errorf("at %d sessions: got %+v, want %+v", w.Sessions, g, w)
		}
	}
	if d := Against(rep, "mcplocal", Direct); len(d) != 2 || !near(d[1].ReqPerSecRatio, 2470.0/4000) {
		t.Errorf("against direct: %+v", d)
	}
	if Against(rep, "mcplocal", "nobody") != nil || Against(rep, "nobody", Floor) != nil {
		t.Error("a comparison with a target the run does not hold is not empty")
	}
}

func TestJudgeHoldsEachBoundAndMeetsAFigureExactlyAtIt(t *testing.T) {
	for _, c := range []struct {
		o    Overhead
		want string
	}{
		{Overhead{Sessions: 1, AddedP50Ms: 1.3 - 1.2}, "met"},
		{Overhead{Sessions: 1, AddedP50Ms: 0.101}, "missed: added p50 > 0.10 ms"},
		{Overhead{Sessions: 64, ReqPerSecRatio: 0.95, P99Ratio: 1.1}, "met"},
		{Overhead{Sessions: 64, ReqPerSecRatio: 0.94, P99Ratio: 1.1}, "missed: req/s < 95%"},
		{Overhead{Sessions: 64, ReqPerSecRatio: 1.2, P99Ratio: 1.11}, "missed: p99 > 1.10×"},
		{Overhead{Sessions: 64, ReqPerSecRatio: 0.5, P99Ratio: 0}, "missed: req/s < 95%, p99 > 1.10×"},
		{Overhead{Sessions: 16, AddedP50Ms: 9}, ""},
	} {
		if got := Judge(c.o, FloorGoals); got != c.want {
			t.Errorf("Judge(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}

// The table's floor section holds each target against the floor, not
// against the upstream called directly.
func TestTheTableComparesEveryProxyWithTheFloor(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, threeTargets()); err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(b.String(), "against the floor")
	if !ok {
		t.Fatalf("no floor section:\n%s", b.String())
	}
	section, _, _ = strings.Cut(section, "\n\n")
	var rows []string
	for line := range strings.Lines(section) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "mcplocal" {
			rows = append(rows, strings.Join(f, " "))
		}
	}
	want := []string{
		"mcplocal 1 +0.30 ms 75% 1.50× missed: added p50 > 0.10 ms",
		"mcplocal 64 +2.00 ms 95% 1.05× met",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("floor section rows:\n%s\nwant:\n%s\n(whole table:\n%s)", strings.Join(rows, "\n"), strings.Join(want, "\n"), b.String())
	}
	// The first table's baseline stays the upstream called directly.
	if !strings.Contains(b.String(), "+1.00 ms") { // mcplocal 1.5 - direct 0.5
		t.Errorf("the first table does not compare with direct:\n%s", b.String())
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
