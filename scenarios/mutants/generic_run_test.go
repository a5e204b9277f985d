package mutants

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// lessModule writes a module whose package p has three generic mutants:
// Less's < becomes <= (its test never compares equal numbers: survives)
// or >= (its test sees it: killed), and Cat's + becomes - (on strings: not
// viable). It returns the module's root.
func lessModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"go.mod": "module example.com/less\n\ngo 1.22\n",
		"p/p.go": "package p\n\n// Less reports a < b.\nfunc Less(a, b int) bool { return a < b }\n\n// Cat joins a and b.\nfunc Cat(a, b string) string { return a + b }\n",
		"p/p_test.go": `package p

import "testing"

func TestLess(t *testing.T) {
	if !Less(1, 2) || Less(2, 1) {
		t.Fatal("Less is wrong")
	}
}
`,
		"q/doc.md": "no Go here\n",
	})
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

// TestListGenericNamesThePackagesMutants: the mutants of a package
// directory however it is spelled, in file order; a directory without Go
// files is an error.
func TestListGenericNamesThePackagesMutants(t *testing.T) {
	dir := lessModule(t)
	ctx := context.Background()
	for _, pkg := range []string{"p", "./p", "p/", "./p/."} {
		ms, err := ListGeneric(ctx, dir, []string{pkg})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.ID()+" "+m.Op)
		}
		want := "p/p.go:4:37 < → <=; p/p.go:4:37 < → >=; p/p.go:7:41 + → -"
		if strings.Join(got, "; ") != want {
			t.Errorf("%s: mutants %q, want %q", pkg, strings.Join(got, "; "), want)
		}
	}
	if _, err := ListGeneric(ctx, dir, []string{"q"}); err == nil || !strings.Contains(err.Error(), "no Go files") {
		t.Errorf("a directory without Go files: %v, want an error saying so", err)
	}
}

// TestRunGenericJudgesEachMutantInACopy is --per-mutant-copy: each mutant
// is applied alone to a copy, vetted (one that does not build is not
// viable), and judged by the checks in order; the first failing check
// kills it, one still running at the timeout kills it as timed out, and a
// mutant every check passes survives. Outcomes come in mutant order and
// the copy's file is restored after each.
func TestRunGenericJudgesEachMutantInACopy(t *testing.T) {
	dir := lessModule(t)
	ctx := context.Background()
	var progress bytes.Buffer
	outs, err := RunGeneric(ctx, GenericOptions{
		Pkgs:     []string{"./p"},
		Checks:   [][]string{{"go", "vet", "{pkg}"}, {"go", "test", "-count=1", "{pkg}"}},
		Dir:      dir,
		Timeout:  2 * time.Minute,
		Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, o.Mutant.Op+": "+string(o.Verdict))
	}
	want := "< → <=: survived; < → >=: killed; + → -: not viable"
	if strings.Join(got, "; ") != want {
		t.Fatalf("verdicts %q, want %q\n%s", strings.Join(got, "; "), want, progress.String())
	}
	if k := outs[1]; k.KilledBy != "go test -count=1 ./p" || !strings.Contains(k.Detail, "Less is wrong") || k.Took <= 0 {
		t.Errorf("the kill: by %q, detail %q, took %v; want the go test check, its failure, a duration", k.KilledBy, k.Detail, k.Took)
	}
	if nv := outs[2]; !strings.Contains(nv.Detail, "mismatched types") && !strings.Contains(nv.Detail, "operator - not defined") {
		t.Errorf("not viable, detail %q: want the compiler's reason", nv.Detail)
	}
	if n := strings.Count(progress.String(), "\n        "); n != 1 {
		t.Errorf("%d detail lines, want the kill's alone:\n%s", n, progress.String())
	}
	for _, w := range []string{"[1/3] p/p.go:4:37 < → <=: survived", "[2/3] p/p.go:4:37 < → >=: killed go test -count=1 ./p", "        --- FAIL: TestLess", "[3/3] p/p.go:7:41 + → -: not viable"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}

	// A vet past the bound says nothing of whether the mutant builds: it
	// is an error (judged again by a rerun), not a mutant left out of the
	// score as not viable. --at and --limit select.
	outs, err = RunGeneric(ctx, GenericOptions{
		Pkgs:    []string{"p"},
		Dir:     dir,
		Timeout: time.Millisecond,
		IDs:     []string{"p/p.go:4:37"},
		Limit:   1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Mutant.Op != "< → <=" || outs[0].Verdict != GError || !strings.Contains(outs[0].Detail, "still running") {
		t.Fatalf("a vet past its bound: %+v, want the first mutant at 4:37 in error, still running", outs)
	}

	// A check that cannot start is no verdict either.
	outs, err = RunGeneric(ctx, GenericOptions{
		Pkgs:    []string{"p"},
		Checks:  [][]string{{"./no-such-check"}},
		Dir:     dir,
		Timeout: 2 * time.Minute,
		IDs:     []string{"p/p.go:4:37"},
		Limit:   1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Verdict != GError || outs[0].Detail == "" {
		t.Fatalf("a check that cannot start: %+v, want an error saying why", outs)
	}
}

// cancelOnWrite cancels a run at its first progress line.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) { c.cancel(); return len(p), nil }

// TestRunGenericStopsWhenCancelled: a cancelled run hands out no more
// mutants, returns what it judged and says it was cancelled.
func TestRunGenericStopsWhenCancelled(t *testing.T) {
	dir := lessModule(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs, err := RunGeneric(ctx, GenericOptions{
		Pkgs:     []string{"p"},
		Checks:   [][]string{{"go", "test", "-count=1", "{pkg}"}},
		Dir:      dir,
		Progress: cancelOnWrite{cancel}, // and no Timeout: the default bounds each run
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(outs) != 3 || outs[0].Verdict != GSurvived || outs[2].Verdict != "" {
		t.Fatalf("outcomes %+v: want the first judged and the last never started", outs)
	}
}
