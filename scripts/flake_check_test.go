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
// is odd, and exits 1 then. As `go test -json -count=N`, it reports two tests
// N times each, TestSlow failing its second run, and a third package whose
// binary timed out (no failed test, the package failed), and exits 1.
const fakeGo = `#!/usr/bin/env bash
if [ "$1" = test ]; then
  for a in "$@"; do case "$a" in -count=*) n=${a#-count=} ;; esac; done
  for i in $(seq "$n"); do
    echo '{"Time":"t","Action":"pass","Package":"example/p","Test":"TestFine","Elapsed":0}'
    r=pass; [ "$i" -eq 2 ] && r=fail
    echo '{"Time":"t","Action":"'$r'","Package":"example/q","Test":"TestSlow","Elapsed":0}'
  done
  echo '{"Time":"t","Action":"fail","Package":"example/q","Elapsed":0}'
  echo '{"Time":"t","Action":"run","Package":"example/r","Test":"TestHangs"}'
  echo '{"Time":"t","Action":"output","Package":"example/r","Output":"panic: test timed out after 10m0s\n"}'
  echo '{"Time":"t","Action":"fail","Package":"example/r","Elapsed":600}'
  exit 1
fi
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
		"FLAKE_DIR="+filepath.Join(dir, "reports"), "FLAKE_UNIT_PKGS=example/p example/q")
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
		"flake-check: unit tests, 2 runs each, seed 10: 4 test runs, exit 1",
		"seed 10 (unit): example/q TestSlow (failed 1 of 2)\n",
		"seed 10 (unit): example/r (failed with no failed test: a timeout, a panic or a build failure; see ",
		"flake-check: unit: 4 test runs (2 × each test)",
		"flake-check: 3 runs × 2 specs (6 in all), 3 failures",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestFine") {
		t.Errorf("a test that passed every run was listed:\n%s", got)
	}
	if strings.Contains(got, "seed 10 (quiet): Suite") || strings.Contains(got, "seed 12 (stress): Suite") {
		t.Errorf("a passing run listed a failure:\n%s", got)
	}
}
