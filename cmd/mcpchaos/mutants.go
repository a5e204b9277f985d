package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// runMutants is `mcpchaos mutants`: every known regression applied to a copy
// of the module, one at a time, and the check of the suite that must kill it
// run there. Exit 1 if any mutant survived or could not be judged.
func runMutants(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "--generic" || a == "-generic" || strings.HasPrefix(a, "--generic=") || strings.HasPrefix(a, "-generic=") {
			return runGenericMutants(ctx, args, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "", "run only these mutants (comma-separated names)")
	parallel := fs.Int("parallel", mutants.DefaultParallel, "mutants run at once")
	timeout := fs.Duration("timeout", mutants.DefaultTimeout, "bound on each build step and each check")
	control := fs.Bool("control", false, "first run every check on the unpatched module: it must pass there")
	logs := fs.String("logs", "", "write each mutant's full output to DIR/NAME.log")
	list := fs.Bool("list", false, "list the mutants and their checks, run nothing")
	touching := fs.String("touching", "", "print, for these package directories (comma-separated), the checks of their mutants (make quick), run nothing")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos mutants [--only NAME,...] [--parallel N] [--timeout D] [--control] [--logs DIR] [--list]
       mcpchaos mutants --touching DIR[,DIR...]   (the checks of those packages' mutants, for make quick)
       mcpchaos mutants --generic PKG[,PKG...] ...   (generic mutation testing; --generic --help says more)

Applies each known regression (scenarios/mutants/patches) to a copy of the
module and runs the check of the suite that must kill it. Prints one row per
mutant; exit 1 if any survived or could not be judged. --touching and
--list run nothing: the flags that shape a run are refused beside them.
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("mutants: unexpected argument %q", fs.Arg(0))
	}
	runsNothing := "it only prints the checks of those packages' mutants, runs nothing"
	listsOnly := "it lists the mutants, runs nothing"
	if err := checkFlags("mutants", fs,
		excludes("touching", "only", runsNothing), excludes("touching", "list", runsNothing),
		excludes("touching", "control", runsNothing), excludes("touching", "logs", runsNothing),
		excludes("touching", "parallel", runsNothing), excludes("touching", "timeout", runsNothing),
		excludes("list", "control", listsOnly), excludes("list", "logs", listsOnly),
		excludes("list", "parallel", listsOnly), excludes("list", "timeout", listsOnly),
	); err != nil {
		return err
	}
	if *touching != "" {
		// One line per go test check package ("test PKG RUN"), then the
		// Ginkgo label filter ("labels FILTER"), for scripts/quick.sh.
		p := mutants.Quick(strings.Split(*touching, ","))
		pkgs := slices.Sorted(maps.Keys(p.Tests))
		for _, pkg := range pkgs {
			fmt.Fprintf(stdout, "test %s %s\n", pkg, p.Tests[pkg])
		}
		if p.Labels != "" {
			fmt.Fprintf(stdout, "labels %s\n", p.Labels)
		}
		return nil
	}
	var names []string
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	selected, err := mutants.Select(names)
	if err != nil {
		return err
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tPATCH\tKILLED BY\tREGRESSION")
		for _, m := range selected {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.PatchFile, m.Kill, m.Regression)
		}
		return tw.Flush()
	}

	start := time.Now()
	outcomes := mutants.Run(ctx, mutants.Options{
		Only: names, Parallel: *parallel, Timeout: *timeout, Progress: stderr, LogDir: *logs, Control: *control,
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}

	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tREGRESSION\tVERDICT\tKILLED BY\tDURATION\tBUILD\tCHECK")
	counts := map[mutants.Verdict]int{}
	for _, o := range outcomes {
		counts[o.Verdict]++
		by := o.KilledBy
		if o.TimedOut {
			by += " (timed out)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%v\t%v\n", o.Mutant.Name, shorten(o.Mutant.Regression, 64), o.Verdict, dash(by),
			o.Duration.Round(100*time.Millisecond), o.BuildDuration.Round(100*time.Millisecond), o.CheckDuration.Round(100*time.Millisecond))
	}
	_ = tw.Flush()

	fmt.Fprintln(stdout)
	for _, o := range outcomes {
		switch o.Verdict {
		case mutants.Killed:
			fmt.Fprintf(stdout, "killed   %s (check %v, exit %d):\n%s\n", o.Mutant.Name, o.CheckDuration.Round(100*time.Millisecond), o.ExitCode, indent(o.Excerpt, 3))
		case mutants.Survived:
			fmt.Fprintf(stdout, "SURVIVED %s: `%s` passed with the mutant applied, so the suite no longer guards against this regression: %s\n",
				o.Mutant.Name, o.Mutant.Kill, o.Mutant.Regression)
		case mutants.Errored:
			var stale *mutants.StalePatchError
			if errors.As(o.Err, &stale) {
				fmt.Fprintf(stdout, "ERROR    %s", mutants.StaleReport(o.Mutant, o.Err))
				continue
			}
			fmt.Fprintf(stdout, "ERROR    %s: %v\n", o.Mutant.Name, o.Err)
			if o.Excerpt != "" {
				fmt.Fprintln(stdout, indent(o.Excerpt, 8))
			}
		}
	}
	fmt.Fprintln(stdout)
	writeTimes(stdout, outcomes)
	fmt.Fprintf(stdout, "\n%d killed, %d survived, %d errors, of %d mutants in %v (parallel %d)\n",
		counts[mutants.Killed], counts[mutants.Survived], counts[mutants.Errored], len(outcomes),
		time.Since(start).Round(time.Second), *parallel)
	if counts[mutants.Survived]+counts[mutants.Errored] > 0 {
		return exitError(1)
	}
	return nil
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// indent keeps the first n lines of s, each behind a margin.
func indent(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for i, l := range lines {
		lines[i] = "         | " + l
	}
	return strings.Join(lines, "\n")
}

// writeTimes says where a run's time went, by kind of check: how many
// mutants, and the summed and mean copy+patch, build (compile and link) and
// check times. Summed over mutants run side by side, so the sums exceed the
// wall clock by about the parallelism.
func writeTimes(w io.Writer, outcomes []mutants.Outcome) {
	type sums struct {
		n                          int
		setup, build, check, whole time.Duration
	}
	kinds := map[mutants.CheckKind]*sums{}
	var order []mutants.CheckKind
	for _, o := range outcomes {
		k := o.Mutant.Kill.Kind
		if kinds[k] == nil {
			kinds[k] = &sums{}
			order = append(order, k)
		}
		s := kinds[k]
		s.n++
		s.setup += o.SetupDuration
		s.build += o.BuildDuration
		s.check += o.CheckDuration
		s.whole += o.Duration
	}
	slices.Sort(order)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK KIND\tMUTANTS\tCOPY+PATCH\tBUILD\tCHECK\tWHOLE\tMEAN BUILD\tMEAN CHECK")
	for _, k := range order {
		s := kinds[k]
		r := func(d time.Duration) time.Duration { return d.Round(time.Second) }
		mean := func(d time.Duration) time.Duration { return (d / time.Duration(s.n)).Round(100 * time.Millisecond) }
		fmt.Fprintf(tw, "%s\t%d\t%v\t%v\t%v\t%v\t%v\t%v\n", k, s.n, r(s.setup), r(s.build), r(s.check), r(s.whole), mean(s.build), mean(s.check))
	}
	_ = tw.Flush()
}
