package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/soak"
)

// The soak's summary counts every class of request once, on its own line,
// lists the restarts and kills it caused, the audit rows and goroutines
// checked, the RSS growth when the proxy's process lived through the whole
// soak, and ends in PASS or one FAIL line per problem (docs/load.md).
func TestSoakSummaryCountsEveryClass(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	passing := soak.Report{Seed: 6, Target: "inprocess", Took: 2 * time.Second, Budget: 500 * time.Millisecond, Tolerance: 250 * time.Millisecond,
		Sessions: 40, Counts: soak.Counts{Requests: 1000, InBudget: 990, ToolErrors: 12, Refused: 4, CutByRestart: 5, LostToKill: 1},
		Events:       []soak.Event{{Kind: "proxy-restart", Start: at, End: at.Add(1500 * time.Millisecond)}, {Kind: "proxy-kill", Start: at, End: at.Add(time.Second), Err: "no pid"}},
		AuditChecked: true, RowsChecked: 980, RowsLostToKil: 2, GoroutinesBefore: 30, GoroutinesAfter: 30, HarnessGoroutines: 7,
		RSSWarm: 100 << 20, RSSEnd: 105 << 20}
	var b strings.Builder
	writeSoakSummary(&b, &passing)
	out := b.String()
	for _, want := range []string{
		"soak: seed 6, target inprocess, 1000 requests over 40 sessions in 2s (500 req/s)\n",
		"  budget per request      500ms + tolerance 250ms\n",
		"  answered in budget      990 (12 of them isError results)\n",
		"  answered late           0\n",
		"  unanswered              0\n",
		"  refused while down      4 (",
		"  cut by a restart        5 (",
		"  lost to a kill          1\n",
		"    proxy-restart  at 10:00:00.000, back after 1.5s\n",
		"    proxy-kill     at 10:00:00.000, back after 1s (no pid)\n",
		"  audit rows              980 checked, 0 missing, 2 lost to a kill\n",
		"  goroutines              30 before, 30 after (+7 of the harness's toxiproxy, not counted)\n",
		"  RSS                     100.0 MiB warm, 105.0 MiB at the end (+5.0%, limit 10%)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "\nPASS\n") || strings.Contains(out, "FAIL") {
		t.Errorf("a soak with no problem does not end in PASS alone:\n%s", out)
	}

	// A soak with problems: each is a FAIL line and there is no PASS; the
	// audit unchecked says why; no harness goroutines, no note of them; on
	// a process target that was restarted, RSS is not compared.
	failing := passing
	failing.Target = "binary:bin/mcplocal"
	failing.Counts = soak.Counts{Requests: 10, InBudget: 7, Late: 2, Unanswered: 1}
	failing.AuditChecked, failing.AuditNote = false, "the target offers no audit API"
	failing.HarnessGoroutines = 0
	failing.Examples = []string{"request 3: no answer"}
	b.Reset()
	writeSoakSummary(&b, &failing)
	out = b.String()
	for _, want := range []string{
		"  answered late           2\n",
		"  unanswered              1\n",
		"  audit rows              not checked: the target offers no audit API\n",
		"  goroutines              30 before, 30 after\n",
		"  RSS                     not comparable: the proxy's process was restarted 2 times\n",
		"  e.g. request 3: no answer\n",
		"FAIL: 1 requests never answered while the proxy was up\n",
		"FAIL: 2 requests answered after their budget",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failing summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PASS") || strings.Contains(out, "toxiproxy") || strings.Contains(out, "MiB") {
		t.Errorf("the failing summary says PASS, a toxiproxy note or an RSS figure:\n%s", out)
	}

	// Without a known RSS there is no RSS line at all.
	noRSS := passing
	noRSS.RSSWarm, noRSS.RSSEnd = 0, 0
	b.Reset()
	writeSoakSummary(&b, &noRSS)
	if strings.Contains(b.String(), "RSS") {
		t.Errorf("a summary without RSS figures speaks of RSS:\n%s", b.String())
	}
	noRSS.Target = "binary:bin/mcplocal"
	b.Reset()
	writeSoakSummary(&b, &noRSS)
	if strings.Contains(b.String(), "RSS") {
		t.Errorf("a summary without RSS figures speaks of RSS on a process target:\n%s", b.String())
	}
	// A process target never restarted keeps one process: RSS is compared.
	unrestarted := passing
	unrestarted.Target, unrestarted.Events = "binary:bin/mcplocal", nil
	b.Reset()
	writeSoakSummary(&b, &unrestarted)
	if !strings.Contains(b.String(), "100.0 MiB warm, 105.0 MiB at the end") {
		t.Errorf("a process target never restarted does not compare its RSS:\n%s", b.String())
	}
}

// `mcpchaos soak` refuses an unknown target before anything starts.
func TestSoakRefusesAnUnknownTarget(t *testing.T) {
	var stderr bytes.Buffer
	err := runSoak(stopped(), []string{"--target", "nosuchkind"}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), `--target "nosuchkind"`) || strings.Contains(stderr.String(), "mcpchaos soak:") {
		t.Errorf("soak --target nosuchkind: %v\n%s", err, stderr.String())
	}
}

// A soak prints its seed and how to replay it, writes its report as JSON
// (to the temp dir unless --report says where), prints the summary and the
// report's path, and exits 1 exactly when the summary fails it.
func TestSoakWritesItsReportAndJudgesIt(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := runSoak(ctx, []string{"--requests", "20", "--epoch", "10", "--workers", "2", "--calls-per-session", "4", "--seed", "6"}, &stdout, &stderr)
	out := stdout.String()
	file := filepath.Join(tmp, "mcpchaos-soak-6.json")
	if !strings.HasSuffix(out, "\nreport: "+file+"\n") {
		t.Errorf("the summary does not end with the report's path %s:\n%s", file, out)
	}
	switch {
	case err == nil && strings.HasSuffix(out, "\nPASS\nreport: "+file+"\n"):
	case err == exitError(1) && strings.Contains(out, "\nFAIL: "):
		t.Logf("the soak failed on this machine (judged as it should be):\n%s", out)
	default:
		t.Fatalf("soak: %v, and its summary says:\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "mcpchaos soak: 20 requests, target inprocess, seed 6 (replay with --seed 6)") {
		t.Errorf("the soak does not say its seed and how to replay it:\n%s", stderr.String())
	}
	if !strings.HasPrefix(out, "soak: seed 6, target inprocess, 20 requests") {
		t.Errorf("the summary:\n%s", out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep soak.Report
	if err := json.Unmarshal(data, &rep); err != nil || rep.Seed != 6 || rep.Requests != 20 || rep.Target != "inprocess" {
		t.Errorf("the report file: %v %+v", err, rep)
	}
}

// A report --report cannot write is said on stderr; the soak's summary and
// verdict stand.
func TestSoakSaysItsReportCouldNotBeWritten(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	file := filepath.Join(t.TempDir(), "missing-dir", "soak.json")
	var stdout, stderr bytes.Buffer
	err := runSoak(ctx, []string{"--requests", "10", "--epoch", "10", "--workers", "2", "--seed", "7", "--report", file}, &stdout, &stderr)
	if err != nil && err != exitError(1) {
		t.Fatalf("soak: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "mcpchaos soak: report: open "+file) {
		t.Errorf("the soak does not say its report could not be written:\n%s", stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "soak: seed 7, target inprocess, 10 requests") || !strings.HasSuffix(stdout.String(), "report: "+file+"\n") {
		t.Errorf("the summary:\n%s", stdout.String())
	}
}
