package mutants

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestControlRefusesACheckThatFailsUnmutated: with Control, each distinct
// check runs once on the unpatched module first; a check that fails there
// cannot tell its mutant apart, which is reported as an error saying so
// and never judged, while the others are judged as usual.
func TestControlRefusesACheckThatFailsUnmutated(t *testing.T) {
	t.Setenv(relayEnv, "1")
	m := tinyModule(t)
	broken := goTest("./p", "^TestRelayOn$")
	broken.SDKPath = true // fails with no mutant: the relay is off
	muts := []Mutant{
		{Name: "seen", Patch: patchTwo("return 3"), Kill: goTest("./p", "^TestTwo$")},
		{Name: "unjudgeable", Patch: patchTwo("return 3"), Kill: broken},
	}
	var progress bytes.Buffer
	opts := Options{Dir: m.root, Timeout: time.Minute, Control: true, OwnCopies: true, Progress: &progress}.withDefaults()
	out := runMutants(context.Background(), opts, muts)
	if out[0].Verdict != Killed {
		t.Errorf("seen: %s (%v), want killed", out[0].Verdict, out[0].Err)
	}
	if o := out[1]; o.Verdict != Errored || o.Err == nil || !strings.Contains(o.Err.Error(), "fails without the mutant, so it proves nothing") ||
		!strings.Contains(o.Err.Error(), "the relay is off") {
		t.Errorf("unjudgeable: %s (%v), want an error saying its check fails without the mutant, and why", o.Verdict, o.Err)
	}
	for _, w := range []string{
		"control: 2 distinct check(s) from 1 build(s)",
		"control: " + muts[0].Kill.String() + " passes without any mutant",
		"control: " + broken.String() + " FAILS without any mutant",
		"unjudgeable: ERROR",
	} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}
}

// TestUnknownMutantsAreRefused: Run, Build, BuildWith and FindSmaller
// of a name that is no known mutant say so and build nothing; BuildWith
// of no name is refused.
func TestUnknownMutantsAreRefused(t *testing.T) {
	ctx := context.Background()
	out := Run(ctx, Options{Only: []string{"no-such-mutant"}})
	if len(out) != 1 || out[0].Verdict != Errored || out[0].Err == nil || !strings.Contains(out[0].Err.Error(), "unknown mutant(s) no-such-mutant") {
		t.Errorf("Run of an unknown mutant: %+v", out)
	}
	if _, err := Build(ctx, "no-such-mutant", t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown mutant") {
		t.Errorf("Build of an unknown mutant: %v", err)
	}
	if _, err := BuildWith(ctx, nil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "at least one") {
		t.Errorf("BuildWith of no mutant: %v", err)
	}
	s := FindSmaller(ctx, Options{Only: []string{"no-such-mutant"}})
	if len(s) != 1 || s[0].Err == nil || !strings.Contains(s[0].Err.Error(), "unknown mutant") {
		t.Errorf("FindSmaller of an unknown mutant: %+v", s)
	}
}

// TestNoModuleNoVerdicts: outside a Go module every mutant asked for is an
// error, and FindSmaller says why.
func TestNoModuleNoVerdicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("GOFLAGS", "")
	muts, err := Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := runMutants(ctx, Options{Dir: dir}.withDefaults(), muts[:2])
	for i, o := range out {
		if o.Verdict != Errored || o.Err == nil || o.Mutant.Name != muts[i].Name {
			t.Errorf("%s outside a module: %s (%v)", muts[i].Name, o.Verdict, o.Err)
		}
	}
	s := FindSmaller(ctx, Options{Dir: dir, Only: []string{muts[0].Name}})
	if len(s) != 1 || s[0].Err == nil {
		t.Errorf("FindSmaller outside a module: %+v", s)
	}
}

// TestASharedTreeThatCannotBePlannedLeavesEveryMutantToItsCopy: when the
// shared tree cannot be planned (here: no go.mod), no mutant is placed and
// each says why; a mutant whose check failed the control is left to its
// own copy too.
func TestASharedTreeThatCannotBePlannedLeavesEveryMutantToItsCopy(t *testing.T) {
	muts := []Mutant{{Name: "a", Kill: goTest("./p", "^A$")}, {Name: "b", Kill: goTest("./p", "^B$")}}
	var b bytes.Buffer
	plan, shared, why := planShared(context.Background(), &module{root: t.TempDir()}, muts, nil, &progress{w: &b})
	if plan != nil || len(shared) != 0 || len(why) != 2 || !strings.Contains(why[0], "the shared tree could not be planned") || why[0] != why[1] {
		t.Errorf("plan %v, shared %v, why %v", plan, shared, why)
	}
	if !strings.Contains(b.String(), "shared tree: not planned") {
		t.Errorf("progress: %q", b.String())
	}
	if got := indentLines("a\nb\n", "  "); got != "  a\n  b" {
		t.Errorf("indentLines = %q", got)
	}
	if n := countChecks([]*sharedGroup{{checks: make([]Check, 2)}, {checks: make([]Check, 3)}}); n != 5 {
		t.Errorf("countChecks = %d, want 5", n)
	}
}
