package mutants

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Generic mutation testing: where the curated mutants are the regressions we
// know of, generic mutants are the slips a change might bring in anywhere: a
// comparison flipped, an operator swapped, a condition negated, a call
// dropped. Each is applied, one at a time, to a copy of the module and the
// checks are run there; a mutant no check notices survives, and each
// survivor is either a missing spec or an equivalent mutant (one that changes
// no behaviour), which someone has to say.

// GenericMutant is one small change to one source file.
type GenericMutant struct {
	File string // module-relative path
	Line int
	Col  int
	// Op says what was changed: "< → <=", "remove call wg.Done()".
	Op string
	// from..to is the byte range replaced by With.
	from, to int
	With     string
}

// ID names the mutant as FILE:LINE:COL.
func (m GenericMutant) ID() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

// swaps are the operator replacements, each a slip one keystroke away.
var swaps = map[token.Token][]token.Token{
	token.EQL:  {token.NEQ},
	token.NEQ:  {token.EQL},
	token.LSS:  {token.LEQ, token.GEQ},
	token.LEQ:  {token.LSS, token.GTR},
	token.GTR:  {token.GEQ, token.LEQ},
	token.GEQ:  {token.GTR, token.LSS},
	token.LAND: {token.LOR},
	token.LOR:  {token.LAND},
	token.ADD:  {token.SUB},
	token.SUB:  {token.ADD},
	token.MUL:  {token.QUO},
	token.QUO:  {token.MUL},
}

// FindMutants returns every generic mutant of one Go source file (path is
// reported as File; src is its content). Test files yield none.
func FindMutants(path string, src []byte) ([]GenericMutant, error) {
	if strings.HasSuffix(path, "_test.go") {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []GenericMutant
	at := func(p token.Pos) (int, int, int) {
		pos := fset.Position(p)
		return pos.Offset, pos.Line, pos.Column
	}
	data := dataDecls(f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			return !data(n)
		case *ast.BinaryExpr:
			if isStringConcat(n) {
				return true
			}
			off, line, col := at(n.OpPos)
			for _, to := range swaps[n.Op] {
				out = append(out, GenericMutant{File: path, Line: line, Col: col,
					Op: n.Op.String() + " → " + to.String(), from: off, to: off + len(n.Op.String()), With: to.String()})
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				off, line, col := at(n.OpPos)
				out = append(out, GenericMutant{File: path, Line: line, Col: col, Op: "drop !", from: off, to: off + 1})
			}
		case *ast.ExprStmt:
			call, ok := n.X.(*ast.CallExpr)
			if !ok || isPanicOrPrint(call) {
				return true
			}
			from, line, col := at(n.Pos())
			to, _, _ := at(n.End())
			out = append(out, GenericMutant{File: path, Line: line, Col: col,
				Op: "remove call " + clipOp(string(src[from:to])), from: from, to: to, With: "{}"})
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out, nil
}

// dataDecls reports the declarations of f that have no generic mutants:
// constants, wherever they are, and package variables are data, not
// logic (a changed table entry is a different program, not a slip); a
// variable a function declares is computed there like any assignment.
func dataDecls(f *ast.File) func(*ast.GenDecl) bool {
	pkgVars := map[*ast.GenDecl]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			pkgVars[g] = true
		}
	}
	return func(g *ast.GenDecl) bool { return g.Tok == token.CONST || pkgVars[g] }
}

// isStringConcat reports a + between string literals or with one: swapping
// it does not compile, so it is no mutant.
func isStringConcat(b *ast.BinaryExpr) bool {
	if b.Op != token.ADD {
		return false
	}
	for _, e := range []ast.Expr{b.X, b.Y} {
		if l, ok := e.(*ast.BasicLit); ok && (l.Kind == token.STRING || l.Kind == token.CHAR) {
			return true
		}
	}
	return false
}

// isPanicOrPrint: removing a panic changes only crash paths the tests do
// not take on purpose, and prints are not behaviour.
func isPanicOrPrint(c *ast.CallExpr) bool {
	id, ok := c.Fun.(*ast.Ident)
	return ok && (id.Name == "panic" || id.Name == "print" || id.Name == "println")
}

func clipOp(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// apply returns src with m applied.
func (m GenericMutant) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.With))
	out = append(out, src[:m.from]...)
	out = append(out, m.With...)
	return append(out, src[m.to:]...)
}

// GenericVerdict is what the checks made of one generic mutant.
type GenericVerdict string

// The generic verdicts.
const (
	GKilled    GenericVerdict = "killed"
	GSurvived  GenericVerdict = "survived"
	GNotViable GenericVerdict = "not viable" // does not build: no program to judge
	GTimedOut  GenericVerdict = "timed out"  // a check ran past its bound: counted as killed
	GError     GenericVerdict = "error"
	// GNotCovered: no test or spec runs the mutant's code (schemata runs
	// only), so none can kill it: a survivor, judged without a run.
	GNotCovered GenericVerdict = "not covered"
	// GNotExpressible: the mutant builds alone but its guarded form does
	// not type-check in the schemata (e.g. + on strings, a constant
	// expression); left out of the score, judged alone with --at.
	GNotExpressible GenericVerdict = "not expressible"
)

// GenericOutcome is one generic mutant's result.
type GenericOutcome struct {
	Mutant   GenericMutant
	Verdict  GenericVerdict
	KilledBy string // the check that failed
	Took     time.Duration
	Detail   string
	// Resumed: the verdict was read from the results file, not judged now.
	Resumed bool
}

// GenericOptions configures RunGeneric.
type GenericOptions struct {
	// Pkgs are module-relative package directories to mutate ("proxy/trace").
	Pkgs []string
	// Checks are the commands run from the module root, in order, until one
	// fails; "{pkg}" stands for "./" + the mutated package's directory.
	// Default: DefaultGenericChecks.
	Checks [][]string
	// Parallel bounds how many copies work at once (default 1).
	Parallel int
	// Timeout bounds each check (default 3 minutes).
	Timeout time.Duration
	// Dir is where the module is looked up (default ".").
	Dir string
	// Progress, if set, gets a line per mutant.
	Progress io.Writer
	// Limit, if positive, judges only the first Limit mutants (by file and
	// position): a bounded sample.
	Limit int
	// IDs, if set, judges only the mutants at these FILE:LINE:COL positions.
	IDs []string
}

// DefaultGenericChecks are the checks of a generic run: the package's own
// tests, then the Ginkgo scenarios. A mutant a package test kills never
// reaches the (slower) scenarios.
var DefaultGenericChecks = [][]string{
	{"go", "test", "-count=1", "{pkg}"},
	{"go", "run", "github.com/onsi/ginkgo/v2/ginkgo", "--no-color", "--label-filter=!container && !foreign", "./scenarios"},
}

// ListGeneric returns the generic mutants of the packages, in file order.
func ListGeneric(ctx context.Context, dir string, pkgs []string) ([]GenericMutant, error) {
	m, err := findModule(ctx, dir)
	if err != nil {
		return nil, err
	}
	return m.genericMutants(pkgs)
}

func (m *module) genericMutants(pkgs []string) ([]GenericMutant, error) {
	var all []GenericMutant
	for _, pkg := range pkgs {
		pkg = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pkg)), "./")
		found := false
		for _, f := range m.files {
			if filepath.ToSlash(filepath.Dir(f)) != pkg || !strings.HasSuffix(f, ".go") {
				continue
			}
			found = true
			src, err := os.ReadFile(filepath.Join(m.root, f))
			if err != nil {
				return nil, err
			}
			ms, err := FindMutants(f, src)
			if err != nil {
				return nil, err
			}
			all = append(all, ms...)
		}
		if !found {
			return nil, fmt.Errorf("no Go files in package directory %q", pkg)
		}
	}
	return all, nil
}

// RunGeneric judges every generic mutant of opts.Pkgs: each is written into a
// copy of the module, the checks are run there until one fails, and the file
// is restored. Outcomes come back in mutant order.
func RunGeneric(ctx context.Context, opts GenericOptions) ([]GenericOutcome, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Minute
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if len(opts.Checks) == 0 {
		opts.Checks = DefaultGenericChecks
	}
	m, err := findModule(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	muts, err := m.genericMutants(opts.Pkgs)
	if err != nil {
		return nil, err
	}
	if len(opts.IDs) > 0 {
		want := map[string]bool{}
		for _, id := range opts.IDs {
			want[id] = true
		}
		var kept []GenericMutant
		for _, mu := range muts {
			if want[mu.ID()] {
				kept = append(kept, mu)
			}
		}
		muts = kept
	}
	if opts.Limit > 0 && len(muts) > opts.Limit {
		muts = muts[:opts.Limit]
	}
	out := make([]GenericOutcome, len(muts))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range min(opts.Parallel, max(len(muts), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := newWorkspace(ctx, m, "")
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
				for i := range next {
					out[i] = GenericOutcome{Mutant: muts[i], Verdict: GError, Detail: err.Error()}
				}
				return
			}
			defer w.close()
			for i := range next {
				out[i] = judgeGeneric(ctx, w, muts[i], opts)
				if opts.Progress != nil {
					mu.Lock()
					o := out[i]
					fmt.Fprintf(opts.Progress, "[%d/%d] %s %s: %s %s (%v)\n", i+1, len(muts), o.Mutant.ID(), o.Mutant.Op,
						o.Verdict, o.KilledBy, o.Took.Round(100*time.Millisecond))
					if o.Verdict == GKilled && o.Detail != "" {
						// What failed, so a kill by a timing flake can be told from a real one.
						fmt.Fprintf(opts.Progress, "        %s\n", strings.SplitN(o.Detail, "\n", 2)[0])
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range muts {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, firstErr
}

// judgeGeneric applies mu in w, runs the checks, and restores the file.
func judgeGeneric(ctx context.Context, w *workspace, mu GenericMutant, opts GenericOptions) (o GenericOutcome) {
	o.Mutant = mu
	start := time.Now()
	defer func() { o.Took = time.Since(start) }()
	path := filepath.Join(w.dir, mu.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		o.Verdict, o.Detail = GError, err.Error()
		return o
	}
	defer func() { _ = os.WriteFile(path, orig, 0o644) }()
	if err := os.WriteFile(path, mu.apply(orig), 0o644); err != nil {
		o.Verdict, o.Detail = GError, err.Error()
		return o
	}
	pkg := "./" + filepath.ToSlash(filepath.Dir(mu.File))
	if r := w.run(ctx, opts.Timeout, nil, "go", "vet", pkg); r.exit != 0 {
		// Only a vet that ended says whether the mutant builds: one that
		// could not start or was stopped at the bound is no verdict.
		switch {
		case r.err != nil:
			o.Verdict, o.Detail = GError, r.err.Error()
		case r.timedOut:
			o.Verdict, o.Detail = GError, fmt.Sprintf("go vet %s still running after %v", pkg, opts.Timeout)
		default:
			o.Verdict, o.Detail = GNotViable, excerpt(r.out)
		}
		return o
	}
	for _, check := range opts.Checks {
		args := make([]string, len(check))
		for i, a := range check {
			args[i] = strings.ReplaceAll(a, "{pkg}", pkg)
		}
		r := w.run(ctx, opts.Timeout, nil, args...)
		switch {
		case r.err != nil:
			o.Verdict, o.Detail = GError, r.err.Error()
			return o
		case r.timedOut:
			o.Verdict, o.KilledBy = GTimedOut, strings.Join(args, " ")
			return o
		case r.exit != 0:
			o.Verdict, o.KilledBy, o.Detail = GKilled, strings.Join(args, " "), excerpt(r.out)
			return o
		}
	}
	o.Verdict = GSurvived
	return o
}

// A kill by the scenarios on a loaded machine may be a timing flake rather
// than the mutant: the progress line shows what failed, and a doubtful kill
// is re-judged alone with GenericOptions.IDs (mutants --generic --at) or
// triaged by reading the change.

// GenericScore is killed (timed-out included) over killed plus survived
// (not covered included): mutants that do not build are no program and do
// not count, nor do those the schemata cannot express.
func GenericScore(outs []GenericOutcome) (killed, judged int) {
	for _, o := range outs {
		switch o.Verdict {
		case GKilled, GTimedOut:
			killed++
			judged++
		case GSurvived, GNotCovered:
			judged++
		}
	}
	return killed, judged
}
