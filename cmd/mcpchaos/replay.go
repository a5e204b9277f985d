package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit/waterfall"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/scenarios/replay"
)

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	targetSpec := fs.String("target", "inprocess", "the proxy to replay against: inprocess, binary:PATH, container:IMAGE, foreign:SPEC.yaml")
	compress := fs.Int("compress", 1, "time compression: every recorded duration and knob divided by this")
	clientTimeout := fs.Duration("client-timeout", 0, "how long the client waits (default: the request deadline in force + 1s)")
	expect := fs.String("expect", "", "same|fixed: exit 1 unless the replay shows that verdict (a kept scenario's own by default)")
	asScenario := fs.String("as-scenario", "", "write the replay as a kept scenario to this file, pinned to its verdict (same or fixed)")
	name := fs.String("name", "", "the kept scenario's name (lower-case letters, digits, dashes; default trace-CODE)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos replay FILE [--target T] [--compress N] [--client-timeout D] [--expect same|fixed]
                      [--as-scenario OUT.json [--name NAME]]

Replays the request recorded in a bundle (mcpctl trace CODE --bundle FILE):
a fake of the recorded upstream server (any the bundle's config names)
answers the recorded tool after the recorded latency with a neutral body of
the recorded size and content kinds (or hangs, or fails as recorded: an
error result, a refused connection, a reset, a network timeout), the fake
LLMs play each recorded attempt back (answered after N ms, hung until the
budget, 404, 429, reset, stream cut; an attempt the recording never closed
hangs), and the proxy runs with the recorded knobs, pipeline and gate. Prints the new waterfall,
the two side by side, and every difference named (span missing or added,
slower or faster, different outcome, notice lost or gained, different
answer).

Verdicts: same (the recording's shape), fixed (recorded unanswered or not
ok, now answered), changed. --expect makes the verdict the exit status.

--as-scenario keeps the replay: OUT.json holds the bundle pinned to the
verdict it showed (a changed verdict is refused), with its compression and
client timeout. FILE may be such a kept scenario: it replays as it was
kept, and its pinned verdict is the one expected. Kept in
scenarios/catalogue/kept/, it runs with the catalogue (label replay).
`)
		fs.PrintDefaults()
	}
	var pos []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return exitError(2)
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitError(2)
	}
	if *expect != "" && *expect != string(replay.Same) && *expect != string(replay.Fixed) {
		return fmt.Errorf("--expect %q: want same or fixed", *expect)
	}
	if err := checkFlags("replay", fs, needs("name", "as-scenario", "it names the kept scenario --as-scenario writes")); err != nil {
		return err
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	var (
		b    bundle.Bundle
		plan replay.Plan
	)
	if replay.IsKept(data) {
		k, err := replay.UnmarshalKept(data)
		if err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
		if plan, err = k.Plan(); err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
		b = k.Bundle
		if *expect == "" {
			*expect = string(k.Expect)
		}
		if *name == "" {
			*name = k.Name
		}
		fmt.Fprintf(stdout, "kept scenario %s: expects %s\n", k.Name, k.Expect)
	} else {
		if b, err = bundle.Unmarshal(data); err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
		if plan, err = replay.PlanOf(b, *compress); err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
	}
	if *clientTimeout > 0 {
		plan.ClientTimeout = *clientTimeout
	}
	newTarget, err := parseTarget(*targetSpec, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "replaying trace %s (recorded by %s): %s → %s/%s, %d rows, time compressed %d×, client timeout %v\n",
		b.Trace, b.Version, plan.Tool, plan.Server, plan.UpstreamTool, len(b.Rows), plan.Compress, plan.ClientTimeout)
	res, err := replay.Run(ctx, plan, newTarget())
	if err != nil {
		return err
	}
	if res.Answered {
		first, _, _ := strings.Cut(res.Text, "\n")
		fmt.Fprintf(stdout, "answered in %v, trace %s\n  %s\n", res.Latency.Round(time.Millisecond), res.Trace, first)
	} else {
		fmt.Fprintf(stdout, "NO ANSWER: the client gave up after %v\n", res.Latency.Round(time.Millisecond))
	}
	fmt.Fprintln(stdout, "\nrecorded:")
	_ = waterfall.Render(stdout, b.Trace, b.Rows)
	fmt.Fprintln(stdout, "\nreplayed:")
	if len(res.Rows) > 0 {
		_ = waterfall.Render(stdout, res.Trace, res.Rows)
	} else {
		fmt.Fprintln(stdout, "  (no rows)")
	}
	fmt.Fprintln(stdout)
	replay.Beside(stdout, b.Rows, res.Rows, plan.Compress)
	diffs := replay.Compare(b.Rows, res.Rows, plan.Compress, replay.DefaultTolerance)
	fmt.Fprintln(stdout)
	replay.PrintDifferences(stdout, diffs)
	v := replay.Judge(b.Rows, res.Rows, diffs)
	fmt.Fprintf(stdout, "verdict: %s\n", v)
	if *asScenario != "" {
		if err := keepReplay(*asScenario, *name, b, plan, v); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "kept as %s: it expects %s\n", *asScenario, v)
	}
	if *expect != "" && string(v) != *expect {
		return fmt.Errorf("verdict %s, expected %s", v, *expect)
	}
	return nil
}

// keepReplay writes the replay as a kept scenario pinned to verdict v.
func keepReplay(file, name string, b bundle.Bundle, p replay.Plan, v replay.Verdict) error {
	if name == "" {
		name = "trace-" + strings.ToLower(b.Trace)
	}
	k, err := replay.Keep(name, b, p, v)
	if err != nil {
		return fmt.Errorf("--as-scenario: %w", err)
	}
	data, err := replay.MarshalKept(k)
	if err != nil {
		return fmt.Errorf("--as-scenario: %w", err)
	}
	return os.WriteFile(file, data, 0o644)
}
