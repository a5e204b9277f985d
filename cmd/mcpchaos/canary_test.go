package main

import (
	"bytes"
	"context"
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
		err := runCanary(context.Background(), c.args, &stdout, &stderr)
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
