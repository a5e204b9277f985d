package mutants

import (
	"strings"
	"testing"
)

const genericSrc = `package p

const limit = 3 // data: not mutated

func f(a, b int, ok bool, done func()) int {
	if a < b && !ok {
		done()
		return a + b
	}
	panic("unreachable")
	return len("x" + "y")
}
`

// TestFindMutantsCoversEachSlip: every operator, negation and call statement
// of the source gives its mutants, and nothing else does.
func TestFindMutantsCoversEachSlip(t *testing.T) {
	ms, err := FindMutants("p/p.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Op)
	}
	want := []string{"< → <=", "< → >=", "&& → ||", "drop !", "remove call done()", "+ → -"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("mutants\n got %q\nwant %q", got, want)
	}
	applied := string(ms[4].apply([]byte(genericSrc)))
	if !strings.Contains(applied, "\t\t{}\n\t\treturn a + b") || strings.Contains(applied, "done()") {
		t.Fatalf("removing the call gave:\n%s", applied)
	}
	if a := string(ms[0].apply([]byte(genericSrc))); !strings.Contains(a, "if a <= b && !ok") {
		t.Fatalf("swapping < gave:\n%s", a)
	}
	if ms[0].ID() != "p/p.go:6:7" {
		t.Fatalf("ID %q, want p/p.go:6:7", ms[0].ID())
	}
}

// TestFindMutantsSkipsTests: test files are the checks, not the code.
func TestFindMutantsSkipsTests(t *testing.T) {
	ms, err := FindMutants("p/p_test.go", []byte(genericSrc))
	if err != nil || len(ms) != 0 {
		t.Fatalf("got %d mutants, %v", len(ms), err)
	}
}

func TestGenericScoreLeavesOutWhatDoesNotBuild(t *testing.T) {
	k, j := GenericScore([]GenericOutcome{{Verdict: GKilled}, {Verdict: GTimedOut}, {Verdict: GSurvived}, {Verdict: GNotViable}})
	if k != 2 || j != 3 {
		t.Fatalf("killed %d of %d, want 2 of 3", k, j)
	}
}
