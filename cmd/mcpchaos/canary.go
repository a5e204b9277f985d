package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/canary"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

const canaryUsage = `usage: mcpchaos canary --sdk MODULE@VERSION|MODULE=DIR ... [--client-sdk ...] [flags]

Runs the suite against mcplocal and the harness's clients built with a
candidate SDK, and against the baseline (the versions go.mod pins), binary
target, one after the other, and prints one table: each scenario's baseline
and candidate verdict and latency, and what CHANGED (NEWLY FAILING, newly
passing, slower by more than the tolerance).

  --sdk MODULE@VERSION      switch the whole module (proxy and clients) to a
                            released version (go get), e.g.
                            github.com/modelcontextprotocol/go-sdk@v1.7.0
  --sdk MODULE=DIR          ... or to a local checkout (go mod edit -replace)
  --client-sdk ...          switch only the harness's clients; the proxy stays
                            on the baseline (or on --sdk)
  --client-sdk npm:PACKAGE@VERSION
                            switch a Node client's npm package, e.g. the
                            TypeScript SDK client's
                            npm:@modelcontextprotocol/sdk@1.24.3 (one version
                            or a dist-tag, no range): installed with npm
                            install --save-exact in the copy's tools/* that
                            depend on it; the work tree is not touched
Both repeat: several switches make one candidate (go-sdk and mcp-go together).

The suite is the whole fault catalogue (mcpchaos run, or one --label), plus
the Ginkgo specs of ./scenarios matching --specs (stale sessions, restarts,
adoption with every client, the conformance run): new scenarios and specs
are picked up as they land. A candidate that does not build is a result: its
compiler's first lines are printed and the run fails.

The baseline's verdicts are cached (--baseline-cache) under a key of the
tree's content, the toolchain and the suite's selection, with their seed:
a run that names no --seed takes the cached baseline's, so checking several
candidates one after the other runs the baseline once. --rerun-baseline
runs it again anyway.

Exit status: 0 when nothing that passed on the baseline fails on the
candidate; 1 when something does (or the candidate does not build), unless
--allow accepts it; 2 when the canary itself could not run.

Flags:
`

func runCanary(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("canary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sdks, clients, allows listFlag
	fs.Var(&sdks, "sdk", "MODULE@VERSION or MODULE=DIR: switch the proxy and the clients (repeatable)")
	fs.Var(&clients, "client-sdk", "MODULE@VERSION, MODULE=DIR or npm:PACKAGE@VERSION: switch only the harness's clients (repeatable)")
	fs.Var(&allows, "allow", "NAME=reason: accept a change of the row NAME, recording why (repeatable)")
	label := fs.String("label", "", "run only catalogue scenarios with this label")
	specs := fs.String("specs", canary.DefaultSpecs, "Ginkgo label filter of the specs run besides the catalogue (\"\" runs none); container and foreign specs are always left out")
	seed := fs.Uint64("seed", 0, "order the catalogue by this seed on both sides (0: the cached baseline's, else random; printed)")
	tolerance := fs.Duration("tolerance", catalogue.Tolerance, "flag a row as slower when the candidate takes longer than the baseline by more than this")
	reportDir := fs.String("report", "", "write DIR/canary-junit.xml and DIR/canary.html (both waterfalls side by side for a changed row)")
	workDir := fs.String("work", "", "keep each side's binaries, results and logs in DIR (default: a temp dir, removed)")
	timeout := fs.Duration("timeout", 15*time.Minute, "bound on each build step and each suite run")
	baselineCache := fs.String("baseline-cache", canary.DefaultBaselineCache(), "keep the baseline's verdicts in DIR, keyed by the tree's content, toolchain, node, knobs' env, --label, --specs and --seed, so checking several candidates runs the baseline once (\"\" never caches)")
	rerunBaseline := fs.Bool("rerun-baseline", false, "run the baseline even when --baseline-cache has its verdicts (and cache the new ones)")
	fs.Usage = func() {
		fmt.Fprint(stderr, canaryUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("canary: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("canary", fs); err != nil {
		return err
	}
	o := canary.Options{Label: *label, Specs: *specs, Seed: *seed, Tolerance: *tolerance, Timeout: *timeout, Progress: stderr, Allow: map[string]string{},
		BaselineCache: *baselineCache, RerunBaseline: *rerunBaseline}
	for _, s := range sdks {
		sw, err := canary.ParseSwitch(s)
		if err != nil {
			return fmt.Errorf("canary: --sdk %w", err)
		}
		o.SDK = append(o.SDK, sw)
	}
	for _, s := range clients {
		sw, err := canary.ParseSwitch(s)
		if err != nil {
			return fmt.Errorf("canary: --client-sdk %w", err)
		}
		o.ClientSDK = append(o.ClientSDK, sw)
	}
	if len(o.SDK)+len(o.ClientSDK) == 0 {
		fs.Usage()
		return fmt.Errorf("canary: no candidate: give --sdk or --client-sdk")
	}
	for _, a := range allows {
		name, reason, err := canary.ParseAllow(a)
		if err != nil {
			return fmt.Errorf("canary: %w", err)
		}
		o.Allow[name] = reason
	}
	if *workDir != "" {
		abs, err := filepath.Abs(*workDir)
		if err != nil {
			return err
		}
		o.WorkDir = abs
	}
	fmt.Fprintf(stderr, "mcpchaos canary: candidate %s, tolerance %v\n", strings.Join(append(append([]string{}, sdks...), clients...), " "), o.Tolerance)

	res, err := canary.Run(ctx, o)
	if err != nil {
		return fmt.Errorf("canary: %w", err)
	}
	return writeCanaryResult(stdout, stderr, res, o.Allow, *reportDir)
}

// writeCanaryResult prints the comparison, why the candidate does not
// build, the notes (a cached baseline's latencies beside a slower row, an
// --allow that matched nothing) and the verdict, writes the report when
// reportDir is set, and fails (exit 1) when the candidate regressed.
func writeCanaryResult(stdout, stderr io.Writer, res *canary.Result, allow map[string]string, reportDir string) error {
	c := res.Comparison
	printComparison(stdout, c)
	if res.Build != nil {
		fmt.Fprintf(stdout, "the candidate (%s) does not build:\n%s\n", c.Candidate, c.CandidateBuild)
	}
	if !res.BaselineCached.IsZero() && hasSlower(c.Rows) {
		fmt.Fprintf(stdout, "note: the baseline's latencies are from a cached run (recorded %s), under another load than the candidate's: a row flagged slower may be the machine, not the SDK; --rerun-baseline measures both sides in one run\n",
			res.BaselineCached.Format(time.RFC3339))
	}
	for _, n := range canary.UnusedAllows(c.Rows, allow) {
		fmt.Fprintf(stdout, "note: --allow %q matched no changed row\n", n)
	}
	fmt.Fprintf(stdout, "canary: %s (baseline %s; candidate %s; seed %d, %v)\n", c.Verdict, c.Baseline, c.Candidate, c.Seed, c.Duration.Round(time.Second))
	if reportDir != "" {
		if err := report.WriteComparison(reportDir, c); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report: %s, %s\n", filepath.Join(reportDir, report.CanaryHTMLFile), filepath.Join(reportDir, report.CanaryJUnitFile))
	}
	if c.Failed {
		return exitError(1)
	}
	return nil
}

// printComparison prints the table, then why each changed row changed.
func printComparison(w io.Writer, c report.Comparison) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSOURCE\tBASELINE\tCANDIDATE\tCHANGED")
	for _, r := range c.Rows {
		change := dash(r.Change)
		if r.Allowed != "" {
			change += " (allowed: " + r.Allowed + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Source, report.SideText(r.Base), report.SideText(r.Cand), change)
	}
	_ = tw.Flush()
	for _, r := range c.Rows {
		if r.Change == "" || r.Cand == nil || r.Cand.Reason == "" || r.Cand.Passed() {
			continue
		}
		fmt.Fprintf(w, "%s %s: %s\n", r.Change, r.Name, oneLineReason(r.Cand.Reason))
	}
}

func oneLineReason(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// hasSlower reports whether any row is flagged slower.
func hasSlower(rows []report.ComparedRow) bool {
	for _, r := range rows {
		if strings.HasPrefix(r.Change, canary.Slower) {
			return true
		}
	}
	return false
}
