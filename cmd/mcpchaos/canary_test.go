package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/canary"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// `mcpchaos canary` needs a candidate and refuses a switch or an --allow it
// cannot read, naming the flag, before it builds or runs anything.
func TestCanaryRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []struct {
		args  []string
		err   string
		usage bool // the usage is printed too
	}{
		{args: nil, err: "canary: no candidate: give --sdk or --client-sdk", usage: true},
		{args: []string{"--label", "paginate"}, err: "canary: no candidate", usage: true},
		{args: []string{"--sdk", "npm:left-pad"}, err: "canary: --sdk "},
		{args: []string{"--client-sdk", "npm:@modelcontextprotocol/sdk@^1.2"}, err: "canary: --client-sdk "},
		{args: []string{"--sdk", "m@v1", "--client-sdk", "npm:x@"}, err: "canary: --client-sdk "},
		{args: []string{"--sdk", "m@v1", "--allow", "row"}, err: `canary: --allow "row": want NAME=reason`},
		{args: []string{"--client-sdk", "m@v1", "--allow", "=why"}, err: "canary: --allow"},
		{args: []string{"--sdk", "m@v1", "extra"}, err: `canary: unexpected argument "extra"`, usage: true},
	} {
		var stdout, stderr bytes.Buffer
		err := runCanary(stopped(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("canary %v: %v, want %q", c.args, err, c.err)
		}
		if got := strings.Contains(stderr.String(), "usage: mcpchaos canary"); got != c.usage {
			t.Errorf("canary %v: usage printed %v, want %v:\n%s", c.args, got, c.usage, stderr.String())
		}
		if strings.Contains(stderr.String(), "mcpchaos canary: candidate") {
			t.Errorf("canary %v started before refusing:\n%s", c.args, stderr.String())
		}
	}
}

// The canary's table gives each row's verdict on both sides and what
// changed (a dash for nothing, the reason an --allow gave), then one line
// per changed row that no longer passes, saying why on one line.
func TestCanaryTableSaysWhatChangedAndWhy(t *testing.T) {
	pass := &report.Record{Verdict: "PASS", Latency: 12 * time.Millisecond}
	fail := &report.Record{Verdict: "FAIL", Latency: 40 * time.Millisecond, Reason: "no answer\n  within   the budget"}
	slowPass := &report.Record{Verdict: "PASS", Latency: 900 * time.Millisecond, Reason: "slow but fine"}
	c := report.Comparison{Rows: []report.ComparedRow{
		{Name: "steady", Source: "catalogue", Base: pass, Cand: pass},
		{Name: "broken", Source: "catalogue", Base: pass, Cand: fail, Change: canary.NewlyFailing, Regression: true},
		{Name: "accepted", Source: "ginkgo", Base: pass, Cand: fail, Change: canary.NewlyFailing, Allowed: "known upstream change"},
		{Name: "slow", Source: "catalogue", Base: pass, Cand: slowPass, Change: canary.Slower + " by 888ms"},
		{Name: "gone", Source: "catalogue", Base: pass, Change: canary.OnlyBaseline},
		{Name: "unchanged-failure", Source: "catalogue", Base: fail, Cand: fail},
		{Name: "silent", Source: "catalogue", Base: pass, Cand: &report.Record{Verdict: "FAIL"}, Change: canary.NewlyFailing},
	}}
	var b strings.Builder
	printComparison(&b, c)
	lines := strings.Split(b.String(), "\n")
	row := func(name string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return l
			}
		}
		return ""
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "SCENARIO SOURCE BASELINE CANDIDATE CHANGED" {
		t.Errorf("header %q", lines[0])
	}
	for name, want := range map[string][]string{
		"steady":   {"catalogue", "PASS 12ms", "PASS 12ms", " -"},
		"broken":   {"PASS 12ms", "FAIL 40ms", canary.NewlyFailing},
		"accepted": {"ginkgo", canary.NewlyFailing + " (allowed: known upstream change)"},
		"slow":     {"PASS 900ms", canary.Slower + " by 888ms"},
		"gone":     {"PASS 12ms", canary.OnlyBaseline},
	} {
		for _, w := range want {
			if !strings.Contains(row(name), w) {
				t.Errorf("row %s lacks %q: %q", name, w, row(name))
			}
		}
	}
	why := []string{}
	for _, l := range lines {
		if strings.HasPrefix(l, canary.NewlyFailing+" ") || strings.HasPrefix(l, canary.Slower+" ") || strings.HasPrefix(l, canary.OnlyBaseline+" ") {
			why = append(why, l)
		}
	}
	want := []string{
		canary.NewlyFailing + " broken: no answer within the budget",
		canary.NewlyFailing + " accepted: no answer within the budget",
	}
	if strings.Join(why, "\n") != strings.Join(want, "\n") {
		t.Errorf("the reasons given:\n%s\nwant:\n%s", strings.Join(why, "\n"), strings.Join(want, "\n"))
	}
}

// A reason is told on one line of at most 300 characters and an ellipsis.
func TestOneLineReason(t *testing.T) {
	if got := oneLineReason("a\n\tb   c\n"); got != "a b c" {
		t.Errorf("oneLineReason folds to %q", got)
	}
	exact := strings.Repeat("x", 300)
	if got := oneLineReason(exact); got != exact {
		t.Errorf("a reason of 300 characters was cut: %d", len(got))
	}
	if got := oneLineReason(exact + "y"); got != exact+"…" {
		t.Errorf("a reason of 301 characters: %q…", got[290:])
	}
}

// The note that a cached baseline's latencies may mislead is given only
// when some row is flagged slower.
func TestHasSlower(t *testing.T) {
	if hasSlower(nil) || hasSlower([]report.ComparedRow{{Change: ""}, {Change: canary.NewlyFailing}}) {
		t.Error("rows with no slower one are said to have one")
	}
	if !hasSlower([]report.ComparedRow{{Change: canary.NewlyFailing}, {Change: canary.Slower + " by 2s"}}) {
		t.Error("a row flagged slower is missed")
	}
}

// After a canary run: the table, why the candidate does not build if it
// does not, a note when a cached baseline's latencies stand beside a row
// flagged slower, a note per --allow that matched nothing, the verdict
// line, the report files when asked, and exit 1 when the candidate failed.
func TestCanaryResultSaysWhatTheRunFound(t *testing.T) {
	pass := &report.Record{Verdict: "PASS", Latency: time.Millisecond}
	slow := report.ComparedRow{Name: "slow", Source: "catalogue", Base: pass, Cand: pass, Change: canary.Slower + " by 2s"}
	cached := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	base := report.Comparison{Baseline: "baseline (go.mod)", Candidate: "m@v2", Seed: 9, Duration: 61 * time.Second, Verdict: "ok: 1 rows, 1 changed"}
	for _, c := range []struct {
		name     string
		res      canary.Result
		allow    map[string]string
		report   bool
		fails    bool
		has, not []string
	}{
		{name: "slower beside a cached baseline", res: canary.Result{Comparison: withRows(base, slow), BaselineCached: cached},
			has: []string{"note: the baseline's latencies are from a cached run (recorded 2026-12-01T10:00:00Z)", "canary: ok: 1 rows, 1 changed (baseline baseline (go.mod); candidate m@v2; seed 9, 1m1s)\n"}},
		{name: "slower, baseline run now", res: canary.Result{Comparison: withRows(base, slow)},
			not: []string{"cached run"}},
		{name: "cached, nothing slower", res: canary.Result{Comparison: withRows(base, report.ComparedRow{Name: "same", Base: pass, Cand: pass}), BaselineCached: cached},
			not: []string{"cached run"}},
		{name: "an --allow unused", res: canary.Result{Comparison: withRows(base, slow)}, allow: map[string]string{"other": "why"},
			has: []string{"note: --allow \"other\" matched no changed row\n"}},
		{name: "does not build", res: canary.Result{Comparison: func() report.Comparison {
			c := base
			c.CandidateBuild, c.Failed, c.Verdict = "x.go:1: undefined: y", true, "FAILED: the candidate does not build"
			return c
		}(), Build: &canary.BuildError{Step: "go build"}}, fails: true,
			has: []string{"the candidate (m@v2) does not build:\nx.go:1: undefined: y\n", "canary: FAILED"}},
		{name: "a regression, reported", res: canary.Result{Comparison: func() report.Comparison {
			c := withRows(base, report.ComparedRow{Name: "broke", Base: pass, Cand: &report.Record{Verdict: "FAIL"}, Change: canary.NewlyFailing, Regression: true})
			c.Failed = true
			return c
		}()}, report: true, fails: true, not: []string{"does not build"}},
	} {
		var stdout, stderr bytes.Buffer
		dir := ""
		if c.report {
			dir = t.TempDir()
		}
		err := writeCanaryResult(&stdout, &stderr, &c.res, c.allow, dir)
		if (err != nil) != c.fails || (c.fails && err != exitError(1)) {
			t.Errorf("%s: %v, want failing %v (exit 1)", c.name, err, c.fails)
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "SCENARIO ") {
			t.Errorf("%s: the table does not come first:\n%s", c.name, out)
		}
		for _, w := range c.has {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", c.name, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: says %q:\n%s", c.name, w, out)
			}
		}
		if c.report {
			want := "report: " + filepath.Join(dir, report.CanaryHTMLFile) + ", " + filepath.Join(dir, report.CanaryJUnitFile) + "\n"
			if stderr.String() != want {
				t.Errorf("%s: stderr %q, want %q", c.name, stderr.String(), want)
			}
			for _, f := range []string{report.CanaryHTMLFile, report.CanaryJUnitFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
		} else if stderr.Len() != 0 {
			t.Errorf("%s: stderr %q with no --report", c.name, stderr.String())
		}
	}
}

func withRows(c report.Comparison, rows ...report.ComparedRow) report.Comparison {
	c.Rows = rows
	return c
}

// Once its flags are read, canary names the candidate and its tolerance,
// then runs; a run the canary itself cannot make is its error, prefixed
// canary (exit 2, not a verdict): an npm package given as the proxy's SDK.
func TestCanaryNamesItsCandidateThenRuns(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := runCanary(context.Background(), []string{"--sdk", "npm:@modelcontextprotocol/sdk@1.24.3", "--client-sdk", "example.com/m@v1.0.0",
		"--allow", "row=known", "--tolerance", "2s", "--work", t.TempDir()}, &stdout, &stderr)
	if err == nil || !strings.HasPrefix(err.Error(), "canary: --sdk npm:@modelcontextprotocol/sdk@1.24.3: an npm package is a client's SDK") {
		t.Errorf("canary with an npm proxy SDK: %v", err)
	}
	if want := "mcpchaos canary: candidate npm:@modelcontextprotocol/sdk@1.24.3 example.com/m@v1.0.0, tolerance 2s\n"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("canary does not name its candidate first: %q, want %q", stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("a canary that could not run printed a result:\n%s", stdout.String())
	}
}
