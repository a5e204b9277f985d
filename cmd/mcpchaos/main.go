// Command mcpchaos is the chaos simulator for MCP proxies.
//
//	mcpchaos run [--label L] [--seed N]     run the fault catalogue, one row per scenario
//	mcpchaos fake upstream docmost --listen ADDR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := watchSignals(context.Background(), sigs, os.Stderr, os.Exit)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	if code := exitStatus(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// exitStatus is the status a command's error ends the process with: 0 for
// none or a help request, an exitError's own status (its message was
// printed already), else 2 (a usage error or a command that could not run)
// with the error on stderr.
func exitStatus(err error, stderr io.Writer) int {
	var exit exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &exit):
		return int(exit)
	}
	fmt.Fprintln(stderr, "mcpchaos:", err)
	return 2
}

// exitError ends the process with a status and no further message.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

const usage = `mcpchaos — a chaos simulator for MCP proxies.

Usage:
  mcpchaos run [--target T] [--label L] [--seed N] [--report DIR] [--cold]
        T: inprocess (default), binary:PATH, container:IMAGE,
        foreign:SPEC.yaml, cluster[:N[:PATH]] or url:ENDPOINT.
        Build the topology (fakes behind toxiproxy, the proxy under test),
        run the fault catalogue and print one row per scenario. Exit 1 if
        any scenario breaks its promise. Ctrl-C (or SIGTERM) cuts the
        scenario running, prints the rows that ran and exits 130; a second
        one quits at once.
  mcpchaos faults
        The fault catalogue: every fault with its parameters.
  mcpchaos repro hang-1800s [--compress N]
        The seed's incident, time-compressed: the paginating call against a
        proxy with the unbounded-pagination bug (never answered within the
        client's timeout) and against mcplocal (bounded, with a ⚠ notice).
  mcpchaos replay FILE [--target T] [--compress N] [--expect same|fixed]
        Replay the request recorded in a bundle (mcpctl trace CODE
        --bundle FILE) against fakes playing back what it recorded; print
        the new waterfall beside the recorded one, each difference named.
  mcpchaos mutants [--only NAME,...] [--parallel N]
        Apply each known regression to a copy of the tree and show that the
        suite kills it.
  mcpchaos bench [--upstream URL --tool T] [--target NAME=URL] [--sessions 1,64] [--json]
        Measure the upstream directly, mcplocal in front of it and other
        targets side by side: latency, throughput, RSS, memory per session.
  mcpchaos soak --requests N [--seed S] [--target T]
        N tools/calls over many sessions under seeded faults, restarts and
        kills: counts unanswered, late and lost requests and missing audit
        rows; exit 1 on any.
  mcpchaos canary --sdk MODULE@VERSION|MODULE=DIR [--client-sdk ...] [--allow NAME=reason]
        Run the suite on mcplocal and the clients built with a candidate SDK
        and on the baseline (go.mod), side by side; exit 1 if anything that
        passed on the baseline fails on the candidate.
  mcpchaos fake upstream docmost [--listen ADDR]
  mcpchaos fake llm --provider anthropic|openai [--listen ADDR] [--default STEP]
  mcpchaos fake proxy --upstream URL [--listen ADDR] [--timeout D]
        Serve one fake on its own, for foreign proxies and manual runs;
        prints the address when ready.

Run 'mcpchaos COMMAND --help' for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError(2)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "run":
		return runCatalogue(ctx, args[1:], stdout, stderr)
	case "fake":
		return runFake(ctx, args[1:], stdout, stderr)
	case "faults":
		return runFaults(args[1:], stdout, stderr)
	case "mutants":
		return runMutants(ctx, args[1:], stdout, stderr)
	case "repro":
		return runRepro(ctx, args[1:], stdout, stderr)
	case "replay":
		return runReplay(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "soak":
		return runSoak(ctx, args[1:], stdout, stderr)
	case "canary":
		return runCanary(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
