package catalogue

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Which rows go warm: a row whose fault strikes before the proxy starts or
// restarts a process, or whose world arms failpoints or keeps its own
// directory, gets a cold world; every other row may share a proxy with the
// rows of the same options, and rows of other options do not share it.
func TestWhichRowsGoWarm(t *testing.T) {
	none := byName(t, "none × small tools/call")
	for _, c := range []struct {
		s    Scenario
		cold string // "" for warm
	}{
		{none, ""},
		{byName(t, "latency × small tools/call"), ""},
		{byName(t, "slicer × small tools/call"), ""},
		{byName(t, "tool-error × paginating tools/call"), ""},
		{byName(t, "none × paginating tools/call via paginate"), "LLM stages"},
		{byName(t, "llm-empty × paginating tools/call via paginate"), "LLM stages"},
		{byName(t, "none × begin_session"), "LLM stages"},
		{byName(t, "none × concurrent tools/calls on one session and on several"), ""},
		{byName(t, "blackhole × small tools/call"), "upstream connections or sessions broken"},
		{byName(t, "down × small tools/call"), "upstream connections or sessions broken"},
		{byName(t, "limit-data × paginating tools/call"), "upstream connections or sessions broken"},
		{byName(t, "reset-peer × small tools/call"), "upstream connections or sessions broken"},
		{byName(t, "bandwidth × small tools/call"), "upstream connections or sessions broken"},
		{byName(t, "ingress-hairpin × small tools/call"), "upstream connections or sessions broken"},
		{byName(t, "tool-hang × small tools/call"), "upstream connections or sessions broken"},
		{none.WithFault(harness.HandshakeStall{}), "upstream connections or sessions broken"},
		{none.WithFault(harness.ToolSlow{Tool: "search", Delay: time.Second}), "upstream connections or sessions broken"},
		{byName(t, "proxy-restart × reconnect after restart"), "restarts the proxy"},
		{none.WithFault(harness.ProxyKill{}), "restarts the proxy"},
		{byName(t, "upstream-restart × tools/call across the fault"), "restarts the upstream"},
		{none.WithFault(harness.HandlerPanic{Tool: "docmost/search"}), "strikes before the proxy starts"},
		{none.WithFault(harness.HandlerHang{Tool: "docmost/search"}), "strikes before the proxy starts"},
		{withEnv(none, func(o *harness.EnvOptions) { o.Dir = t.TempDir() }), "its own scratch directory"},
		{byName(t, "none × MCPCTL_SESSIONS_PER_USER_MAX and MCPCTL_SESSIONS_MAX decide: sessions over a cap are refused naming it"), "knobs of its own"},
	} {
		got := ColdReason(c.s)
		if c.cold == "" && got != "" || !strings.Contains(got, c.cold) {
			t.Errorf("%s: cold reason %q, want %q", c.s.Name(), got, c.cold)
		}
	}

	key := func(s Scenario) string {
		k, err := WarmKey(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(none) != key(byName(t, "latency × small tools/call")) {
		t.Error("two rows of the same world do not share it")
	}
	for name, other := range map[string]Scenario{
		"users":  withEnv(none, func(o *harness.EnvOptions) { o.Users = map[string]string{"alice": "a"} }),
		"strict": withEnv(none, func(o *harness.EnvOptions) { o.Strict = true }),
		"llm":    withEnv(none, func(o *harness.EnvOptions) { o.LLM = true }),
	} {
		if key(other) == key(none) {
			t.Errorf("a row with other %s shares the world of one without", name)
		}
	}
}

func withEnv(s Scenario, f func(*harness.EnvOptions)) Scenario {
	f(&s.Env)
	return s
}

// warmSample are rows run one after the other on one warm in-process proxy:
// each fault that a warm row leaves behind (a toxic, a fake's tool
// behaviour) is followed by a row that would see it, and rows that need a
// fresh proxy (a fault that may break its upstream session, a restart) sit
// between them.
func warmSample(t *testing.T) []Scenario {
	none := byName(t, "none × small tools/call")
	return []Scenario{
		none,
		none.WithFault(harness.Latency{Ms: 2500}), // late: past the 1.5s deadline
		none,
		byName(t, "tool-error × paginating tools/call"),
		byName(t, "none × paginating tools/call"),
		byName(t, "blackhole × small tools/call"),
		byName(t, "none × tools/list"),
		byName(t, "slicer × small tools/call"),
		byName(t, "none × concurrent tools/calls on one session and on several"),
		byName(t, "proxy-restart × a new session after the restart"),
		none,
	}
}

// The same rows give the same verdicts warm and cold: a warm row inherits
// nothing of the rows before it on the same proxy.
func TestWarmRowsJudgeAsColdOnes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sample := warmSample(t)
	warm := &Warm{NewTarget: func() harness.Target { return &harness.InProcess{} }}
	warm.Plan(sample)
	defer warm.Close()
	var warmRes []Result
	for _, s := range sample {
		warmRes = append(warmRes, warm.Run(ctx, s, 1))
	}
	if len(warm.worlds) != 0 {
		t.Errorf("%d worlds still open after the last row that could use them", len(warm.worlds))
	}
	wantWarm := 0
	for i, s := range sample {
		if ColdReason(s) == "" && i > 0 {
			wantWarm++
		}
		if got, want := warmRes[i].Warm, ColdReason(s) == "" && i > 0; got != want {
			t.Errorf("row %d, %s: warm %v, want %v (%s)", i, s.Name(), got, want, ColdReason(s))
		}
	}
	if warm.WarmRows != wantWarm || warm.WarmRows+warm.ColdRows != len(sample) {
		t.Errorf("%d rows warm, %d cold: want %d warm of %d", warm.WarmRows, warm.ColdRows, wantWarm, len(sample))
	}
	for i, s := range sample {
		cold := s.RunSeeded(ctx, &harness.InProcess{}, 1)
		w := warmRes[i]
		if w.Pass != cold.Pass || !slices.Equal(promises(w), promises(cold)) {
			t.Errorf("row %d, %s: warm %v %v, cold %v %v\nwarm: %s\ncold: %s", i, s.Name(), w.Pass, promises(w), cold.Pass, promises(cold), w.Reason, cold.Reason)
		}
	}
	if warmRes[1].Pass {
		t.Errorf("%s passed: the sample's late row proves nothing", sample[1].Name())
	}
}

// promises are the promises a result broke, in order.
func promises(r Result) []string {
	var out []string
	for _, b := range r.Breaches {
		out = append(out, string(b.Tier)+":"+b.Promise)
	}
	return out
}

// A world of bounds of its own, or that arms failpoints, is cold, as one
// that sets knobs by name is: the proxy it drives would carry them into
// the next row.
func TestAWorldOfItsOwnBoundsOrFailpointsIsCold(t *testing.T) {
	none := byName(t, "none × small tools/call")
	for want, s := range map[string]Scenario{
		"knobs of its own": withEnv(none, func(o *harness.EnvOptions) { o.Bounds = harness.CompressedBounds() }),
		"arms failpoints":  withEnv(none, func(o *harness.EnvOptions) { o.Failpoints = harness.NewFailpoints() }),
	} {
		if got := ColdReason(s); !strings.Contains(got, want) {
			t.Errorf("cold reason %q, want %q", got, want)
		}
	}
}

// With Off, every row runs cold, on a proxy of its own; a row the target
// cannot run is not run at all, warm or cold.
func TestWarmOffRunsEveryRowCold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	none := byName(t, "none × small tools/call")
	w := &Warm{NewTarget: func() harness.Target { return &harness.InProcess{} }, Off: true}
	defer w.Close()
	for i := range 2 {
		if r := w.Run(ctx, none, 1); r.Warm || !r.Pass {
			t.Errorf("run %d with Off: warm=%v pass=%v %s", i, r.Warm, r.Pass, r.Reason)
		}
	}
	na := byName(t, "none × mcplocal serve on a non-loopback address with no users")
	if r := w.Run(ctx, na, 1); r.NotApplicable == "" || r.Pass {
		t.Errorf("a row in-process cannot run: not applicable %q, pass %v", r.NotApplicable, r.Pass)
	}
	if w.ColdRows != 2 || w.WarmRows != 0 || len(w.worlds) != 0 {
		t.Errorf("with Off: %d cold, %d warm, %d worlds kept; want 2 cold and none kept", w.ColdRows, w.WarmRows, len(w.worlds))
	}
}

// Without a plan, a warm world is kept to the end of the run, for every
// row of its options, and Close stops it.
func TestWarmCloseStopsTheWorldsItKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	none := byName(t, "none × small tools/call")
	w := &Warm{NewTarget: func() harness.Target { return &harness.InProcess{} }}
	first, second := w.Run(ctx, none, 1), w.Run(ctx, none, 2)
	if first.Warm || !second.Warm || !first.Pass || !second.Pass {
		t.Errorf("two rows of one world: warm %v then %v, pass %v %v", first.Warm, second.Warm, first.Pass, second.Pass)
	}
	if len(w.worlds) != 1 {
		t.Fatalf("%d worlds kept, want the one", len(w.worlds))
	}
	var kept *harness.Env
	for _, env := range w.worlds {
		kept = env
	}
	w.Close()
	if len(w.worlds) != 0 {
		t.Errorf("%d worlds kept after Close", len(w.worlds))
	}
	if err := kept.Reuse(ctx, 3); err == nil {
		t.Error("the world Close stopped can still be reused")
	}
}
