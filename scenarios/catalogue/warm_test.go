package catalogue

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
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
		{byName(t, "blackhole × small tools/call"), ""},
		{byName(t, "down × small tools/call"), ""},
		{byName(t, "tool-error × paginating tools/call"), ""},
		{byName(t, "ingress-hairpin × small tools/call"), ""},
		{byName(t, "none × paginating tools/call via paginate"), ""},
		{byName(t, "proxy-restart × reconnect after restart"), "restarts the proxy"},
		{none.WithFault(harness.ProxyKill{}), "restarts the proxy"},
		{byName(t, "upstream-restart × tools/call across the fault"), "restarts the upstream"},
		{none.WithFault(harness.HandlerPanic{Tool: "docmost/search"}), "strikes before the proxy starts"},
		{none.WithFault(harness.HandlerHang{Tool: "docmost/search"}), "strikes before the proxy starts"},
		{withEnv(none, func(o *harness.EnvOptions) { o.Failpoints = failpoint.New() }), "arms failpoints"},
		{withEnv(none, func(o *harness.EnvOptions) { o.Dir = t.TempDir() }), "its own scratch directory"},
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
	if key(none) != key(byName(t, "blackhole × small tools/call")) {
		t.Error("two rows of the same world do not share it")
	}
	for name, other := range map[string]Scenario{
		"users":  withEnv(none, func(o *harness.EnvOptions) { o.Users = map[string]string{"alice": "a"} }),
		"knobs":  withEnv(none, func(o *harness.EnvOptions) { kv := harness.Compressed(); kv.RequestDeadline++; o.Knobs = &kv }),
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
// each fault that leaves something behind (a toxic, a downed link, a hung
// call, a fake's tool behaviour, a hairpin on the link's address) is
// followed by a row that would see it.
var warmSample = []string{
	"none × small tools/call",
	"blackhole × small tools/call",
	"none × small tools/call",
	"tool-error × paginating tools/call",
	"none × paginating tools/call",
	"down × small tools/call",
	"none × tools/list",
	"ingress-hairpin × small tools/call",
	"latency × small tools/call",
	"tool-hang × small tools/call",
	"none × small tools/call",
}

// The same rows give the same verdicts warm and cold: a warm row inherits
// nothing of the rows before it on the same proxy.
func TestWarmRowsJudgeAsColdOnes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	warm := &Warm{NewTarget: func() harness.Target { return &harness.InProcess{} }}
	defer warm.Close()
	var warmRes []Result
	for _, name := range warmSample {
		warmRes = append(warmRes, warm.Run(ctx, byName(t, name), 1))
	}
	if warm.WarmRows != len(warmSample)-1 || warm.ColdRows != 1 {
		t.Errorf("%d rows warm, %d cold: want all but the first warm", warm.WarmRows, warm.ColdRows)
	}
	for i, name := range warmSample {
		cold := byName(t, name).RunSeeded(ctx, &harness.InProcess{}, 1)
		w := warmRes[i]
		if i > 0 && !w.Warm {
			t.Errorf("%s: ran cold in the warm run", name)
		}
		if w.Pass != cold.Pass || !slices.Equal(promises(w), promises(cold)) {
			t.Errorf("row %d, %s: warm %v %v, cold %v %v\nwarm: %s\ncold: %s", i, name, w.Pass, promises(w), cold.Pass, promises(cold), w.Reason, cold.Reason)
		}
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
