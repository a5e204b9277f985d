package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// errFlagsChecked stops a command once its flags are parsed and checked.
var errFlagsChecked = errors.New("flags checked")

// chaosCommand is one mcpchaos command as a user types it: its words, a
// value for each flag ("" for a boolean given bare), and the pairs a user
// is told are at odds: conflicts (one would be ignored) and needs (the
// first means nothing without the second). Every other pair is accepted.
type chaosCommand struct {
	args      []string
	values    map[string]string
	conflicts [][2]string
	needs     [][2]string
}

func chaosCommands(dir string) map[string]chaosCommand {
	curveOnly := []string{"curve-active", "curve-idle", "curve-idle-active", "curve-stream", "curve-out", "curve-timeout"}
	bench := chaosCommand{args: []string{"bench"}, values: map[string]string{
		"upstream": "http://127.0.0.1:1/mcp", "tool": "t", "args": `{}`, "mcplocal": filepath.Join(dir, "mcplocal"),
		"quiet-upstream": "", "no-mcplocal": "", "no-floor": "", "sdk-path": "", "target": "a=http://127.0.0.1:1/mcp",
		"sessions": "1", "rounds": "1", "duration": "1s", "idle": "0", "json": "", "curve": "",
		"curve-active": "1", "curve-idle": "0", "curve-idle-active": "1", "curve-stream": "",
		"curve-out": filepath.Join(dir, "curve"), "curve-timeout": "1m0s",
	}, conflicts: [][2]string{{"no-mcplocal", "sdk-path"}, {"no-mcplocal", "mcplocal"}, {"upstream", "quiet-upstream"},
		{"curve", "json"}, {"curve", "sessions"}, {"curve", "rounds"}, {"curve", "idle"}},
		needs: [][2]string{{"upstream", "tool"}}}
	for _, f := range curveOnly {
		bench.needs = append(bench.needs, [2]string{f, "curve"})
	}
	mutants := chaosCommand{args: []string{"mutants"}, values: map[string]string{
		"only": "x", "parallel": "1", "timeout": "1m0s", "control": "", "logs": dir, "list": "", "touching": "proxy",
		"find-smaller": "", "json": filepath.Join(dir, "m.jsonl"), "own-copies": "",
	}}
	for _, f := range []string{"only", "list", "control", "logs", "parallel", "timeout", "find-smaller", "json", "own-copies"} {
		mutants.conflicts = append(mutants.conflicts, [2]string{"touching", f})
	}
	for _, f := range []string{"control", "logs", "parallel", "timeout", "find-smaller", "json", "own-copies"} {
		mutants.conflicts = append(mutants.conflicts, [2]string{"list", f})
	}
	for _, f := range []string{"control", "logs", "json", "own-copies"} { // it judges nothing, with a control of its own, on each mutant's own copy
		mutants.conflicts = append(mutants.conflicts, [2]string{"find-smaller", f})
	}
	generic := chaosCommand{args: []string{"mutants", "--generic", "proxy/trace"}, values: map[string]string{
		"generic": "proxy/trace", "parallel": "2", "timeout": "1m0s", "limit": "3", "at": "proxy/trace/trace.go:1:1",
		"package-tests-only": "", "list": "", "per-mutant-copy": "", "results": filepath.Join(dir, "g.jsonl"),
		"test-packages": "./proxy/trace"},
		needs: [][2]string{{"parallel", "per-mutant-copy"}},
		// make mutants-generic always passes --results, also with
		// ARGS=--per-mutant-copy, which keeps no results file.
		conflicts: [][2]string{{"per-mutant-copy", "test-packages"}}}
	for _, f := range []string{"parallel", "timeout", "limit", "at", "package-tests-only", "per-mutant-copy", "results", "test-packages"} {
		generic.conflicts = append(generic.conflicts, [2]string{"list", f})
	}
	return map[string]chaosCommand{
		"mutants --generic": generic,
		"run": {args: []string{"run"}, values: map[string]string{"label": "x", "seed": "7", "target": "inprocess",
			"report": dir, "json": filepath.Join(dir, "r.json"), "focus": "x", "fault": "x", "cold": ""}},
		"soak": {args: []string{"soak"}, values: map[string]string{"requests": "10", "seed": "7", "target": "inprocess",
			"workers": "2", "calls-per-session": "3", "epoch": "5", "report": filepath.Join(dir, "soak.json")}},
		"bench":   bench,
		"mutants": mutants,
		"repro":   {args: []string{"repro", "hang-1800s"}, values: map[string]string{"compress": "10"}},
		"replay": {args: []string{"replay", filepath.Join(dir, "bundle.json")}, values: map[string]string{
			"target": "inprocess", "compress": "2", "client-timeout": "1s", "expect": "same",
			"as-scenario": filepath.Join(dir, "kept.json"), "name": "x"},
			needs: [][2]string{{"name", "as-scenario"}}},
		"canary": {args: []string{"canary"}, values: map[string]string{"sdk": "m@v1", "client-sdk": "m@v1", "allow": "row=why",
			"label": "x", "specs": "x", "seed": "7", "tolerance": "1s", "report": dir, "work": dir, "timeout": "1m0s",
			"baseline-cache": dir, "rerun-baseline": ""}},
		"faults":        {args: []string{"faults"}, values: map[string]string{}},
		"fake upstream": {args: []string{"fake", "upstream", "docmost"}, values: map[string]string{"listen": "127.0.0.1:0"}},
		"fake llm": {args: []string{"fake", "llm"}, values: map[string]string{"provider": "anthropic", "listen": "127.0.0.1:0",
			"default": "ok", "oauth-gate": ""}},
	}
}

// chaosFlags runs args with the hook stopping the command after its
// flags were checked, and returns the error and the flag set it parsed.
func chaosFlags(t *testing.T, args []string) (error, *flag.FlagSet) {
	t.Helper()
	var seen *flag.FlagSet
	old := flagsChecked
	flagsChecked = func(_ string, fs *flag.FlagSet) error { seen = fs; return errFlagsChecked }
	defer func() { flagsChecked = old }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := run(ctx, args, io.Discard, io.Discard)
	return err, seen
}

// TestEveryPairOfChaosFlagsIsAcceptedOrRefused: for every mcpchaos command,
// every pair of its flags (read from its own flag set: a new flag fails the
// test until the table above says what it means) either reaches the command
// with both values as typed, or is refused before anything runs with an
// error naming both flags (exit 2). A flag that some company would make the
// command ignore is refused in that company instead.
func TestEveryPairOfChaosFlagsIsAcceptedOrRefused(t *testing.T) {
	for name, c := range chaosCommands(t.TempDir()) {
		err, fs := chaosFlags(t, c.args)
		if !errors.Is(err, errFlagsChecked) || fs == nil {
			t.Errorf("mcpchaos %s: %v, want it to reach its flag check", strings.Join(c.args, " "), err)
			continue
		}
		var flags []string
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
		sort.Strings(flags)
		for _, f := range flags {
			if _, ok := c.values[f]; !ok {
				t.Errorf("%s: flag --%s is not in the table: say what a user expects of it with each other flag", name, f)
			}
		}
		for i, a := range flags {
			for _, b := range flags[i:] {
				_, okA := c.values[a]
				_, okB := c.values[b]
				if okA && okB {
					chaosPair(t, name, c, a, b)
				}
			}
		}
	}
}

func chaosPair(t *testing.T, name string, c chaosCommand, a, b string) {
	t.Helper()
	args := append([]string(nil), c.args...)
	given := map[string]bool{}
	for _, f := range []string{a, b} {
		if given[f] {
			continue
		}
		given[f] = true
		if v := c.values[f]; v != "" {
			args = append(args, "--"+f, v)
		} else {
			args = append(args, "--"+f)
		}
	}
	var refused [][2]string
	for _, p := range c.conflicts {
		if given[p[0]] && given[p[1]] {
			refused = append(refused, p)
		}
	}
	for _, p := range c.needs {
		if given[p[0]] && !given[p[1]] {
			refused = append(refused, p)
		}
	}
	err, fs := chaosFlags(t, args)
	pair := "mcpchaos " + strings.Join(args, " ")
	if len(refused) == 0 {
		if !errors.Is(err, errFlagsChecked) {
			t.Errorf("%s: %v, want it accepted", pair, err)
			return
		}
		for f := range given {
			want := c.values[f]
			if want == "" {
				want = "true"
			}
			// A flag.Func flag (bench --target) has no value to show.
			if got := fs.Lookup(f).Value.String(); got != want && got != "" {
				t.Errorf("%s: --%s reached the command as %q, want %q", pair, f, got, want)
			}
		}
		return
	}
	if err == nil || errors.Is(err, errFlagsChecked) {
		t.Errorf("%s: accepted, want it refused (%v)", pair, refused)
		return
	}
	var ee exitError
	if errors.As(err, &ee) && int(ee) != 2 {
		t.Errorf("%s: exit %d, want 2", pair, int(ee))
	}
	named := false
	for _, p := range refused {
		named = named || (strings.Contains(err.Error(), "--"+p[0]) && strings.Contains(err.Error(), "--"+p[1]))
	}
	if !named {
		t.Errorf("%s: refused with %q, which names neither pair of %v", pair, err, refused)
	}
}
