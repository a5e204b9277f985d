package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// runJSON runs `mcpchaos run ARGS --json FILE` and returns the records, the
// table (stdout) and the progress (stderr).
func runJSON(t *testing.T, args ...string) ([]report.Record, string, string) {
	t.Helper()
	recs, stdout, stderr, _ := runJSONStatus(t, args...)
	return recs, stdout, stderr
}

// runJSONStatus is runJSON that also returns the run's error: nil, or
// exit 1 when a scenario failed or none could run.
func runJSONStatus(t *testing.T, args ...string) ([]report.Record, string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "run.json")
	var stdout, stderr bytes.Buffer
	runErr := runCatalogue(ctx, append(args, "--json", path), &stdout, &stderr)
	if runErr != nil && runErr != exitError(1) {
		t.Fatalf("mcpchaos run %v: %v\n%s", args, runErr, stderr.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("mcpchaos run %v wrote no JSON: %v\n%s", args, err, stderr.String())
	}
	defer f.Close()
	recs, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs, stdout.String(), stderr.String(), runErr
}

// outcome is what a replay must reproduce: each scenario's draws and verdict.
func outcome(recs []report.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s: draws %v → %s", r.Name, r.Draws, r.Verdict))
	}
	slices.Sort(out)
	return out
}

// `--seed S --label L` twice gives the same fault draws and the same
// verdicts, and the printed replay command carries both; another seed draws
// otherwise (the seed does reach the fakes' random plans).
func TestSeedAndLabelReplayExactly(t *testing.T) {
	first, stdout, stderr := runJSON(t, "--label", "seeded", "--seed", "1")
	if len(first) == 0 || len(first[0].Draws) == 0 {
		t.Fatalf("the seeded scenarios drew nothing: %+v", first)
	}
	want := "replay: mcpchaos run --target inprocess --seed 1 --label seeded"
	if !strings.Contains(stderr, want) || !strings.Contains(stdout, want) {
		t.Errorf("the replay command %q is not printed:\n%s\n%s", want, stderr, stdout)
	}
	again, _, _ := runJSON(t, "--label", "seeded", "--seed", "1")
	if a, b := outcome(first), outcome(again); !slices.Equal(a, b) {
		t.Fatalf("the same seed and label replayed differently:\n%v\n%v", a, b)
	}
	draws := map[string]bool{strings.Join(first[0].Draws, ","): true}
	for seed := 2; seed <= 4; seed++ {
		recs, _, _ := runJSON(t, "--label", "seeded", "--seed", fmt.Sprint(seed))
		draws[strings.Join(recs[0].Draws, ",")] = true
	}
	if len(draws) < 2 {
		t.Errorf("seeds 1 to 4 all drew %v: the seed does not reach the fake's plan", draws)
	}
}

// --fault replaces each selected scenario's fault; one the scenario's world
// cannot take is not applicable, with the reason, and a failing scenario's
// replay command focuses on it.
func TestRunFault(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := runCatalogue(context.Background(), []string{"--fault", "latensy"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `--fault: unknown fault "latensy"`) {
		t.Fatalf("--fault latensy: %v", err)
	}
	recs, stdout2, stderr2, err := runJSONStatus(t, "--fault", "llm-not_found", "--focus", "^none × small tools/call$", "--seed", "3")
	// A run where no scenario applies fails: it showed nothing.
	if err != exitError(1) || !strings.Contains(stdout2, "\n0 passed, 0 failed, 1 not applicable (seed 3,") ||
		!strings.Contains(stderr2, "mcpchaos run: no scenario could run against this target") {
		t.Errorf("a run where nothing applies: %v, want exit 1 saying so:\n%s\n%s", err, stdout2, stderr2)
	}
	if len(recs) != 1 || recs[0].Name != "llm-not_found × small tools/call in place of none" || recs[0].Verdict != "N/A" ||
		!strings.Contains(recs[0].Reason, "the scenario's world lacks LLM fake") {
		t.Fatalf("llm-not_found on a world with no LLM: %+v", recs)
	}
	if !strings.Contains(stdout2, "--focus '^none × small tools/call$' --fault llm-not_found") {
		t.Errorf("the replay command lacks the focus and fault:\n%s", stdout2)
	}
	recs, stdout3, _, err := runJSONStatus(t, "--fault", "upstream-restart", "--focus", "^none × small tools/call$", "--seed", "3")
	if len(recs) != 1 || recs[0].Verdict != "FAIL" || !strings.Contains(recs[0].Reason, "never struck") {
		t.Fatalf("a midway fault the operation never strikes: %+v", recs)
	}
	if err != exitError(1) || !strings.Contains(stdout3, "\n0 passed, 1 failed, 0 not applicable (seed 3,") {
		t.Errorf("a run with a failing scenario: %v, want exit 1 and the count:\n%s", err, stdout3)
	}
	replay := "--seed 3 --focus '^upstream-restart × small tools/call in place of none$' --fault upstream-restart"
	if !strings.Contains(stdout3, "replay: mcpchaos run --target inprocess "+replay) {
		t.Fatalf("the failing row's replay command:\n%s", stdout3)
	}
	// The replay command selects the failing scenario again.
	recs, _, _ = runJSON(t, "--seed", "3", "--focus", "^upstream-restart × small tools/call in place of none$", "--fault", "upstream-restart")
	if len(recs) != 1 || recs[0].Verdict != "FAIL" {
		t.Errorf("the replay command ran %+v", recs)
	}
}

// A run is warm unless --cold: rows that need no fresh proxy share one, and
// the summary gives the wall time and how many rows ran warm and cold; the
// replay command of a cold run is cold too.
func TestRunIsWarmUnlessCold(t *testing.T) {
	focus := "^(none|latency|blackhole) × small tools/call$"
	dir := t.TempDir()
	recs, stdout, stderr, err := runJSONStatus(t, "--focus", focus, "--seed", "2", "--report", dir)
	if len(recs) != 3 {
		t.Fatalf("ran %+v", recs)
	}
	if err != nil || !strings.Contains(stdout, "\n3 passed, 0 failed, 0 not applicable (seed 2,") {
		t.Errorf("a passing run: %v, want success and the count:\n%s", err, stdout)
	}
	// --report DIR writes the waterfalls and JUnit there and says where.
	for _, f := range []string{report.HTMLFile, report.JUnitFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("--report %s: %v", dir, err)
		}
	}
	if want := "report: " + filepath.Join(dir, report.HTMLFile) + ", " + filepath.Join(dir, report.JUnitFile) + "\n"; !strings.Contains(stderr, want) {
		t.Errorf("the run does not say where its report is (%q):\n%s", want, stderr)
	}
	// The progress numbers the rows from 1.
	if !strings.Contains(stderr, "[ 1/3] ") || !strings.Contains(stderr, "[ 3/3] ") || strings.Contains(stderr, "[ 0/3]") {
		t.Errorf("the progress does not number the rows 1 to 3:\n%s", stderr)
	}
	// blackhole may break an upstream session: it gets its own proxy.
	if !strings.Contains(stdout, "scenarios ran warm") || !regexp.MustCompile(`wall time [0-9.]+m?s: 1 scenarios ran warm .*, 2 cold`).MatchString(stdout) {
		t.Errorf("the summary does not say 1 row ran warm and 2 cold:\n%s", stdout)
	}
	if !strings.Contains(stderr, "seed 2, warm") || strings.Count(stderr, "(warm)") != 1 {
		t.Errorf("the progress does not say the run is warm and which row ran so:\n%s", stderr)
	}
	_, stdout, stderr = runJSON(t, "--focus", focus, "--seed", "2", "--cold")
	if !regexp.MustCompile(`wall time [0-9.]+m?s: 0 scenarios ran warm .*, 3 cold`).MatchString(stdout) || strings.Contains(stderr, "(warm)") {
		t.Errorf("--cold ran a row warm:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "replay: mcpchaos run --target inprocess --seed 2 --cold --focus") {
		t.Errorf("the replay command of a cold run is not cold:\n%s", stdout)
	}
}

// `mcpchaos faults` lists the registry: each fault with its parameters and
// defaults, when it strikes and what it requires.
func TestFaultsListsTheRegistry(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runFaults(nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = line
		}
	}
	for name, want := range map[string][]string{
		"FAULT":         {"PARAMETERS (defaults)", "STRIKES", "REQUIRES"},
		"latency":       {"link=docmost,latencyMs=100", "before the call", "toxiproxy"},
		"handler-panic": {"tool=docmost_update_page", "before start", "failpoints"},
		"proxy-kill":    {"midway", "kill"},
		"none":          {"never"},
		"llm-slow":      {"delay=5s", "LLM fake"},
		"llm-random":    {"choices=ok+hang_before_headers+not_found+overloaded", "LLM fake"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[name], w) {
				t.Errorf("faults: row %q lacks %q: %q", name, w, rows[name])
			}
		}
	}
}

// --target cluster:N:PATH: a PATH ending in .yaml or .yml is a foreign
// spec, whose proxy runs as N replicas behind HAProxy; a spec that is wrong,
// or names an image, is refused before anything starts.
func TestClusterOfAForeignSpec(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, name := range []string{"plain.yaml", "plain.yml"} {
		p := write(name, "name: plain\ncommand: [./proxy, '{{.Listen}}']\ncluster: {check: tcp}\n")
		mk, err := parseTarget("cluster:2:"+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		tg := mk()
		if _, ok := tg.(*harness.ForeignCluster); !ok || tg.Name() != "cluster:2:foreign:plain" {
			t.Errorf("%s: %T %q, want a cluster of 2 foreign:plain replicas", name, tg, tg.Name())
		}
	}
	for doc, want := range map[string]string{
		"name: bad\ncommand: [x]\ncluster: {store: redis}\n": `store "redis"`,
		"name: img\nimage: some/proxy\n":                     "names an image",
	} {
		p := write("spec.yaml", doc)
		if _, err := parseTarget("cluster:2:"+p, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", doc, err, want)
		}
	}
}

// The usage names every kind of target --target takes: the list the
// refusal of an unknown kind gives, each in the usage's words.
func TestUsageNamesEveryTargetKind(t *testing.T) {
	_, err := parseTarget("nosuchkind:x", io.Discard)
	if err == nil {
		t.Fatal("an unknown target kind was taken")
	}
	_, list, ok := strings.Cut(err.Error(), "want ")
	if !ok {
		t.Fatalf("the refusal lists no kinds: %v", err)
	}
	kinds := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	if len(kinds) < 6 {
		t.Fatalf("the refusal lists %d kinds: %q", len(kinds), list)
	}
	for _, k := range kinds {
		if !strings.Contains(usage, k) {
			t.Errorf("the usage does not name target %s", k)
		}
	}
}
