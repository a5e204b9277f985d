package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/bench"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

const benchUsage = `Usage: mcpchaos bench [flags]

Measure MCP targets side by side in one run: the upstream called directly
(the baseline, target direct), the floor (target floor: a plain reverse
proxy, Go's httputil with streams flushed, understanding nothing of MCP,
started as its own process with 'mcpchaos fake floor'; --no-floor leaves it
out), mcplocal in front of it (its default config: plain
tools/calls take the raw relay), with --sdk-path a second mcplocal whose
config says relay: false (target mcplocal-sdk: every call on the go-sdk
path), and any --target you add (another proxy in front of the same
upstream). Every target gets the same raw
Streamable HTTP load client and the same tools/call; rounds alternate
between targets so a busy machine slows them alike.

Reported per target and concurrency: calls, errors, p50/p90/p99, req/s, and
against the baseline: added p50, req/s ratio, p99 ratio; then every proxy
against the floor: added p50, req/s and p99 as a ratio of the floor's, and
mcplocal's goal at that concurrency met or missed (1 session: at most
0.1 ms added p50; 64 sessions: at least 95% of the floor's req/s, p99 at
most 1.1 x the floor's). A target that issues no Mcp-Session-Id (a
stateless server) is measured like any other. Then RSS and
goroutines before and after (mcplocal: from /proc and its --pprof port;
n/a for targets the bench did not start), and the memory of an idle
session: --idle sessions opened with one call each, the growth of the
live heap (after a GC), of RSS and of goroutines divided by their number,
measured twice: clients that hold no standalone stream of their own
("no stream": a raw client), then clients that hold theirs open ("stream
held": a GET, as the go-sdk and TypeScript clients open right after
initialize), each kind on a fresh mcplocal process.

With --curve, how cost grows instead: p50, p99, req/s and RSS of the
floor and mcplocal (and any --target; not direct, whose RSS is the
bench's own) along two sweeps, one --duration turn per target per step:
--curve-active sessions calling in a loop, then, on a fresh process of
each target, idle sessions piled up to each --curve-idle step beside
--curve-idle-active calling ones (with --curve-stream each idle session
holds its standalone stream: every held stream is a file descriptor in
the bench and, in a proxy, two). mcplocal's bounds on sessions and
connections are raised for the curve where their defaults are below what
it opens (unless set in the environment). Writes PREFIX.svg (the picture) and
PREFIX.json (the data) for --curve-out PREFIX; the whole curve is bounded
by --curve-timeout.

Upstream: an in-process fake docmost server (tool update_page; with
--quiet-upstream it advertises nothing it could send unprompted) unless
--upstream URL names one, e.g. go-sdk's conformance everything-server with
--tool test_simple_text.

A flag the run would ignore in the company of another is refused, naming
both: --sdk-path or --mcplocal with --no-mcplocal, --quiet-upstream with
--upstream, --curve-* without --curve, and --json, --sessions, --rounds or
--idle with --curve.

Flags:
`

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	upstreamURL := fs.String("upstream", "", "MCP endpoint of the upstream (default: start the fake docmost in process)")
	tool := fs.String("tool", "", "the upstream's tool to call (default update_page with the fake; required with --upstream)")
	argsJSON := fs.String("args", "", `the tool's arguments as a JSON object (default {"page_id":"p1","content":"bench"} with the fake, {} otherwise)`)
	mcplocalPath := fs.String("mcplocal", "", "mcplocal binary to put in front of the upstream (default: build ./cmd/mcplocal of this module)")
	quiet := fs.Bool("quiet-upstream", false, "the in-process fake docmost advertises nothing it could send unprompted (tools without listChanged, no logging; the go-sdk's default advertises both)")
	noMcplocal := fs.Bool("no-mcplocal", false, "do not start mcplocal; measure only the upstream, the floor and --target")
	noFloor := fs.Bool("no-floor", false, "do not start the floor (a plain reverse proxy in front of the upstream)")
	sdkPath := fs.Bool("sdk-path", false, "also start a second mcplocal with the raw tools/call relay off (config relay: false: every call on the go-sdk path), target mcplocal-sdk, measured side by side with mcplocal (the default config: relay on)")
	var extra []bench.Target
	fs.Func("target", "another target: NAME=URL[#TOOL] (TOOL defaults to --tool); repeatable", func(v string) error {
		name, rest, ok := strings.Cut(v, "=")
		if !ok || name == "" || rest == "" {
			return fmt.Errorf("want NAME=URL[#TOOL], got %q", v)
		}
		url, t, _ := strings.Cut(rest, "#")
		extra = append(extra, bench.Target{Name: name, URL: url, Tool: t})
		return nil
	})
	sessions := fs.String("sessions", "1,64", "concurrency levels: comma-separated session counts, each calling in a loop")
	rounds := fs.Int("rounds", 3, "rounds per concurrency level (targets alternate inside each)")
	duration := fs.Duration("duration", 2*time.Second, "one target's turn in one round")
	idle := fs.Int("idle", 1000, "idle sessions opened to measure memory per session (0: skip)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	curve := fs.Bool("curve", false, "measure how cost grows (see above) instead of the side-by-side table")
	curveActive := fs.String("curve-active", "1,16,64,256", "--curve: active sessions at each step of the active sweep")
	curveIdle := fs.String("curve-idle", "0,1000,10000", "--curve: idle sessions at each step of the idle sweep, ascending (empty: no idle sweep)")
	curveIdleActive := fs.Int("curve-idle-active", 16, "--curve: sessions calling in a loop beside the idle ones")
	curveStream := fs.Bool("curve-stream", false, "--curve: each idle session holds its standalone stream")
	curveOut := fs.String("curve-out", "docs/performance-curve", "--curve: write PREFIX.svg and PREFIX.json")
	curveTimeout := fs.Duration("curve-timeout", 15*time.Minute, "--curve: bound on the whole curve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	curveOnly := "it shapes the curve, and only --curve draws one"
	notCurve := "--curve measures its own steps and writes PREFIX.svg and PREFIX.json, not the side-by-side table"
	if err := checkFlags("bench", fs,
		excludes("no-mcplocal", "sdk-path", "the go-sdk path target is a second mcplocal"),
		excludes("no-mcplocal", "mcplocal", "--mcplocal names the binary of the mcplocal target"),
		excludes("upstream", "quiet-upstream", "--quiet-upstream shapes the in-process fake, which --upstream replaces"),
		needs("upstream", "tool", "an upstream of yours has no default tool to call"),
		needs("curve-active", "curve", curveOnly), needs("curve-idle", "curve", curveOnly),
		needs("curve-idle-active", "curve", curveOnly), needs("curve-stream", "curve", curveOnly),
		needs("curve-out", "curve", curveOnly), needs("curve-timeout", "curve", curveOnly),
		excludes("curve", "json", notCurve), excludes("curve", "sessions", notCurve),
		excludes("curve", "rounds", notCurve), excludes("curve", "idle", notCurve),
	); err != nil {
		return err
	}
	levels, err := counts("--sessions", *sessions, 1)
	if err != nil {
		return err
	}
	var co bench.CurveOptions
	if *curve {
		if co.Active, err = counts("--curve-active", *curveActive, 1); err != nil {
			return err
		}
		if strings.TrimSpace(*curveIdle) != "" {
			if co.Idle, err = counts("--curve-idle", *curveIdle, 0); err != nil {
				return err
			}
		}
		co.IdleActive, co.Stream, co.Duration, co.Openers = *curveIdleActive, *curveStream, *duration, 16
		if *curveOut == "" {
			return fmt.Errorf("bench: --curve-out is empty")
		}
	}
	o := bench.Options{Sessions: levels, Rounds: *rounds, Duration: *duration, Idle: *idle, Progress: stderr}

	url := *upstreamURL
	if url == "" {
		fo := upstream.Options{}
		if *quiet {
			fo.Capabilities = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
		}
		fake, err := upstream.NewDocmost(fo)
		if err != nil {
			return err
		}
		defer fake.Close()
		url = fake.URL()
		if *tool == "" {
			*tool = "update_page"
		}
		if *argsJSON == "" {
			*argsJSON = `{"page_id":"p1","content":"bench"}`
		}
		fmt.Fprintf(stderr, "bench: upstream: the fake docmost in process at %s\n", url)
	}
	if *argsJSON == "" {
		*argsJSON = "{}"
	}
	if err := json.Unmarshal([]byte(*argsJSON), &o.Args); err != nil {
		return fmt.Errorf("bench: --args: %w", err)
	}
	targets := []bench.Target{{Name: bench.Direct, URL: url, Tool: *tool}}
	if !*noFloor {
		t, stop, err := floorTarget(ctx, url, *tool)
		if err != nil {
			return err
		}
		defer stop()
		targets = append(targets, t)
	}
	if !*noMcplocal {
		path := *mcplocalPath
		if path == "" {
			dir, err := os.MkdirTemp("", "mcpchaos-bench-bin-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			fmt.Fprintln(stderr, "bench: building ./cmd/mcplocal ...")
			if path, err = harness.BuildMcplocal(ctx, dir); err != nil {
				return fmt.Errorf("bench: build mcplocal (run from inside the module, or pass --mcplocal): %w", err)
			}
		}
		// A curve's idle sessions may pass mcplocal's default bounds on
		// sessions: those are raised for it (a bound set in the environment wins).
		var env []string
		if *curve {
			need := slices.Max(append([]int{0}, co.Idle...)) + max(slices.Max(co.Active), co.IdleActive) + 64
			env = bench.RaisedKnobs(need, os.Getenv)
		}
		start := func(ctx context.Context) (*bench.Mcplocal, error) {
			return bench.StartMcplocalOpts(ctx, path, url, bench.McplocalOptions{Env: env})
		}
		m, err := start(ctx)
		if err != nil {
			return fmt.Errorf("bench: start mcplocal: %w", err)
		}
		defer m.Stop()
		target := func(m *bench.Mcplocal) bench.Target {
			return bench.Target{Name: "mcplocal", URL: m.URL, Tool: bench.Server + "_" + *tool, PID: m.PID(), Pprof: m.Pprof}
		}
		t := target(m)
		t.Fresh = func(ctx context.Context) (bench.Target, func(), error) {
			f, err := start(ctx)
			if err != nil {
				return bench.Target{}, nil, err
			}
			return target(f), func() { f.Stop() }, nil
		}
		targets = append(targets, t)
		if *sdkPath {
			off := false
			ms, err := bench.StartMcplocalWith(ctx, path, url, nil, &off)
			if err != nil {
				return fmt.Errorf("bench: start mcplocal with relay: false: %w", err)
			}
			defer ms.Stop()
			sdkTarget := func(m *bench.Mcplocal) bench.Target {
				t := target(m)
				t.Name = "mcplocal-sdk"
				return t
			}
			rt := sdkTarget(ms)
			rt.Fresh = func(ctx context.Context) (bench.Target, func(), error) {
				f, err := bench.StartMcplocalWith(ctx, path, url, nil, &off)
				if err != nil {
					return bench.Target{}, nil, err
				}
				return sdkTarget(f), func() { f.Stop() }, nil
			}
			targets = append(targets, rt)
		}
	}
	for _, t := range extra {
		if t.Tool == "" {
			t.Tool = *tool
		}
		targets = append(targets, t)
	}
	if *curve {
		co.Args, co.Progress = o.Args, stderr
		var measured []bench.Target
		for _, t := range targets {
			if t.Name != bench.Direct {
				measured = append(measured, t)
			}
		}
		return writeCurve(ctx, measured, co, *curveTimeout, *curveOut, stdout)
	}
	rep, err := bench.Run(ctx, targets, o)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return bench.WriteTable(stdout, rep)
}

// floorTarget starts the floor in front of upstreamURL as a process of this
// very binary (`mcpchaos fake floor`), so that its RSS is measured apart;
// each kind of idle session gets a fresh one, as mcplocal does.
func floorTarget(ctx context.Context, upstreamURL, tool string) (bench.Target, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return bench.Target{}, nil, fmt.Errorf("bench: the floor runs as this binary: %w", err)
	}
	start := func(ctx context.Context) (bench.Target, func(), error) {
		f, err := bench.StartFloor(ctx, exe, upstreamURL, nil)
		if err != nil {
			return bench.Target{}, nil, fmt.Errorf("bench: start the floor: %w", err)
		}
		return bench.Target{Name: bench.Floor, URL: f.URL, Tool: tool, PID: f.PID()}, f.Stop, nil
	}
	t, stop, err := start(ctx)
	if err != nil {
		return bench.Target{}, nil, err
	}
	t.Fresh = start
	return t, stop, nil
}

// counts parses a comma-separated list of whole numbers of at least least.
func counts(flagName, v string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < least {
			return nil, fmt.Errorf("bench: %s %q: want whole numbers of at least %d separated by commas", flagName, v, least)
		}
		out = append(out, n)
	}
	return out, nil
}

// writeCurve runs the curve within timeout and writes prefix.json and
// prefix.svg; a curve cut short by an error is still written, then the
// error returned.
func writeCurve(ctx context.Context, targets []bench.Target, o bench.CurveOptions, timeout time.Duration, prefix string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, runErr := bench.RunCurve(ctx, targets, o)
	if c == nil {
		return runErr
	}
	doc, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".json", append(doc, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var svg strings.Builder
	if err := bench.WriteCurveSVG(&svg, c); err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".svg", []byte(svg.String()), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprintf(stdout, "curve: wrote %s.svg and %s.json (machine: %s; load at the end %s)\n", prefix, prefix, c.Machine, c.LoadAtEnd)
	return runErr
}
