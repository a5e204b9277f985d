package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// --json writes one object a mutant with its verdict and where its time
// went, in seconds, and whether the verdict came from the shared tree: the
// per-mutant figures of docs/ci.md come from it.
func TestMutantsJSONHasEachMutantsTimes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.jsonl")
	outcomes := []mutants.Outcome{
		{Mutant: mutants.Mutant{Name: "a", Kill: mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}}, Verdict: mutants.Killed,
			SetupDuration: 500 * time.Millisecond, BuildDuration: 3 * time.Second, CheckDuration: time.Second, Duration: 4500 * time.Millisecond},
		{Mutant: mutants.Mutant{Name: "b", Kill: mutants.Check{Kind: mutants.Catalogue, Label: "x"}}, Verdict: mutants.Errored,
			Err: errors.New("does not build")},
		{Mutant: mutants.Mutant{Name: "c", Kill: mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}}, Verdict: mutants.Killed,
			Shared: true, SharedVerdict: mutants.Killed, CheckDuration: time.Second, Duration: time.Second},
		{Mutant: mutants.Mutant{Name: "d", Kill: mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}}, Verdict: mutants.Killed,
			SharedVerdict: mutants.Survived},
		{Mutant: mutants.Mutant{Name: "e", Kill: mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}}, Verdict: mutants.Killed,
			NotShared: "it patches a file that is not Go (x.cfg)"},
	}
	if err := writeOutcomesJSON(file, outcomes); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []outcomeJSON
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var o outcomeJSON
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got = append(got, o)
	}
	want := []outcomeJSON{
		{Name: "a", Kind: "go test", Check: "go test -count=1 -failfast ./p -run '^T$'", Verdict: "killed", Setup: 0.5, Build: 3, Run: 1, Whole: 4.5},
		{Name: "b", Kind: "catalogue", Check: "go run ./cmd/mcpchaos run --label x", Verdict: "ERROR", Error: "does not build"},
		{Name: "c", Kind: "go test", Check: "go test -count=1 -failfast ./p -run '^T$'", Verdict: "killed", Shared: true, SharedVerdict: "killed", Run: 1, Whole: 1},
		{Name: "d", Kind: "go test", Check: "go test -count=1 -failfast ./p -run '^T$'", Verdict: "killed", SharedVerdict: "SURVIVED"},
		{Name: "e", Kind: "go test", Check: "go test -count=1 -failfast ./p -run '^T$'", Verdict: "killed", NotShared: "it patches a file that is not Go (x.cfg)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("--json wrote\n%+v\nwant\n%+v", got, want)
	}
}

// The run's summary counts the verdicts the shared tree gave, the mutants
// judged again on their own copies, and those never placed there by
// reason, whatever file each names.
func TestMutantsSummarySaysWhereVerdictsCameFrom(t *testing.T) {
	var b strings.Builder
	writeShared(&b, []mutants.Outcome{
		{Shared: true, SharedVerdict: mutants.Killed}, {Shared: true, SharedVerdict: mutants.Killed},
		{SharedVerdict: mutants.Survived},
		{NotShared: "it changes proxy/a.go outside function bodies"}, {NotShared: "it changes proxy/b/b.go outside function bodies"},
		{NotShared: "it patches a file that is not Go (docs/deploy/haproxy.cfg)"},
	})
	want := `
shared tree: 2 verdict(s) from it, 1 judged again on their own copy, 3 not placed there
    2 it changes a Go file outside function bodies
    1 it patches a file that is not Go
`
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
}
