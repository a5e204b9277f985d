package mutants

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// jobQueue runs jobs on a fixed number of workers, in queue order; a job
// may queue more (at the back, or at the front to run next).
type jobQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []queued
	pending int // queued or running
}

// queued is a job and the rank pushKind queued it by (push: last).
type queued struct {
	rank int
	fn   func()
}

func newJobQueue() *jobQueue {
	q := &jobQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues j at the back.
func (q *jobQueue) push(j func()) { q.insert(-1, queued{len(kindCost), j}) }

// pushKind queues j, a job of the kind of check k, before every queued job
// of a cheaper kind (see dispatchOrder): a slow build started last would
// run alone at the end while the other workers idle.
func (q *jobQueue) pushKind(k CheckKind, j func()) { q.insert(-1, queued{kindCost[k], j}) }

// pushFront queues js, in order, before every queued job.
func (q *jobQueue) pushFront(js ...func()) {
	for i := len(js) - 1; i >= 0; i-- {
		q.insert(0, queued{-1, js[i]})
	}
}

// insert queues j at index at, or (at < 0) after the last job whose rank
// is not above j's.
func (q *jobQueue) insert(at int, j queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if at < 0 {
		at = len(q.jobs)
		for at > 0 && q.jobs[at-1].rank > j.rank {
			at--
		}
	}
	q.jobs = slices.Insert(q.jobs, at, j)
	q.pending++
	q.cond.Signal()
}

// run works the queue with n workers until every job, and every job they
// queued, has ended.
func (q *jobQueue) run(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				q.mu.Lock()
				for len(q.jobs) == 0 && q.pending > 0 {
					q.cond.Wait()
				}
				if len(q.jobs) == 0 {
					q.mu.Unlock()
					return
				}
				j := q.jobs[0]
				q.jobs = q.jobs[1:]
				q.mu.Unlock()
				j.fn()
				q.mu.Lock()
				q.pending--
				if q.pending == 0 {
					q.cond.Broadcast()
				}
				q.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// planShared plans the shared tree of muts: the indexes of the mutants it
// places, and why each other mutant keeps its own copy. A mutant whose check
// failed the unpatched control is left to its own copy, which reports it.
func planShared(ctx context.Context, m *module, muts []Mutant, broken map[Check]string, p *progress) (*KnownSchemata, []int, map[int]string) {
	notShared := map[int]string{}
	plan, err := PlanKnownSchemata(ctx, m.root, muts)
	if err != nil {
		p.printf("shared tree: not planned (%v): every mutant is judged on its own copy\n", err)
		for i := range muts {
			notShared[i] = "the shared tree could not be planned: " + err.Error()
		}
		return nil, nil, notShared
	}
	var shared []int
	for i, mu := range muts {
		switch _, bad := broken[mu.Kill]; {
		case bad:
			notShared[i] = "its check fails without the mutant"
		case plan.Shared(mu.Name):
			shared = append(shared, i)
		default:
			notShared[i] = plan.NotShared[mu.Name]
		}
	}
	p.printf("shared tree: %d of %d mutant(s) placed at function level in %d file(s); %d keep their own copy\n",
		len(shared), len(muts), len(plan.Files), len(muts)-len(shared))
	return plan, shared, notShared
}

// sharedGroup is the shared mutants whose checks run from one build.
type sharedGroup struct {
	n      int     // for the build's directory and log
	checks []Check // distinct, in order of first use
	muts   []int   // indexes, in dispatch order
}

// runShared queues the judging of the mutants at indexes shared in one copy
// of the module, the shared tree of plan: each distinct build once (its
// checks' binaries), each distinct check once with no mutant switched on
// (a check that fails there cannot tell a mutant apart in this tree), then
// each mutant's check with KnownMutantEnv naming it. A mutant killed there
// is killed; any other is handed to own, which judges it again on its own
// patched copy: the shared tree can only spare builds, never let a mutant
// survive that its own copy would kill.
func runShared(ctx context.Context, q *jobQueue, m *module, muts []Mutant, shared []int, plan *KnownSchemata, opts Options, p *progress, out []Outcome, own func(int, Outcome)) {
	fallBack := func(i int, v Verdict) { own(i, Outcome{SharedVerdict: v}) }
	w, err := newWorkspace(ctx, m, "")
	if err == nil {
		if err = plan.Write(w.dir); err != nil {
			w.close()
		}
	}
	if err != nil {
		p.printf("shared tree: cannot be written (%v): its mutants are judged on their own copies\n", err)
		for _, i := range shared {
			fallBack(i, Errored)
		}
		return
	}
	// The copy is removed when its last group has ended.
	var groups []*sharedGroup
	order := dispatchOrder(muts)
	for _, i := range order {
		if !slices.Contains(shared, i) {
			continue
		}
		c := muts[i].Kill
		gi := slices.IndexFunc(groups, func(g *sharedGroup) bool { return sameBuild(g.checks[0], c) })
		if gi < 0 {
			groups = append(groups, &sharedGroup{n: len(groups) + 1})
			gi = len(groups) - 1
		}
		g := groups[gi]
		if !slices.Contains(g.checks, c) {
			g.checks = append(g.checks, c)
		}
		g.muts = append(g.muts, i)
	}
	p.printf("shared tree: %d build(s) for %d distinct check(s)\n", len(groups), countChecks(groups))
	var left sync.WaitGroup
	left.Add(len(groups))
	go func() { left.Wait(); w.close() }()
	for _, g := range groups {
		q.pushKind(muts[g.muts[0]].Kill.Kind, func() {
			jobs := sharedBuild(ctx, w, g, muts, opts, p, out, fallBack, left.Done)
			q.pushFront(jobs...)
		})
	}
}

func countChecks(groups []*sharedGroup) int {
	n := 0
	for _, g := range groups {
		n += len(g.checks)
	}
	return n
}

// openLog opens LogDir/name.log (nil without a LogDir).
func openLog(opts Options, name string) (io.Writer, func()) {
	if opts.LogDir == "" {
		return nil, func() {}
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, func() {}
	}
	f, err := os.Create(filepath.Join(opts.LogDir, name+".log"))
	if err != nil {
		return nil, func() {}
	}
	return f, func() { f.Close() }
}

// sharedBuild builds group g in the shared tree and runs its checks with
// no mutant switched on; it returns a job per mutant of the group (a job
// that judges it there), and calls done once the last has ended.
func sharedBuild(ctx context.Context, w *workspace, g *sharedGroup, muts []Mutant, opts Options, p *progress, out []Outcome, fallBack func(int, Verdict), done func()) []func() {
	tmp := filepath.Join(w.tmp, fmt.Sprintf("shared-%03d", g.n))
	log, closeLog := openLog(opts, fmt.Sprintf("shared-%03d", g.n))
	defer closeLog()
	fail := func(why string) []func() {
		p.printf("shared tree: build %d (%s): %s; its %d mutant(s) are judged on their own copies\n", g.n, g.checks[0], why, len(g.muts))
		for _, i := range g.muts {
			fallBack(i, Errored)
		}
		done()
		return nil
	}
	if ctx.Err() != nil {
		return fail(ctx.Err().Error())
	}
	took, exc, err := w.build(ctx, g.checks[0], tmp, opts.Timeout, log)
	if err != nil {
		return fail(fmt.Sprintf("%v\n%s", err, exc))
	}
	// The control: every check of the group must pass with no mutant on.
	ctlStart := time.Now()
	broken := map[Check]bool{}
	for _, c := range g.checks {
		var o Outcome
		w.check(ctx, c, tmp, nil, opts.Timeout, log, &o)
		if o.Verdict != Survived {
			broken[c] = true
			p.printf("shared tree: %s FAILS with no mutant switched on: its mutants are judged on their own copies\n%s\n", c, indentLines(cmp.Or(o.Excerpt, fmt.Sprint(o.Err)), "    "))
		}
	}
	p.printf("shared tree: build %d ready in %v (%d check(s) passed with no mutant on in %v): %d mutant(s)\n",
		g.n, took.Round(100*time.Millisecond), len(g.checks)-len(broken), time.Since(ctlStart).Round(100*time.Millisecond), len(g.muts))
	var jobs []func()
	var mu sync.Mutex
	left := len(g.muts)
	for _, i := range g.muts {
		if broken[muts[i].Kill] {
			fallBack(i, Errored)
			left--
			continue
		}
		jobs = append(jobs, func() {
			defer func() {
				mu.Lock()
				left--
				last := left == 0
				mu.Unlock()
				if last {
					done()
				}
			}()
			judgeShared(ctx, w, tmp, muts[i], opts, p, &out[i], func(v Verdict) { fallBack(i, v) })
		})
	}
	if left == 0 {
		done()
	}
	return jobs
}

// judgeShared runs mu's check in the shared tree with mu switched on: a
// kill is the verdict (o); anything else goes to fallBack.
func judgeShared(ctx context.Context, w *workspace, tmp string, mu Mutant, opts Options, p *progress, o *Outcome, fallBack func(Verdict)) {
	if ctx.Err() != nil {
		*o = Outcome{Mutant: mu, Verdict: Errored, Err: ctx.Err()}
		return
	}
	log, closeLog := openLog(opts, mu.Name+".shared")
	defer closeLog()
	r := Outcome{Mutant: mu, ExitCode: -1}
	w.check(ctx, mu.Kill, tmp, []string{KnownMutantEnv + "=" + mu.Name}, opts.Timeout, log, &r)
	r.Duration = r.CheckDuration
	r.SharedVerdict = r.Verdict
	if r.Verdict != Killed {
		p.printf("       %s: %s in the shared tree: judged again on its own copy\n", mu.Name, r.Verdict)
		fallBack(r.Verdict)
		return
	}
	r.Shared = true
	*o = r
	p.done(r)
}

func indentLines(s, margin string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = margin + l
	}
	return strings.Join(lines, "\n")
}
