package catalogue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// TestEveryCatalogueFaultIsInTheRegistry: whatever fault a scenario uses,
// `--fault NAME` can build it too.
func TestEveryCatalogueFaultIsInTheRegistry(t *testing.T) {
	known := map[string]bool{}
	for _, k := range harness.Faults() {
		known[k.Name] = true
	}
	for _, s := range All() {
		if !known[s.Fault.Name()] {
			t.Errorf("%s: fault %q is not in the registry (harness.Faults)", s.Name(), s.Fault.Name())
		}
	}
}

// TestInjectedFaultNeedsWhatItRequires: a fault injected into a scenario
// whose world or target lacks what it requires makes it not applicable, with
// the reason; one whose needs are met leaves it applicable.
func TestInjectedFaultNeedsWhatItRequires(t *testing.T) {
	small := byName(t, "none × small tools/call")
	in := &harness.InProcess{}
	for spec, want := range map[string]string{
		"llm-not_found":               "fault llm-not_found: the scenario's world lacks LLM fake",
		"latency:link=everything":     "fault latency: the scenario's world lacks everything fake",
		"proxy-kill":                  "target inprocess lacks kill",
		"tool-hang:server=everything": "fault tool-hang: the scenario's world lacks everything fake",
	} {
		f, err := harness.ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		if why := small.WithFault(f).NotApplicable(in); !strings.Contains(why, want) {
			t.Errorf("--fault %s on %q: not applicable %q, want %q", spec, small.Name(), why, want)
		}
	}
	for _, spec := range []string{"latency", "handler-panic", "proxy-restart", "tool-error:tool=update_page"} {
		f, _ := harness.ParseFault(spec)
		if why := small.WithFault(f).NotApplicable(in); why != "" {
			t.Errorf("--fault %s on %q in process: not applicable (%s), want it run", spec, small.Name(), why)
		}
	}
	paginate := byName(t, "llm-not_found × paginating tools/call via paginate")
	f, _ := harness.ParseFault("llm-overloaded")
	if why := paginate.WithFault(f).NotApplicable(in); why != "" {
		t.Errorf("an LLM fault on a scenario with an LLM: not applicable (%s)", why)
	}
}

// TestMidwayFaultThatNeverStruckFails: a Midway fault on an operation that
// never strikes it (a small call ends before any strike point) fails the
// scenario, saying so, however well the proxy answered; the same fault on an
// operation that strikes it does not.
func TestMidwayFaultThatNeverStruckFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := byName(t, "none × small tools/call").WithFault(harness.UpstreamRestart{}).Run(ctx, &harness.InProcess{})
	if r.Pass || r.NotApplicable != "" {
		t.Fatalf("a fault that never struck passed (or did not apply: %q)", r.NotApplicable)
	}
	var struck *Breach
	for i, b := range r.Breaches {
		if b.Promise == PromiseStruck {
			struck = &r.Breaches[i]
		}
	}
	if struck == nil || struck.Tier != Harness || !strings.Contains(struck.Detail, "upstream-restart (strikes midway) never struck") {
		t.Fatalf("breaches %v: want a harness breach saying the fault never struck", r.Breaches)
	}
	if len(r.Breaches) != 1 {
		t.Errorf("the proxy answered well, yet breaches %v", r.Breaches)
	}
	r = byName(t, "upstream-restart × tools/call across the fault").Run(ctx, &harness.InProcess{})
	if !r.Pass {
		t.Fatalf("the same fault, struck: %s", r.Reason)
	}
}
