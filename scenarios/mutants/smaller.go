package mutants

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Smaller is what FindSmaller found for one mutant: the go tests of the
// packages its patch changes that fail with it applied and pass without it.
type Smaller struct {
	Mutant Mutant
	// Packages are the packages whose tests were run ("./proxy/entry"):
	// each package a patched Go file is in that has tests.
	Packages []string
	// Failed are the top-level tests that failed with the mutant applied
	// and passed on the unpatched module, fastest first.
	Failed []FailedTest
	// Err says why the mutant could not be tried (it does not apply or
	// build, or a package's tests hung under it).
	Err      error
	Duration time.Duration
}

// FailedTest is one top-level test that killed a mutant.
type FailedTest struct {
	Pkg, Name string
	Took      time.Duration // as the test reported it
}

// Kill is the smallest go test check that kills the mutant: the fastest
// test that failed with it, in its package, with the Env of the mutant's
// present check (false if none failed).
func (s Smaller) Kill() (Check, bool) {
	if len(s.Failed) == 0 {
		return Check{}, false
	}
	f := s.Failed[0]
	c := goTest(f.Pkg, "^"+regexp.QuoteMeta(f.Name)+"$")
	c.SDKPath = s.Mutant.Kill.SDKPath
	return c, true
}

// testedPackages are the packages of patch's Go files that have tests in
// files (the module's), as "./dir", in patch order.
func testedPackages(patch string, files []string) []string {
	hasTests := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			hasTests[path.Dir(f)] = true
		}
	}
	var out []string
	for _, f := range PatchedFiles(patch) {
		d := path.Dir(f)
		if strings.HasSuffix(f, ".go") && hasTests[d] && !slices.Contains(out, "./"+d) {
			out = append(out, "./"+d)
		}
	}
	return out
}

// goTestFailed is a top-level test's failure line in go test's output.
var goTestFailed = regexp.MustCompile(`(?m)^--- FAIL: (\S+) \(([0-9.]+)s\)`)

// failedTests are the top-level tests out says failed, in pkg.
func failedTests(pkg, out string) []FailedTest {
	var fs []FailedTest
	for _, m := range goTestFailed.FindAllStringSubmatch(out, -1) {
		secs, _ := strconv.ParseFloat(m[2], 64)
		fs = append(fs, FailedTest{Pkg: pkg, Name: m[1], Took: time.Duration(secs * float64(time.Second))})
	}
	return fs
}

// pkgRun is one run of a package's whole tests in a copy.
type pkgRun struct {
	failed []FailedTest
	err    error // could not build, or did not finish
}

// runPackageTests builds each of pkgs' tests once in w and runs them whole
// (every test, no -failfast), with env added.
func runPackageTests(ctx context.Context, w *workspace, pkgs []string, env []string, opts Options) map[string]pkgRun {
	out := map[string]pkgRun{}
	for i, pkg := range pkgs {
		exe := filepath.Join(w.tmp, "bin", fmt.Sprintf("smaller-%d.test", i))
		build := append(append([]string{"go", "test"}, append(slices.Clip(linkFlags), testBuildFlags...)...), "-c", "-o", exe, pkg)
		if r := w.run(ctx, opts.Timeout, nil, build...); r.err != nil || r.timedOut || r.exit != 0 {
			out[pkg] = pkgRun{err: fmt.Errorf("%s does not build: %s", pkg, excerpt(r.out))}
			continue
		}
		var full bytes.Buffer // every failure line, however long the output
		r := w.runEnv(ctx, pkg, env, opts.Timeout, &full, exe, "-test.count=1")
		switch {
		case r.err != nil:
			out[pkg] = pkgRun{err: fmt.Errorf("%s: %w", pkg, r.err)}
		case r.timedOut:
			out[pkg] = pkgRun{err: fmt.Errorf("%s's tests still running after %v", pkg, opts.Timeout)}
		default:
			out[pkg] = pkgRun{failed: failedTests(pkg, full.String())}
		}
	}
	return out
}

// FindSmaller runs, for each mutant opts selects (by default every mutant
// whose check is a Ginkgo spec or a catalogue run), the whole go tests of
// the packages its patch changes, and names those that kill it: the
// candidates for a smaller check. A test that also fails on the unpatched
// module (run once per package first) is not one. Results come back in
// table order.
func FindSmaller(ctx context.Context, opts Options) []Smaller {
	opts = opts.withDefaults()
	muts, err := Select(opts.Only)
	if err != nil {
		return []Smaller{{Mutant: Mutant{Name: strings.Join(opts.Only, ",")}, Err: err}}
	}
	if len(opts.Only) == 0 {
		muts = slices.DeleteFunc(muts, func(mu Mutant) bool { return mu.Kill.Kind == GoTest })
	}
	m, err := findModule(ctx, opts.Dir)
	if err != nil {
		return []Smaller{{Err: err}}
	}
	return findSmaller(ctx, m, muts, opts)
}

// findSmaller is FindSmaller for muts in the module m.
func findSmaller(ctx context.Context, m *module, muts []Mutant, opts Options) []Smaller {
	p := &progress{w: opts.Progress, total: len(muts)}

	// The control: each package (with each environment the mutants' checks
	// add) once on the unpatched module.
	type key struct{ pkg, env string }
	control := map[key]pkgRun{}
	var keys []key
	for _, mu := range muts {
		for _, pkg := range testedPackages(mu.Patch, m.files) {
			k := key{pkg, strings.Join(mu.Kill.Env(), " ")}
			if _, ok := control[k]; !ok {
				control[k] = pkgRun{}
				keys = append(keys, k)
			}
		}
	}
	p.printf("find-smaller: %d mutant(s); the tests of %d package(s) on the unpatched module first\n", len(muts), len(keys))
	var mu sync.Mutex
	parallel(len(keys), opts.Parallel, func(i int) {
		k := keys[i]
		w, err := newWorkspace(ctx, m, "")
		var r pkgRun
		if err != nil {
			r.err = err
		} else {
			r = runPackageTests(ctx, w, []string{k.pkg}, strings.Fields(k.env), opts)[k.pkg]
			w.close()
		}
		mu.Lock()
		control[k] = r
		mu.Unlock()
		p.printf("control: %s %s: %d test(s) fail without any mutant (err %v)\n", k.env, k.pkg, len(r.failed), r.err)
	})

	out := make([]Smaller, len(muts))
	parallel(len(muts), opts.Parallel, func(i int) {
		mut := muts[i]
		start := time.Now()
		s := Smaller{Mutant: mut, Packages: testedPackages(mut.Patch, m.files)}
		defer func() {
			s.Duration = time.Since(start)
			out[i] = s
			p.printf("[%2d/%d] %s: %s (%v)\n", p.next(), p.total, mut.Name, s.summary(), s.Duration.Round(100*time.Millisecond))
		}()
		if len(s.Packages) == 0 {
			return
		}
		w, err := newWorkspace(ctx, m, mut.Patch)
		if err != nil {
			s.Err = err
			return
		}
		defer w.close()
		env := mut.Kill.Env()
		runs := runPackageTests(ctx, w, s.Packages, env, opts)
		var errs []string
		for _, pkg := range s.Packages {
			r, c := runs[pkg], control[key{pkg, strings.Join(env, " ")}]
			if r.err != nil {
				errs = append(errs, r.err.Error())
			}
			for _, f := range r.failed {
				if c.err == nil && !slices.ContainsFunc(c.failed, func(g FailedTest) bool { return g.Name == f.Name }) {
					s.Failed = append(s.Failed, f)
				}
			}
		}
		if len(errs) > 0 {
			s.Err = fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		slices.SortStableFunc(s.Failed, func(a, b FailedTest) int { return int(a.Took - b.Took) })
	})
	return out
}

func (s Smaller) summary() string {
	if c, ok := s.Kill(); ok {
		return "killed by " + c.String()
	}
	if s.Err != nil {
		return "no smaller check: " + s.Err.Error()
	}
	if len(s.Packages) == 0 {
		return "no smaller check: its patch changes no package with tests"
	}
	return "no smaller check: the tests of " + strings.Join(s.Packages, ", ") + " pass with it"
}

// parallel calls f(0..n-1), at most limit at once, and waits for them.
func parallel(n, limit int, f func(int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}
