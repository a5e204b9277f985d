package catalogue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/replay"
)

// Every kept file reads as a kept scenario: none is a row that only says it
// is unreadable.
func TestEveryKeptFileReads(t *testing.T) {
	kept := Kept()
	if len(kept) == 0 {
		t.Fatal("no kept replay: the seed incident's is expected in kept/")
	}
	for _, s := range kept {
		if strings.Contains(s.Operation.Name, "(unreadable)") {
			t.Errorf("%s", s.Name())
		}
		if !strings.Contains(s.Promise, PromiseKept) {
			t.Errorf("%s: promise %q does not name %q", s.Name(), s.Promise, PromiseKept)
		}
	}
}

// A kept row judges the replay against its pinned verdict: the seed
// incident pinned to `same` (the hang) fails on mcplocal, where its replay
// is fixed, and says which verdict it saw; pinned to `fixed` it passes.
func TestAKeptRowFailsWhenItsReplayShowsAnotherVerdict(t *testing.T) {
	data, err := keptFiles.ReadFile("kept/seed-hang-1800s.json")
	if err != nil {
		t.Fatal(err)
	}
	k, err := replay.UnmarshalKept(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if r := keptScenario(k).Run(ctx, &harness.InProcess{}); !r.Pass {
		t.Errorf("the seed incident kept as fixed, on mcplocal: %s", r.Reason)
	}
	k.Expect = replay.Same
	r := keptScenario(k).Run(ctx, &harness.InProcess{})
	if r.Pass || !strings.Contains(r.Reason, "expects same, the replay is fixed") {
		t.Errorf("the seed incident pinned to its hang, on mcplocal: pass=%v %s", r.Pass, r.Reason)
	}
}
