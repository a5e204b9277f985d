package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// --json writes one object a mutant with its verdict and where its time
// went, in seconds: the per-mutant figures of docs/ci.md come from it.
func TestMutantsJSONHasEachMutantsTimes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.jsonl")
	outcomes := []mutants.Outcome{
		{Mutant: mutants.Mutant{Name: "a", Kill: mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}}, Verdict: mutants.Killed,
			SetupDuration: 500 * time.Millisecond, BuildDuration: 3 * time.Second, CheckDuration: time.Second, Duration: 4500 * time.Millisecond},
		{Mutant: mutants.Mutant{Name: "b", Kill: mutants.Check{Kind: mutants.Catalogue, Label: "x"}}, Verdict: mutants.Errored,
			Err: errors.New("does not build")},
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
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("--json wrote\n%+v\nwant\n%+v", got, want)
	}
}
