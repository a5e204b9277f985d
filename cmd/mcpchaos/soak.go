package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/soak"
)

const soakUsage = `Usage: mcpchaos soak --requests N [--seed S] [--target T] [flags]

Drive N tools/calls over many sessions against the proxy under test while
faults drawn by the seed come and go: one fault per epoch of --epoch
requests (latency, fragmentation, cut answers, resets, a blackholed or
downed upstream link, slow, hanging and failing tools, upstream restarts,
proxy restarts and, on process targets, SIGKILLs), with the fake LLM on a
random plan from the same seed. The same seed draws the same faults in the
same order.

Every request is counted once: answered within its budget (the request
deadline knob + the catalogue's tolerance), answered late, unanswered
(never an answer while the proxy was up), refused or cut while the proxy
restarted, lost to a SIGKILL (in flight at the kill). Then every answered
request's tool_call_trace audit row is looked up, and goroutines must
return to their baseline. RSS growth from the first epoch to the last is
reported.

Exit status 1 on any unanswered or late request, missing audit row or
leaked goroutine.

Flags:
`

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, soakUsage); fs.PrintDefaults() }
	requests := fs.Int("requests", 5000, "tools/calls to send in all")
	seed := fs.Uint64("seed", 0, "seed of the fault draws and the fake LLM's plan (0: a random seed, printed)")
	target := fs.String("target", "inprocess", "where the proxy under test runs: inprocess, binary:PATH (a built mcplocal; can be SIGKILLed), or cluster[:N[:PATH]] (N replicas behind HAProxy: rolling restarts, one replica SIGKILLed at a time; docs/deploy.md)")
	workers := fs.Int("workers", soak.DefaultWorkers, "sessions calling at once")
	perSession := fs.Int("calls-per-session", soak.DefaultCallsPerSession, "calls before a worker opens a new session")
	epoch := fs.Int("epoch", soak.DefaultEpoch, "requests under one drawn fault")
	reportPath := fs.String("report", "", "write the report as JSON to this file (default: mcpchaos-soak-SEED.json in the temp dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("soak: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("soak", fs); err != nil {
		return err
	}
	newTarget, err := parseTarget(*target, stderr)
	if err != nil {
		return err
	}
	if *seed == 0 {
		*seed = rand.Uint64()%1_000_000 + 1
	}
	fmt.Fprintf(stderr, "mcpchaos soak: %d requests, target %s, seed %d (replay with --seed %d)\n", *requests, *target, *seed, *seed)
	rep, err := soak.Run(ctx, soak.Options{Requests: *requests, Seed: *seed, Target: newTarget(), Workers: *workers,
		CallsPerSession: *perSession, Epoch: *epoch, Progress: stderr})
	if err != nil {
		return err
	}
	if *reportPath == "" {
		*reportPath = filepath.Join(os.TempDir(), fmt.Sprintf("mcpchaos-soak-%d.json", *seed))
	}
	if b, err := json.MarshalIndent(rep, "", "  "); err == nil {
		if err := os.WriteFile(*reportPath, b, 0o644); err != nil {
			fmt.Fprintf(stderr, "mcpchaos soak: report: %v\n", err)
		}
	}
	writeSoakSummary(stdout, rep)
	fmt.Fprintf(stdout, "report: %s\n", *reportPath)
	if len(rep.Problems()) > 0 {
		return exitError(1)
	}
	return nil
}

func writeSoakSummary(w io.Writer, r *soak.Report) {
	fmt.Fprintf(w, "soak: seed %d, target %s, %d requests over %d sessions in %v (%.0f req/s)\n",
		r.Seed, r.Target, r.Requests, r.Sessions, r.Took.Round(time.Millisecond), float64(r.Requests)/r.Took.Seconds())
	fmt.Fprintf(w, "  budget per request      %v + tolerance %v\n", r.Budget, r.Tolerance)
	fmt.Fprintf(w, "  answered in budget      %d (%d of them isError results)\n", r.InBudget, r.ToolErrors)
	fmt.Fprintf(w, "  answered late           %d\n", r.Late)
	fmt.Fprintf(w, "  unanswered              %d\n", r.Unanswered)
	fmt.Fprintf(w, "  refused while down      %d (never accepted: connection refused during a restart)\n", r.Refused)
	fmt.Fprintf(w, "  cut by a restart        %d (in flight past a graceful restart's shutdown grace)\n", r.CutByRestart)
	fmt.Fprintf(w, "  lost to a kill          %d\n", r.LostToKill)
	for _, e := range r.Events {
		fmt.Fprintf(w, "    %-14s at %s, back after %v%s\n", e.Kind, e.Start.Format("15:04:05.000"), e.End.Sub(e.Start).Round(time.Millisecond), errSuffix(e.Err))
	}
	if r.AuditChecked {
		fmt.Fprintf(w, "  audit rows              %d checked, %d missing, %d lost to a kill\n", r.RowsChecked, r.RowsMissing, r.RowsLostToKil)
	} else {
		fmt.Fprintf(w, "  audit rows              not checked: %s\n", r.AuditNote)
	}
	fmt.Fprintf(w, "  goroutines              %d before, %d after", r.GoroutinesBefore, r.GoroutinesAfter)
	if r.HarnessGoroutines > 0 {
		fmt.Fprintf(w, " (+%d of the harness's toxiproxy, not counted)", r.HarnessGoroutines)
	}
	fmt.Fprintln(w)
	if r.RSSWarm > 0 && len(r.Events) > 0 && r.Target != "inprocess" {
		fmt.Fprintf(w, "  RSS                     not comparable: the proxy's process was restarted %d times\n", len(r.Events))
	} else if r.RSSWarm > 0 {
		fmt.Fprintf(w, "  RSS                     %.1f MiB warm, %.1f MiB at the end (%+.1f%%, limit %.0f%%)\n",
			float64(r.RSSWarm)/(1<<20), float64(r.RSSEnd)/(1<<20), r.RSSGrowth(), soak.RSSGrowthLimit)
	}
	for _, ex := range r.Examples {
		fmt.Fprintf(w, "  e.g. %s\n", ex)
	}
	if p := r.Problems(); len(p) > 0 {
		for _, x := range p {
			fmt.Fprintf(w, "FAIL: %s\n", x)
		}
		return
	}
	fmt.Fprintln(w, "PASS")
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
