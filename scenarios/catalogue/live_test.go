package catalogue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/plainproxy"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// A live target (a proxy already running, named by its URL) runs only the
// scenarios that inject no fault and only read; the rest are not applicable,
// by name. Here the live proxy is the plain proxy in front of a docmost fake.
func TestLiveTargetRunsOnlyReadOnlyScenarios(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up, err := upstream.NewDocmost(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	p, err := plainproxy.Start(ctx, plainproxy.Options{Addr: "127.0.0.1:0", Upstream: up.URL(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	live, err := harness.ParseLive(p.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.ParseLive("ftp://x/mcp"); err == nil {
		t.Error("an ftp URL was accepted")
	}
	ran := map[string]Result{}
	for _, s := range All() {
		r := s.Run(ctx, live)
		if r.NotApplicable != "" {
			if !strings.Contains(r.NotApplicable, "url:"+p.URL()) {
				t.Errorf("%s: not applicable without naming the target: %s", s.Name(), r.NotApplicable)
			}
			continue
		}
		ran[s.Name()] = r
		t.Logf("%s: pass=%v latency=%v %s", s.Name(), r.Pass, r.Latency, r.Reason)
	}
	if len(ran) != 2 {
		t.Errorf("ran %d scenarios, want the two read-only ones: %v", len(ran), keys(ran))
	}
	if r := ran["none × tools/list"]; !r.Pass || !strings.HasPrefix(r.BudgetNote, "budget assumed: ") {
		t.Errorf("tools/list on the live proxy: want a pass on a budget said to be assumed (a URL declares none), got %q: %s", r.BudgetNote, r.Reason)
	}
	// Its 404 for the DELETEd id is what the MCP spec asks; that the body is
	// no JSON-RPC error breaks only mcplocal's error shapes, not claimed.
	if r, ok := ran["none × DELETE with empty JSON body"]; !ok || !r.Pass {
		t.Errorf("DELETE on the live proxy: ran=%v, want a pass (a 404, whatever its body): %s", ok, r.Reason)
	}
}

func keys(m map[string]Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
