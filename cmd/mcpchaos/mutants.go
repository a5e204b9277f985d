package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
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
	findSmaller := fs.Bool("find-smaller", false, "instead of judging, run the whole go tests of each mutant's patched packages and name those that kill it (default: the mutants with a Ginkgo or catalogue check)")
	jsonOut := fs.String("json", "", "also write each mutant's outcome and times to FILE, one JSON object a line")
	ownCopies := fs.Bool("own-copies", false, "judge every mutant on its own patched copy, none in the shared tree of known mutants")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos mutants [--only NAME,...] [--parallel N] [--timeout D] [--control] [--own-copies] [--logs DIR] [--json FILE] [--list]
       mcpchaos mutants --touching DIR[,DIR...]   (the checks of those packages' mutants, for make quick)
       mcpchaos mutants --find-smaller [--only NAME,...]   (the package tests that kill each mutant)
       mcpchaos mutants --generic PKG[,PKG...] ...   (generic mutation testing; --generic --help says more)

Applies each known regression (scenarios/mutants/patches) to a copy of the
module and runs the check of the suite that must kill it. A mutant whose
patch changes only Go function bodies is first judged in one shared tree
where every such mutant is placed at function level and switched on by
MCPCHAOS_KNOWN_MUTANT=NAME, each check built once; a mutant that tree does
not kill is judged again on its own copy (--own-copies: every mutant on its
own copy). Prints one row per mutant; exit 1 if any survived or could not be
judged. --touching and
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
		excludes("touching", "find-smaller", runsNothing), excludes("list", "find-smaller", listsOnly),
		excludes("touching", "json", runsNothing), excludes("list", "json", listsOnly),
		excludes("touching", "own-copies", runsNothing), excludes("list", "own-copies", listsOnly),
		excludes("find-smaller", "own-copies", "it builds each mutant's own copy"),
		excludes("find-smaller", "control", "it runs its own control, once per package"),
		excludes("find-smaller", "json", "it judges nothing"), excludes("find-smaller", "logs", "it judges nothing"),
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

	if *findSmaller {
		return printSmaller(stdout, mutants.FindSmaller(ctx, mutants.Options{
			Only: names, Parallel: *parallel, Timeout: *timeout, Progress: stderr,
		}))
	}

	start := time.Now()
	outcomes := mutants.Run(ctx, mutants.Options{
		Only: names, Parallel: *parallel, Timeout: *timeout, Progress: stderr, LogDir: *logs, Control: *control, OwnCopies: *ownCopies,
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}

	counts := writeOutcomes(stdout, outcomes)
	if *jsonOut != "" {
		if err := writeOutcomesJSON(*jsonOut, outcomes); err != nil {
			return err
		}
	}
	return writeMutantsVerdict(stdout, counts, len(outcomes), time.Since(start), *parallel)
}

// writeOutcomes prints one row per mutant, then what killed each (or why
// it survived or could not be judged), where the time went and what the
// shared tree judged, and returns how many mutants got each verdict.
func writeOutcomes(stdout io.Writer, outcomes []mutants.Outcome) map[mutants.Verdict]int {
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tREGRESSION\tVERDICT\tSHARED\tKILLED BY\tDURATION\tBUILD\tCHECK")
	counts := map[mutants.Verdict]int{}
	for _, o := range outcomes {
		counts[o.Verdict]++
		by := o.KilledBy
		if o.TimedOut {
			by += " (timed out)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%v\t%v\n", o.Mutant.Name, shorten(o.Mutant.Regression, 64), o.Verdict, sharedColumn(o), dash(by),
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
	writeShared(stdout, outcomes)
	return counts
}

// writeMutantsVerdict prints the run's last line, the count of each
// verdict, and fails (exit 1) if any mutant survived or could not be judged.
func writeMutantsVerdict(stdout io.Writer, counts map[mutants.Verdict]int, n int, took time.Duration, parallel int) error {
	fmt.Fprintf(stdout, "\n%d killed, %d survived, %d errors, of %d mutants in %v (parallel %d)\n",
		counts[mutants.Killed], counts[mutants.Survived], counts[mutants.Errored], n,
		took.Round(time.Second), parallel)
	if counts[mutants.Survived]+counts[mutants.Errored] > 0 {
		return exitError(1)
	}
	return nil
}

// sharedColumn says where the verdict came from: "yes" (the shared tree),
// "no" (not placed there: its own copy), or what the shared tree said
// before the own copy judged it again.
func sharedColumn(o mutants.Outcome) string {
	switch {
	case o.Shared:
		return "yes"
	case o.SharedVerdict != "":
		return "no (shared: " + string(o.SharedVerdict) + ")"
	}
	return "no"
}

// writeShared sums up the shared tree: how many verdicts came from it,
// how many mutants it did not kill and their own copies judged again, and
// how many were not placed there, by reason.
func writeShared(w io.Writer, outcomes []mutants.Outcome) {
	var shared, again int
	reasons := map[string]int{}
	for _, o := range outcomes {
		switch {
		case o.Shared:
			shared++
		case o.SharedVerdict != "":
			again++
		case o.NotShared != "":
			reasons[notSharedKind(o.NotShared)]++
		}
	}
	fmt.Fprintf(w, "\nshared tree: %d verdict(s) from it, %d judged again on their own copy, %d not placed there\n",
		shared, again, len(outcomes)-shared-again)
	for _, r := range slices.Sorted(maps.Keys(reasons)) {
		fmt.Fprintf(w, "  %3d %s\n", reasons[r], r)
	}
}

// goFile is a module-relative Go file's path in a reason.
var goFile = regexp.MustCompile(`\S+\.go\b`)

// notSharedKind is a reason a mutant was not placed in the shared tree
// without the files it names, so mutants left out for one reason count
// together.
func notSharedKind(why string) string {
	if i := strings.Index(why, " ("); i > 0 {
		why = why[:i]
	}
	if i := strings.Index(why, ": "); i > 0 {
		why = why[:i]
	}
	return goFile.ReplaceAllString(why, "a Go file")
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

// outcomeJSON is one line of --json: a mutant's verdict and where its time
// went, in seconds.
type outcomeJSON struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Check   string `json:"check"`
	Verdict string `json:"verdict"`
	// Shared: the verdict came from the shared tree of known mutants.
	// SharedVerdict is what that tree said ("" if the mutant was not
	// placed there: NotShared says why); a mutant it did not kill was
	// judged again on its own copy, whose verdict is Verdict.
	Shared        bool    `json:"shared"`
	SharedVerdict string  `json:"sharedVerdict,omitempty"`
	NotShared     string  `json:"notShared,omitempty"`
	TimedOut      bool    `json:"timedOut,omitempty"`
	Error         string  `json:"error,omitempty"`
	Setup         float64 `json:"setupSeconds"`
	Build         float64 `json:"buildSeconds"`
	Run           float64 `json:"checkSeconds"`
	Whole         float64 `json:"wholeSeconds"`
}

func writeOutcomesJSON(file string, outcomes []mutants.Outcome) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, o := range outcomes {
		j := outcomeJSON{Name: o.Mutant.Name, Kind: o.Mutant.Kill.Kind.String(), Check: o.Mutant.Kill.String(),
			Verdict: string(o.Verdict), TimedOut: o.TimedOut,
			Shared: o.Shared, SharedVerdict: string(o.SharedVerdict), NotShared: o.NotShared,
			Setup: o.SetupDuration.Seconds(), Build: o.BuildDuration.Seconds(), Run: o.CheckDuration.Seconds(), Whole: o.Duration.Seconds()}
		if o.Err != nil {
			j.Error = o.Err.Error()
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// printSmaller prints what --find-smaller found: per mutant its present
// check and the smallest go test that kills it, then the table entries to
// change, as Go.
func printSmaller(w io.Writer, found []mutants.Smaller) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tCHECK NOW\tSMALLER CHECK\tFAILED TESTS")
	var kills []string
	for _, s := range found {
		smaller := "-"
		if c, ok := s.Kill(); ok {
			smaller = c.String()
			run := fmt.Sprintf("goTest(%q, %q)", c.Pkg, c.Run)
			if c.SDKPath {
				run = fmt.Sprintf("Check{Kind: GoTest, Pkg: %q, Run: %q, SDKPath: true}", c.Pkg, c.Run)
			}
			kills = append(kills, fmt.Sprintf("%s:\tKill: %s,", s.Mutant.Name, run))
		} else if s.Err != nil {
			smaller = "- (" + shorten(s.Err.Error(), 100) + ")"
		}
		var names []string
		for _, f := range s.Failed {
			names = append(names, fmt.Sprintf("%s %s (%v)", f.Pkg, f.Name, f.Took))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Mutant.Name, s.Mutant.Kill, smaller, dash(strings.Join(names, ", ")))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%d of %d mutant(s) have a smaller check:\n", len(kills), len(found))
	for _, k := range kills {
		fmt.Fprintln(w, k)
	}
	return nil
}
