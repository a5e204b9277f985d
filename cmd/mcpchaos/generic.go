package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// runGenericMutants is `mcpchaos mutants --generic PKGS`: every generic
// mutant of the packages (operators flipped, negations dropped, calls
// removed) applied to a copy of the module, and the checks run there.
func runGenericMutants(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutants --generic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkgs := fs.String("generic", "", "mutate these package directories (comma-separated, e.g. proxy/trace,proxy/degrade)")
	parallel := fs.Int("parallel", 1, "copies of the module working at once (--per-mutant-copy only)")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound on each run judging a mutant (a run past it kills the mutant: timed out)")
	limit := fs.Int("limit", 0, "judge only the first N mutants (0: all)")
	at := fs.String("at", "", "judge only the mutants at these FILE:LINE:COL positions (comma-separated, as --list prints them)")
	quick := fs.Bool("package-tests-only", false, "run only the mutated package's own tests, not the scenarios as well")
	list := fs.Bool("list", false, "list the mutants, run nothing")
	perCopy := fs.Bool("per-mutant-copy", false, "judge each mutant alone in its own copy and build, by the package's tests then the whole scenarios (slow; no schemata, no coverage selection)")
	results := fs.String("results", filepath.Join(os.TempDir(), "mcpchaos-generic.jsonl"), "append verdicts to this JSON-lines file and skip those already in it for an unchanged package ('' keeps none)")
	testPkgs := fs.String("test-packages", "./proxy/...", "the go test packages whose tests judge the mutants (comma-separated patterns)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos mutants --generic PKG[,PKG...] [--timeout D] [--results FILE] [--test-packages PATTERNS] [--limit N] [--at FILE:LINE:COL,...] [--package-tests-only] [--list]
       mcpchaos mutants --generic PKG[,PKG...] --per-mutant-copy [--parallel N] ...

Generic mutation testing: finds every small slip in the packages' code (a
comparison or arithmetic operator swapped, && and || swapped, a ! dropped, a
call statement removed) and judges each one by the tests.

By default through mutant schemata: each mutant is type-checked alone (one
that does not compile is "not viable"); all the viable ones are compiled
into one copy of the module, each behind a runtime switch (`+mutants.MutantEnv+`=N);
every test package of --test-packages and the Ginkgo scenarios (containers
and the foreign build left out) are built once with coverage, race detector
off; every test function and every spec runs once with no mutant on to
record what it covers (one that fails then judges nothing and is said);
then each mutant runs only the tests and specs that execute its code, one
bounded run per test binary, until one fails (killed). A mutant no test
executes survives as "not covered" without a run. Verdicts go to --results
as they come; a rerun skips those of unchanged packages. A progress line
per mutant gives an ETA.

With --per-mutant-copy, each mutant is applied alone to a copy, built, and
judged by its package's tests and then the whole scenarios (the old way:
minutes per mutant; use it with --at for mutants the schemata cannot
express).

Prints every survivor and the score: killed / (killed + survived + not
covered); mutants that do not build or cannot be expressed are not counted.
Exit 1 if any mutant survived.
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("mutants --generic: unexpected argument %q", fs.Arg(0))
	}
	listsOnly := "it lists the mutants, runs nothing"
	schemata := "it judges each mutant in a copy of its own, not through schemata"
	if err := checkFlags("mutants --generic", fs,
		needs("parallel", "per-mutant-copy", "only copies of the module work at once; schemata judge in one"),
		excludes("per-mutant-copy", "test-packages", schemata),
		excludes("list", "parallel", listsOnly), excludes("list", "timeout", listsOnly),
		excludes("list", "limit", listsOnly), excludes("list", "at", listsOnly),
		excludes("list", "package-tests-only", listsOnly), excludes("list", "per-mutant-copy", listsOnly),
		excludes("list", "results", listsOnly), excludes("list", "test-packages", listsOnly),
	); err != nil {
		return err
	}
	dirs := splitList(*pkgs)
	if len(dirs) == 0 {
		fs.Usage()
		return fmt.Errorf("mutants --generic: name at least one package directory")
	}
	if *list {
		muts, err := mutants.ListGeneric(ctx, ".", dirs)
		if err != nil {
			return err
		}
		for _, m := range muts {
			fmt.Fprintf(stdout, "%s\t%s\n", m.ID(), m.Op)
		}
		fmt.Fprintf(stdout, "%d mutants\n", len(muts))
		return nil
	}
	start := time.Now()
	var outs []mutants.GenericOutcome
	var err error
	if *perCopy {
		checks := mutants.DefaultGenericChecks
		if *quick {
			checks = checks[:1]
		}
		outs, err = mutants.RunGeneric(ctx, mutants.GenericOptions{
			Pkgs: dirs, Checks: checks, Parallel: *parallel, Timeout: *timeout, Progress: stderr, Limit: *limit, IDs: splitList(*at),
		})
	} else {
		outs, err = mutants.RunSchemata(ctx, mutants.SchemataOptions{
			Pkgs: dirs, TestPkgs: splitList(*testPkgs), Scenarios: !*quick, Timeout: *timeout, Results: *results,
			Progress: stderr, Limit: *limit, IDs: splitList(*at),
		})
	}
	if err != nil {
		return err
	}
	return writeGenericReport(stdout, dirs, outs, time.Since(start))
}

// writeGenericReport prints every mutant not killed with why, then the
// counts of each verdict and the score; it fails when a mutant survived
// (covered or not) or could not be judged.
func writeGenericReport(stdout io.Writer, dirs []string, outs []mutants.GenericOutcome, took time.Duration) error {
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tCHANGE\tVERDICT\tWHY")
	counts := map[mutants.GenericVerdict]int{}
	for _, o := range outs {
		counts[o.Verdict]++
		if o.Verdict != mutants.GKilled && o.Verdict != mutants.GTimedOut {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Mutant.ID(), o.Mutant.Op, o.Verdict, firstLine(o.Detail))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	killed, judged := mutants.GenericScore(outs)
	score := 0.0
	if judged > 0 {
		score = 100 * float64(killed) / float64(judged)
	}
	fmt.Fprintf(stdout, "generic mutants of %s: %d mutants, %d killed (%d by timeout), %d survived, %d not covered, %d not viable, %d not expressible, %d errors; score %.1f%% (%d/%d) in %v\n",
		strings.Join(dirs, ","), len(outs), counts[mutants.GKilled]+counts[mutants.GTimedOut], counts[mutants.GTimedOut],
		counts[mutants.GSurvived], counts[mutants.GNotCovered], counts[mutants.GNotViable], counts[mutants.GNotExpressible],
		counts[mutants.GError], score, killed, judged, took.Round(time.Second))
	if counts[mutants.GSurvived]+counts[mutants.GNotCovered] > 0 || counts[mutants.GError] > 0 {
		return fmt.Errorf("%d generic mutant(s) survived, %d could not be judged", counts[mutants.GSurvived]+counts[mutants.GNotCovered], counts[mutants.GError])
	}
	return nil
}

// firstLine is the first non-empty line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
