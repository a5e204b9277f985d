package mutants

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestACopysRunsStartWithNoMutantOn: whatever the environment mcpchaos
// was started in (a mutation run of this very package sets MutantEnv for
// its tests), every command run in a copy starts with no generic and no
// known mutant switched on; a run that judges one names it.
func TestACopysRunsStartWithNoMutantOn(t *testing.T) {
	t.Setenv(MutantEnv, "7")
	t.Setenv(KnownMutantEnv, "inherited")
	m := tinyModule(t)
	ctx := context.Background()
	w, err := newWorkspace(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	show := []string{"sh", "-c", "echo \"[$" + MutantEnv + "][$" + KnownMutantEnv + "]\""}
	if r := w.run(ctx, time.Minute, nil, show...); strings.TrimSpace(r.out) != "[][]" {
		t.Errorf("a run with no mutant named sees %q, want [][]", strings.TrimSpace(r.out))
	}
	if r := w.runEnv(ctx, ".", []string{KnownMutantEnv + "=named"}, time.Minute, nil, show...); strings.TrimSpace(r.out) != "[][named]" {
		t.Errorf("a run naming a known mutant sees %q, want [][named]", strings.TrimSpace(r.out))
	}
	sr := &schemataRun{m: m, w: w}
	bin := &testBin{pkg: "p", path: "sh"}
	if r := sr.exec(ctx, bin, time.Minute, nil, show[1:]...); strings.TrimSpace(r.out) != "[][]" {
		t.Errorf("a schemata run with no mutant on sees %q, want [][]", strings.TrimSpace(r.out))
	}
	if r := sr.exec(ctx, bin, time.Minute, []string{MutantEnv + "=3"}, show[1:]...); strings.TrimSpace(r.out) != "[3][]" {
		t.Errorf("a schemata run judging mutant 3 sees %q, want [3][]", strings.TrimSpace(r.out))
	}
}
