package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

func runCatalogue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "", "run only scenarios with this label")
	seed := fs.Uint64("seed", 0, "order scenarios by this seed (0: a random seed, printed)")
	target := fs.String("target", "inprocess", "where the proxy under test runs: inprocess, binary:PATH (a built mcplocal), container:IMAGE, foreign:SPEC.yaml (docs/targets.md), cluster[:N[:PATH]] (N mcplocal replicas on one Postgres behind HAProxy, docs/deploy.md; a PATH ending in .yaml is a foreign spec, whose replicas share a store only if it declares one), or url:ENDPOINT (a running proxy's MCP endpoint: read-only scenarios only)")
	reportDir := fs.String("report", "", "write DIR/junit.xml and DIR/report.html (waterfalls) after the run")
	jsonPath := fs.String("json", "", "write every result, evidence spans included, as JSON to FILE (what mcpchaos canary compares)")
	focus := fs.String("focus", "", "run only scenarios whose name (with --fault: either its own or the one it runs under) matches this `regexp`, as ginkgo --focus")
	faultSpec := fs.String("fault", "", "inject this fault, `NAME[:k=v,k=v]`, into every selected scenario instead of its own (mcpchaos faults lists them); a scenario whose world or target lacks what it requires is not applicable")
	cold := fs.Bool("cold", false, "start a proxy process for every scenario; by default a run is warm: scenarios that need no fresh process share one proxy process (readied and checked between them), and only those that need a fresh one get their own (a fault that strikes before the proxy starts, restarts a process or may break its upstream session; knobs, failpoints or LLM stages of the scenario's own: docs/targets.md, Warm runs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("run: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("run", fs); err != nil {
		return err
	}
	var focusRE *regexp.Regexp
	if *focus != "" {
		var err error
		if focusRE, err = regexp.Compile(*focus); err != nil {
			return fmt.Errorf("--focus %q: %w", *focus, err)
		}
	}
	var fault harness.Fault
	if *faultSpec != "" {
		var err error
		if fault, err = harness.ParseFault(*faultSpec); err != nil {
			return fmt.Errorf("--fault: %w", err)
		}
	}
	if *label != "" {
		if err := catalogue.CheckLabel(*label); err != nil {
			return err
		}
	}
	newTarget, err := parseTarget(*target, stderr)
	if err != nil {
		return err
	}
	if *seed == 0 {
		*seed = rand.Uint64()%1_000_000 + 1
	}
	var todo []catalogue.Scenario
	for _, s := range catalogue.All() {
		// --focus matches the scenario's own name or, with --fault, the
		// name it runs under (the one a failing row's replay focuses on).
		own := s.Name()
		if fault != nil {
			s = s.WithFault(fault)
		}
		if (*label == "" || s.HasLabel(*label)) && (focusRE == nil || focusRE.MatchString(own) || focusRE.MatchString(s.Name())) {
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return fmt.Errorf("no scenario has label %q and a name matching %q", *label, *focus)
	}
	replay := replayCommand(*target, *seed, *label, *focus, *faultSpec, *cold)
	r := rand.New(rand.NewPCG(*seed, *seed))
	r.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	mode := "warm (a proxy process shared where no fresh one is needed)"
	if *cold {
		mode = "cold (a proxy process per scenario)"
	}
	fmt.Fprintf(stderr, "mcpchaos run: %d scenarios, target %s, seed %d, %s\nreplay: %s\n", len(todo), *target, *seed, mode, replay)
	sample := newTarget()
	assumed := harness.AssumedBudgetsText(sample, harness.CompressedBounds())
	if assumed != "" {
		fmt.Fprintf(stderr, "budgets: %s\n", assumed)
	}
	noAudit := ""
	if why := harness.Lacks(sample, harness.CapAuditAPI); why != "" {
		noAudit = fmt.Sprintf("target %s offers no audit API (it does not claim %s): its rows have no waterfalls", sample.Name(), harness.CapAuditAPI)
	}

	results := make([]catalogue.Result, 0, len(todo))
	start := time.Now()
	warm := &catalogue.Warm{NewTarget: newTarget, Off: *cold}
	warm.Plan(todo)
	defer warm.Close()
	interrupted := ""
	for i, s := range todo {
		fmt.Fprintf(stderr, "[%2d/%d] %-44s ", i+1, len(todo), s.Name())
		res := warm.Run(ctx, s, *seed)
		if ctx.Err() != nil {
			// The row was cut by the interruption, not judged: it is left
			// out, and the rows before it are reported as usual.
			fmt.Fprintln(stderr, "interrupted")
			interrupted = fmt.Sprintf("interrupted: %d of %d scenarios ran; %s was cut and is not judged", i, len(todo), s.Name())
			break
		}
		results = append(results, res)
		how := ""
		if res.Warm {
			how = " (warm)"
		}
		fmt.Fprintf(stderr, "%s %v%s\n", verdict(res), res.Latency.Round(time.Millisecond), how)
	}
	warm.Close()

	failed, na := 0, 0
	for _, res := range results {
		switch {
		case res.NotApplicable != "":
			na++
		case !res.Pass:
			failed++
		}
	}
	took := time.Since(start)
	run := report.Run{Seed: *seed, Target: *target, Started: start, Duration: took, Tolerance: catalogue.Tolerance, Results: results,
		BudgetsAssumed: assumed, NoAudit: noAudit,
		Replay: func(res catalogue.Result) string {
			return replayCommand(*target, *seed, *label, "^"+regexp.QuoteMeta(res.Scenario.Name())+"$", *faultSpec, *cold)
		}}
	if assumed != "" {
		fmt.Fprintln(stdout, strings.Join(report.Wrap("budgets: "+assumed, "  "), "\n"))
	}
	_ = report.WriteTable(stdout, run)
	_ = report.WriteFailures(stdout, run)
	fmt.Fprintf(stdout, "%d passed, %d failed, %d not applicable (seed %d, %v, tolerance %v)\n", len(results)-failed-na, failed, na, *seed,
		took.Round(time.Millisecond), catalogue.Tolerance)
	fmt.Fprintf(stdout, "wall time %v: %d scenarios ran warm (on a proxy process that served an earlier one), %d cold (on one started for them)\n",
		took.Round(time.Millisecond), warm.WarmRows, warm.ColdRows)
	if *reportDir != "" {
		if err := report.Write(*reportDir, run); err != nil {
			return err // exit 2: the table above still stands
		}
		fmt.Fprintf(stderr, "report: %s, %s\n", filepath.Join(*reportDir, report.HTMLFile), filepath.Join(*reportDir, report.JUnitFile))
	}
	if *jsonPath != "" {
		if err := report.WriteJSON(*jsonPath, run); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "replay: %s\n", replay)
	if interrupted != "" {
		fmt.Fprintln(stdout, interrupted)
		return exitError(exitInterrupted)
	}
	if failed > 0 {
		return exitError(1)
	}
	if failed+na == len(results) {
		fmt.Fprintln(stderr, "mcpchaos run: no scenario could run against this target")
		return exitError(1)
	}
	return nil
}

// replayCommand is the command that runs the same scenarios with the same
// draws again: the seed always, and the selection (--label, --focus, --fault)
// that made the run.
func replayCommand(target string, seed uint64, label, focus, fault string, cold bool) string {
	args := []string{"mcpchaos", "run", "--target", shellQuote(target), "--seed", fmt.Sprint(seed)}
	if cold {
		args = append(args, "--cold")
	}
	if label != "" {
		args = append(args, "--label", shellQuote(label))
	}
	if focus != "" {
		args = append(args, "--focus", shellQuote(focus))
	}
	if fault != "" {
		args = append(args, "--fault", shellQuote(fault))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func verdict(r catalogue.Result) string {
	switch {
	case r.NotApplicable != "":
		return "N/A"
	case r.Pass:
		return "PASS"
	}
	return "FAIL"
}

// parseTarget turns --target into a constructor of fresh targets.
func parseTarget(spec string, stderr io.Writer) (func() harness.Target, error) {
	switch {
	case spec == "inprocess":
		return func() harness.Target { return &harness.InProcess{} }, nil
	case strings.HasPrefix(spec, "binary:"):
		path := strings.TrimPrefix(spec, "binary:")
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("--target %s: %s is not an executable file (build one with: go build -o bin/ ./cmd/mcplocal)", spec, path)
		}
		return func() harness.Target { return &harness.Binary{Path: path} }, nil
	case strings.HasPrefix(spec, "container:"):
		// An image built locally (an ImageSet of the harness builds mcpchaos/mcplocal:TAG);
		// never pulled. Docker must already run (scripts/docker.sh start).
		image := strings.TrimPrefix(spec, "container:")
		if image == "" {
			return nil, fmt.Errorf("--target %s: want container:IMAGE, e.g. container:%s", spec, harness.ImageSetTagged("test").Mcplocal())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := harness.DockerAvailable(ctx); err != nil {
			return nil, fmt.Errorf("--target %s: %w", spec, err)
		}
		return func() harness.Target { return &harness.Container{Image: image} }, nil
	case strings.HasPrefix(spec, "foreign:"):
		// A target spec file describing another MCP proxy (docs/targets.md).
		fs, err := harness.LoadForeign(strings.TrimPrefix(spec, "foreign:"))
		if err != nil {
			return nil, fmt.Errorf("--target %s: %w", spec, err)
		}
		return func() harness.Target { return fs.Target(nil) }, nil
	case spec == "cluster" || strings.HasPrefix(spec, "cluster:"):
		// N mcplocal replicas on one throwaway Postgres behind HAProxy
		// (docs/deploy.md): cluster, cluster:N or cluster:N:PATH.
		return parseCluster(spec, stderr)
	case strings.HasPrefix(spec, "url:"):
		// A proxy already running: read-only scenarios only.
		l, err := harness.ParseLive(strings.TrimPrefix(spec, "url:"))
		if err != nil {
			return nil, fmt.Errorf("--target %w", err)
		}
		return func() harness.Target { return l }, nil
	}
	return nil, fmt.Errorf("--target %q: want inprocess, binary:PATH, container:IMAGE, foreign:SPEC.yaml, cluster[:N[:PATH]] or url:ENDPOINT", spec)
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// clusterDefaultReplicas is the replicas of --target cluster without N.
const clusterDefaultReplicas = 3

// parseCluster reads cluster[:N[:PATH]]: N replicas (default 3) of the
// mcplocal at PATH (default bin/mcplocal, then mcplocal on PATH), or of the
// foreign proxy a PATH ending in .yaml or .yml describes (docs/targets.md).
func parseCluster(spec string, stderr io.Writer) (func() harness.Target, error) {
	n, path := clusterDefaultReplicas, ""
	if rest, ok := strings.CutPrefix(spec, "cluster:"); ok {
		num, p, _ := strings.Cut(rest, ":")
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--target %s: want cluster:N or cluster:N:PATH with N >= 1", spec)
		}
		n, path = v, p
	}
	if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		fs, err := harness.LoadForeign(path)
		if err != nil {
			return nil, fmt.Errorf("--target %s: %w", spec, err)
		}
		if fs.Image != "" {
			return nil, fmt.Errorf("--target %s: a cluster runs a command spec's replicas; %s names an image", spec, path)
		}
		return func() harness.Target { return harness.NewForeignCluster(fs, n, nil) }, nil
	}
	if path == "" {
		path = filepath.Join("bin", "mcplocal")
		if _, err := os.Stat(path); err != nil {
			if path, err = exec.LookPath("mcplocal"); err != nil {
				return nil, fmt.Errorf("--target %s: no bin/mcplocal and no mcplocal on PATH (build one with: go build -o bin/ ./cmd/mcplocal)", spec)
			}
		}
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("--target %s: %s is not an executable file", spec, path)
	}
	return func() harness.Target { return &harness.Cluster{Path: path, Replicas: n} }, nil
}
