package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// actionRun is a foreign run as a person meets it: a pass, two failures (one
// with a long name, long breaches and a long proxy log), and N/A rows for
// two reasons, in seed order.
func actionRun() Run {
	sc := func(f harness.Fault, o string) catalogue.Scenario {
		return catalogue.Scenario{Fault: f, Operation: op(o), Promise: "1 answered"}
	}
	var log strings.Builder
	for i := 0; i < 200; i++ {
		log.WriteString("proxy: request 0123456789 handled by a rather chatty logger line\n")
	}
	log.WriteString("proxy: upstream docmost: context deadline exceeded\n")
	long := strings.Repeat("a very long detail ", 20)
	return Run{Seed: 7, Target: "foreign:plain.target.yaml", Tolerance: 300 * time.Millisecond,
		BudgetsAssumed: "not declared: request (assumed 1.5s)", NoAudit: "target foreign:plain offers no audit rows: no waterfalls",
		Results: []catalogue.Result{
			{Scenario: sc(harness.None{}, "tools/list"), Budget: time.Second, Pass: true},
			{Scenario: sc(harness.ProxyKill{}, "reconnect"), NotApplicable: "target foreign:plain lacks kill"},
			{Scenario: sc(harness.Blackhole{}, "small tools/call"), Budget: 1500 * time.Millisecond, BudgetNote: "budget assumed: 1.5s, not declared (request)",
				Observation: catalogue.Observation{Latency: 4 * time.Second, Err: fmt.Errorf("calling: %w", &jsonrpc.Error{Message: "upstream timed out"})}, Log: log.String(),
				Breaches: []catalogue.Breach{{Tier: catalogue.Generic, Promise: catalogue.PromiseBudget, Detail: long}}},
			{Scenario: sc(harness.ProxyRestart{}, "reconnect"), NotApplicable: "target foreign:plain lacks sessionAdoption"},
			{Scenario: sc(harness.ProxyKill{}, "DELETE"), NotApplicable: "target foreign:plain lacks kill"},
			{Scenario: sc(harness.Latency{Ms: 100}, strings.Repeat("a long operation name ", 8)), Budget: time.Second,
				Breaches: []catalogue.Breach{{Tier: catalogue.Generic, Promise: catalogue.PromiseAnswered, Detail: long}, {Tier: catalogue.Own, Promise: catalogue.PromiseTraceCode, Detail: "none"}}},
		}}
}

// Failures first, then passes, then the N/A rows collapsed by reason; no
// line of the table wider than 120 columns; an assumed budget marked.
func TestTheTableShowsFailuresFirstAndFitsTheTerminal(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, actionRun()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	want := []string{"VERDICT", "FAIL", "broke mcp:within budget", "FAIL", "broke mcp:answered, mcplocal:trace code", "PASS",
		"N/A ×2  target foreign:plain lacks kill", "N/A ×1  target foreign:plain lacks sessionAdoption", "* budget assumed"}
	if len(lines) != len(want) {
		t.Fatalf("the table has %d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q lacks %q", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], "1.5s*") {
		t.Errorf("the assumed budget is not marked: %s", lines[1])
	}
}

// Each failing row: every breach, its own replay command, the last lines of
// the proxy's log; then a summary per tier.
func TestEachFailureHasItsReplayAndTheProxysLog(t *testing.T) {
	run := actionRun()
	var b bytes.Buffer
	if err := WriteFailures(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"replay: mcpchaos run --seed 7 --target foreign:plain.target.yaml --focus '^blackhole × small tools/call$'",
		"    proxy: upstream docmost: context deadline exceeded",
		"mcp (generic MCP promises): 2 failing rows: answered ×1, within budget ×1",
		"mcplocal (mcplocal's own promises): 1 failing row: trace code ×1",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the failures lack %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "replay: ") != 2 {
		t.Errorf("want one replay per failing row:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "replay: ") && utf8.RuneCountInString(l) > Width {
			t.Errorf("a line of %d columns: %s", utf8.RuneCountInString(l), l)
		}
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, run); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"replay: mcpchaos run --seed 7 --target foreign:plain.target.yaml --focus", "proxy: upstream docmost: context deadline exceeded", "budget assumed: 1.5s"} {
		if !strings.Contains(junit.String(), w) {
			t.Errorf("the JUnit lacks %q", w)
		}
	}
	if recs := Records(run); recs[2].BudgetNote != run.Results[2].BudgetNote {
		t.Errorf("the JSON record drops the assumed budget: %+v", recs[2])
	}
	run.Replay = func(r catalogue.Result) string { return "custom " + r.Scenario.Name() }
	if got := RowReplay(run, run.Results[2]); got != "custom blackhole × small tools/call" {
		t.Errorf("the run's own replay is not used: %s", got)
	}
}

// The HTML: failures first, each with its replay and the proxy's log tail
// (about 2 KiB); the N/A rows collapsed by reason; the assumed budgets and
// the target's lack of audit rows said once, not on every row.
func TestTheHTMLPutsFailuresFirstWithReplayAndLog(t *testing.T) {
	out, doc := render(t, actionRun())
	secs := all(doc, elem("section"))
	if len(secs) != 5 { // 2 failures, 1 pass, 2 N/A reasons
		t.Fatalf("%d sections, want 5", len(secs))
	}
	for i, cls := range []string{"fail", "fail", "pass", "na", "na"} {
		if !hasClass(secs[i], cls) {
			t.Errorf("section %d is %q, want %s", i, attr(secs[i], "class"), cls)
		}
	}
	first := text(secs[0])
	if !strings.Contains(out, "ended with JSON-RPC error: calling: upstream timed out") {
		t.Error("the page does not say how the failing request ended")
	}
	if !strings.Contains(first, "--focus '^blackhole × small tools/call$'") || !strings.Contains(first, "context deadline exceeded") {
		t.Errorf("the first failure lacks its replay or log: %s", first)
	}
	if pres := all(secs[0], elem("pre")); len(pres) != 1 || len(text(pres[0])) > logTail+16 || len(text(pres[0])) < logTail/2 {
		t.Errorf("want one log tail of about %d bytes", logTail)
	}
	for _, w := range []string{"not declared: request (assumed 1.5s)", "offers no audit rows", "budget assumed: 1.5s, not declared (request)", "mcp (generic MCP promises)"} {
		if !strings.Contains(out, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(out, "no audit rows (no trace code)") {
		t.Error("a target without audit rows gets 'no audit rows' on its rows")
	}
}
