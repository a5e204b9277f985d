package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The formatting helpers at the edges of each of their cases: a second is
// written in seconds, a string of exactly n runes is not cut, a character
// next to the safe ranges is quoted, and XML keeps exactly the characters
// XML 1.0 allows.
func TestFormattingHelpersAtTheirEdges(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1.000 s", -time.Second: "-1.000 s", 999 * time.Millisecond: "999.0 ms", -999 * time.Millisecond: "-999.0 ms",
	} {
		if got := ms(d); got != want {
			t.Errorf("ms(%v) = %q, want %q", d, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 0, ""}, {"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"äöü", 3, "äöü"}} {
		if got := truncate(c.s, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	for s, want := range map[string]string{
		"azAZ09-_./:=@%+,": "azAZ09-_./:=@%+,", "a`": "'a`'", "a{": "'a{'", "a[": "'a['", "": "''", "it's": `'it'\''s'`,
	} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", s, got, want)
		}
	}
	kept := "\t\n\r \u007e\ud7ff\ue000\ufffd\U00010000\U0010ffff"
	if got := xmlSafe(kept); got != kept {
		t.Errorf("xmlSafe dropped an allowed character: %q", got)
	}
	if got := xmlSafe("\x00\x1f\ufffe\uffff"); got != "\ufffd\ufffd\ufffd\ufffd" {
		t.Errorf("xmlSafe kept a character XML 1.0 does not allow: %q", got)
	}
	for f, want := range map[float64]string{0.0009: "<0.1%", 0.001: "0.1%", 0.0999: "10.0%", 0.1: "10%", 1.5: "150%"} {
		if got := pct(f); got != want {
			t.Errorf("pct(%v) = %q, want %q", f, got, want)
		}
	}
}

// Wrap breaks at the width, not before: a line of exactly Width runes is
// one line, one rune more is two, the second indented.
func TestWrapBreaksAtTheWidth(t *testing.T) {
	word := strings.Repeat("x", Width-2)
	if got := Wrap(word+" y", "  "); len(got) != 1 || got[0] != word+" y" {
		t.Errorf("a line of exactly %d runes: %q", Width, got)
	}
	if got := Wrap(word+" yz", "  "); len(got) != 2 || got[0] != word || got[1] != "  yz" {
		t.Errorf("a line of %d runes: %q", Width+1, got)
	}
	if got := Wrap("  ", "  "); len(got) != 0 {
		t.Errorf("blank text wraps to %q", got)
	}
}

// tailOf keeps a short log whole, and cuts a long one at the first line
// boundary inside its last n bytes.
func TestTailOfCutsAtALineBoundary(t *testing.T) {
	if got := tailOf("abc\n", 4); got != "abc\n" {
		t.Errorf("a log of exactly n bytes: %q", got)
	}
	if got := tailOf("first\nsecond\nthird\n", 13); got != "[…]\nthird\n" {
		t.Errorf("cut inside a line: %q", got)
	}
	if got := tailOf("first\nsecond\n", 7); got != "[…]\nsecond\n" {
		t.Errorf("cut on a line boundary: %q", got)
	}
	if got := tailOf("abcdef\n", 2); got != "[…]\nf\n" {
		t.Errorf("only the final newline inside: %q", got)
	}
}

// Not-applicable groups: the larger first, equal ones by reason; a tier's
// promises: the most broken first, equal ones by name.
func TestGroupsAndPromisesAreOrdered(t *testing.T) {
	na := func(reason string) catalogue.Result {
		return catalogue.Result{Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op(reason)}, NotApplicable: reason}
	}
	_, _, groups := ordered([]catalogue.Result{na("b"), na("c"), na("a"), na("c")})
	var got []string
	for _, g := range groups {
		got = append(got, g.Reason)
	}
	if !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("groups in order %q, want c (2), then a and b", got)
	}
	broke := func(promises ...string) catalogue.Result {
		r := catalogue.Result{Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op("x")}}
		for _, p := range promises {
			r.Breaches = append(r.Breaches, catalogue.Breach{Tier: catalogue.Generic, Promise: p})
		}
		return r
	}
	lines := TierSummary(Run{Results: []catalogue.Result{broke("z", "b"), broke("z", "a")}})
	if want := "mcp (generic MCP promises): 2 failing rows: z ×2, a ×1, b ×1"; lines[0] != want {
		t.Errorf("tier line %q, want %q", lines[0], want)
	}
}

// The failures list shows a row's reason only when no breach says more, and
// a proxy log of exactly the lines it shows is shown whole.
func TestFailuresShowTheReasonOnlyWithoutBreaches(t *testing.T) {
	log := "l1\nl2\nl3\nl4\nl5\nl6\n"
	run := Run{Results: []catalogue.Result{
		{Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op("with breaches")}, Reason: "the reason",
			Breaches: []catalogue.Breach{{Tier: catalogue.Generic, Promise: "answered", Detail: "the breach"}}},
		{Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op("without")}, Reason: "its own reason", Log: log},
	}}
	var b bytes.Buffer
	if err := WriteFailures(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "the reason") || !strings.Contains(out, "the breach") || !strings.Contains(out, "its own reason") {
		t.Errorf("reasons shown wrongly:\n%s", out)
	}
	for _, l := range strings.Fields(log) {
		if !strings.Contains(out, "    "+l+"\n") {
			t.Errorf("log line %s missing from a %d-line log:\n%s", l, logLines, out)
		}
	}
}

// Records round-trip through their JSON file; a file that is not theirs
// is an error, as is a directory that cannot be made.
func TestRecordsRoundTripAndRefuseWhatIsNot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := WriteJSON(path, sampleRun()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	want := Records(sampleRun())
	if len(got) != len(want) || got[0].Name != want[0].Name || !got[0].Passed() || got[1].Passed() || got[3].Reason != want[3].Reason {
		t.Errorf("records read back differ: %+v", got)
	}
	var none *Record
	if none.Passed() {
		t.Error("no record passed")
	}
	if _, err := ReadJSON(strings.NewReader(`{"not":"records"}`)); err == nil {
		t.Error("an object read as records")
	}
	if err := WriteJSON(filepath.Join(path, "under-a-file.json"), sampleRun()); err == nil {
		t.Error("WriteJSON under a file succeeded")
	}
	dir := filepath.Join(t.TempDir(), "canary")
	if err := WriteComparison(dir, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{CanaryJUnitFile, CanaryHTMLFile} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := WriteComparison(filepath.Join(path, "sub"), sampleComparison()); err == nil {
		t.Error("WriteComparison under a file succeeded")
	}
}
