package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// executable writes an empty file with the given mode and returns its path.
func executable(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// --target names where the proxy under test runs (the usage and
// docs/targets.md): each kind becomes that target, and a spec that cannot
// run is refused before anything starts, saying what is wrong with it.
func TestTargetSpecs(t *testing.T) {
	dir := t.TempDir()
	exe := executable(t, dir, "mcplocal", 0o755)
	plain := executable(t, dir, "notexec", 0o644)
	spec := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(spec, []byte("name: plain\ncommand: [./proxy, '{{.Listen}}']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec string
		want func(harness.Target) bool // nil: refused
		err  string
	}{
		{spec: "inprocess", want: func(tg harness.Target) bool { _, ok := tg.(*harness.InProcess); return ok }},
		{spec: "binary:" + exe, want: func(tg harness.Target) bool { b, ok := tg.(*harness.Binary); return ok && b.Path == exe }},
		{spec: "binary:" + plain, err: plain + " is not an executable file"},
		{spec: "binary:" + dir, err: dir + " is not an executable file"},
		{spec: "binary:" + filepath.Join(dir, "missing"), err: "is not an executable file"},
		{spec: "container:", err: "want container:IMAGE"},
		{spec: "foreign:" + spec, want: func(tg harness.Target) bool { return tg.Name() == "foreign:plain" }},
		{spec: "foreign:" + filepath.Join(dir, "missing.yaml"), err: "--target foreign:"},
		{spec: "url:http://127.0.0.1:1/projects/docmost/mcp", want: func(tg harness.Target) bool {
			return tg.Name() == "url:http://127.0.0.1:1/projects/docmost/mcp"
		}},
		{spec: "url:ftp://example.com/mcp", err: "want the proxy's MCP endpoint"},
		{spec: "cluster:2:" + exe, want: func(tg harness.Target) bool {
			c, ok := tg.(*harness.Cluster)
			return ok && c.Path == exe && c.Replicas == 2
		}},
		{spec: "cluster:1:" + exe, want: func(tg harness.Target) bool { c, ok := tg.(*harness.Cluster); return ok && c.Replicas == 1 }},
		{spec: "cluster:2:" + plain, err: plain + " is not an executable file"},
		{spec: "cluster:2:" + dir, err: dir + " is not an executable file"},
		{spec: "cluster:0", err: "N >= 1"},
		{spec: "cluster:-1", err: "N >= 1"},
		{spec: "cluster:two", err: "N >= 1"},
		{spec: "cluster:99999999999999999999", err: "N >= 1"},
		{spec: "clusters", err: "want inprocess, binary:PATH"},
		{spec: "", err: "want inprocess, binary:PATH"},
	} {
		mk, err := parseTarget(c.spec, nil)
		if c.want == nil {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--target %s: err %v, want it refused saying %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("--target %s: %v", c.spec, err)
			continue
		}
		if tg := mk(); !c.want(tg) {
			t.Errorf("--target %s: got %T %q", c.spec, tg, tg.Name())
		}
	}
}

// --target cluster without a path runs bin/mcplocal, else the mcplocal on
// PATH, three replicas unless N says otherwise; with neither it is refused
// with how to build one.
func TestClusterFindsItsMcplocal(t *testing.T) {
	work, path := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("PATH", path)
	cluster := func(spec string) (*harness.Cluster, error) {
		mk, err := parseTarget(spec, nil)
		if err != nil {
			return nil, err
		}
		c, ok := mk().(*harness.Cluster)
		if !ok {
			t.Fatalf("--target %s is not a cluster", spec)
		}
		return c, nil
	}
	if _, err := cluster("cluster"); err == nil || !strings.Contains(err.Error(), "no bin/mcplocal and no mcplocal on PATH") {
		t.Errorf("cluster with no mcplocal anywhere: %v", err)
	}
	onPath := executable(t, path, "mcplocal", 0o755)
	if c, err := cluster("cluster"); err != nil || c.Path != onPath || c.Replicas != clusterDefaultReplicas || clusterDefaultReplicas != 3 {
		t.Errorf("cluster with mcplocal on PATH: %+v %v, want %s, 3 replicas", c, err, onPath)
	}
	executable(t, work, "bin/mcplocal", 0o755)
	if c, err := cluster("cluster:4"); err != nil || c.Path != filepath.Join("bin", "mcplocal") || c.Replicas != 4 {
		t.Errorf("cluster:4 with bin/mcplocal: %+v %v, want bin/mcplocal, 4 replicas", c, err)
	}
	if err := os.Chmod(filepath.Join(work, "bin", "mcplocal"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster("cluster"); err == nil || !strings.Contains(err.Error(), "bin/mcplocal is not an executable file") {
		t.Errorf("cluster with a bin/mcplocal that cannot run: %v", err)
	}
}

// The replay command a run prints is one a POSIX shell runs as is: every
// word that needs quoting is quoted, and only those.
func TestShellQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"inprocess", "inprocess"},
		{"binary:bin/mcplocal", "binary:bin/mcplocal"},
		{"latency:link=llm,latencyMs=300", "latency:link=llm,latencyMs=300"},
		{"a", "a"}, {"z", "z"}, {"A", "A"}, {"Z", "Z"}, {"0", "0"}, {"9", "9"},
		{"user@host+x_y-z.w", "user@host+x_y-z.w"},
		{"`", "'`'"}, {"{", "'{'"}, {"[", "'['"}, {"!", "'!'"}, {"$", "'$'"},
		{"", "''"},
		{"^none × small tools/call$", "'^none × small tools/call$'"},
		{"it's", `'it'\''s'`},
		{"a b", "'a b'"},
	} {
		if got := shellQuote(c.in); got != c.want {
			t.Errorf("shellQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// The replay command carries the target and seed always, and --cold,
// --label, --focus and --fault exactly when the run had them.
func TestReplayCommandCarriesTheSelection(t *testing.T) {
	for _, c := range []struct {
		label, focus, fault string
		cold                bool
		want                string
	}{
		{want: "mcpchaos run --target inprocess --seed 7"},
		{cold: true, want: "mcpchaos run --target inprocess --seed 7 --cold"},
		{label: "paginate", want: "mcpchaos run --target inprocess --seed 7 --label paginate"},
		{focus: "^a b$", want: "mcpchaos run --target inprocess --seed 7 --focus '^a b$'"},
		{fault: "latency:latencyMs=5", want: "mcpchaos run --target inprocess --seed 7 --fault latency:latencyMs=5"},
		{label: "l", focus: "f", fault: "x", cold: true, want: "mcpchaos run --target inprocess --seed 7 --cold --label l --focus f --fault x"},
	} {
		if got := replayCommand("inprocess", 7, c.label, c.focus, c.fault, c.cold); got != c.want {
			t.Errorf("replayCommand(%+v) = %s, want %s", c, got, c.want)
		}
	}
}

// `mcpchaos run` refuses what it cannot honour before any scenario runs:
// a --focus that is no regexp, an unknown --fault or --label, an unknown
// target, and a selection no scenario matches.
func TestRunRefusesBadSelections(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--focus", "("}, `--focus "(":`},
		{[]string{"--fault", "nosuchfault"}, `--fault: unknown fault "nosuchfault"`},
		{[]string{"--label", "nosuchlabel"}, `unknown label "nosuchlabel"`},
		{[]string{"--target", "nosuchkind"}, `--target "nosuchkind"`},
		{[]string{"--focus", "^no such scenario$"}, `no scenario has label "" and a name matching "^no such scenario$"`},
		{[]string{"--label", "seeded", "--focus", "^none × small tools/call$"}, `no scenario has label "seeded" and a name matching`},
	} {
		var stdout, stderr bytes.Buffer
		err := runCatalogue(stopped(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %v: err %v, want one saying %q", c.args, err, c.want)
		}
		if strings.Contains(stderr.String(), "scenarios, target") {
			t.Errorf("run %v started a run before refusing:\n%s", c.args, stderr.String())
		}
	}
}

// Each row's verdict in the progress: N/A when the scenario did not apply,
// else PASS or FAIL.
func TestVerdictWords(t *testing.T) {
	for _, c := range []struct {
		r    catalogue.Result
		want string
	}{
		{catalogue.Result{NotApplicable: "no LLM", Pass: true}, "N/A"},
		{catalogue.Result{NotApplicable: "no LLM"}, "N/A"},
		{catalogue.Result{Pass: true}, "PASS"},
		{catalogue.Result{}, "FAIL"},
	} {
		if got := verdict(c.r); got != c.want {
			t.Errorf("verdict(%+v) = %s, want %s", c.r, got, c.want)
		}
	}
	if dash("") != "-" || dash("  ") != "-" || dash("x") != "x" {
		t.Errorf("dash: %q %q %q", dash(""), dash("  "), dash("x"))
	}
}

// A target that declares no budgets runs on assumed ones, which the run
// names before its rows and above its table; one with no audit API says
// in its report that its rows have no waterfalls. mcplocal in process
// declares both: no such lines. (The context is stopped: the first row is
// cut, and the run reports what it has.)
func TestRunSaysWhatTheTargetDoesNotDeclare(t *testing.T) {
	for _, c := range []struct {
		target           string
		assumed, noAudit bool
	}{
		{"url:http://127.0.0.1:1/projects/docmost/mcp", true, true},
		{"inprocess", false, false},
	} {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		err := runCatalogue(stopped(), []string{"--target", c.target, "--seed", "1", "--report", dir}, &stdout, &stderr)
		if err != exitError(exitInterrupted) || !strings.Contains(stdout.String(), "interrupted: 0 of ") {
			t.Errorf("--target %s on a stopped context: %v\n%s", c.target, err, stdout.String())
		}
		budgets := "budgets: not declared by target " + c.target + ": "
		if got := strings.Contains(stderr.String(), "\n"+budgets); got != c.assumed {
			t.Errorf("--target %s: the progress names assumed budgets %v, want %v:\n%s", c.target, got, c.assumed, stderr.String())
		}
		if got := strings.HasPrefix(stdout.String(), budgets); got != c.assumed {
			t.Errorf("--target %s: the table starts with assumed budgets %v, want %v:\n%s", c.target, got, c.assumed, stdout.String())
		}
		html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		want := "target " + c.target + " offers no audit API (it does not claim "
		if got := strings.Contains(string(html), want); got != c.noAudit {
			t.Errorf("--target %s: the report says it has no audit API %v, want %v", c.target, got, c.noAudit)
		}
	}
}
