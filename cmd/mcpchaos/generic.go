package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	parallel := fs.Int("parallel", 1, "copies of the module working at once")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound on each check of each mutant")
	limit := fs.Int("limit", 0, "judge only the first N mutants (0: all)")
	at := fs.String("at", "", "judge only the mutants at these FILE:LINE:COL positions (comma-separated, as --list prints them)")
	quick := fs.Bool("package-tests-only", false, "run only the mutated package's own tests, not the scenarios as well")
	list := fs.Bool("list", false, "list the mutants, run nothing")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos mutants --generic PKG[,PKG...] [--parallel N] [--timeout D] [--limit N] [--at FILE:LINE:COL,...] [--package-tests-only] [--list]

Generic mutation testing: finds every small slip in the packages' code (a
comparison or arithmetic operator swapped, && and || swapped, a ! dropped, a
call statement removed), applies each one alone to a copy of the module and
runs the checks until one fails: the package's own tests, then the Ginkgo
scenarios (containers and the foreign build left out). Prints every
survivor and the score: killed / (killed + survived); mutants that do not
build are not counted. Exit 1 if any mutant survived.
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
	checks := mutants.DefaultGenericChecks
	if *quick {
		checks = checks[:1]
	}
	start := time.Now()
	outs, err := mutants.RunGeneric(ctx, mutants.GenericOptions{
		Pkgs: dirs, Checks: checks, Parallel: *parallel, Timeout: *timeout, Progress: stderr, Limit: *limit, IDs: splitList(*at),
	})
	if err != nil {
		return err
	}
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
	fmt.Fprintf(stdout, "generic mutants of %s: %d killed (%d by timeout), %d survived, %d not viable, %d errors; score %.1f%% (%d/%d) in %v\n",
		strings.Join(dirs, ","), counts[mutants.GKilled]+counts[mutants.GTimedOut], counts[mutants.GTimedOut],
		counts[mutants.GSurvived], counts[mutants.GNotViable], counts[mutants.GError], score, killed, judged,
		time.Since(start).Round(time.Second))
	if counts[mutants.GSurvived] > 0 || counts[mutants.GError] > 0 {
		return fmt.Errorf("%d generic mutant(s) survived, %d could not be judged", counts[mutants.GSurvived], counts[mutants.GError])
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
