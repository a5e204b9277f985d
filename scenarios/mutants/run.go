package mutants

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
)

// Defaults of Options.
const (
	// DefaultParallel: twice this machine's 2 cores. A shared-tree check
	// mostly waits (a test's timers, a spec's budget), so four at once took
	// 5 min 57 s and 401 s of CPU for the whole run against 9 min 31 s and
	// 588 s at two, every mutant killed both times (docs/ci.md). A kill the
	// load hides is judged again on the mutant's own copy.
	DefaultParallel = 4
	DefaultTimeout  = 5 * time.Minute // one command: a build step or the check
	excerptLines    = 8
	excerptLineLen  = 220
	slotKind        = "mcpchaos-mutants"
	maxSlots        = 16 // copies that can exist at once, across every run on the machine
)

// Options configures Run.
type Options struct {
	// Only names the mutants to run; empty runs all of them.
	Only []string
	// Parallel bounds how many mutants run at once (default DefaultParallel).
	Parallel int
	// Timeout bounds each command of a mutant: each build step, and the
	// check (default DefaultTimeout). A check still running then is stopped
	// with its whole process group.
	Timeout time.Duration
	// Dir is where the module is looked up with `go env GOMOD` (default ".").
	Dir string
	// Progress, if set, gets one line as each mutant starts and ends.
	Progress io.Writer
	// LogDir, if set, receives each mutant's full output as NAME.log.
	LogDir string
	// Control first runs every distinct check on the unpatched copy: a
	// check that fails there cannot tell a mutant apart, so the mutants it
	// would judge are reported as errors.
	Control bool
	// OwnCopies judges every mutant on its own patched copy, as before the
	// shared tree of known mutants (see PlanKnownSchemata): no mutant is
	// judged in the shared tree.
	OwnCopies bool
}

func (o Options) withDefaults() Options {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	return o
}

// Verdict is what became of a mutant.
type Verdict string

// Verdicts.
const (
	Killed   Verdict = "killed"
	Survived Verdict = "SURVIVED"
	Errored  Verdict = "ERROR" // the mutant could not be judged: see Outcome.Err
)

// Outcome is one mutant's result.
type Outcome struct {
	Mutant  Mutant
	Verdict Verdict
	// KilledBy is the command line of the check that killed the mutant.
	KilledBy string
	// ExitCode is the check's exit status (-1 if it was stopped).
	ExitCode int
	// TimedOut: the check was still running at Options.Timeout and was
	// stopped; a check that hangs under a mutant counts as killing it.
	TimedOut bool
	// Excerpt is a short excerpt of the failing check's output (killed), or
	// of the failing step's output (ERROR).
	Excerpt string
	// Err says why the mutant could not be judged (ERROR only).
	Err error
	// Duration is the whole mutant: copy, patch, build and check.
	Duration time.Duration
	// SetupDuration is copying the module and applying the patch;
	// BuildDuration the build steps (compiling what the patch touches and
	// linking the check's binaries); CheckDuration the check's run alone.
	SetupDuration, BuildDuration, CheckDuration time.Duration
	// Shared: the verdict came from the shared tree of known mutants
	// (PlanKnownSchemata), where the mutant's check was built once for
	// every mutant that shares it, so BuildDuration and SetupDuration are
	// zero. SharedVerdict is what the shared tree said when the mutant was
	// placed there ("" if it was not tried there); a mutant the shared tree
	// did not kill is judged again on its own copy, and its Verdict is
	// that copy's. NotShared says why a mutant was not placed.
	Shared        bool
	SharedVerdict Verdict
	NotShared     string
}

// module is the module under test (modcopy.Module: its root, its files,
// and the environment its commands run in, with the shared caches pinned
// so a copy never compiles the dependencies again).
type module struct {
	*modcopy.Module
	root  string
	files []string
	env   []string
}

// findModule locates the module containing dir and lists its files: what
// git tracks plus new files not ignored, so a test added but not yet
// committed already counts.
func findModule(ctx context.Context, dir string) (*module, error) {
	mc, err := modcopy.Find(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &module{Module: mc, root: mc.Root, files: mc.Files, env: mc.Env}, nil
}

// workspace is one patched copy of the module.
type workspace struct {
	dir     string // the copy's module root
	tmp     string // holds dir and the copy's binaries
	m       *module
	release func()
}

// newWorkspace copies the module into a slot (see claimSlot) and applies
// patch (none if empty). A patch that does not apply is an error naming the
// files it patches.
func newWorkspace(ctx context.Context, m *module, patch string) (*workspace, error) {
	// A slot's path is fixed: the build cache keeps what an earlier copy
	// there compiled, so only what the patch touches is compiled again.
	tmp, release, err := modcopy.ClaimSlot(slotKind, maxSlots)
	if err != nil {
		return nil, err
	}
	w := &workspace{dir: filepath.Join(tmp, "src"), tmp: tmp, m: m, release: release}
	if err := m.CopyTo(w.dir); err != nil {
		w.close()
		return nil, fmt.Errorf("copying the module: %w", err)
	}
	if patch == "" {
		return w, nil
	}
	if err := applyPatch(ctx, w.dir, tmp, patch, false); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// applyPatch applies patch to the plain files under dir (only checks that it
// would, with check), with git apply's default tolerance: a hunk whose lines
// moved is found at its new place, but every context line must match. Fuzz
// (git apply -C) is not used to judge: a hunk whose context no longer matches
// can land beside a look-alike line, and a mutant put in the wrong place
// can be killed for a reason that is not its promise. A patch that does not
// apply is a *StalePatchError, which says whether it would with one line of
// context (only the context drifted) and which hunk failed.
func applyPatch(ctx context.Context, dir, ceiling, patch string, check bool) error {
	git := func(extra ...string) ([]byte, error) {
		args := append([]string{"apply", "--whitespace=nowarn"}, extra...)
		cmd := exec.CommandContext(ctx, "git", append(args, "-")...)
		cmd.Dir = dir
		// The copy is no repository: git apply patches plain files there,
		// and must not go looking for a repository above it.
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+ceiling)
		cmd.Stdin = strings.NewReader(patch)
		return cmd.CombinedOutput()
	}
	var extra []string
	if check {
		extra = []string{"--check"}
	}
	out, err := git(extra...)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &StalePatchError{Files: PatchedFiles(patch), Output: strings.TrimSpace(string(out))}
	e.File, e.Hunk = failedHunk(patch, e.Output)
	_, cerr := git("--check", "-C1")
	e.ContextOnly = cerr == nil
	return e
}

// StalePatchError is a mutant's patch that no longer applies: the code it
// mutates changed. It names what to remake.
type StalePatchError struct {
	Files []string // every file the patch changes
	// File and Hunk are the first hunk git apply could not place (empty
	// if its output named none).
	File, Hunk string
	// ContextOnly: the patch applies when only one line of context on each
	// side must match, so the lines it mutates are still there and only
	// their neighbourhood changed; otherwise the mutated lines changed too.
	ContextOnly bool
	Output      string // git apply's own words
}

func (e *StalePatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the patch no longer applies to %s (the code it mutates changed)", strings.Join(e.Files, ", "))
	if e.ContextOnly {
		b.WriteString("; the mutated lines are still there, only their context moved")
	} else {
		b.WriteString("; the lines it mutates changed")
	}
	if e.Hunk == "" {
		fmt.Fprintf(&b, ": %s", e.Output)
		return b.String()
	}
	fmt.Fprintf(&b, "; the hunk of %s that failed:\n%s", e.File, e.Hunk)
	return b.String()
}

// gitApplyFailed is git apply's "error: patch failed: FILE:LINE".
var gitApplyFailed = regexp.MustCompile(`(?m)^error: patch failed: (.+):(\d+)$`)

// failedHunk finds, in patch, the hunk git apply's output says failed.
func failedHunk(patch, gitOut string) (file, hunk string) {
	m := gitApplyFailed.FindStringSubmatch(gitOut)
	if m == nil {
		return "", ""
	}
	file, line := m[1], m[2]
	var inFile bool
	var cur []string
	lines := strings.Split(patch, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inFile = false
		case strings.HasPrefix(l, "+++ b/"):
			inFile = strings.TrimSpace(strings.TrimPrefix(l, "+++ b/")) == file
		case inFile && strings.HasPrefix(l, "@@ -"+line+","), inFile && strings.HasPrefix(l, "@@ -"+line+" "):
			cur = append(cur, l)
			for _, h := range lines[i+1:] {
				if h == "" || !strings.ContainsRune(" +-\\", rune(h[0])) {
					break
				}
				cur = append(cur, h)
			}
			return file, strings.Join(cur, "\n")
		}
	}
	return file, ""
}

// StaleReport is what a maintainer needs to remake mutant mu, whose patch
// failed with err: its name and patch file, the promise the patch encodes,
// and the file and hunk that failed.
func StaleReport(mu Mutant, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: patches/%s no longer applies.\n  promise: %s\n", mu.Name, mu.PatchFile, mu.Regression)
	var stale *StalePatchError
	if !errors.As(err, &stale) {
		fmt.Fprintf(&b, "  %v\n", err)
		return b.String()
	}
	if stale.ContextOnly {
		b.WriteString("  the lines it mutates are still there; only their context moved\n")
	} else {
		b.WriteString("  the lines it mutates changed: reintroduce the same bug in the current code\n")
	}
	if stale.Hunk != "" {
		fmt.Fprintf(&b, "  the hunk of %s that failed:\n", stale.File)
		for _, l := range strings.Split(stale.Hunk, "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	} else {
		fmt.Fprintf(&b, "  git apply: %s\n", stale.Output)
	}
	fmt.Fprintf(&b, "  remake: make the bug by hand, then git diff -U1 %s > scenarios/mutants/patches/%s\n",
		strings.Join(stale.Files, " "), mu.PatchFile)
	return b.String()
}

func (w *workspace) close() {
	_ = os.RemoveAll(w.dir)
	w.release()
}

// result of one command.
type result struct {
	exit     int // -1: did not exit by itself
	timedOut bool
	out      string // the tail of its combined output
	err      error  // it could not start, or the caller's ctx ended
	took     time.Duration
}

// run runs args in the workspace, bounded by timeout, with its output's tail
// kept and, if log is set, copied there in full; the command's whole process
// group is stopped when it ends (modcopy.Run).
func (w *workspace) run(ctx context.Context, timeout time.Duration, log io.Writer, args ...string) result {
	return w.runIn(ctx, ".", timeout, log, args...)
}

// runIn is run in dir, relative to the copy's module root.
func (w *workspace) runIn(ctx context.Context, dir string, timeout time.Duration, log io.Writer, args ...string) result {
	return w.runEnv(ctx, dir, nil, timeout, log, args...)
}

// noMutantOn starts the environment of every command run in a copy: no
// generic and no known mutant switched on, whatever the environment
// mcpchaos was started in (a mutation run of this package sets MutantEnv
// for the tests it judges by). A run that judges a mutant names it after.
var noMutantOn = []string{MutantEnv + "=", KnownMutantEnv + "="}

// runEnv is runIn with extra added to the module's environment (a check's
// Env; later entries win).
func (w *workspace) runEnv(ctx context.Context, dir string, extra []string, timeout time.Duration, log io.Writer, args ...string) result {
	env := slices.Concat(w.m.env, noMutantOn, extra)
	if log != nil && len(extra) > 0 {
		fmt.Fprintf(log, "\n$ export %s", strings.Join(extra, " "))
	}
	r := modcopy.Run(ctx, filepath.Join(w.dir, dir), env, timeout, log, args...)
	return result{exit: r.Exit, timedOut: r.TimedOut, out: r.Out, err: r.Err, took: r.Took}
}

// Run judges each mutant, at most opts.Parallel commands at a time: those
// the shared tree of known mutants places (PlanKnownSchemata) there first,
// each distinct check built once; every other mutant, and every mutant the
// shared tree did not kill, on its own patched copy of the module, with its
// check built there (opts.OwnCopies: every mutant so). Outcomes come back
// in table order.
func Run(ctx context.Context, opts Options) []Outcome {
	opts = opts.withDefaults()
	muts, err := Select(opts.Only)
	if err != nil {
		return []Outcome{{Mutant: Mutant{Name: strings.Join(opts.Only, ",")}, Verdict: Errored, Err: err}}
	}
	return runMutants(ctx, opts, muts)
}

// runMutants is Run of muts (opts.Only aside).
func runMutants(ctx context.Context, opts Options, muts []Mutant) []Outcome {
	m, err := findModule(ctx, opts.Dir)
	if err != nil {
		out := make([]Outcome, len(muts))
		for i, mu := range muts {
			out[i] = Outcome{Mutant: mu, Verdict: Errored, Err: err}
		}
		return out
	}
	return runMutantsIn(ctx, m, opts, muts)
}

// runMutantsIn is runMutants in the module m (opts.Dir aside).
func runMutantsIn(ctx context.Context, m *module, opts Options, muts []Mutant) []Outcome {
	p := &progress{w: opts.Progress, total: len(muts)}
	p.printf("mutants: %d mutant(s), %d at a time, module %s, %d files per copy, timeout %v per step\n",
		len(muts), opts.Parallel, m.root, len(m.files), opts.Timeout)

	broken := map[Check]string{}
	if opts.Control {
		broken = control(ctx, m, muts, opts, p)
	}

	out := make([]Outcome, len(muts))
	q := newJobQueue()
	var ownJob func(int, Outcome) func()
	own := func(i int, prior Outcome) {
		q.push(ownJob(i, prior))
	}
	ownJob = func(i int, prior Outcome) func() {
		return func() {
			mu := muts[i]
			if ctx.Err() != nil {
				out[i] = Outcome{Mutant: mu, Verdict: Errored, Err: ctx.Err()}
				return
			}
			p.printf("       %s: applying, building, running %s\n", mu.Name, mu.Kill)
			o := judge(ctx, m, mu, opts)
			o.SharedVerdict, o.NotShared = prior.SharedVerdict, prior.NotShared
			out[i] = o
			p.done(out[i])
		}
	}
	var sharedIdx []int
	notShared := map[int]string{}
	var plan *KnownSchemata
	if !opts.OwnCopies {
		plan, sharedIdx, notShared = planShared(ctx, m, muts, broken, p)
	}
	if len(sharedIdx) > 0 {
		runShared(ctx, q, m, muts, sharedIdx, plan, opts, p, out, own)
	}
	inShared := map[int]bool{}
	for _, i := range sharedIdx {
		inShared[i] = true
	}
	for _, i := range dispatchOrder(muts) {
		mu := muts[i]
		if inShared[i] {
			continue
		}
		if why, bad := broken[mu.Kill]; bad {
			out[i] = Outcome{Mutant: mu, Verdict: Errored, Err: fmt.Errorf("its check fails without the mutant, so it proves nothing: %s", why)}
			p.done(out[i])
			continue
		}
		q.pushKind(mu.Kill.Kind, ownJob(i, Outcome{NotShared: notShared[i]}))
	}
	q.run(opts.Parallel)
	return out
}

// kindCost orders the kinds of check slowest first.
var kindCost = map[CheckKind]int{Ginkgo: 0, Catalogue: 1, GoTest: 2}

// dispatchOrder is the order Run starts muts in, as indexes: the slowest
// kinds of check first (a Ginkgo check links the suite and two binaries and
// runs specs; a catalogue check links mcpchaos and runs scenarios; a go test
// check links one package's tests), table order within a kind. Started last,
// a slow mutant would run alone at the end while the other slots idle.
func dispatchOrder(muts []Mutant) []int {
	cost := kindCost
	order := make([]int, len(muts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost[muts[a].Kill.Kind] - cost[muts[b].Kill.Kind] })
	return order
}

// control runs each distinct check of muts once on the unpatched module and
// returns the checks that failed there, with why. Checks that run from the
// same build (one package's tests, the scenarios suite, mcpchaos) share
// one copy and one build: the unpatched module is the same for all.
func control(ctx context.Context, m *module, muts []Mutant, opts Options, p *progress) map[Check]string {
	groups := buildGroups(muts)
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	p.printf("control: %d distinct check(s) from %d build(s) on the unpatched module first\n", n, len(groups))
	broken := map[Check]string{}
	var mu sync.Mutex
	parallel(len(groups), opts.Parallel, func(i int) {
		for _, o := range judgeAll(ctx, m, fmt.Sprintf("control-%02d", i+1), "", groups[i], opts) {
			verdict := "passes"
			if o.Verdict != Survived { // a clean tree must "survive" its own check
				verdict = "FAILS"
				why := o.Excerpt
				if o.Err != nil {
					why = o.Err.Error()
				}
				mu.Lock()
				broken[o.Mutant.Kill] = why
				mu.Unlock()
			}
			p.printf("control: %s %s without any mutant (check %v)\n", o.Mutant.Kill, verdict, o.CheckDuration.Round(100*time.Millisecond))
		}
	})
	return broken
}

// buildGroups are the distinct checks of muts, grouped by the build they
// run from (sameBuild), in order of first use.
func buildGroups(muts []Mutant) [][]Check {
	var groups [][]Check
	seen := map[Check]bool{}
	for _, mu := range muts {
		c := mu.Kill
		if seen[c] {
			continue
		}
		seen[c] = true
		i := slices.IndexFunc(groups, func(g []Check) bool { return sameBuild(g[0], c) })
		if i < 0 {
			groups = append(groups, nil)
			i = len(groups) - 1
		}
		groups[i] = append(groups[i], c)
	}
	return groups
}

// judge copies the module, applies the mutant, builds it and runs its check.
func judge(ctx context.Context, m *module, mu Mutant, opts Options) Outcome {
	o := judgeAll(ctx, m, mu.Name, mu.Patch, []Check{mu.Kill}, opts)[0]
	o.Mutant = mu
	return o
}

// judgeAll copies the module once, applies patch, builds what checks run
// once, and runs each check from that build: checks whose builds are the
// same (sameBuild), such as several -run regexps of one package's tests,
// one label filter after another of the scenarios suite. The outcomes are
// in the order of checks, each of a Mutant named name with that Kill; each
// carries the shared copy and build, and its own check's run.
func judgeAll(ctx context.Context, m *module, name, patch string, checks []Check, opts Options) []Outcome {
	outs := make([]Outcome, len(checks))
	for i, c := range checks {
		outs[i] = Outcome{Mutant: Mutant{Name: name, Patch: patch, Kill: c}, ExitCode: -1}
	}
	start := time.Now()
	failAll := func(err error, excerpt string) []Outcome {
		for i := range outs {
			outs[i].Verdict, outs[i].Err, outs[i].Excerpt = Errored, err, excerpt
			outs[i].Duration = time.Since(start)
		}
		return outs
	}
	for _, c := range checks {
		if err := c.Validate(); err != nil {
			return failAll(err, "")
		}
		if !sameBuild(c, checks[0]) {
			return failAll(fmt.Errorf("%s and %s need different builds", c, checks[0]), "")
		}
	}
	var log io.Writer
	if opts.LogDir != "" {
		if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
			return failAll(err, "")
		}
		f, err := os.Create(filepath.Join(opts.LogDir, name+".log"))
		if err != nil {
			return failAll(err, "")
		}
		defer f.Close()
		log = f
	}
	w, err := newWorkspace(ctx, m, patch)
	if err != nil {
		return failAll(err, "")
	}
	defer w.close()

	// Build what the checks run first, so a mutant that does not compile is
	// an error of the run, never a kill; then run the built binary itself.
	// One build per mutant: `go test` or `go run ginkgo` would link the test
	// binary again (and vet it) for the check.
	buildStart := time.Now()
	build, exc, err := w.build(ctx, checks[0], w.tmp, opts.Timeout, log)
	for i := range outs {
		outs[i].BuildDuration = build
	}
	if err != nil {
		return failAll(err, exc)
	}
	setup := buildStart.Sub(start)
	for i, c := range checks {
		o := &outs[i]
		w.check(ctx, c, w.tmp, nil, opts.Timeout, log, o)
		o.SetupDuration = setup
		o.Duration = setup + build + o.CheckDuration
	}
	return outs
}

// build runs the build steps of check c in the workspace, its binaries
// under tmp/bin: how long they took, and why the build failed (with an
// excerpt of the failing step's output).
func (w *workspace) build(ctx context.Context, c Check, tmp string, timeout time.Duration, log io.Writer) (time.Duration, string, error) {
	steps, _, _, _ := c.prepared(tmp)
	var took time.Duration
	for _, s := range steps {
		r := w.run(ctx, timeout, log, s...)
		took += r.took
		switch {
		case r.err != nil:
			return took, "", fmt.Errorf("%s: %w", strings.Join(s, " "), r.err)
		case r.timedOut:
			return took, excerpt(r.out), fmt.Errorf("%s: still running after %v", strings.Join(s, " "), timeout)
		case r.exit != 0:
			return took, excerpt(r.out), fmt.Errorf("the mutated module does not build: %s exited %d", strings.Join(s, " "), r.exit)
		}
	}
	return took, "", nil
}

// check runs check c from the binaries build put under tmp, with extra
// added to its environment, and sets o's verdict and check fields.
func (w *workspace) check(ctx context.Context, c Check, tmp string, extra []string, timeout time.Duration, log io.Writer, o *Outcome) {
	_, check, dir, env := c.prepared(tmp)
	r := w.runEnv(ctx, dir, slices.Concat(env, c.Env(), extra), timeout, log, check...)
	o.CheckDuration, o.ExitCode, o.TimedOut = r.took, r.exit, r.timedOut
	switch {
	case r.err != nil:
		o.Verdict, o.Err = Errored, fmt.Errorf("%s: %w", c, r.err)
	case c.Kind == Catalogue && strings.Contains(r.out, "no scenario has label"):
		o.Verdict, o.Err = Errored, fmt.Errorf("%s: the catalogue has no scenario with label %q", c, c.Label)
	case r.timedOut:
		o.Verdict, o.KilledBy = Killed, c.String()
		o.Excerpt = fmt.Sprintf("still running after %v, stopped\n%s", timeout, excerpt(r.out))
	case r.exit != 0:
		o.Verdict, o.KilledBy, o.Excerpt = Killed, c.String(), excerpt(r.out)
	default:
		o.Verdict = Survived
	}
}

// sameBuild: a and b run from the same build (prepared builds the same
// binaries for both).
func sameBuild(a, b Check) bool {
	ab, _, _, _ := a.prepared("T")
	bb, _, _, _ := b.prepared("T")
	return slices.EqualFunc(ab, bb, slices.Equal[[]string])
}

// Why a check failed, in every output the checks produce. First the lines
// that name what failed: mcpchaos run's FAIL rows, go test's --- FAIL,
// Ginkgo's [FAIL] summary, panics. Then the lines that say how: go test's
// file:line messages, Ginkgo's [FAILED] blocks and matcher text.
var (
	excerptWhat = regexp.MustCompile(`^(FAIL |\s*--- FAIL|\s*\[FAIL\] |\s*\[PANICKED\])|panic: |fatal error: `)
	excerptHow  = regexp.MustCompile(`^\s+\S+\.go:\d+: |^\s*\[FAILED\]|^\s*(Expected|to |Unexpected)`)
)

// excerpt picks the lines of out that say why it failed (or its last lines).
func excerpt(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var picked []string
	seen := map[string]bool{}
	for _, re := range []*regexp.Regexp{excerptWhat, excerptHow} {
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if len(picked) == excerptLines || t == "" || seen[t] || !re.MatchString(l) {
				continue
			}
			seen[t] = true
			picked = append(picked, clip(t))
		}
	}
	if len(picked) == 0 {
		for _, l := range lines[max(0, len(lines)-excerptLines/2):] {
			if t := strings.TrimSpace(l); t != "" {
				picked = append(picked, clip(t))
			}
		}
	}
	return strings.Join(picked, "\n")
}

func clip(s string) string {
	if len(s) > excerptLineLen {
		return s[:excerptLineLen] + "…"
	}
	return s
}

// Build applies the named mutant to a copy of the module (found from the
// current directory) and builds its cmd/mcplocal into outDir, for
// reproducing the bug by hand. It returns the binary's path.
func Build(ctx context.Context, name, outDir string) (mcplocalPath string, err error) {
	return BuildWith(ctx, []string{name}, outDir)
}

// BuildWith builds mcplocal with every named mutant applied at once (their
// patches must touch different code), into outDir: a proxy with several
// known bugs, such as the seed's, which had both halves of the incident.
func BuildWith(ctx context.Context, names []string, outDir string) (mcplocalPath string, err error) {
	if len(names) == 0 {
		return "", errors.New("name at least one mutant to build")
	}
	muts, err := Select(names)
	if err != nil {
		return "", err
	}
	var patch strings.Builder
	for _, mu := range muts {
		patch.WriteString(mu.Patch)
		if !strings.HasSuffix(mu.Patch, "\n") {
			patch.WriteString("\n")
		}
	}
	name := strings.Join(names, "+")
	m, err := findModule(ctx, ".")
	if err != nil {
		return "", err
	}
	w, err := newWorkspace(ctx, m, patch.String())
	if err != nil {
		return "", fmt.Errorf("mutant %s: %w", name, err)
	}
	defer w.close()
	out, err := filepath.Abs(filepath.Join(outDir, "mcplocal"))
	if err != nil {
		return "", err
	}
	if r := w.run(ctx, DefaultTimeout, nil, "go", "build", "-o", out, "./cmd/mcplocal"); r.err != nil || r.timedOut || r.exit != 0 {
		if r.err != nil {
			return "", fmt.Errorf("mutant %s: go build ./cmd/mcplocal: %w", name, r.err)
		}
		return "", fmt.Errorf("mutant %s: go build ./cmd/mcplocal failed (exit %d, timed out %v):\n%s", name, r.exit, r.timedOut, r.out)
	}
	return out, nil
}

// progress writes progress lines from concurrent mutants.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
}

func (p *progress) printf(format string, a ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}

// next counts one more mutant done and returns the count.
func (p *progress) next() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return p.n
}

func (p *progress) done(o Outcome) {
	n := p.next()
	line := fmt.Sprintf("[%2d/%d] %s: %s", n, p.total, o.Mutant.Name, o.Verdict)
	switch o.Verdict {
	case Killed:
		line += " by " + o.KilledBy
		if o.TimedOut {
			line += " (timed out)"
		}
	case Errored:
		line += ": " + o.Err.Error()
	}
	if o.Shared {
		line += " [shared tree]"
	}
	p.printf("%s (%v)\n", line, o.Duration.Round(100*time.Millisecond))
}
