package mutants

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestProfileLinesParse: each block line of a text profile gives its file,
// its two ends and whether it ran; the mode line, blank lines and lines
// that are no block are passed over.
func TestProfileLinesParse(t *testing.T) {
	prof := "mode: set\n" +
		"\n" +
		"example.com/m/p/p.go:3.40,5.3 2 1\n" +
		"example.com/m/p/p.go:5.3,7.2 1 0\n" +
		"C:/x/p.go:8.1,9.2 1 12\n" + // a colon in the name: the last one ends it
		"no colon here\n" +
		"example.com/m/p/p.go:3.40,5.3 2\n" + // two fields
		"example.com/m/p/p.go:3.40,5.3 2 1 9\n" + // four fields
		"example.com/m/p/p.go:3.40 2 1\n" + // one end
		"example.com/m/p/p.go:3.40,5.3,6.1 2 1\n" + // three ends
		"example.com/m/p/p.go:3,5.3 2 1\n" + // an end without a column
		"example.com/m/p/p.go:3.40,5 2 1\n" +
		"example.com/m/p/p.go:x.40,5.3 2 1\n" +
		"example.com/m/p/p.go:3.40,5.y 2 1\n"
	blocks, err := parseProfile(strings.NewReader(prof))
	if err != nil {
		t.Fatal(err)
	}
	want := []coverBlock{
		{file: "example.com/m/p/p.go", line0: 3, col0: 40, line1: 5, col1: 3, ran: true},
		{file: "example.com/m/p/p.go", line0: 5, col0: 3, line1: 7, col1: 2, ran: false},
		{file: "C:/x/p.go", line0: 8, col0: 1, line1: 9, col1: 2, ran: true},
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks\n got %+v\nwant %+v", blocks, want)
	}
}

// TestABlockHoldsFromItsStartToBeforeItsEnd: a block holds a position
// from its first line and column up to, not including, its last column.
func TestABlockHoldsFromItsStartToBeforeItsEnd(t *testing.T) {
	b := coverBlock{line0: 3, col0: 10, line1: 6, col1: 5}
	one := coverBlock{line0: 3, col0: 10, line1: 3, col1: 20}
	for _, c := range []struct {
		b         coverBlock
		line, col int
		want      bool
	}{
		{b, 2, 50, false},
		{b, 3, 9, false},
		{b, 3, 10, true},
		{b, 3, 90, true},
		{b, 4, 1, true},
		{b, 6, 4, true},
		{b, 6, 5, false},
		{b, 7, 1, false},
		{one, 3, 9, false},
		{one, 3, 10, true},
		{one, 3, 19, true},
		{one, 3, 20, false},
	} {
		if got := c.b.contains(c.line, c.col); got != c.want {
			t.Errorf("%d.%d,%d.%d holds %d:%d = %v, want %v", c.b.line0, c.b.col0, c.b.line1, c.b.col1, c.line, c.col, got, c.want)
		}
	}
}

// TestAGuardInOverlappingBlocksRanIfAnyRan: a guard inside a block that
// ran and one that did not (an outer and an inner block) is covered; a
// guard in a block of a function that ran but outside every block that
// ran is not; the function-body fallback counts only blocks starting
// inside that function.
func TestAGuardInOverlappingBlocksRanIfAnyRan(t *testing.T) {
	f := "example.com/m/p/p.go"
	blocks := []coverBlock{
		{file: f, line0: 3, col0: 1, line1: 9, col1: 2, ran: false},
		{file: f, line0: 4, col0: 1, line1: 5, col1: 2, ran: true},
		{file: f, line0: 12, col0: 1, line1: 13, col1: 2, ran: false},
		{file: f, line0: 20, col0: 1, line1: 21, col1: 2, ran: true}, // in another function
	}
	guards := []guard{
		{file: f, line: 4, col: 5, ids: []int{1}},                                               // in both: one ran
		{file: f, line: 7, col: 5, ids: []int{2}},                                               // in the outer one only
		{file: f, line: 12, col: 5, ids: []int{3}, fn: [4]int{11, 20, 15, 2}},                   // in a block that did not run
		{file: f, line: 14, col: 5, ids: []int{4}, fn: [4]int{11, 20, 15, 2}},                   // in no block; no block of its function ran
		{file: f, line: 16, col: 5, ids: []int{5}, fn: [4]int{16, 1, 22, 2}},                    // in no block; its function ran
		{file: f, line: 30, col: 5, ids: []int{6}},                                              // in no block, no function known
		{file: "example.com/m/p/q.go", line: 4, col: 5, ids: []int{7}, fn: [4]int{1, 1, 99, 1}}, // no block of its file
	}
	// A function whose blocks, as profiles give them, follow each other:
	// an if-branch that did not run between two blocks that did.
	g := "example.com/m/p/g.go"
	blocks = append(blocks,
		coverBlock{file: g, line0: 2, col0: 20, line1: 4, col1: 3, ran: true},
		coverBlock{file: g, line0: 4, col0: 3, line1: 6, col1: 4, ran: false},
		coverBlock{file: g, line0: 6, col0: 4, line1: 9, col1: 2, ran: true})
	guards = append(guards,
		guard{file: g, line: 5, col: 5, ids: []int{8}, fn: [4]int{2, 20, 10, 2}}, // in the branch not taken
		guard{file: g, line: 7, col: 5, ids: []int{9}, fn: [4]int{2, 20, 10, 2}}) // after it
	got := coveredIDs(blocks, guards)
	want := map[int]bool{1: true, 5: true, 9: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("covered %v, want %v", got, want)
	}
}

// TestTestNamesInRunOutputs: failedTest names the first test or spec a
// run says failed (a subtest by its full name, a spec by its place);
// without drops it, or every spec at its place, from a selection.
func TestTestNamesInRunOutputs(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"--- FAIL: TestA/sub (0.00s)\n--- FAIL: TestA (0.00s)\n", "TestA/sub"},
		{"    --- FAIL: TestB/x (0.00s)\n--- FAIL: TestB (0.00s)\n", "TestB/x"},
		{"--- PASS: TestA (0.00s)\nPASS\n", ""},
		{"  [FAIL] Health [It] turns unhealthy\n  /tmp/x/scenarios/health_test.go:42\n", "/tmp/x/scenarios/health_test.go:42"},
		{"--- FAIL: TestC (0.00s)\n  [FAIL] x\n  a_test.go:1\n", "TestC"},
	} {
		if got := failedTest(c.out); got != c.want {
			t.Errorf("failedTest(%q) = %q, want %q", c.out, got, c.want)
		}
	}
	left, texts, ok := without([]string{"TestA", "TestAB", "TestB"}, nil, "TestA", false)
	if !ok || strings.Join(left, " ") != "TestAB TestB" || texts != nil {
		t.Errorf("dropping TestA: %v %v %v", left, texts, ok)
	}
	left, texts, ok = without([]string{"x_test.go:1#a", "x_test.go:10#b"}, []string{"A"}, "x_test.go:10", true)
	if !ok || strings.Join(left, " ") != "x_test.go:1#a" || strings.Join(texts, " ") != "A" {
		t.Errorf("dropping a spec with fewer texts than names: %v %v %v", left, texts, ok)
	}
}

// TestShortForms: a list of tests names three and counts the rest; the
// first line of an output is its first non-blank one.
func TestShortForms(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"A", "B", "C"}, "A B C"},
		{[]string{"A", "B", "C", "D"}, "A B C and 1 more"},
		{[]string{"A", "B", "C", "D", "E"}, "A B C and 2 more"},
	} {
		if got := clipList(c.names); got != c.want {
			t.Errorf("clipList(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	for in, want := range map[string]string{"\n\n  a b\nc\n": "a b", "x": "x", "": ""} {
		if got := firstLineOf(in); got != want {
			t.Errorf("firstLineOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRanNothingReadsTheCount: only a run that says it ran no spec (or
// no test) ran nothing; "Ran 10 of" is not "Ran 0 of".
func TestRanNothingReadsTheCount(t *testing.T) {
	for out, want := range map[string]bool{
		"Ran 10 of 270 Specs in 1s\n": false,
		"Ran 0 of 0 Specs in 0s\n":    true,
		"":                            false,
	} {
		if got := ranNothing(out); got != want {
			t.Errorf("ranNothing(%q) = %v, want %v", out, got, want)
		}
	}
}

// TestATestsCoverageIsItsOwnRun: testCoverage hands the run the flags that
// write a profile and read it back: a test that failed judges nothing
// (nil), even when it wrote a profile; one that passed and ran no block
// covers nothing but still judges (empty, not nil); an error of the run
// is the caller's.
func TestATestsCoverageIsItsOwnRun(t *testing.T) {
	covTmp := t.TempDir()
	profile := func(args []string) string {
		for _, a := range args {
			if p, ok := strings.CutPrefix(a, "-test.coverprofile="); ok {
				return p
			}
		}
		t.Fatalf("no -test.coverprofile in %q", args)
		return ""
	}
	write := func(args []string, s string) {
		if err := os.WriteFile(profile(args), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prof := "mode: atomic\nexample.com/m/p/p.go:3.1,4.2 1 1\n"
	for _, c := range []struct {
		name    string
		run     func(args ...string) (bool, error)
		blocks  int // -1: nil
		wantErr bool
	}{
		{"passed", func(args ...string) (bool, error) { write(args, prof); return true, nil }, 1, false},
		{"passed, no block", func(args ...string) (bool, error) { write(args, "mode: atomic\n"); return true, nil }, 0, false},
		{"failed", func(args ...string) (bool, error) { write(args, prof); return false, nil }, -1, false},
		{"could not run", func(args ...string) (bool, error) { write(args, prof); return true, errors.New("no such binary") }, -1, true},
		{"passed, no profile", func(args ...string) (bool, error) { return true, nil }, -1, true},
	} {
		blocks, err := testCoverage(covTmp, c.run)
		if (err != nil) != c.wantErr || (blocks == nil) != (c.blocks < 0) || (c.blocks >= 0 && len(blocks) != c.blocks) {
			t.Errorf("%s: %d blocks (nil %v), err %v; want %d blocks (-1: nil), err %v", c.name, len(blocks), blocks == nil, err, c.blocks, c.wantErr)
		}
	}
	if ents, _ := os.ReadDir(covTmp); len(ents) != 0 {
		t.Errorf("the runs left %d entries in the scratch directory", len(ents))
	}
}

// TestALongProfileLineParses: a block line longer than a scanner's
// default buffer (a long import path) is read like any other.
func TestALongProfileLineParses(t *testing.T) {
	file := "example.com/" + strings.Repeat("d/", 40_000) + "p.go"
	blocks, err := parseProfile(strings.NewReader("mode: set\n" + file + ":1.1,2.2 1 1\n"))
	if err != nil || len(blocks) != 1 || blocks[0].file != file {
		t.Fatalf("%d blocks, %v", len(blocks), err)
	}
}
