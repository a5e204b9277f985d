package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo stands in for `go run ginkgo run ...`: it writes a JUnit report with
// two specs into --output-dir/--junit-report, failing the second when the seed
// is odd, and exits 1 then.
const fakeGo = `#!/usr/bin/env bash
for a in "$@"; do
  case "$a" in
    --seed=*) seed=${a#--seed=} ;;
    --junit-report=*) report=${a#--junit-report=} ;;
    --output-dir=*) dir=${a#--output-dir=} ;;
  esac
done
status=passed; rc=0
if [ $((seed % 2)) -eq 1 ]; then status=failed; rc=1; fi
cat > "$dir/$report" <<XML
<testsuites><testsuite>
<testcase name="[It] a" classname="Suite" status="passed" time="0.1"></testcase>
<testcase name="[It] the &#39;quoted&#39; spec" classname="Suite" status="$status" time="0.1"></testcase>
<testcase name="[It] c" classname="Suite" status="skipped" time="0"></testcase>
</testsuite></testsuites>
XML
exit $rc
`

// TestFlakeCheckNamesEachFailureWithItsSeed: every run gets its own seed,
// failures are listed with the seed that replays them, skipped specs are
// not counted, and the exit status says whether anything failed.
func TestFlakeCheckNamesEachFailureWithItsSeed(t *testing.T) {
	dir := t.TempDir()
	goStub := filepath.Join(dir, "go")
	if err := os.WriteFile(goStub, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "flake-check.sh")
	cmd.Env = append(os.Environ(), "GO="+goStub, "FLAKE_RUNS=2", "FLAKE_STRESS_RUNS=1", "FLAKE_SEED=10",
		"FLAKE_DIR="+filepath.Join(dir, "reports"))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1 (a spec failed), got %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"flake-check: run 0 seed 10 (quiet): 2 specs, exit 0",
		"flake-check: run 1 seed 11 (quiet): 2 specs, exit 1",
		"flake-check: run 2 seed 12 (stress): 2 specs, exit 0",
		"seed 11 (quiet): Suite [It] the 'quoted' spec\n",
		"flake-check: 3 runs × 2 specs (6 in all), 1 failures",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "seed 10 (quiet): Suite") || strings.Contains(got, "seed 12 (stress): Suite") {
		t.Errorf("a passing run listed a failure:\n%s", got)
	}
}
