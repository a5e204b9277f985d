// Package conformance runs the official MCP conformance suite (the npm package
// @modelcontextprotocol/conformance, pinned in tools/conformance) against an
// MCP endpoint, reads its verdicts, and compares a run against the upstream
// directly with a run through a proxy, under a checked-in baseline that can
// only shrink (see docs/conformance.md).
package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Status is one scenario's verdict in one run.
type Status string

// The verdicts of a scenario.
const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	NotRun Status = "not run" // the suite ended (timeout, crash) before reporting it
)

// Scenario is one server scenario of the suite in one run.
type Scenario struct {
	Name   string
	Status Status
	// Passed and Failed count the scenario's checks (a scenario may have several).
	Passed, Failed int
	// Reasons are the failed checks' messages ("name: message"), from the
	// suite's checks.json; for NotRun, why it did not run.
	Reasons []string
}

// Reason is the scenario's reasons on one line, or "" when it has none.
func (s Scenario) Reason() string { return strings.Join(s.Reasons, "; ") }

// Result is one run of the suite against one URL.
type Result struct {
	URL string
	// Passed and Failed are the suite's own totals of checks
	// ("Total: N passed, M failed").
	Passed, Failed int
	// Scenarios in the order the suite ran them.
	Scenarios []Scenario
	// Output is the suite's stdout and stderr, for failure reports.
	Output string
}

// Scenario returns the scenario named name.
func (r Result) Scenario(name string) (Scenario, bool) {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Count returns how many scenarios have status st.
func (r Result) Count(st Status) int {
	n := 0
	for _, s := range r.Scenarios {
		if s.Status == st {
			n++
		}
	}
	return n
}

// Score is the run in one line: the suite's scenarios passed of those run,
// its check totals, and whether the server survived (when Survived was called).
func (r Result) Score() string {
	passed, total, survival := 0, 0, ""
	for _, s := range r.Scenarios {
		if s.Name == Survives {
			survival = "; the server survived"
			if s.Status != Pass {
				survival = "; the server DIED during the suite"
			}
			continue
		}
		total++
		if s.Status == Pass {
			passed++
		}
	}
	return fmt.Sprintf("%d of %d scenarios pass (checks: %d passed, %d failed)%s", passed, total, r.Passed, r.Failed, survival)
}

var (
	// "Running active suite (30 scenarios) against URL"
	suiteLine = regexp.MustCompile(`^Running \S+ suite \((\d+) scenarios\)`)
	// "=== Running scenario: ping ==="
	startLine = regexp.MustCompile(`^=== Running scenario: (\S+) ===$`)
	// "✓ ping: 1 passed, 0 failed" or "✗ dns-rebinding-protection: 0 passed, 2 failed"
	summaryLine = regexp.MustCompile(`^([✓✗]) (\S+): (\d+) passed, (\d+) failed`)
	// "Total: 40 passed, 0 failed"
	totalLine = regexp.MustCompile(`^Total: (\d+) passed, (\d+) failed`)
	// checks.json's directory: "server-<scenario>-<ISO time>"
	checksDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)
)

// Parse reads the suite's pretty output (`conformance server --url URL`, 0.1.x):
// the scenarios it started, the summary line of each ("✓ name: N passed, M
// failed"), and the total. A scenario that was started (or announced by the
// suite's count) but has no summary line is NotRun: the suite ended early.
// Without a total line, complete is false.
func Parse(out string) (r Result, complete bool, err error) {
	announced := -1
	var started []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if m := suiteLine.FindStringSubmatch(line); m != nil {
			announced, _ = strconv.Atoi(m[1])
			continue
		}
		if m := startLine.FindStringSubmatch(line); m != nil {
			started = append(started, m[1])
			continue
		}
		if m := summaryLine.FindStringSubmatch(line); m != nil {
			passed, _ := strconv.Atoi(m[3])
			failed, _ := strconv.Atoi(m[4])
			st := Pass
			if m[1] == "✗" || failed > 0 {
				st = Fail
			}
			if seen[m[2]] {
				return Result{}, false, fmt.Errorf("conformance output names scenario %q twice in its summary", m[2])
			}
			seen[m[2]] = true
			r.Scenarios = append(r.Scenarios, Scenario{Name: m[2], Status: st, Passed: passed, Failed: failed})
			continue
		}
		if m := totalLine.FindStringSubmatch(line); m != nil {
			r.Passed, _ = strconv.Atoi(m[1])
			r.Failed, _ = strconv.Atoi(m[2])
			complete = true
		}
	}
	if err := sc.Err(); err != nil {
		return Result{}, false, fmt.Errorf("reading conformance output: %w", err)
	}
	if len(started) == 0 && len(r.Scenarios) == 0 {
		return Result{}, false, fmt.Errorf("conformance output has no scenarios (is this `conformance server` output?):\n%s", tail(out, 2000))
	}
	for _, name := range started {
		if !seen[name] {
			seen[name] = true
			r.Scenarios = append(r.Scenarios, Scenario{Name: name, Status: NotRun})
		}
	}
	if !complete {
		// Without the summary, the checks.json files decide what was reported;
		// the totals are recomputed from the scenarios.
		for _, s := range r.Scenarios {
			r.Passed += s.Passed
			r.Failed += s.Failed
		}
	}
	if announced >= 0 && complete && len(r.Scenarios) != announced {
		return r, complete, fmt.Errorf("conformance announced %d scenarios but reported %d", announced, len(r.Scenarios))
	}
	return r, complete, nil
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// AddChecks reads the checks.json files the suite wrote under dir
// (`-o DIR`: DIR/server-<scenario>-<time>/checks.json) and fills each
// scenario's reasons from its failed checks. A scenario without a summary line
// (NotRun) but with a checks.json gets its verdict from the file: the suite
// finished it before it ended.
func AddChecks(r *Result, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading the suite's results: %w", err)
	}
	byName := map[string]*Scenario{}
	for i := range r.Scenarios {
		byName[r.Scenarios[i].Name] = &r.Scenarios[i]
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		m := checksDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		s := byName[m[1]]
		if s == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			continue // the suite was stopped while writing it
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s/checks.json: %w", e.Name(), err)
		}
		passed, failed := 0, 0
		s.Reasons = nil
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE":
				failed++
				msg := c.ErrorMessage
				if msg == "" {
					msg = c.Description
				}
				s.Reasons = append(s.Reasons, c.Name+": "+oneLine(msg))
			}
		}
		if s.Status == NotRun {
			s.Passed, s.Failed = passed, failed
			s.Status = Pass
			if failed > 0 {
				s.Status = Fail
			}
			r.Passed += passed
			r.Failed += failed
		}
	}
	return nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const maxReason = 300 // keeps a report row readable
	if len(s) > maxReason {
		s = s[:maxReason] + "…"
	}
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Survives is the name of the pseudo-scenario Survived adds: the server under
// test is still running after the suite. A proxy that dies fails every later
// scenario too, but this row says why, and the baseline must name it.
const Survives = "server-survives-the-suite"

// Survived adds the Survives pseudo-scenario to r: pass when alive, otherwise
// a failure with the process's last words.
func Survived(r *Result, alive bool, lastWords string) {
	s := Scenario{Name: Survives, Status: Pass, Passed: 1}
	if !alive {
		s.Status, s.Passed, s.Failed = Fail, 0, 1
		s.Reasons = []string{"the server process exited during the suite: " + famousLast(lastWords)}
	}
	r.Scenarios = append(r.Scenarios, s)
}

// famousLast picks the line of a process's output that says why it died: its
// panic, or else its last line.
func famousLast(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return oneLine(l)
		}
	}
	return oneLine(lines[len(lines)-1])
}
