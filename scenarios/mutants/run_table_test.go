package mutants

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckKindsAreNamed: each kind of check says what it runs; an
// unknown kind says its number.
func TestCheckKindsAreNamed(t *testing.T) {
	for k, want := range map[CheckKind]string{Catalogue: "catalogue", Ginkgo: "ginkgo", GoTest: "go test", 0: "kind 0", 9: "kind 9"} {
		if got := k.String(); got != want {
			t.Errorf("CheckKind(%d) = %q, want %q", int(k), got, want)
		}
	}
}

// TestAValidCheckCanRun: a check that cannot run (no label, no filter, a
// package that is no ./path, no -run, an unknown kind) is refused, and
// says which; an invalid check has no command line.
func TestAValidCheckCanRun(t *testing.T) {
	for _, c := range []struct {
		c    Check
		want string // "" valid
	}{
		{inCatalogue("x"), ""},
		{inCatalogue(""), "catalogue check without a label"},
		{Check{Kind: Ginkgo, Label: "a && b"}, ""},
		{Check{Kind: Ginkgo}, "ginkgo check without a label filter"},
		{goTest("./p", "^T$"), ""},
		{goTest("p", "^T$"), "needs a ./package"},
		{goTest("./p", ""), "needs a ./package"},
		{Check{Kind: 7}, "unknown kind 7"},
	} {
		err := c.c.Validate()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: Validate() = %v, want %q", c.c, err, c.want)
		}
	}
	if got := (Check{Kind: 7}).String(); got != "invalid check (kind 7)" {
		t.Errorf("String() of a check of no kind = %q", got)
	}
	if got := inCatalogue("a b").String(); got != "go run ./cmd/mcpchaos run --label 'a b'" {
		t.Errorf("String() quotes what a shell would split: %q", got)
	}
	if got := goTest("./p", "it's").String(); got != `go test -count=1 -failfast ./p -run 'it'\''s'` {
		t.Errorf("String() quotes a quote: %q", got)
	}
}

// TestByNameFindsAKnownMutantWithItsPatch: ByName gives the mutant of
// the table with its patch read; an unknown name gives none.
func TestByNameFindsAKnownMutantWithItsPatch(t *testing.T) {
	all := All()
	last := all[len(all)-1]
	m, ok := ByName(last.Name)
	if !ok || m.Name != last.Name || m.Patch == "" || m.Patch != last.Patch || m.Kill != last.Kill {
		t.Errorf("ByName(%q) = %+v, %v", last.Name, m.Name, ok)
	}
	if m, ok := ByName("no-such-mutant"); ok || m.Name != "" {
		t.Errorf("ByName of an unknown name = %+v, %v", m, ok)
	}
	if got, err := Select(nil); err != nil || len(got) != len(all) {
		t.Errorf("Select(nil) = %d mutants, %v; want all %d", len(got), err, len(all))
	}
	if p := Quick([]string{"no/such/dir"}); len(p.Tests) != 0 || p.Labels != "" {
		t.Errorf("Quick of code no mutant touches = %+v", p)
	}
	// Every known mutant's own code gets at least its own check.
	p := Quick([]string{filepath.Dir(PatchedFiles(last.Patch)[0])})
	if len(p.Tests) == 0 && p.Labels == "" {
		t.Errorf("Quick of %s's code plans nothing", last.Name)
	}
}

// TestPatchedFilesAreTheNewSides: the files a patch changes are its
// "+++ b/" lines, trimmed, in order.
func TestPatchedFilesAreTheNewSides(t *testing.T) {
	patch := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go \n@@ -1 +1 @@\n-a\n+b\n+++ b/y/z.go\n++++ b/no.go\n"
	if got := strings.Join(PatchedFiles(patch), " "); got != "x.go y/z.go" {
		t.Errorf("PatchedFiles = %q", got)
	}
}

// TestStalePatchesSayWhatToRemake: the error and the report of a patch
// that no longer applies name its files, say whether only the context
// moved, and show the hunk that failed or else git's own words; the
// report of any other error says it.
func TestStalePatchesSayWhatToRemake(t *testing.T) {
	mu := Mutant{Name: "m", PatchFile: "07-m.patch", Regression: "the bug"}
	withHunk := &StalePatchError{Files: []string{"a.go", "b.go"}, File: "a.go", Hunk: "@@ -3,2 +3,2 @@\n-x\n+y", ContextOnly: true, Output: "error: patch failed: a.go:3"}
	noHunk := &StalePatchError{Files: []string{"a.go"}, Output: "error: corrupt patch"}
	for _, c := range []struct {
		err          error
		errHas       []string
		reportHas    []string
		reportHasNot []string
	}{
		{withHunk,
			[]string{"no longer applies to a.go, b.go", "only their context moved", "the hunk of a.go that failed:\n@@ -3,2 +3,2 @@\n-x\n+y"},
			[]string{"m: patches/07-m.patch no longer applies.\n", "  promise: the bug\n", "only their context moved\n", "  the hunk of a.go that failed:\n", "    @@ -3,2 +3,2 @@\n    -x\n    +y\n", "git diff -U1 a.go b.go > scenarios/mutants/patches/07-m.patch"},
			[]string{"git apply:", "reintroduce"}},
		{noHunk,
			[]string{"no longer applies to a.go", "the lines it mutates changed: error: corrupt patch"},
			[]string{"reintroduce the same bug in the current code\n", "  git apply: error: corrupt patch\n"},
			[]string{"the hunk of"}},
		{fmt.Errorf("wrapped: %w", noHunk), nil, []string{"  git apply: error: corrupt patch\n"}, nil},
		{errors.New("disk full"), nil, []string{"m: patches/07-m.patch no longer applies.\n", "  disk full\n"}, []string{"remake"}},
	} {
		if c.errHas != nil {
			for _, w := range c.errHas {
				if !strings.Contains(c.err.Error(), w) {
					t.Errorf("Error() = %q, want it to say %q", c.err.Error(), w)
				}
			}
		}
		r := StaleReport(mu, c.err)
		for _, w := range c.reportHas {
			if !strings.Contains(r, w) {
				t.Errorf("report of %v lacks %q:\n%s", c.err, w, r)
			}
		}
		for _, w := range c.reportHasNot {
			if strings.Contains(r, w) {
				t.Errorf("report of %v says %q:\n%s", c.err, w, r)
			}
		}
	}
}

// TestFailedHunkIsTheOneGitNames: the hunk of the file and line git apply
// says failed, up to the first line that is no hunk line; none when git
// names none or the patch has no such hunk.
func TestFailedHunkIsTheOneGitNames(t *testing.T) {
	patch := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -3,2 +3,2 @@\n a\n-b\n+c\n" +
		"diff --git a/y.go b/y.go\n--- a/y.go\n+++ b/y.go\n@@ -3 +3 @@\n-b\n+c\n\\ No newline at end of file\n@@ -9,2 +9,2 @@\n x\n-y\n+z\n\nafter\n"
	for _, c := range []struct{ out, file, hunk string }{
		{"error: patch failed: x.go:3\n", "x.go", "@@ -3,2 +3,2 @@\n a\n-b\n+c"},
		{"error: patch failed: y.go:3\n", "y.go", "@@ -3 +3 @@\n-b\n+c\n\\ No newline at end of file"},
		{"error: patch failed: y.go:9\n", "y.go", "@@ -9,2 +9,2 @@\n x\n-y\n+z"},
		{"error: patch failed: y.go:4\n", "y.go", ""},
		{"error: patch failed: z.go:3\n", "z.go", ""},
		{"error: corrupt patch at line 2\n", "", ""},
	} {
		file, hunk := failedHunk(patch, c.out)
		if file != c.file || hunk != c.hunk {
			t.Errorf("%q: %q\n%s\nwant %q\n%s", c.out, file, hunk, c.file, c.hunk)
		}
	}
}

// TestAnExcerptIsShort: at most excerptLines lines, each at most
// excerptLineLen bytes and an ellipsis, each once.
func TestAnExcerptIsShort(t *testing.T) {
	var out strings.Builder
	for i := range 20 {
		fmt.Fprintf(&out, "--- FAIL: Test%d (0.00s)\n", i)
	}
	out.WriteString("--- FAIL: Test0 (0.00s)\n")
	got := strings.Split(excerpt(out.String()), "\n")
	if len(got) != excerptLines || got[0] != "--- FAIL: Test0 (0.00s)" || got[excerptLines-1] != "--- FAIL: Test7 (0.00s)" {
		t.Errorf("excerpt of 21 failures: %q", got)
	}
	long := strings.Repeat("x", excerptLineLen+5)
	if got := excerpt("panic: " + long); got != ("panic: " + long)[:excerptLineLen]+"…" {
		t.Errorf("a long line: %q", got)
	}
	if got := clip(strings.Repeat("y", excerptLineLen)); got != strings.Repeat("y", excerptLineLen) {
		t.Errorf("a line of the bound is clipped: %q", got)
	}
	tail := "1\n2\n3\n4\n5\n6\n"
	if got := excerpt(tail); got != "3\n4\n5\n6" {
		t.Errorf("the tail of an output without a failure line: %q", got)
	}
}

// TestProgressLinesSayTheVerdict: one line per mutant done, numbered,
// with the verdict and what killed it (timed out), why it could not be
// judged, or that the shared tree judged it; nothing without a writer.
func TestProgressLinesSayTheVerdict(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, total: 3}
	p.done(Outcome{Mutant: Mutant{Name: "a"}, Verdict: Killed, KilledBy: "go test ./p", TimedOut: true, Duration: 1500 * time.Millisecond, Shared: true})
	p.done(Outcome{Mutant: Mutant{Name: "b"}, Verdict: Errored, Err: errors.New("no build")})
	p.done(Outcome{Mutant: Mutant{Name: "c"}, Verdict: Survived, KilledBy: "x"})
	want := "[ 1/3] a: killed by go test ./p (timed out) [shared tree] (1.5s)\n" +
		"[ 2/3] b: ERROR: no build (0s)\n" +
		"[ 3/3] c: SURVIVED (0s)\n"
	if b.String() != want {
		t.Errorf("progress\n%s\nwant\n%s", b.String(), want)
	}
	silent := &progress{total: 1}
	silent.done(Outcome{Verdict: Survived})
	if silent.n != 1 {
		t.Errorf("a silent progress counted %d", silent.n)
	}
}

// TestParallelRunsEachOnceWithinTheLimit: every index runs once, never
// more than limit at a time, and parallel returns when all are done.
func TestParallelRunsEachOnceWithinTheLimit(t *testing.T) {
	var running, most atomic.Int32
	var mu sync.Mutex
	seen := map[int]int{}
	parallel(12, 3, func(i int) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		seen[i]++
		mu.Unlock()
		running.Add(-1)
	})
	if len(seen) != 12 || most.Load() > 3 || most.Load() < 2 || running.Load() != 0 {
		t.Errorf("ran %d indexes, at most %d at once, %d still running", len(seen), most.Load(), running.Load())
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("index %d ran %d times", i, n)
		}
	}
}

// TestModulePathIsGoModsModuleLine: the module path, quoted or not; a
// go.mod that names none, or none at all, is an error.
func TestModulePathIsGoModsModuleLine(t *testing.T) {
	for gomod, want := range map[string]string{
		"module example.com/a\n\ngo 1.22\n":         "example.com/a",
		"// c\nmodule \"example.com/b\"\ngo 1.22\n": "example.com/b",
		"go 1.22\n": "",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := modulePath(dir)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("modulePath of %q = %q, %v; want %q", gomod, got, err, want)
		}
	}
	if _, err := modulePath(t.TempDir()); err == nil {
		t.Error("no error without a go.mod")
	}
}

// TestLogsGoToTheLogDir: with a LogDir each log is NAME.log there; without
// one there is no log.
func TestLogsGoToTheLogDir(t *testing.T) {
	if w, closeLog := openLog(Options{}, "x"); w != nil {
		closeLog()
		t.Error("a log without a LogDir")
	}
	dir := filepath.Join(t.TempDir(), "logs")
	w, closeLog := openLog(Options{LogDir: dir}, "m.shared")
	if w == nil {
		t.Fatal("no log with a LogDir")
	}
	fmt.Fprint(w, "hello")
	closeLog()
	if b, err := os.ReadFile(filepath.Join(dir, "m.shared.log")); err != nil || string(b) != "hello" {
		t.Errorf("the log holds %q, %v", b, err)
	}
}

// TestOptionsDefaults: what is not set takes its default; what is set
// stays.
func TestOptionsDefaults(t *testing.T) {
	d := Options{}.withDefaults()
	if d.Parallel != DefaultParallel || d.Timeout != DefaultTimeout || d.Dir != "." {
		t.Errorf("defaults %+v", d)
	}
	if d := (Options{Parallel: -1, Timeout: -time.Second}).withDefaults(); d.Parallel != DefaultParallel || d.Timeout != DefaultTimeout {
		t.Errorf("negative values: %+v", d)
	}
	set := Options{Parallel: 1, Timeout: time.Second, Dir: "x"}
	if d := set.withDefaults(); d.Parallel != 1 || d.Timeout != time.Second || d.Dir != "x" {
		t.Errorf("set values changed: %+v", d)
	}
}

// TestSmallerSaysWhatItFound: the smaller check is the fastest test that
// failed, in its package, with the mutant's environment; without one the
// summary says why there is none.
func TestSmallerSaysWhatItFound(t *testing.T) {
	mu := Mutant{Name: "m", Kill: Check{Kind: Ginkgo, Label: "l", SDKPath: true}}
	s := Smaller{Mutant: mu, Packages: []string{"./p"}, Failed: []FailedTest{{"./p", "TestA(x)", time.Second}, {"./p", "TestB", 2 * time.Second}}}
	c, ok := s.Kill()
	want := goTest("./p", `^TestA\(x\)$`)
	want.SDKPath = true
	if !ok || c != want {
		t.Errorf("Kill() = %v, %v; want %v", c, ok, want)
	}
	if got := s.summary(); got != "killed by "+want.String() {
		t.Errorf("summary %q", got)
	}
	for _, c := range []struct {
		s    Smaller
		want string
	}{
		{Smaller{Mutant: mu, Err: errors.New("no build")}, "no smaller check: no build"},
		{Smaller{Mutant: mu}, "no smaller check: its patch changes no package with tests"},
		{Smaller{Mutant: mu, Packages: []string{"./p", "./q"}}, "no smaller check: the tests of ./p, ./q pass with it"},
	} {
		if _, ok := c.s.Kill(); ok {
			t.Errorf("%+v: a smaller check without a failed test", c.s)
		}
		if got := c.s.summary(); got != c.want {
			t.Errorf("summary %q, want %q", got, c.want)
		}
	}
}
