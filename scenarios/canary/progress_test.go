package canary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// The lines shown while a suite runs are its progress lines (a scenario's
// verdict, Ginkgo's summaries), never its chatter.
func TestOnlyProgressLinesAreShown(t *testing.T) {
	for l, want := range map[string]bool{
		"[ 3/50] none × tools/list  PASS 12ms":   true,
		"  [12/50] blackhole × ping   FAIL 1.2s": true,
		"[4/50] proxy-kill × reconnect  N/A":     true,
		"Ran 8 of 813 Specs in 8.1 seconds":      true,
		"mcpchaos run: 3 passed":                 true,
		"[FAIL] Stale sessions [It] recreates":   true,
		"Running Suite: scenarios":               true,
		"[3 50] PASS":                            false, // no "/": not a counter
		"[debug] 1/2 of the work":                false, // no verdict
		"time=... level=INFO msg=PASS":           false, // not bracketed
		"the proxy Ran away":                     false,
		"":                                       false,
	} {
		if got := isProgressLine(l); got != want {
			t.Errorf("isProgressLine(%q) = %v, want %v", l, got, want)
		}
	}
}

// A suite's output reaches its log whole and the progress writer line by
// line: a line split across writes is shown once, whole, when its newline
// comes; a runaway line without one is dropped, not kept growing.
func TestLineSinkSplitsWritesIntoLines(t *testing.T) {
	var log bytes.Buffer
	var mu sync.Mutex
	var lines []string
	s := &lineSink{log: &log, line: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }}
	for _, w := range []string{"first\nsec", "ond\n", "third", "\nfourth\nfifth\n"} {
		if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := strings.Join(lines, "|"); got != "first|second|third|fourth|fifth" {
		t.Errorf("lines %q", got)
	}
	if log.String() != "first\nsecond\nthird\nfourth\nfifth\n" {
		t.Errorf("log %q", log.String())
	}
	lines = nil
	if _, err := s.Write(bytes.Repeat([]byte("x"), 64<<10)); err != nil {
		t.Fatal(err)
	}
	if len(s.partial) != 64<<10 {
		t.Errorf("a line of exactly 64 KiB without its newline yet was not kept whole (%d bytes)", len(s.partial))
	}
	if _, err := s.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("\nlast\n")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines, "|"); got != "|last" {
		t.Errorf("after a runaway line: lines %q, want it dropped and the next line whole", got)
	}
}

// The progress writer's per-side logs: one canary.log per directory, opened
// once and appended to, closed by close.
func TestProgressKeepsOneLogPerSide(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	dir := t.TempDir()
	w := p.prefixed("baseline", dir)
	if _, err := w.Write([]byte("[1/2] none × ping PASS 1ms\nchatter\n")); err != nil {
		t.Fatal(err)
	}
	if p.log(dir) != p.log(dir) {
		t.Error("a side's log opened twice")
	}
	if p.log(filepath.Join(dir, "missing")) != nil {
		t.Error("a log in a directory that does not exist")
	}
	p.close()
	b, err := os.ReadFile(filepath.Join(dir, "canary.log"))
	if err != nil || string(b) != "[1/2] none × ping PASS 1ms\nchatter\n" {
		t.Errorf("log %q %v", b, err)
	}
	if got := out.String(); got != "  [baseline] [1/2] none × ping PASS 1ms\n" {
		t.Errorf("progress %q", got)
	}
}

// The verdict line: a failure counts the rows that passed on the baseline
// only, with the changed and the allowed; otherwise "no change" or "ok".
func TestVerdictLineSumsTheComparisonUp(t *testing.T) {
	rows := []report.ComparedRow{{Name: "a"}, {Name: "b", Change: NewlyFailing, Regression: true}, {Name: "c", Change: "slower by 1s", Allowed: "known"}}
	if got := verdictLine(rows, rows[1:2]); got != "FAIL: 1 of 3 rows passed on the baseline and do not on the candidate (2 changed, 1 allowed)" {
		t.Errorf("failing: %q", got)
	}
	if got := verdictLine(rows[:1], nil); got != "no change: 1 row, same verdicts, none slower beyond the tolerance" {
		t.Errorf("unchanged: %q", got)
	}
	if got := verdictLine(rows[2:], nil); got != "ok: 1 row, 1 changed, none newly failing (1 allowed)" {
		t.Errorf("changed, allowed: %q", got)
	}
	if got := verdictLine(rows[1:], nil); got != "ok: 2 rows, 2 changed, none newly failing (1 allowed)" {
		t.Errorf("two rows: %q", got)
	}
}
