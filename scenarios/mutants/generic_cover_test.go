package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// TestEachTestIsCreditedOnlyWithWhatItRan: the coverage that selects the
// tests judging a mutant is each test's own. Run one after the other in the
// same scratch directory, the second test's profile must not hold the first
// test's blocks: counters left behind by one run, merged into the next
// profile, would send every mutant the first test reaches to the second
// too.
func TestEachTestIsCreditedOnlyWithWhatItRan(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"go.mod":      "module example.com/c\n\ngo 1.24\n",
		"p/p.go":      "package p\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { A() }\n\nfunc TestB(t *testing.T) { B() }\n",
	})
	bin := filepath.Join(dir, "p.test")
	build := exec.Command("go", "test", "-c", "-cover", "-o", bin, "./p")
	build.Dir, build.Env = dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	covTmp := t.TempDir()
	ran := func(test string) map[int]bool {
		t.Helper()
		blocks, err := testCoverage(covTmp, func(args ...string) (bool, error) {
			cmd := exec.Command(bin, append([]string{"-test.run", "^" + test + "$"}, args...)...)
			cmd.Dir = filepath.Join(dir, "p")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Logf("%s: %v\n%s", test, err, out)
			}
			return err == nil, nil
		})
		if err != nil || blocks == nil {
			t.Fatalf("%s: blocks %v, %v", test, blocks, err)
		}
		lines := map[int]bool{} // the first line of each block the test ran
		for _, b := range blocks {
			if b.ran && filepath.Base(b.file) == "p.go" {
				lines[b.line0] = true
			}
		}
		return lines
	}
	if a := ran("TestA"); !a[3] || a[7] {
		t.Fatalf("TestA ran the blocks at lines %v, want A's (3) and not B's (7)", a)
	}
	if b := ran("TestB"); b[3] || !b[7] {
		t.Errorf("TestB, run after TestA, is credited with the blocks at lines %v: want B's (7) alone, not A's (3)", b)
	}
	if ents, _ := os.ReadDir(covTmp); len(ents) != 0 {
		t.Errorf("the runs left %d entries in the scratch directory", len(ents))
	}
}
