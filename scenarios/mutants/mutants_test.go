package mutants

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
)

// These tests keep the mutants in step with the code without running the
// slow kills (`make mutants` does that): every patch still applies, and
// every check still names something that exists.

func moduleForTest(t *testing.T) *module {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: the mutant patches cannot be checked (install git)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m, ok := copyForTest(ctx, t); ok {
		return m
	}
	m, err := findModule(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// copyForTest is the module when the tests run in a copy of it, as a
// mutation run judges them: a copy holds what git lists and is no
// repository itself, so every file under its root is one of the module's.
// ok is false in a work tree of git.
func copyForTest(ctx context.Context, t *testing.T) (*module, bool) {
	t.Helper()
	if exec.CommandContext(ctx, "git", "rev-parse", "--git-dir").Run() == nil {
		return nil, false
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off")
	mc := &modcopy.Module{Root: root, Files: files, Env: env}
	return &module{Module: mc, root: root, files: files, env: env}, true
}

var patchName = regexp.MustCompile(`^(\d{2,3})-([a-z0-9-]+)\.patch$`) // numbers past 99 have three digits

func TestEveryMutantIsComplete(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("no mutants")
	}
	names, files := map[string]bool{}, map[string]bool{}
	for i, m := range all {
		if m.Name == "" || names[m.Name] {
			t.Errorf("mutant %d: empty or duplicate name %q", i+1, m.Name)
		}
		names[m.Name] = true
		files[m.PatchFile] = true
		if p := patchName.FindStringSubmatch(m.PatchFile); p == nil || p[2] != m.Name {
			t.Errorf("%s: patch file %q should be NN-%s.patch", m.Name, m.PatchFile, m.Name)
		}
		r := strings.TrimSpace(m.Regression)
		if r == "" || strings.Contains(r, "\n") || !strings.HasSuffix(r, ".") {
			t.Errorf("%s: the regression should be one sentence, got %q", m.Name, m.Regression)
		}
		if err := m.Kill.Validate(); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		if !strings.HasPrefix(m.Patch, "diff --git a/") {
			t.Errorf("%s: %s is not a git diff", m.Name, m.PatchFile)
		}
		changed := PatchedFiles(m.Patch)
		if len(changed) == 0 {
			t.Errorf("%s: the patch changes no file", m.Name)
		}
		for _, f := range changed {
			// Mutants break the product, never the suite that must notice.
			// The SDK canary is a product of its own (users gate upgrades
			// on its verdict): its verdict logic may be mutated too. So is the
			// harness's, for a foreign proxy (verdicts, targets, reports):
			// users gate their own proxies on it; its unit tests notice.
			// The operator CLI (mcpctl), the incident repro's verdicts and the
			// fakes' help are what users read: they may be mutated too. So are
			// the bench's figures and verdicts (a proxy against the floor,
			// goals met): users judge a proxy's cost by them.
			bench := strings.HasPrefix(f, "scenarios/bench/")
			harness := strings.HasPrefix(f, "scenarios/catalogue/") || strings.HasPrefix(f, "scenarios/harness/") || strings.HasPrefix(f, "scenarios/report/") ||
				strings.HasPrefix(f, "scenarios/evidence/") || // what a target's evidence says decides its own-tier verdicts
				strings.HasPrefix(f, "scenarios/world/") // what a target is given to run under
			cli := strings.HasPrefix(f, "cmd/mcpctl/") || f == "cmd/mcpchaos/repro.go" || f == "cmd/mcpchaos/fake.go"
			// A replay's plan and verdict gate CI (mcpchaos replay --expect):
			// they may be mutated too; their unit tests notice.
			cli = cli || strings.HasPrefix(f, "scenarios/replay/")
			// mcpchaos's flags are what users type: a flag silently dropped
			// in some company is a slip its flag-pair test notices. Its
			// replay's plan and verdict gate CI too.
			cli = cli || strings.HasPrefix(f, "cmd/mcpchaos/")
			// The shipped load balancer config runs in production in front
			// of the replicas (docs/deploy.md): it may be mutated too; the
			// cluster scenarios, which run that same file, notice.
			if f == "docs/deploy/haproxy.cfg" {
				continue
			}
			// The soak's verdict is one users gate on too (mcpchaos soak
			// exits 1 on it); its unit tests notice.
			cli = cli || strings.HasPrefix(f, "scenarios/soak/")
			// The stall meter and clock decide what of a late answer the
			// machine's load excuses, in the catalogue's verdicts, the
			// soak's and the load specs': a meter that excuses too much
			// passes every late proxy. Its own tests notice.
			cli = cli || strings.HasPrefix(f, "internal/stall/")
			if strings.HasSuffix(f, "_test.go") || !strings.HasSuffix(f, ".go") ||
				!(strings.HasPrefix(f, "proxy/") || strings.HasPrefix(f, "cmd/mcplocal/") || strings.HasPrefix(f, "scenarios/canary/") || harness || cli || bench) {
				t.Errorf("%s: the patch changes %s; mutants change the proxy's production code only", m.Name, f)
			}
		}
	}
	// Every embedded patch is in the table.
	err := fs.WalkDir(patchFS, "patches", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !files[d.Name()] {
			t.Errorf("patches/%s is embedded but no mutant uses it", d.Name())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryPatchAppliesToTheCurrentTree: a patch that no longer applies
// means the code it mutates changed; update the patch with it (see the
// package doc).
func TestEveryPatchAppliesToTheCurrentTree(t *testing.T) {
	m := moduleForTest(t)
	dir := t.TempDir()
	if err := m.CopyTo(dir); err != nil {
		t.Fatal(err)
	}
	for _, mu := range All() {
		if err := applyPatch(context.Background(), dir, filepath.Dir(dir), mu.Patch, true); err != nil {
			t.Errorf("%s", StaleReport(mu, err))
		}
	}
}

// testFuncs lists the Test functions of a package's test files.
func testFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
	}
	return out
}

// TestEveryCheckNamesWhatExists: a check that selects nothing would let its
// mutant survive (or, for an unknown catalogue label, fail for the wrong
// reason), so every label, spec and test a check names must exist.
func TestEveryCheckNamesWhatExists(t *testing.T) {
	m := moduleForTest(t)
	labels := map[string]bool{}
	for _, s := range catalogue.All() {
		for _, l := range s.Labels {
			labels[l] = true
		}
	}
	var suite strings.Builder
	specFiles, _ := filepath.Glob(filepath.Join(m.root, strings.TrimPrefix(GinkgoSuite, "./"), "*_test.go"))
	for _, f := range specFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		suite.Write(b)
	}
	testName := regexp.MustCompile(`Test\w+`)
	labelWord := regexp.MustCompile(`[A-Za-z0-9_-]+`)
	for _, mu := range All() {
		c := mu.Kill
		switch c.Kind {
		case Catalogue:
			if !labels[c.Label] {
				t.Errorf("%s: no catalogue scenario has label %q", mu.Name, c.Label)
			}
		case Ginkgo:
			for _, l := range labelWord.FindAllString(c.Label, -1) {
				if !labels[l] && !strings.Contains(suite.String(), `"`+l+`"`) {
					t.Errorf("%s: no spec of %s has label %q", mu.Name, GinkgoSuite, l)
				}
			}
			if c.Focus != "" && !strings.Contains(suite.String(), c.Focus) {
				t.Errorf("%s: no spec of %s is named %q", mu.Name, GinkgoSuite, c.Focus)
			}
		case GoTest:
			if _, err := regexp.Compile(c.Run); err != nil {
				t.Errorf("%s: -run %q: %v", mu.Name, c.Run, err)
				continue
			}
			have := testFuncs(t, filepath.Join(m.root, c.Pkg))
			for _, name := range testName.FindAllString(c.Run, -1) {
				if !have[name] {
					t.Errorf("%s: %s has no %s", mu.Name, c.Pkg, name)
				}
			}
		}
	}
}

// A patch that does not apply is an error of the run, never a kill, and the
// error says what to remake: the file and the hunk that failed, and whether
// only the hunk's context moved or the lines it mutates changed.
func TestAStalePatchIsAnErrorNotAKill(t *testing.T) {
	m := moduleForTest(t)
	mu := All()[0]
	for _, c := range []struct {
		name        string
		stale       func(string) string
		contextOnly bool
	}{
		{"a context line changed", func(p string) string {
			return strings.Replace(p, "\n \t", "\n \tthis line is not in the file", 1)
		}, true},
		{"a mutated line changed", func(p string) string {
			return strings.Replace(p, "\n-\t", "\n-\tthis line is not in the file", 1)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu := mu
			mu.Patch = c.stale(mu.Patch)
			o := judge(context.Background(), m, mu, Options{}.withDefaults())
			if o.Verdict != Errored || o.Err == nil || !strings.Contains(o.Err.Error(), "no longer applies") {
				t.Fatalf("a stale patch gave %s (%v), want ERROR: no longer applies", o.Verdict, o.Err)
			}
			var stale *StalePatchError
			if !errors.As(o.Err, &stale) {
				t.Fatalf("err %T %v, want a *StalePatchError", o.Err, o.Err)
			}
			if want := PatchedFiles(mu.Patch)[0]; stale.File != want {
				t.Errorf("File = %q, want %q", stale.File, want)
			}
			if !strings.HasPrefix(stale.Hunk, "@@ -") || !strings.Contains(mu.Patch, stale.Hunk) || !strings.Contains(stale.Hunk, "this line is not in the file") {
				t.Errorf("Hunk is not the hunk that failed:\n%s", stale.Hunk)
			}
			if stale.ContextOnly != c.contextOnly {
				t.Errorf("ContextOnly = %v, want %v", stale.ContextOnly, c.contextOnly)
			}
			if !strings.Contains(o.Err.Error(), stale.Hunk) {
				t.Errorf("the error does not show the hunk:\n%v", o.Err)
			}
		})
	}
}

func TestExcerptNamesTheFailure(t *testing.T) {
	out := `=== RUN   TestA
    a_test.go:12: got 3, want 2
--- FAIL: TestA (0.01s)
ok  	other
FAIL
`
	if got, want := excerpt(out), "--- FAIL: TestA (0.01s)\na_test.go:12: got 3, want 2"; got != want {
		t.Errorf("excerpt =\n%s\nwant\n%s", got, want)
	}
	if got := excerpt("line 1\nline 2\n"); got != "line 1\nline 2" {
		t.Errorf("without a failure line, the excerpt is the tail; got %q", got)
	}
}

func TestSelect(t *testing.T) {
	got, err := Select([]string{"bare-404", "unbounded-paginate"})
	if err != nil || len(got) != 2 || got[0].Name != "unbounded-paginate" || got[1].Name != "bare-404" {
		t.Errorf("Select = %v, %v; want both, in table order", got, err)
	}
	if _, err := Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "unbounded-paginate") {
		t.Errorf("an unknown name should be an error listing the known ones, got %v", err)
	}
}

// The quick loop runs, for the code a change touches, the check of every
// known mutant of that code: the go tests by package, the Ginkgo and
// catalogue checks as one label filter.
func TestQuickPlanRunsTheChecksOfTheMutantsOfTheTouchedCode(t *testing.T) {
	table := []Mutant{
		{Name: "a", Patch: "+++ b/proxy/x/a.go\n", Kill: goTest("./proxy/x", "^TestA$")},
		{Name: "b", Patch: "+++ b/proxy/x/b.go\n", Kill: goTest("./proxy", "^(TestB|TestC)$")},
		{Name: "c", Patch: "+++ b/proxy/x/c.go\n", Kill: goTest("./proxy", "^TestD$")},
		{Name: "d", Patch: "+++ b/proxy/x/d.go\n", Kill: Check{Kind: Ginkgo, Label: "surface && binary", Focus: "survives it"}},
		{Name: "e", Patch: "+++ b/proxy/x/e.go\n", Kill: inCatalogue("restart")},
		{Name: "f", Patch: "+++ b/proxy/y/f.go\n", Kill: inCatalogue("paginate")},
		{Name: "g", Patch: "+++ b/proxy/x/sub/g.go\n", Kill: goTest("./proxy/x/sub", "^TestG$")},
		{Name: "h", Patch: "+++ b/proxy/x/h.go\n", Kill: Check{Kind: Ginkgo, Label: "surface && binary", Focus: "other"}},
	}
	p := quickPlan(table, []string{"proxy/x", "./cmd/z"})
	wantTests := map[string]string{"./proxy/x": "^TestA$", "./proxy": "^(TestB|TestC)$|^TestD$"}
	if len(p.Tests) != len(wantTests) {
		t.Errorf("Tests = %q, want %q", p.Tests, wantTests)
	}
	for pkg, run := range wantTests {
		if p.Tests[pkg] != run {
			t.Errorf("Tests[%s] = %q, want %q", pkg, p.Tests[pkg], run)
		}
	}
	if want := "(surface && binary) || (catalogue && inprocess && (restart))"; p.Labels != want {
		t.Errorf("Labels = %q, want %q", p.Labels, want)
	}
	if p := quickPlan(table, []string{"cmd/z"}); len(p.Tests) != 0 || p.Labels != "" {
		t.Errorf("code no mutant touches gets no checks, got %+v", p)
	}
}

// The slowest kinds of check start first, so none runs alone at the end.
func TestSlowChecksStartFirst(t *testing.T) {
	muts := []Mutant{
		{Name: "t1", Kill: goTest("./p", "^T$")}, {Name: "c1", Kill: inCatalogue("x")},
		{Name: "g1", Kill: Check{Kind: Ginkgo, Label: "l"}}, {Name: "t2", Kill: goTest("./p", "^U$")},
		{Name: "g2", Kill: Check{Kind: Ginkgo, Label: "m"}},
	}
	var got []string
	for _, i := range dispatchOrder(muts) {
		got = append(got, muts[i].Name)
	}
	if want := "g1 g2 c1 t1 t2"; strings.Join(got, " ") != want {
		t.Errorf("dispatch order %q, want %q", strings.Join(got, " "), want)
	}
}

// TestEveryMutantHasItsRowInTheDocs: docs/mutants.md's table lists every
// known mutant by its number and name, once, and names no other: the table
// is where a reader looks up what a failing mutant's promise was.
func TestEveryMutantHasItsRowInTheDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/mutants.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{} // name: number
	for _, r := range regexp.MustCompile(`(?m)^\| (\d+) \| ([a-z0-9-]+) \|`).FindAllStringSubmatch(string(b), -1) {
		if documented[r[2]] != "" {
			t.Errorf("docs/mutants.md lists %s twice", r[2])
		}
		documented[r[2]] = r[1]
	}
	for _, m := range All() {
		p := patchName.FindStringSubmatch(m.PatchFile)
		if p == nil {
			continue // TestEveryMutantIsComplete names it
		}
		if want := strings.TrimLeft(p[1], "0"); documented[m.Name] != want {
			t.Errorf("docs/mutants.md has no row | %s | %s | (it has %q)", want, m.Name, documented[m.Name])
		}
		delete(documented, m.Name)
	}
	for name, n := range documented {
		t.Errorf("docs/mutants.md's row %s names %s, which is no known mutant", n, name)
	}
}
