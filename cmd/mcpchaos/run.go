package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func runCatalogue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "", "run only scenarios with this label")
	seed := fs.Uint64("seed", 0, "order scenarios by this seed (0: a random seed, printed)")
	target := fs.String("target", "inprocess", "where the proxy under test runs: inprocess")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target != "inprocess" {
		return fmt.Errorf("--target %q: only inprocess is available yet", *target)
	}
	if *seed == 0 {
		*seed = rand.Uint64()%1_000_000 + 1
	}
	var todo []catalogue.Scenario
	for _, s := range catalogue.All() {
		if *label == "" || s.HasLabel(*label) {
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return fmt.Errorf("no scenario has label %q", *label)
	}
	r := rand.New(rand.NewPCG(*seed, *seed))
	r.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	fmt.Fprintf(stderr, "mcpchaos run: %d scenarios, target %s, seed %d (replay with --seed %d)\n", len(todo), *target, *seed, *seed)

	results := make([]catalogue.Result, 0, len(todo))
	start := time.Now()
	for i, s := range todo {
		fmt.Fprintf(stderr, "[%2d/%d] %-44s ", i+1, len(todo), s.Name())
		res := s.Run(ctx, &harness.InProcess{})
		results = append(results, res)
		fmt.Fprintf(stderr, "%s %v\n", verdict(res), res.Latency.Round(time.Millisecond))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}

	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tPARAMS\tOPERATION\tBUDGET\tOBSERVED\tVERDICT\tTRACE")
	failed := 0
	for _, res := range results {
		s := res.Scenario
		if !res.Pass {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%s\t%s\n", s.Fault.Name(), dash(s.Fault.Params()), s.Operation.Name,
			res.Budget, res.Latency.Round(time.Millisecond), verdict(res), dash(res.Trace))
	}
	_ = tw.Flush()
	for _, res := range results {
		if !res.Pass {
			fmt.Fprintf(stdout, "FAIL %s: %s\n", res.Scenario.Name(), res.Reason)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed (seed %d, %v, tolerance %v)\n", len(results)-failed, failed, *seed,
		time.Since(start).Round(time.Millisecond), catalogue.Tolerance)
	if failed > 0 {
		return exitError(1)
	}
	return nil
}

func verdict(r catalogue.Result) string {
	if r.Pass {
		return "PASS"
	}
	return "FAIL"
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
