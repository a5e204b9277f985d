package canary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// DefaultSpecs is the Ginkgo label filter of the specs the canary runs
// besides the catalogue: the stale-session, restart and adoption specs with
// every client, and the conformance run, as they exist. The catalogue's own
// specs are left out (the catalogue runs directly); so are the container and
// foreign-proxy specs, which test other targets.
const DefaultSpecs = "(sessions || restart || adoption || conformance || clients) && !catalogue"

// alwaysExcluded is added to every Ginkgo filter: the canary compares the
// binary target, and the container and foreign-proxy specs test other
// targets (the container specs would install and start Docker).
const alwaysExcluded = "!container && !foreign"

// SpecFilter is the Ginkgo label filter the canary runs for a --specs value.
func SpecFilter(specs string) string {
	return "(" + specs + ") && " + alwaysExcluded
}

// Options configures one canary run.
type Options struct {
	// SDK switches the proxy and the clients (the whole module).
	SDK []Switch
	// ClientSDK also switches the harness's clients; the proxy keeps SDK (or
	// the baseline).
	ClientSDK []Switch
	// Label restricts the catalogue to scenarios with this label ("" all).
	Label string
	// Specs is the Ginkgo label filter of the specs run besides the catalogue
	// ("" runs none).
	Specs string
	// Seed orders the catalogue the same way on both sides; 0 takes the
	// cached baseline's (see BaselineCache), or a random one.
	Seed uint64
	// Tolerance: a row is slower when the candidate takes longer than the
	// baseline by more.
	Tolerance time.Duration
	// Allow maps row names to the reason their change is accepted.
	Allow map[string]string
	// Dir is inside the module under test (default ".").
	Dir string
	// WorkDir keeps each side's outputs and logs (default: a temp dir,
	// removed afterwards).
	WorkDir string
	// Timeout bounds each build step and each suite run.
	Timeout time.Duration
	// Progress gets a line per step, and the suite's own progress lines.
	Progress io.Writer
	// BaselineCache keeps the baseline's verdicts between runs, keyed by the
	// tree's content and the suite's selection (see baselineKey): checking
	// five candidates runs the baseline once. "" runs it every time.
	BaselineCache string
	// RerunBaseline runs the baseline even when the cache has its verdicts
	// (and records the new ones).
	RerunBaseline bool
}

// Result is a canary run's outcome.
type Result struct {
	Comparison report.Comparison
	// Build is set when the candidate does not build.
	Build *BuildError
	// Regressions are the rows that passed on the baseline and do not on
	// the candidate (none allowed).
	Regressions []report.ComparedRow
	// BaselineCached is when the baseline's verdicts were recorded, if they
	// came from the cache (zero when the baseline ran in this run): its
	// latencies were then measured under another load than the candidate's.
	BaselineCached time.Time
}

// side is one side of the comparison, built.
type side struct {
	name     string
	mcplocal string // the proxy under test
	mcpchaos string // the harness: its clients are built with this side's SDK
	harness  string // the module dir the Ginkgo specs run in (their clients)
	env      []string
}

// Run builds the baseline and the candidate, runs the suite on each, one
// after the other, and compares them. An error means the canary itself
// could not run (the baseline does not build, a copy failed); a candidate
// that does not build is a Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Dir == "" {
		o.Dir = "."
	}
	if len(o.SDK)+len(o.ClientSDK) == 0 {
		return nil, errors.New("no candidate: give at least one --sdk or --client-sdk")
	}
	for _, s := range o.SDK {
		if s.NPM {
			return nil, fmt.Errorf("--sdk %s: an npm package is a client's SDK (the proxy is Go): give it to --client-sdk", s)
		}
	}
	p := &progress{w: o.Progress}
	defer p.close()
	start := time.Now()
	m, err := modcopy.Find(ctx, o.Dir)
	if err != nil {
		return nil, err
	}
	work := o.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "mcpchaos-canary-run-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	candName := Describe(o.SDK)
	if len(o.ClientSDK) > 0 {
		candName = "proxy: " + candName + "; clients: " + Describe(append(append([]Switch{}, o.SDK...), o.ClientSDK...))
	}
	key := cacheKey(m, &o, p)
	p.printf("canary: seed %d\n", o.Seed)
	res := &Result{Comparison: report.Comparison{Baseline: Describe(nil), Candidate: candName, Seed: o.Seed, Started: start, Tolerance: o.Tolerance}}

	p.printf("canary: building the baseline (go.mod) from %s\n", m.Root)
	base, err := buildSide(ctx, m, "baseline", nil, nil, filepath.Join(work, "baseline"), false, o, p)
	if err != nil {
		return nil, fmt.Errorf("the baseline does not build, so there is nothing to compare against: %w", err)
	}
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	cached := false
	if key != "" && !o.RerunBaseline {
		_, cached = loadBaseline(o.BaselineCache, key, o.Seed)
	}
	if o.Specs != "" && !cached {
		if base.harness, err = harnessCopy(m, p, &releases); err != nil {
			return nil, err
		}
	}
	p.printf("canary: building the candidate: %s\n", candName)
	cand, err := buildCandidate(ctx, m, base, filepath.Join(work, "candidate"), o, p, &releases)
	var be *BuildError
	switch {
	case errors.As(err, &be):
		// A result: the baseline still runs, so the table shows what the
		// candidate would have had to keep.
		res.Build = be
		res.Comparison.CandidateBuild = be.Step + " failed:\n" + be.FirstLines()
		p.printf("canary: the candidate does not build:\n%s\n", be.FirstLines())
	case err != nil:
		return nil, err
	}

	baseRecs, cachedAt := baselineRecords(ctx, key, base, filepath.Join(work, "baseline"), o, p)
	res.BaselineCached = cachedAt
	var candRecs []report.Record
	if cand != nil {
		candRecs, _ = runSuite(ctx, cand, filepath.Join(work, "candidate"), o, p)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rows := Compare(baseRecs, candRecs, o.Tolerance, o.Allow)
	if cand != nil {
		rows = confirmSlower(ctx, base, cand, work, rows, o, p)
	}
	c := &res.Comparison
	if res.Build != nil {
		rows = NotBuiltRows(baseRecs, o.Allow)
	}
	res.Regressions = Regressions(rows)
	c.Rows, c.Duration = rows, time.Since(start)
	c.Failed = len(res.Regressions) > 0 || res.Build != nil
	c.Verdict = verdictLine(rows, res.Regressions)
	if res.Build != nil {
		c.Verdict = fmt.Sprintf("FAIL: the candidate does not build (%s); the baseline passed %d of its %d rows", res.Build.Step, basePassed(rows), len(rows))
	}
	return res, nil
}

// confirmSlower measures the rows flagged slower once more, catalogue rows
// and Ginkgo specs, on both sides one after the other, and keeps a flag
// only when the candidate is slower past the row's slack again (Recheck):
// on a loaded machine a single stall of a few hundred milliseconds is the
// machine's, not the SDK's.
func confirmSlower(ctx context.Context, base, cand *side, work string, rows []report.ComparedRow, o Options, p *progress) []report.ComparedRow {
	names, specs := SlowerCatalogueRows(rows), SlowerSpecRows(rows)
	if len(names)+len(specs) == 0 || ctx.Err() != nil {
		return rows
	}
	var b2, c2 []report.Record
	if len(names) > 0 {
		focus := focusOf(names)
		p.printf("canary: %d catalogue row(s) flagged slower: measuring them again on both sides\n", len(names))
		b, _ := runCatalogueOf(ctx, base, filepath.Join(work, "baseline"), "recheck.json", focus, o, p)
		c, _ := runCatalogueOf(ctx, cand, filepath.Join(work, "candidate"), "recheck.json", focus, o, p)
		b2, c2 = append(b2, b...), append(c2, c...)
	}
	if len(specs) > 0 && ctx.Err() == nil {
		focus := specFocus(specs)
		p.printf("canary: %d Ginkgo spec(s) flagged slower: measuring them again on both sides\n", len(specs))
		b, _ := runGinkgoOf(ctx, base, filepath.Join(work, "baseline", "recheck"), focus, o, p)
		c, _ := runGinkgoOf(ctx, cand, filepath.Join(work, "candidate", "recheck"), focus, o, p)
		b2, c2 = append(b2, b...), append(c2, c...)
	}
	rows, notes := Recheck(rows, b2, c2, o.Tolerance)
	for _, n := range notes {
		p.printf("canary: %s\n", n)
	}
	return rows
}

// specFocus is Ginkgo's --focus for the specs named (as GinkgoRecords
// names them). Ginkgo matches a focus against the suite's description, a
// space and the spec's text, while a record of a suite other than the
// main one is named "DESCRIPTION: TEXT": the focus is the texts, anchored
// at the end only. (A text cut after a ": " of its own only matches more.)
func specFocus(names []string) string {
	texts := make([]string, len(names))
	for i, n := range names {
		if _, text, ok := strings.Cut(n, ": "); ok {
			n = text
		}
		texts[i] = n
	}
	return strings.TrimPrefix(focusOf(texts), "^")
}

// focusOf is a regexp matching exactly the names given.
func focusOf(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// NotBuiltRows is the comparison when the candidate does not build: every
// baseline row reads NOT BUILT, and each one that passed is a regression
// unless allowed. The run fails in any case.
func NotBuiltRows(base []report.Record, allow map[string]string) []report.ComparedRow {
	rows := Compare(base, nil, 0, nil)
	for i := range rows {
		r := &rows[i]
		r.Change, r.Regression, r.Allowed = NotBuilt, r.Base.Passed(), ""
		if why, ok := allow[r.Name]; ok {
			r.Allowed, r.Regression = why, false
		}
	}
	return rows
}

// basePassed counts the rows the baseline passed, allowed ones included.
func basePassed(rows []report.ComparedRow) int {
	n := 0
	for _, r := range rows {
		if r.Base.Passed() {
			n++
		}
	}
	return n
}

// verdictLine sums the comparison up in one line.
func verdictLine(rows, regressions []report.ComparedRow) string {
	changed, allowed := 0, 0
	for _, r := range rows {
		if r.Change != "" {
			changed++
		}
		if r.Allowed != "" {
			allowed++
		}
	}
	switch {
	case len(regressions) > 0:
		return fmt.Sprintf("FAIL: %d of %d rows passed on the baseline and do not on the candidate (%d changed, %d allowed)", len(regressions), len(rows), changed, allowed)
	case changed == 0:
		return fmt.Sprintf("no change: %s, same verdicts, none slower beyond the tolerance", rowCount(len(rows)))
	}
	return fmt.Sprintf("ok: %s, %d changed, none newly failing (%d allowed)", rowCount(len(rows)), changed, allowed)
}

// rowCount is "1 row" or "N rows".
func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// copyEnv is the environment of the go commands in a copy: the module's
// GOFLAGS plus -mod=mod, which lets a switched go.mod pull in what the
// candidate needs.
func copyEnv(m *modcopy.Module) []string {
	return append(append([]string{}, m.Env...), "GOFLAGS="+strings.TrimSpace(m.GoFlags+" -mod=mod"))
}

// buildSide builds cmd/mcplocal and cmd/mcpchaos of the module in dir (the
// work tree itself for the baseline) into out; clientsOnly builds the
// harness alone (its proxy comes from elsewhere).
func buildSide(ctx context.Context, m *modcopy.Module, name string, dir *string, env []string, out string, clientsOnly bool, o Options, p *progress) (*side, error) {
	src := m.Root
	if dir != nil {
		src = *dir
	}
	if env == nil {
		env = m.Env
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	s := &side{name: name, mcplocal: filepath.Join(out, "mcplocal"), mcpchaos: filepath.Join(out, "mcpchaos"), harness: src, env: env}
	pkgs := []string{"./cmd/mcplocal", "./cmd/mcpchaos"}
	if clientsOnly {
		pkgs = pkgs[1:]
	}
	for _, args := range [][]string{
		append([]string{"go", "build", "-o", out + string(filepath.Separator)}, pkgs...),
	} {
		r := runCmd(ctx, src, env, o.Timeout, p.log(out), args...)
		if r.Err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if r.Failed() {
			return nil, &BuildError{Step: strings.Join(args, " "), Output: r.Out}
		}
		p.printf("canary: %s built (%v)\n", name, r.Took.Round(100*time.Millisecond))
	}
	return s, nil
}

// harnessCopy is a plain copy of the module (no switch) for the baseline's
// Ginkgo specs. Ginkgo compiles a suite's test binary into the suite's
// package directory and removes it afterwards, so two runs of one suite in
// one tree collide: the baseline's specs in the work tree itself would
// remove the binary of a make test running there at the same time.
func harnessCopy(m *modcopy.Module, p *progress, releases *[]func()) (string, error) {
	dir, release, err := claimSlot()
	if err != nil {
		return "", err
	}
	*releases = append(*releases, release)
	if err := m.CopyTo(dir); err != nil {
		return "", fmt.Errorf("copying the module for the baseline's specs: %w", err)
	}
	if err := linkNodeModules(m, dir); err != nil {
		return "", fmt.Errorf("linking node_modules into the baseline's copy: %w", err)
	}
	p.printf("canary: baseline: its Ginkgo specs run in %s (a copy of the work tree)\n", dir)
	return dir, nil
}

// copyWith copies the module into a slot and makes the switches there: the
// npm ones (installNPM), then the Go ones (apply).
// Every command it runs is bounded by Options.Timeout and writes to the
// side's canary.log in out.
func copyWith(ctx context.Context, m *modcopy.Module, sw []Switch, out string, o Options, p *progress, releases *[]func()) (string, []string, error) {
	dir, release, err := claimSlot()
	if err != nil {
		return "", nil, err
	}
	*releases = append(*releases, release)
	if err := m.CopyTo(dir); err != nil {
		return "", nil, fmt.Errorf("copying the module: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", nil, err
	}
	log := p.log(out)
	// The npm switches first: they install into the copy's own
	// node_modules, which linkNodeModules then leaves alone.
	installed, err := installNPM(ctx, dir, m.Env, sw, o.Timeout, log)
	if err != nil {
		return "", nil, err
	}
	for _, l := range installed {
		p.printf("canary: npm: %s\n", l)
	}
	if err := linkNodeModules(m, dir); err != nil {
		return "", nil, fmt.Errorf("linking node_modules into the copy: %w", err)
	}
	env := copyEnv(m)
	p.printf("canary: %s: %s\n", dir, Describe(sw))
	if err := apply(ctx, dir, env, sw, o.Timeout, log); err != nil {
		return "", nil, err
	}
	return dir, env, nil
}

// buildCandidate builds the proxy with SDK (or reuses the baseline's when
// there is none) and the harness with SDK + ClientSDK.
func buildCandidate(ctx context.Context, m *modcopy.Module, base *side, out string, o Options, p *progress, releases *[]func()) (*side, error) {
	var proxy *side
	if len(o.SDK) > 0 {
		dir, env, err := copyWith(ctx, m, o.SDK, out, o, p, releases)
		if err != nil {
			return nil, err
		}
		if proxy, err = buildSide(ctx, m, "candidate", &dir, env, out, false, o, p); err != nil {
			return nil, err
		}
		if len(o.ClientSDK) == 0 {
			return proxy, nil
		}
	}
	dir, env, err := copyWith(ctx, m, append(append([]Switch{}, o.SDK...), o.ClientSDK...), filepath.Join(out, "clients"), o, p, releases)
	if err != nil {
		return nil, err
	}
	clients, err := buildSide(ctx, m, "candidate clients", &dir, env, filepath.Join(out, "clients"), true, o, p)
	if err != nil {
		return nil, err
	}
	clients.mcplocal = base.mcplocal // the proxy stays on the baseline ...
	if proxy != nil {
		clients.mcplocal = proxy.mcplocal // ... or on SDK
	}
	return clients, nil
}

// baselineRecords are the baseline's verdicts: from the cache when it has
// them for this tree (key), suite and seed, else from running the suite
// (and then cached, if the suite ran to the end).
func baselineRecords(ctx context.Context, key string, base *side, out string, o Options, p *progress) (recs []report.Record, cached time.Time) {
	if key != "" && !o.RerunBaseline {
		if c, ok := loadBaseline(o.BaselineCache, key, o.Seed); ok {
			p.printf("canary: baseline: %d verdicts from the cache (same tree, toolchain, suite and seed %d; recorded %s, that run took %v); --rerun-baseline runs it again\n",
				len(c.Records), c.Seed, c.Recorded.Format(time.RFC3339), c.Took.Round(time.Second))
			return c.Records, c.Recorded
		}
	}
	start := time.Now()
	recs, complete := runSuite(ctx, base, out, o, p)
	if key != "" && complete && ctx.Err() == nil {
		if err := storeBaseline(o.BaselineCache, key, o.Seed, recs, time.Since(start)); err != nil {
			p.printf("canary: baseline cache: %v (not cached)\n", err)
		} else {
			p.printf("canary: baseline: %d verdicts cached in %s (key %.12s, seed %d)\n", len(recs), o.BaselineCache, key, o.Seed)
		}
	}
	return recs, time.Time{}
}

// cacheKey is the baseline cache's key of this tree and suite ("" when
// there is no cache or the tree cannot be read), and picks the seed when
// none was given: the newest cached baseline's, so a run that names no seed
// still reuses it, or else a random one.
func cacheKey(m *modcopy.Module, o *Options, p *progress) string {
	key := ""
	if o.BaselineCache != "" {
		var err error
		if key, err = baselineKey(m, *o); err != nil {
			p.printf("canary: baseline cache: cannot key the tree (%v): the baseline runs\n", err)
			key = ""
		}
	}
	if o.Seed == 0 && key != "" && !o.RerunBaseline {
		o.Seed = cachedSeed(o.BaselineCache, key)
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()%1_000_000 + 1
	}
	return key
}

// runSuite runs the catalogue and the Ginkgo specs on one side. complete
// is false when a part wrote no results (the records then say so in a
// failed row of their own).
func runSuite(ctx context.Context, s *side, out string, o Options, p *progress) (recs []report.Record, complete bool) {
	recs, complete = runCatalogue(ctx, s, out, o, p)
	if o.Specs != "" && ctx.Err() == nil {
		more, ok := runGinkgo(ctx, s, out, o, p)
		recs, complete = append(recs, more...), complete && ok
	}
	return recs, complete
}

// runCatalogue is `mcpchaos run --target binary:MCPLOCAL --json` with the
// side's harness: the whole catalogue (or one label), as it is in the tree.
func runCatalogue(ctx context.Context, s *side, out string, o Options, p *progress) ([]report.Record, bool) {
	return runCatalogueOf(ctx, s, out, "catalogue.json", "", o, p)
}

// runCatalogueOf runs the scenarios matching focus (a regexp of names; ""
// all), writing their results to out/file.
func runCatalogueOf(ctx context.Context, s *side, out, file, focus string, o Options, p *progress) ([]report.Record, bool) {
	path := filepath.Join(out, file)
	_ = os.Remove(path)
	args := []string{s.mcpchaos, "run", "--target", "binary:" + s.mcplocal, "--seed", fmt.Sprint(o.Seed), "--json", path}
	if o.Label != "" {
		args = append(args, "--label", o.Label)
	}
	what := "the catalogue"
	if o.Label != "" {
		what += " (label " + o.Label + ")"
	}
	if focus != "" {
		args = append(args, "--focus", focus)
		what = "again, the rows flagged slower"
	}
	p.printf("canary: %s: %s\n", s.name, what)
	r := runCmd(ctx, s.harness, s.env, o.Timeout, p.prefixed(s.name, out), args...)
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var recs []report.Record
		if recs, err = report.ReadJSON(f); err == nil {
			return recs, true
		}
	}
	return []report.Record{{Name: "the catalogue run", Source: "catalogue", Verdict: "FAIL",
		Reason: fmt.Sprintf("mcpchaos run wrote no results (exit %d): %v\n%s", r.Exit, err, lastLines(r.Out, compilerLines))}}, false
}

// runGinkgo runs the scenarios suite's specs matching o.Specs in the side's
// harness module, binary target on the side's mcplocal (MCPCHAOS_MCPLOCAL),
// and reads Ginkgo's JSON report.
func runGinkgo(ctx context.Context, s *side, out string, o Options, p *progress) ([]report.Record, bool) {
	return runGinkgoOf(ctx, s, out, "", o, p)
}

// runGinkgoOf runs those of them matching focus (a regexp of their full
// texts; "" all), writing Ginkgo's report into out.
func runGinkgoOf(ctx context.Context, s *side, out, focus string, o Options, p *progress) ([]report.Record, bool) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return []report.Record{{Name: "the Ginkgo specs " + o.Specs, Source: "ginkgo", Verdict: "FAIL", Reason: err.Error()}}, false
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	path := filepath.Join(abs, "ginkgo.json")
	_ = os.Remove(path)
	suites, err := ginkgoSuites(s.harness)
	if err != nil || len(suites) == 0 {
		return []report.Record{{Name: "the Ginkgo suites", Source: "ginkgo", Verdict: "FAIL", Reason: fmt.Sprintf("no Ginkgo suite found under scenarios/: %v", err)}}, false
	}
	// Every suite that can hold the proxy under test to its specs takes a
	// prebuilt mcplocal from one of these.
	env := append(append([]string{}, s.env...), "MCPCHAOS_MCPLOCAL="+s.mcplocal, "MCPCHAOS_CONFORMANCE_MCPLOCAL="+s.mcplocal)
	// --keep-going: a suite with failures must not hide the next suite's
	// results (they would read NO RESULT).
	args := []string{"go", "run", "github.com/onsi/ginkgo/v2/ginkgo", "--no-color", "--succinct", "--keep-going",
		"--label-filter=" + SpecFilter(o.Specs), "--seed=" + fmt.Sprint(o.Seed), "--json-report=ginkgo.json", "--output-dir=" + abs}
	what := "Ginkgo specs"
	if focus != "" {
		args, what = append(args, "--focus="+focus), "again, the Ginkgo specs flagged slower:"
	}
	args = append(args, suites...)
	p.printf("canary: %s: %s %q in %s\n", s.name, what, SpecFilter(o.Specs), strings.Join(suites, " "))
	r := runCmd(ctx, s.harness, env, o.Timeout, p.prefixed(s.name, out), args...)
	b, err := os.ReadFile(path)
	if err == nil {
		recs, perr := GinkgoRecords(b)
		if perr == nil {
			return recs, true
		}
		err = perr
	}
	return []report.Record{{Name: "the Ginkgo specs " + o.Specs, Source: "ginkgo", Verdict: "FAIL",
		Reason: fmt.Sprintf("ginkgo wrote no report (exit %d): %v\n%s", r.Exit, err, lastLines(r.Out, compilerLines))}}, false
}

// ginkgoSuites lists the Ginkgo suites under dir/scenarios (the packages
// whose tests import Ginkgo and call RunSpecs), as ./relative paths: suites that land later
// (the conformance run, new spec packages) are picked up by themselves.
func ginkgoSuites(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "scenarios"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// A suite imports Ginkgo and calls RunSpecs; a test that merely
		// mentions RunSpecs (a fixture in a string) is none.
		if bytes.Contains(b, []byte("RunSpecs(")) && bytes.Contains(b, []byte(`"github.com/onsi/ginkgo/v2"`)) {
			rel, err := filepath.Rel(dir, filepath.Dir(path))
			if err != nil {
				return err
			}
			out = append(out, "./"+filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return slices.Compact(out), err
}

// mainSuite is the description of ./scenarios' suite, whose spec names are
// used as they are; other suites' names get their description first.
const mainSuite = "Scenarios"

// GinkgoRecords turns a Ginkgo JSON report into records: one per spec that
// ran (skipped and pending ones are left out; only a passed spec passes),
// plus any failed suite-level node (a failed BeforeSuite fails every spec
// it skipped), plus a failed row for a suite that did not succeed without
// any failed spec (interrupted or timed out between specs).
func GinkgoRecords(b []byte) ([]report.Record, error) {
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, fmt.Errorf("ginkgo report: %w", err)
	}
	var out []report.Record
	for _, rep := range reports {
		suite := rep.SuiteDescription
		if suite == "" { // the path differs between the sides: its last element does not
			suite = filepath.Base(rep.SuitePath)
		}
		if !rep.SuiteSucceeded && len(rep.SpecReports) == 0 {
			// It did not even run (a compile failure): say so in a row.
			out = append(out, report.Record{Name: suite + ": the suite", Source: "ginkgo", Verdict: "FAIL",
				Reason: "the suite did not run: " + strings.Join(rep.SpecialSuiteFailureReasons, "; ")})
			continue
		}
		failed := false
		for _, sr := range rep.SpecReports {
			if sr.State.Is(types.SpecStateSkipped | types.SpecStatePending) {
				continue
			}
			isSpec := sr.LeafNodeType.Is(types.NodeTypeIt)
			if !isSpec && !sr.State.Is(types.SpecStateFailureStates) {
				continue
			}
			name := strings.TrimSpace(strings.Join(append(append([]string{}, sr.ContainerHierarchyTexts...), sr.LeafNodeText), " "))
			if !isSpec {
				name = sr.LeafNodeType.String()
			}
			if rep.SuiteDescription != "" && rep.SuiteDescription != mainSuite {
				name = rep.SuiteDescription + ": " + name
			}
			rec := report.Record{Name: name, Source: "ginkgo", Verdict: "PASS", Latency: sr.RunTime, Labels: sr.Labels()}
			// Only a passed spec passes: every failure state, and a state
			// this canary does not know, is a failure naming the state.
			if sr.State != types.SpecStatePassed {
				rec.Verdict = "FAIL"
				rec.Reason = strings.TrimSpace(sr.State.String() + ": " + sr.Failure.Message)
				failed = true
			}
			out = append(out, rec)
		}
		if !rep.SuiteSucceeded && !failed {
			// Interrupted or timed out between specs (the rest skipped):
			// the specs that passed before must not make the suite read as passed.
			out = append(out, report.Record{Name: suite + ": the suite", Source: "ginkgo", Verdict: "FAIL",
				Reason: strings.TrimSpace("the suite did not succeed: " + strings.Join(rep.SpecialSuiteFailureReasons, "; "))})
		}
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// progress writes the canary's progress lines and keeps each side's full
// log (DIR/canary.log); safe for concurrent use. close closes the logs.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	logs map[string]*os.File
}

func (p *progress) printf(format string, a ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}

// log is the full log of the commands run for the side whose outputs go to
// dir; nil if it cannot be opened (the run goes on without it).
func (p *progress) log(dir string) io.Writer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.logs[dir]; ok {
		return f
	}
	f, err := os.OpenFile(filepath.Join(dir, "canary.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	if p.logs == nil {
		p.logs = map[string]*os.File{}
	}
	p.logs[dir] = f
	return f
}

func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.logs {
		_ = f.Close()
	}
	p.logs = nil
}

// prefixed copies a suite's output to the side's log, and its progress
// lines (one per scenario or spec) to the progress writer, prefixed with
// the side's name.
func (p *progress) prefixed(name, dir string) io.Writer {
	return &lineSink{log: p.log(dir), line: func(l string) {
		if isProgressLine(l) {
			p.printf("  [%s] %s\n", name, strings.TrimSpace(l))
		}
	}}
}

// isProgressLine picks the lines worth showing while a suite runs:
// mcpchaos run's "[ 3/50] name PASS 12ms" and Ginkgo's summary lines.
func isProgressLine(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "[") && strings.Contains(t, "/") && (strings.Contains(t, "PASS") || strings.Contains(t, "FAIL") || strings.Contains(t, "N/A")) ||
		strings.HasPrefix(t, "Ran ") || strings.HasPrefix(t, "mcpchaos run:") || strings.HasPrefix(t, "[FAIL]") || strings.HasPrefix(t, "Running Suite")
}

// lineSink splits what is written to it into lines: each goes to log and
// to line. A last line without a newline is kept until the next write.
type lineSink struct {
	mu      sync.Mutex
	log     io.Writer
	line    func(string)
	partial []byte
}

func (s *lineSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		_, _ = s.log.Write(b)
	}
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	if len(s.partial) > 64<<10 { // a runaway line: show nothing of it
		s.partial = s.partial[:0]
	}
	return len(b), nil
}
