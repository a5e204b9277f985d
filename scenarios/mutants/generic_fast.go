package mutants

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
)

// SchemataOptions configures RunSchemata.
type SchemataOptions struct {
	// Pkgs are module-relative package directories to mutate.
	Pkgs []string
	// TestPkgs are the `go test` packages whose tests judge the mutants
	// (patterns, from the module root; default "./proxy/...").
	TestPkgs []string
	// Scenarios: judge with the Ginkgo scenarios (./scenarios, specs
	// matching LabelFilter) as well as the package tests.
	Scenarios   bool
	LabelFilter string
	// Timeout bounds each judged run (one test binary, run once with the
	// tests that cover the mutant); default 3 minutes. A run past it kills
	// the mutant ("timed out").
	Timeout time.Duration
	// Results is the JSON-lines file verdicts are appended to and resumed
	// from ("" keeps none).
	Results string
	// Dir is where the module is looked up (default ".").
	Dir string
	// Progress gets progress lines with an ETA.
	Progress io.Writer
	// Limit and IDs select mutants as in GenericOptions.
	Limit int
	IDs   []string
}

// DefaultLabelFilter leaves out the specs that need containers or the
// foreign build.
const DefaultLabelFilter = "!container && !foreign"

// testRef is one test that can judge: a Test function of a test binary,
// or a spec place of the scenarios binary.
type testRef struct {
	bin  *testBin
	name string        // Test function, or FILE:LINE#HASH of a spec
	text string        // a spec's full text
	took time.Duration // its run with no mutant on
}

// testBin is one coverage build of a test package in the schemata copy.
type testBin struct {
	pkg    string // module-relative dir
	path   string // the binary
	ginkgo bool
}

// schemataRun is one RunSchemata's state.
type schemataRun struct {
	opts    SchemataOptions
	m       *module
	w       *workspace
	tc      *typeChecker
	bins    []*testBin
	guards  []guard
	cover   map[int][]testRef // mutant number → tests that run it
	mcpl    string
	p       io.Writer
	printMu sync.Mutex
}

func (r *schemataRun) printf(format string, a ...any) {
	if r.p == nil {
		return
	}
	r.printMu.Lock()
	defer r.printMu.Unlock()
	fmt.Fprintf(r.p, format, a...)
}

// RunSchemata judges the generic mutants of opts.Pkgs through mutant
// schemata and coverage-guided selection:
//
//  1. each mutant is type-checked alone, in process: one that does not
//     compile is not viable;
//  2. the viable ones are written, all at once, into one copy of the module,
//     each guarded by the runtime switch (MutantEnv); a guarded site that
//     does not type-check is left out ("not expressible");
//  3. each test package of TestPkgs (and the scenarios, if asked) is built
//     once, with coverage, race detector off;
//  4. every test function, and every spec, is run once with no mutant on,
//     recording what it covers; one that fails then cannot judge and is
//     left out (and reported);
//  5. each mutant is run with only the tests and specs that cover its
//     guard, one run per binary, bounded by Timeout, until one fails
//     (killed). A mutant that no test covers survives as "not covered".
//
// Verdicts are appended to opts.Results as they come, and a rerun skips
// those already there for an unchanged package.
func RunSchemata(ctx context.Context, opts SchemataOptions) ([]GenericOutcome, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Minute
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if len(opts.TestPkgs) == 0 {
		opts.TestPkgs = []string{"./proxy/..."}
	}
	if opts.LabelFilter == "" {
		opts.LabelFilter = DefaultLabelFilter
	}
	m, err := findModule(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	for i, p := range opts.Pkgs {
		opts.Pkgs[i] = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./")
	}
	all, err := m.genericMutants(opts.Pkgs)
	if err != nil {
		return nil, err
	}
	num := map[string]int{} // resultKey → switch number
	for i, mu := range all {
		num[resultKey(mu)] = i + 1
	}
	muts := selectMutants(all, opts.IDs, opts.Limit)
	hashes := map[string]string{}
	for _, p := range opts.Pkgs {
		if hashes[p], err = packageHash(m.root, p); err != nil {
			return nil, err
		}
	}
	hashOf := func(mu GenericMutant) string { return hashes[filepath.ToSlash(filepath.Dir(mu.File))] }
	res, err := openResults(opts.Results)
	if err != nil {
		return nil, err
	}
	defer res.close()
	r := &schemataRun{opts: opts, m: m, p: opts.Progress}
	out := make([]GenericOutcome, len(muts))
	// The judges, and the selection's version: survivors of an older
	// selection (v1 left case-clause guards unjudged) are judged again.
	judges := "tests/v2"
	if opts.Scenarios {
		judges = "tests+scenarios/v2"
	}
	record := func(i int, o GenericOutcome) error {
		out[i] = o
		return res.add(o, hashOf(o.Mutant), judges)
	}

	// 1. Resume, then viability, alone and in process.
	r.printf("generic: %d mutants in %s\n", len(muts), strings.Join(opts.Pkgs, ","))
	if r.tc, err = newTypeChecker(ctx, m, opts.Pkgs); err != nil {
		return nil, err
	}
	var pending []int
	resumed, notViable := 0, 0
	for i, mu := range muts {
		if o, ok := res.lookup(mu, hashOf(mu), judges); ok {
			out[i] = o
			resumed++
			continue
		}
		if why := r.viable(mu); why != "" {
			notViable++
			if err := record(i, GenericOutcome{Mutant: mu, Verdict: GNotViable, Detail: why}); err != nil {
				return out, err
			}
			continue
		}
		pending = append(pending, i)
	}
	r.printf("generic: %d resumed from %s, %d not viable, %d to judge\n", resumed, opts.Results, notViable, len(pending))
	if len(pending) == 0 {
		return out, nil
	}

	// 2. The schemata, in a copy.
	start := time.Now()
	if r.w, err = newWorkspace(ctx, m, ""); err != nil {
		return out, err
	}
	defer r.w.close()
	var judged []GenericMutant
	for _, i := range pending {
		judged = append(judged, muts[i])
	}
	notExpr, err := r.writeSchemata(judged, num)
	if err != nil {
		return out, err
	}
	var left []int
	for _, i := range pending {
		if why, ok := notExpr[num[resultKey(muts[i])]]; ok {
			if err := record(i, GenericOutcome{Mutant: muts[i], Verdict: GNotExpressible, Detail: why}); err != nil {
				return out, err
			}
			continue
		}
		left = append(left, i)
	}
	r.printf("generic: schemata written (%d not expressible) in %v\n", len(notExpr), time.Since(start).Round(time.Second))

	// 3. The builds.
	if err := r.build(ctx); err != nil {
		return out, err
	}
	r.printf("generic: %d test binaries built in %v\n", len(r.bins), time.Since(start).Round(time.Second))

	// 4. Coverage, test by test and spec by spec.
	if err := r.coverage(ctx); err != nil {
		return out, err
	}
	r.printf("generic: coverage recorded in %v\n", time.Since(start).Round(time.Second))

	// 5. Judge.
	jstart := time.Now()
	for k, i := range left {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		o := r.judge(ctx, muts[i], num[resultKey(muts[i])])
		if err := record(i, o); err != nil {
			return out, err
		}
		done := k + 1
		eta := time.Duration(float64(time.Since(jstart)) / float64(done) * float64(len(left)-done))
		r.printf("[%d/%d] %s %s: %s %s (%v) ETA %v\n", done, len(left), o.Mutant.ID(), o.Mutant.Op, o.Verdict,
			o.KilledBy, o.Took.Round(100*time.Millisecond), eta.Round(time.Second))
	}
	return out, nil
}

func selectMutants(all []GenericMutant, ids []string, limit int) []GenericMutant {
	muts := all
	if len(ids) > 0 {
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		muts = nil
		for _, mu := range all {
			if want[mu.ID()] {
				muts = append(muts, mu)
			}
		}
	}
	if limit > 0 && len(muts) > limit {
		muts = muts[:limit]
	}
	return muts
}

// viable type-checks the package of mu with mu alone applied: "" if it
// compiles, else why not.
func (r *schemataRun) viable(mu GenericMutant) string {
	if !r.tc.builds(mu.File) {
		return "not compiled in this build (build constraints)"
	}
	src, err := os.ReadFile(filepath.Join(r.m.root, mu.File))
	if err != nil {
		return err.Error()
	}
	errs := r.tc.check(filepath.ToSlash(filepath.Dir(mu.File)), map[string][]byte{mu.File: mu.apply(src)})
	if len(errs) > 0 {
		return "does not compile: " + errs[0].Error()
	}
	return ""
}

// writeSchemata rewrites the files of muts in the copy and writes the
// switch package. It returns the numbers of the mutants left out, with why.
func (r *schemataRun) writeSchemata(muts []GenericMutant, num map[string]int) (map[int]string, error) {
	if err := os.MkdirAll(filepath.Join(r.w.dir, SwitchDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(r.w.dir, SwitchDir, "switch.go"), []byte(switchSource), 0o644); err != nil {
		return nil, err
	}
	byFile := map[string][]GenericMutant{}
	var files []string
	for _, mu := range muts {
		if byFile[mu.File] == nil {
			files = append(files, mu.File)
		}
		byFile[mu.File] = append(byFile[mu.File], mu)
	}
	byDir := map[string][]string{}
	var dirs []string
	for _, f := range files {
		d := filepath.ToSlash(filepath.Dir(f))
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], f)
	}
	left := map[int]string{}
	for _, d := range dirs {
		disabled := map[int]bool{}
		for round := 0; ; round++ {
			rewritten := map[string][]byte{}
			sitesOf := map[string][]SchemataSite{}
			for _, f := range byDir[d] {
				src, err := os.ReadFile(filepath.Join(r.m.root, f))
				if err != nil {
					return nil, err
				}
				var ids []int
				for _, mu := range byFile[f] {
					ids = append(ids, num[resultKey(mu)])
				}
				out, sites, skipped, err := Schemata(r.tc.modPath, f, src, byFile[f], ids, disabled)
				if err != nil {
					return nil, fmt.Errorf("schemata of %s: %w", f, err)
				}
				for _, id := range skipped {
					left[id] = "not expressible in the schemata: a call statement outside a statement list"
				}
				rewritten[f], sitesOf[f] = out, sites
			}
			errs := r.tc.check(d, rewritten)
			if len(errs) == 0 {
				for f, src := range rewritten {
					if err := os.WriteFile(filepath.Join(r.w.dir, f), src, 0o644); err != nil {
						return nil, err
					}
					for _, s := range sitesOf[f] {
						r.guards = append(r.guards, guard{file: r.tc.modPath + "/" + f, line: s.Line, col: s.Col, ids: s.IDs, fn: s.Func})
					}
				}
				break
			}
			progress := false
			for _, e := range errs {
				pos := r.tc.fset.Position(e.Pos)
				s, ok := blame(sitesOf[pos.Filename], pos.Line, pos.Column, disabled)
				if !ok {
					continue
				}
				for _, id := range s.IDs {
					disabled[id] = true
					left[id] = "not expressible in the schemata: " + e.Msg
				}
				progress = true
			}
			if !progress || round == 20 {
				// What cannot be blamed on one site: leave the whole package out.
				for _, f := range byDir[d] {
					for _, mu := range byFile[f] {
						left[num[resultKey(mu)]] = "not expressible in the schemata: " + errs[0].Error()
					}
				}
				break
			}
		}
	}
	return left, nil
}

// blame picks the site a type error at line:col of the rewritten file
// belongs to: the last guard on that line at or before the column, else
// the last guard before the line (a site spanning lines).
func blame(sites []SchemataSite, line, col int, disabled map[int]bool) (SchemataSite, bool) {
	var best SchemataSite
	found := false
	for _, s := range sites {
		if disabled[s.IDs[0]] {
			continue
		}
		if s.Line < line || (s.Line == line && s.Col <= col) {
			if !found || s.Line > best.Line || (s.Line == best.Line && s.Col > best.Col) {
				best, found = s, true
			}
		}
	}
	return best, found
}

// build compiles every test package of TestPkgs that has tests (and the
// scenarios, and mcplocal for them) in the copy, with coverage of the
// mutated packages, atomic counters (the spec hook clears them), no race
// detector.
func (r *schemataRun) build(ctx context.Context) error {
	args := []string{"go", "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}"}
	args = append(args, r.opts.TestPkgs...)
	lr := r.w.run(ctx, 2*time.Minute, nil, args...)
	if lr.exit != 0 || lr.err != nil {
		return fmt.Errorf("go list %s: %s %v", strings.Join(r.opts.TestPkgs, " "), lr.out, lr.err)
	}
	var pkgs []string
	for _, l := range strings.Split(lr.out, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		rel, err := filepath.Rel(r.w.dir, l)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	var cover []string
	for _, p := range r.opts.Pkgs {
		cover = append(cover, "./"+p)
	}
	binDir := filepath.Join(r.w.tmp, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	if r.opts.Scenarios {
		if err := os.WriteFile(filepath.Join(r.w.dir, "scenarios", "zz_mcpchaos_cover_test.go"), []byte(specHook), 0o644); err != nil {
			return err
		}
		pkgs = append(pkgs, "scenarios")
		r.mcpl = filepath.Join(binDir, "mcplocal")
		br := r.w.run(ctx, 10*time.Minute, nil, "go", "build", "-o", r.mcpl, "./cmd/mcplocal")
		if br.exit != 0 || br.err != nil {
			return fmt.Errorf("building mcplocal from the schemata: %s %v", excerpt(br.out), br.err)
		}
	}
	for _, p := range pkgs {
		b := &testBin{pkg: p, path: filepath.Join(binDir, strings.ReplaceAll(p, "/", "_")+".test"), ginkgo: p == "scenarios"}
		args := []string{"go", "test", "-c", "-cover", "-covermode=atomic", "-coverpkg=" + strings.Join(cover, ","), "-o", b.path}
		if b.ginkgo {
			args = append(args, "-ldflags=-checklinkname=0") // the spec hook's linkname
		}
		br := r.w.run(ctx, 10*time.Minute, nil, append(args, "./"+p)...)
		if br.exit != 0 || br.err != nil {
			return fmt.Errorf("building the tests of %s on the schemata: %s %v", p, excerpt(br.out), br.err)
		}
		if _, err := os.Stat(b.path); err != nil {
			continue // no tests after all
		}
		r.bins = append(r.bins, b)
		r.printf("generic: built %s\n", p)
	}
	return nil
}

// exec runs a test binary of the copy in its package directory, in its
// own process group, bounded by timeout (modcopy.Run).
func (r *schemataRun) exec(ctx context.Context, b *testBin, timeout time.Duration, env []string, args ...string) result {
	cmdEnv := slices.Concat(r.m.env, noMutantOn, env)
	if b.ginkgo {
		cmdEnv = append(cmdEnv, "MCPCHAOS_MCPLOCAL="+r.mcpl)
	}
	mr := modcopy.Run(ctx, filepath.Join(r.w.dir, b.pkg), cmdEnv, timeout, nil, append([]string{b.path}, args...)...)
	return result{exit: mr.Exit, timedOut: mr.TimedOut, out: mr.Out, err: mr.Err, took: mr.Took}
}

// coverage runs each test and spec once with no mutant on and records
// which mutants' guards each runs.
func (r *schemataRun) coverage(ctx context.Context) error {
	r.cover = map[int][]testRef{}
	covTmp := filepath.Join(r.w.tmp, "cover")
	if err := os.MkdirAll(covTmp, 0o755); err != nil {
		return err
	}
	for _, b := range r.bins {
		if b.ginkgo {
			if err := r.specCoverage(ctx, b, covTmp); err != nil {
				return err
			}
			continue
		}
		lr := r.exec(ctx, b, time.Minute, nil, "-test.list", ".")
		if lr.exit != 0 {
			return fmt.Errorf("listing the tests of %s: %s", b.pkg, excerpt(lr.out))
		}
		for _, name := range strings.Fields(lr.out) {
			if !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "Example") && !strings.HasPrefix(name, "Fuzz") {
				continue
			}
			var tr result
			blocks, err := testCoverage(covTmp, func(args ...string) (bool, error) {
				tr = r.exec(ctx, b, r.opts.Timeout, nil, append([]string{"-test.run", "^" + name + "$", "-test.count=1",
					"-test.timeout=" + r.opts.Timeout.String()}, args...)...)
				return tr.exit == 0 && tr.err == nil, nil
			})
			if err != nil {
				return err
			}
			if blocks == nil {
				r.printf("generic: %s %s fails with no mutant on: it judges nothing (%s)\n", b.pkg, name, firstLineOf(excerpt(tr.out)))
				continue
			}
			for id := range coveredIDs(blocks, r.guards) {
				r.cover[id] = append(r.cover[id], testRef{bin: b, name: name, took: tr.took})
			}
		}
		r.printf("generic: coverage of %s's tests recorded\n", b.pkg)
	}
	return nil
}

// testCoverage runs one test (run, given the coverage flags) with its
// counters in a directory of its own, and returns the blocks it ran; nil
// when the test failed. A directory shared by the runs of several tests
// would merge their counters into each later profile and credit a test
// with code it never ran.
func testCoverage(covTmp string, run func(args ...string) (bool, error)) ([]coverBlock, error) {
	dir, err := os.MkdirTemp(covTmp, "test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	prof := filepath.Join(dir, "p.out")
	passed, err := run("-test.coverprofile="+prof, "-test.gocoverdir="+dir)
	if err != nil || !passed {
		return nil, err
	}
	blocks, err := readProfile(prof)
	if err == nil && blocks == nil {
		blocks = []coverBlock{} // a test that ran no block still passed
	}
	return blocks, err
}

// specCoverage runs the scenarios once with the spec hook on and reads each
// spec's counters.
func (r *schemataRun) specCoverage(ctx context.Context, b *testBin, covTmp string) error {
	dir := filepath.Join(covTmp, "specs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	sr := r.exec(ctx, b, 60*time.Minute, []string{specCoverEnv + "=" + dir, "GOCOVERDIR=" + covTmp}, "-test.timeout=60m",
		"-test.gocoverdir="+covTmp, "-ginkgo.label-filter="+r.opts.LabelFilter, "-ginkgo.no-color")
	if sr.err != nil {
		return sr.err
	}
	if sr.exit != 0 {
		r.printf("generic: the scenarios fail with no mutant on; the failed specs judge nothing:\n%s\n", excerpt(sr.out))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	// Specs are not timed one by one: each is given the suite's average.
	avg := time.Since(start) / time.Duration(max(len(ents), 1))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		spec := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(spec, "failed")); err == nil {
			r.printf("generic: spec %s fails with no mutant on: it judges nothing\n", e.Name())
			continue
		}
		prof := spec + ".txt"
		cmd := exec.CommandContext(ctx, "go", "tool", "covdata", "textfmt", "-i="+spec, "-o="+prof)
		cmd.Env = r.m.env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go tool covdata textfmt %s: %v: %s", spec, err, out)
		}
		blocks, err := readProfile(prof)
		if err != nil {
			return err
		}
		text, err := os.ReadFile(filepath.Join(spec, "text"))
		if err != nil {
			return err
		}
		for id := range coveredIDs(blocks, r.guards) {
			r.cover[id] = append(r.cover[id], testRef{bin: b, name: e.Name(), text: string(text), took: avg})
		}
	}
	r.printf("generic: coverage of %d scenario specs recorded\n", len(ents))
	return nil
}

// judge runs mutant id against the tests that cover it: the package test
// binaries first (they are quick), the scenarios last.
func (r *schemataRun) judge(ctx context.Context, mu GenericMutant, id int) (o GenericOutcome) {
	o.Mutant = mu
	start := time.Now()
	defer func() { o.Took = time.Since(start) }()
	refs := r.cover[id]
	if len(refs) == 0 {
		o.Verdict, o.Detail = GNotCovered, "no test or spec runs this code"
		return o
	}
	// The mutated package's own tests first, then the other packages',
	// quickest first, the scenarios last; each binary stops at its first
	// failure (-test.failfast, -ginkgo.fail-fast).
	own := filepath.ToSlash(filepath.Dir(mu.File))
	byBin := map[*testBin][]string{}
	texts := map[*testBin][]string{}
	cost := map[*testBin]time.Duration{}
	var order []*testBin
	for _, t := range refs {
		if byBin[t.bin] == nil {
			order = append(order, t.bin)
		}
		byBin[t.bin] = append(byBin[t.bin], t.name)
		texts[t.bin] = append(texts[t.bin], t.text)
		cost[t.bin] += t.took
	}
	rank := func(b *testBin) int {
		switch {
		case b.ginkgo:
			return 2
		case b.pkg == own:
			return 0
		}
		return 1
	}
	sort.SliceStable(order, func(i, j int) bool {
		if ri, rj := rank(order[i]), rank(order[j]); ri != rj {
			return ri < rj
		}
		return cost[order[i]] < cost[order[j]]
	})
	env := []string{MutantEnv + "=" + strconv.Itoa(id)}
	var flaky []string
	for _, b := range order {
		names, specTexts := byBin[b], texts[b]
		// The bound: ten times what these tests took with no mutant on,
		// plus half a minute for a loaded machine, at most Timeout.
		bound := min(10*cost[b]+30*time.Second, r.opts.Timeout)
		for len(names) > 0 {
			var args []string
			var what string
			if b.ginkgo {
				args = []string{"-test.timeout=" + bound.String(), "-ginkgo.label-filter=" + r.opts.LabelFilter, "-ginkgo.no-color", "-ginkgo.fail-fast"}
				// Each spec by its place and its text: both filters hold, so
				// a spec runs when its place is one of theirs and its text one
				// of theirs (rarely a spec more, never one less).
				places := map[string]bool{}
				for i, n := range names {
					place, _, _ := strings.Cut(n, "#")
					file, line, _ := strings.Cut(place, ":")
					if !places[place] {
						places[place] = true
						args = append(args, "-ginkgo.focus-file="+regexp.QuoteMeta(file)+":"+line)
					}
					args = append(args, "-ginkgo.focus="+regexp.QuoteMeta(specTexts[i]))
				}
				what = "scenarios specs at " + clipList(names)
			} else {
				args = []string{"-test.run", "^(" + strings.Join(names, "|") + ")$", "-test.count=1", "-test.failfast", "-test.timeout=" + bound.String()}
				what = b.pkg + " " + clipList(names)
			}
			res := r.exec(ctx, b, bound+30*time.Second, env, args...)
			switch {
			case res.err != nil:
				o.Verdict, o.Detail = GError, res.err.Error()
				return o
			case res.timedOut:
				o.Verdict, o.KilledBy = GTimedOut, what
				return o
			case res.exit != 0:
				// A kill must fail twice: the test that failed is run
				// again, alone, with the mutant on. One that then passes
				// failed for another reason (a timing spec on a loaded
				// machine): it kills nothing, and the binary's other
				// tests, which the first failure stopped, run without it.
				n := failedTest(res.out)
				if n != "" {
					if again := r.rerun(ctx, b, n, bound, env); !again.timedOut && again.exit == 0 && again.err == nil {
						flaky = append(flaky, b.pkg+" "+n)
						if left, lt, ok := without(names, specTexts, n, b.ginkgo); ok {
							names, specTexts = left, lt
							continue
						}
						names = nil // cannot tell which to leave out: the next binary judges
						continue
					}
				}
				o.Verdict, o.KilledBy, o.Detail = GKilled, what, excerpt(res.out)
				if n != "" {
					o.KilledBy = b.pkg + " " + n + " (failed twice)"
				}
				return o
			case ranNothing(res.out):
				// A pass that ran nothing is no verdict.
				o.Verdict, o.Detail = GError, "the selection ran no test: "+what
				return o
			}
			break
		}
	}
	o.Verdict = GSurvived
	if len(flaky) > 0 {
		o.Detail = "failed once, passed when run again (not a kill): " + strings.Join(flaky, ", ") + "; "
	}
	var all []string
	for _, b := range order {
		all = append(all, b.pkg+": "+strings.Join(byBin[b], " "))
	}
	o.Detail += "passed " + strings.Join(all, "; ")
	return o
}

// without drops the test (or the specs at the place) that failed from a
// binary's selection; ok is false when none matched.
func without(names, texts []string, failed string, ginkgo bool) (left, leftTexts []string, ok bool) {
	drop := func(n string) bool {
		if ginkgo {
			place, _, _ := strings.Cut(n, "#")
			return place == filepath.Base(failed)
		}
		top, _, _ := strings.Cut(failed, "/")
		return n == top
	}
	for i, n := range names {
		if drop(n) {
			ok = true
			continue
		}
		left = append(left, n)
		if i < len(texts) {
			leftTexts = append(leftTexts, texts[i])
		}
	}
	return left, leftTexts, ok
}

// rerun runs the one test or spec a judged run said failed, with the
// same mutant on.
func (r *schemataRun) rerun(ctx context.Context, b *testBin, failed string, bound time.Duration, env []string) result {
	var args []string
	if b.ginkgo {
		file, line, _ := strings.Cut(filepath.Base(failed), ":")
		args = []string{"-test.timeout=" + bound.String(), "-ginkgo.label-filter=" + r.opts.LabelFilter, "-ginkgo.no-color",
			"-ginkgo.focus-file=" + regexp.QuoteMeta(file) + ":" + line}
	} else {
		top, _, _ := strings.Cut(failed, "/")
		args = []string{"-test.run", "^" + regexp.QuoteMeta(top) + "$", "-test.count=1", "-test.timeout=" + bound.String()}
	}
	return r.exec(ctx, b, bound+30*time.Second, env, args...)
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// clipList names up to three tests and counts the rest.
func clipList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, " ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], " "), len(names)-3)
}

var failRe = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)|\[FAIL\][^\n]*\n\s*(\S+_test\.go:\d+)`)

// failedTest is the first test or spec a run's output says failed.
func failedTest(out string) string {
	m := failRe.FindStringSubmatch(out)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		return m[1]
	}
	return m[2]
}

var ranRe = regexp.MustCompile(`Ran (\d+) of \d+ Specs`)

// ranNothing reports a test binary's output that says no test or spec ran.
func ranNothing(out string) bool {
	if strings.Contains(out, "testing: warning: no tests to run") {
		return true
	}
	m := ranRe.FindStringSubmatch(out)
	return m != nil && m[1] == "0"
}
