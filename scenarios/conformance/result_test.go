package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A complete run as 0.1.13 prints it (pretty mode, colours off).
const completeRun = `Running active suite (3 scenarios) against http://127.0.0.1:1/mcp


=== Running scenario: server-initialize ===
Running client scenario 'server-initialize' against server: http://127.0.0.1:1/mcp

=== Running scenario: ping ===
Running client scenario 'ping' against server: http://127.0.0.1:1/mcp

=== Running scenario: dns-rebinding-protection ===
Running client scenario 'dns-rebinding-protection' against server: http://127.0.0.1:1/mcp


=== SUMMARY ===
✓ server-initialize: 1 passed, 0 failed
✗ ping: 0 passed, 1 failed
✗ dns-rebinding-protection: 1 passed, 1 failed

Total: 2 passed, 2 failed
`

func TestParseReadsEveryScenarioAndTheTotal(t *testing.T) {
	r, complete, err := Parse(completeRun)
	if err != nil || !complete {
		t.Fatalf("Parse: complete=%v err=%v", complete, err)
	}
	if r.Passed != 2 || r.Failed != 2 {
		t.Errorf("totals = %d passed, %d failed; want 2, 2", r.Passed, r.Failed)
	}
	want := []Scenario{
		{Name: "server-initialize", Status: Pass, Passed: 1},
		{Name: "ping", Status: Fail, Failed: 1},
		{Name: "dns-rebinding-protection", Status: Fail, Passed: 1, Failed: 1},
	}
	if len(r.Scenarios) != len(want) {
		t.Fatalf("scenarios = %+v; want %+v", r.Scenarios, want)
	}
	for i, w := range want {
		g := r.Scenarios[i]
		if g.Name != w.Name || g.Status != w.Status || g.Passed != w.Passed || g.Failed != w.Failed {
			t.Errorf("scenario %d = %+v; want %+v", i, g, w)
		}
	}
	if got := r.Score(); got != "1 of 3 scenarios pass (checks: 2 passed, 2 failed)" {
		t.Errorf("Score = %q", got)
	}
}

func TestParseMarksScenariosOfACutOffRunNotRun(t *testing.T) {
	cut := completeRun[:strings.Index(completeRun, "=== SUMMARY")]
	r, complete, err := Parse(cut)
	if err != nil {
		t.Fatal(err)
	}
	if complete {
		t.Error("a run without its summary is reported complete")
	}
	if len(r.Scenarios) != 3 || r.Count(NotRun) != 3 {
		t.Errorf("scenarios = %+v; want 3 not run", r.Scenarios)
	}
}

func TestParseRejectsOutputWithoutScenarios(t *testing.T) {
	if _, _, err := Parse("npm error could not determine executable to run\n"); err == nil {
		t.Error("Parse accepted output that holds no scenario")
	}
}

func TestParseRejectsAShortSummary(t *testing.T) {
	short := strings.Replace(completeRun, "✓ server-initialize: 1 passed, 0 failed\n", "", 1)
	short = strings.Replace(short, "(3 scenarios)", "(4 scenarios)", 1)
	if _, _, err := Parse(short); err == nil {
		t.Error("Parse accepted a summary with fewer scenarios than announced")
	}
}

func writeChecks(t *testing.T, dir, scenario, body string) {
	t.Helper()
	d := filepath.Join(dir, "server-"+scenario+"-2026-12-01T03-56-22-756Z")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAddChecksGivesReasonsAndCompletesACutOffRun(t *testing.T) {
	dir := t.TempDir()
	writeChecks(t, dir, "ping", `[{"id":"ping","name":"Ping","status":"FAILURE","errorMessage":"Failed:\n fetch failed"}]`)
	writeChecks(t, dir, "server-initialize", `[{"id":"init","name":"Init","status":"SUCCESS"}]`)

	r, _, err := Parse(completeRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddChecks(&r, dir); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Scenario("ping"); s.Reason() != "Ping: Failed: fetch failed" {
		t.Errorf("ping's reason = %q", s.Reason())
	}

	cut, _, err := Parse(completeRun[:strings.Index(completeRun, "=== SUMMARY")])
	if err != nil {
		t.Fatal(err)
	}
	if err := AddChecks(&cut, dir); err != nil {
		t.Fatal(err)
	}
	if s, _ := cut.Scenario("server-initialize"); s.Status != Pass {
		t.Errorf("a scenario whose checks.json was written is %q; want pass", s.Status)
	}
	if s, _ := cut.Scenario("dns-rebinding-protection"); s.Status != NotRun {
		t.Errorf("a scenario without checks.json is %q; want not run", s.Status)
	}
}

func result(pairs ...string) Result {
	var r Result
	for i := 0; i < len(pairs); i += 2 {
		r.Scenarios = append(r.Scenarios, Scenario{Name: pairs[i], Status: Status(pairs[i+1]), Reasons: []string{"why " + pairs[i]}})
	}
	return r
}

func names(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Scenario)
	}
	return strings.Join(out, ",")
}

func TestCompareFailsOnARegressionNotInTheBaseline(t *testing.T) {
	direct := result("ping", "pass", "tools-list", "pass")
	proxied := result("ping", "fail", "tools-list", "pass")
	v := Compare(direct, proxied, Baseline{})
	if v.OK() || names(v.Regressions) != "ping" {
		t.Errorf("verdict = %+v; want ping as the one regression", v)
	}
}

func TestCompareCountsAScenarioTheProxiedRunDidNotReportAsARegression(t *testing.T) {
	v := Compare(result("ping", "pass", "tools-list", "pass"), result("ping", "pass"), Baseline{})
	if names(v.Regressions) != "tools-list" {
		t.Errorf("regressions = %q; want tools-list", names(v.Regressions))
	}
	v = Compare(result("ping", "pass"), result("ping", "not run"), Baseline{})
	if names(v.Regressions) != "ping" {
		t.Errorf("regressions = %q; want ping (not run)", names(v.Regressions))
	}
}

func TestCompareAcceptsAFailureTheBaselineLists(t *testing.T) {
	b := Baseline{Proxied: []Entry{{Scenario: "ping", Reason: "not forwarded yet"}}}
	v := Compare(result("ping", "pass"), result("ping", "fail"), b)
	if !v.OK() || names(v.Known) != "ping" {
		t.Errorf("verdict = %+v; want ping known and OK", v)
	}
}

// The ratchet: a baseline entry that passes again must be removed, so the
// baseline can only shrink.
func TestCompareFailsOnABaselineEntryThatNowPasses(t *testing.T) {
	b := Baseline{Proxied: []Entry{{Scenario: "ping", Reason: "not forwarded yet"}}}
	v := Compare(result("ping", "pass"), result("ping", "pass"), b)
	if v.OK() || names(v.Stale) != "ping" {
		t.Errorf("verdict = %+v; want ping stale and not OK", v)
	}
	if p := v.Problems(); len(p) != 1 || !strings.Contains(p[0], "remove it") {
		t.Errorf("problems = %q", p)
	}
}

func TestCompareFailsOnABaselineEntryForAScenarioThatDoesNotExist(t *testing.T) {
	b := Baseline{Proxied: []Entry{{Scenario: "pingg", Reason: "typo"}}}
	v := Compare(result("ping", "pass"), result("ping", "pass"), b)
	if v.OK() || strings.Join(v.Unknown, ",") != "pingg" {
		t.Errorf("verdict = %+v; want pingg unknown", v)
	}
}

func TestCompareDoesNotHoldTheProxyToWhatTheFixtureFails(t *testing.T) {
	b := Baseline{Direct: []Entry{{Scenario: "sse-polling", Reason: "the fixture skips it"}}}
	v := Compare(result("sse-polling", "fail"), result("sse-polling", "fail"), b)
	if !v.OK() {
		t.Errorf("verdict = %+v; want OK", v.Problems())
	}
	v = Compare(result("sse-polling", "fail"), result("sse-polling", "fail"), Baseline{})
	if v.OK() || names(v.DirectFailures) != "sse-polling" {
		t.Errorf("an unlisted failure of the fixture: verdict = %+v; want it named", v)
	}
}

func TestLoadBaselineWantsAReasonForEveryEntry(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"no reason":   "proxied:\n  - scenario: ping\n",
		"twice":       "proxied:\n  - {scenario: ping, reason: a}\n  - {scenario: ping, reason: b}\n",
		"unknown key": "proxyed:\n  - {scenario: ping, reason: a}\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yml")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadBaseline(p); err == nil {
			t.Errorf("%s: LoadBaseline accepted %q", name, doc)
		}
	}
	p := filepath.Join(dir, "ok.yml")
	if err := os.WriteFile(p, []byte("direct: []\nproxied:\n  - {scenario: ping, reason: not forwarded}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(p)
	if err != nil || len(b.Proxied) != 1 || b.Proxied[0].Reason != "not forwarded" {
		t.Errorf("LoadBaseline = %+v, %v", b, err)
	}
}

func TestMcplocalConfigSetsPrefixOnlyWhenAsked(t *testing.T) {
	on := McplocalConfig("127.0.0.1:1", "http://127.0.0.1:2/mcp", true)
	off := McplocalConfig("127.0.0.1:1", "http://127.0.0.1:2/mcp", false)
	if !strings.Contains(on, "    prefix: false\n") || strings.Contains(off, "prefix") {
		t.Errorf("configs:\n%s\n---\n%s", on, off)
	}
}

func TestSurvivedNamesThePanicOfADeadServer(t *testing.T) {
	var r Result
	Survived(&r, false, "log line\npanic: should never be called\n\ngoroutine 43 [running]:\nmain.f()\n")
	s, ok := r.Scenario(Survives)
	if !ok || s.Status != Fail || !strings.Contains(s.Reason(), "panic: should never be called") {
		t.Errorf("scenario = %+v", s)
	}
	if got := r.Score(); got != "0 of 0 scenarios pass (checks: 0 passed, 0 failed); the server DIED during the suite" {
		t.Errorf("Score = %q", got)
	}
	r = Result{}
	Survived(&r, true, "")
	if s, _ := r.Scenario(Survives); s.Status != Pass {
		t.Errorf("a live server: %+v", s)
	}
}

// Version names the suite the docs and reports quote; package.json and its
// lockfile pin what npm ci installs. They must agree.
func TestVersionIsWhatThePackageFilesPin(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "tools", "conformance")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	for file, into := range map[string]any{"package.json": &pkg, "package-lock.json": &lock} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if got := pkg.Dependencies["@modelcontextprotocol/conformance"]; got != Version {
		t.Errorf("package.json pins %q; Version is %q (pin an exact version)", got, Version)
	}
	if got := lock.Packages["node_modules/@modelcontextprotocol/conformance"].Version; got != Version {
		t.Errorf("package-lock.json locks %q; Version is %q (run npm install in tools/conformance)", got, Version)
	}
}
