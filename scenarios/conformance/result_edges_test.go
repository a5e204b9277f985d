package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A summary line with a failed check is a failure whatever its mark, and a
// ✗ is a failure whatever its counts.
func TestParseFailsAScenarioOnEitherSign(t *testing.T) {
	out := "=== Running scenario: a ===\n=== Running scenario: b ===\n" +
		"✓ a: 1 passed, 1 failed\n✗ b: 0 passed, 0 failed\nTotal: 1 passed, 1 failed\n"
	r, complete, err := Parse(out)
	if err != nil || !complete {
		t.Fatalf("Parse: complete %v, %v", complete, err)
	}
	for _, name := range []string{"a", "b"} {
		if s, ok := r.Scenario(name); !ok || s.Status != Fail {
			t.Errorf("scenario %s: %+v, want fail", name, s)
		}
	}
}

// The suite's announced count is held only against a complete run: a
// complete run of fewer scenarios than announced (none included) is an
// error, a run cut off before its summary is not.
func TestParseHoldsTheAnnouncedCountToACompleteRunOnly(t *testing.T) {
	none := "Running active suite (0 scenarios) against http://127.0.0.1:1/mcp\n" +
		"=== Running scenario: ping ===\n✓ ping: 1 passed, 0 failed\nTotal: 1 passed, 0 failed\n"
	if _, _, err := Parse(none); err == nil || !strings.Contains(err.Error(), "announced 0 scenarios but reported 1") {
		t.Errorf("a complete run of 1 scenario announced as 0: %v", err)
	}
	cut := strings.Replace(completeRun[:strings.Index(completeRun, "=== SUMMARY")], "(3 scenarios)", "(30 scenarios)", 1)
	r, complete, err := Parse(cut)
	if err != nil || complete || len(r.Scenarios) != 3 {
		t.Errorf("a cut-off run of 3 of 30 announced: %d scenarios, complete %v, %v; want 3 and no error", len(r.Scenarios), complete, err)
	}
}

// A line of the suite's output longer than a default scanner's buffer is
// read (a check's message can carry a whole response).
func TestParseReadsAVeryLongLine(t *testing.T) {
	long := "Running client scenario 'ping': " + strings.Repeat("x", 200<<10) + "\n"
	out := strings.Replace(completeRun, "=== Running scenario: ping ===\n", "=== Running scenario: ping ===\n"+long, 1)
	r, complete, err := Parse(out)
	if err != nil || !complete || len(r.Scenarios) != 3 {
		t.Errorf("output with a 200 KiB line: %d scenarios, complete %v, %v", len(r.Scenarios), complete, err)
	}
}

// Output that is not the suite's is quoted in the error, its last 2000
// bytes when longer (marked as cut), whole when not.
func TestParseQuotesTheTailOfOutputItCannotRead(t *testing.T) {
	whole := strings.Repeat("w", 2000)
	if _, _, err := Parse(whole); err == nil || !strings.HasSuffix(err.Error(), "\n"+whole) {
		t.Errorf("2000 bytes of output not quoted whole: %v", err)
	}
	long := strings.Repeat("a", 500) + strings.Repeat("z", 2000)
	_, _, err := Parse(long)
	if err == nil || !strings.HasSuffix(err.Error(), "\n…"+strings.Repeat("z", 2000)) {
		t.Errorf("2500 bytes of output: the error does not end with its last 2000 marked as cut: %.80q…", err)
	}
}

// When the suite wrote a scenario's checks twice, the later run's file
// (by its time stamp) gives the reasons; what is not a scenario's results
// directory is ignored.
func TestAddChecksTakesTheLatestResultsAndIgnoresOtherEntries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ stamp, msg string }{{"2026-12-01T03-56-22-756Z", "old"}, {"2026-12-01T04-00-00-000Z", "new"}} {
		d := filepath.Join(dir, "server-ping-"+c.stamp)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		body := `[{"name":"Ping","status":"FAILURE","errorMessage":"` + c.msg + `"}]`
		if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "server-ping-2026-12-01T05-00-00-000Z"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, err := Parse(completeRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddChecks(&r, dir); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Scenario("ping"); s.Reason() != "Ping: new" {
		t.Errorf("ping's reason %q, want the later run's", s.Reason())
	}
}

// A failed check without a message is named by its description; a reason
// is cut to 300 bytes, one of exactly 300 kept whole.
func TestAReasonIsOneReadableLine(t *testing.T) {
	if got := oneLine(strings.Repeat("r", 300)); got != strings.Repeat("r", 300) {
		t.Errorf("a reason of 300 bytes was cut: %d bytes", len(got))
	}
	if got := oneLine(strings.Repeat("r", 301)); got != strings.Repeat("r", 300)+"…" {
		t.Errorf("a reason of 301 bytes: %d bytes, want 300 and a mark", len(got))
	}
	dir := t.TempDir()
	writeChecks(t, dir, "ping", `[{"name":"Ping","description":"Server answers\n  ping","status":"FAILURE"},{"name":"Init","status":"SUCCESS"}]`)
	r, _, err := Parse(completeRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddChecks(&r, dir); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Scenario("ping"); s.Reason() != "Ping: Server answers ping" {
		t.Errorf("ping's reason %q", s.Reason())
	}
}

// A server that died without a panic is named by its last line of output.
func TestSurvivedNamesTheLastWordsOfADeadServer(t *testing.T) {
	var r Result
	Survived(&r, false, "starting\nlisten tcp: bind: address already in use\n")
	s, _ := r.Scenario(Survives)
	if s.Status != Fail || s.Failed != 1 || !strings.HasSuffix(s.Reason(), ": listen tcp: bind: address already in use") {
		t.Errorf("scenario %+v", s)
	}
}

// A finding says both verdicts ("absent" for a run that did not report
// the scenario) and its reason when it has one.
func TestAFindingSaysBothVerdicts(t *testing.T) {
	f := Finding{Scenario: "ping", Direct: Pass}
	if got := f.String(); got != "ping (directly: pass, through the proxy: absent)" {
		t.Errorf("without a reason: %q", got)
	}
	f.Proxied, f.Reason = Fail, "not forwarded"
	if got := f.String(); got != "ping (directly: pass, through the proxy: fail): not forwarded" {
		t.Errorf("with a reason: %q", got)
	}
}

// A scenario one run did not report is a finding that says so; a known
// failure through the proxy keeps the suite's reason next to the
// baseline's.
func TestCompareSaysWhichRunDidNotReportAScenario(t *testing.T) {
	v := Compare(result("ping", "pass"), result("ping", "pass", "tools-list", "fail"), Baseline{})
	if len(v.DirectFailures) != 1 || v.DirectFailures[0].Reason != "the direct run did not report it" {
		t.Errorf("a scenario only the proxied run reported: %+v", v.DirectFailures)
	}
	v = Compare(result("ping", "pass", "tools-list", "pass"), result("ping", "pass"), Baseline{})
	if len(v.Regressions) != 1 || v.Regressions[0].Reason != "the run through the proxy did not report it" {
		t.Errorf("a scenario the proxied run did not report: %+v", v.Regressions)
	}
	v = Compare(result("ping", "pass"), result("ping", "fail"), Baseline{Proxied: []Entry{{Scenario: "ping", Reason: "not forwarded"}}})
	if len(v.Known) != 1 || v.Known[0].Reason != "not forwarded [suite: why ping]" {
		t.Errorf("a known failure: %+v", v.Known)
	}
	v = Compare(result("ping", "pass"), Result{Scenarios: []Scenario{{Name: "ping", Status: Fail}}}, Baseline{Proxied: []Entry{{Scenario: "ping", Reason: "not forwarded"}}})
	if len(v.Known) != 1 || v.Known[0].Reason != "not forwarded" {
		t.Errorf("a known failure the suite gave no reason for: %+v", v.Known)
	}
}
