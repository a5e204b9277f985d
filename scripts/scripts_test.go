// Package scripts_test holds the promises of the shell scripts make runs.
package scripts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runTestScript copies scripts/test.sh into a temp tree whose deps.sh, docker.sh
// and make are stubs recording their calls, and runs it; running says whether a Docker
// daemon answers before the run, and checkRC is what `make check` exits with.
// env is more of the stubs' environment (SHARED=1: docker.sh start says the
// daemon is shared with another run).
func runTestScript(t *testing.T, running bool, checkRC string, env ...string) (rc int, calls string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("test.sh")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/test.sh", string(src))
	write("scripts/deps.sh", "#!/bin/sh\necho deps >> \"$(dirname \"$0\")/../calls\"\n")
	write("scripts/docker.sh", `#!/bin/sh
echo "docker $1" >> "$(dirname "$0")/../calls"
case $1 in
  status) [ -n "$RUNNING" ] ;;
  start) if [ -n "$SHARED" ]; then echo "docker: shared (pid 1, also used by pid 2)"; elif [ -n "$RUNNING" ]; then echo "docker: already running"; else echo "docker: started"; fi ;;
  stop) echo "docker: stopped" ;;
esac
`)
	write("scripts/suite-procs.sh", "#!/bin/sh\necho suite-procs >> \"$(dirname \"$0\")/../calls\"\necho 2\n")
	write("make", "#!/bin/sh\necho \"make $* procs=$SUITE_PROCS\" >> \"$(dirname \"$0\")/calls\"\nexit $CHECK_RC\n")
	cmd := exec.Command("bash", filepath.Join(dir, "scripts", "test.sh"))
	cmd.Env = append(os.Environ(), "MAKE="+filepath.Join(dir, "make"), "CHECK_RC="+checkRC, "RUNNING=", "SHARED=", "SUITE_PROCS=")
	cmd.Env = append(cmd.Env, env...)
	if running {
		cmd.Env = append(cmd.Env, "RUNNING=1")
	}
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "calls"))
	return rc, strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n", ",")), " ")
}

func TestMakeTestSetsUpThenRunsTheChecks(t *testing.T) {
	rc, calls := runTestScript(t, true, "0")
	if rc != 0 || calls != "suite-procs,deps,docker status,docker start,make check procs=2," {
		t.Errorf("rc=%d calls=%q", rc, calls)
	}
	// A count the caller chose is kept, not measured again.
	if _, calls := runTestScript(t, true, "0", "SUITE_PROCS=3"); calls != "deps,docker status,docker start,make check procs=3," {
		t.Errorf("SUITE_PROCS=3: calls=%q", calls)
	}
}

func TestMakeTestStopsTheDockerItStarted(t *testing.T) {
	for _, checkRC := range []string{"0", "3"} {
		rc, calls := runTestScript(t, false, checkRC)
		if !strings.HasSuffix(calls, "make check procs=2,docker stop,") {
			t.Errorf("check exit %s: calls=%q; want docker stopped after the checks", checkRC, calls)
		}
		if want := map[string]int{"0": 0, "3": 3}[checkRC]; rc != want {
			t.Errorf("check exit %s: make test exited %d; want the checks' status", checkRC, rc)
		}
	}
}

func TestMakeTestLeavesARunningDockerAlone(t *testing.T) {
	_, calls := runTestScript(t, true, "1")
	if strings.Contains(calls, "docker stop") {
		t.Errorf("calls=%q: a daemon that was already running was stopped", calls)
	}
}

// A daemon another run started and still uses is shared: this run calls
// docker.sh stop at its end too, which stops it only if this run is its last
// user (TestDockerStopLeavesTheDaemonToItsOtherUsers).
func TestMakeTestStopsASharedDockerAtItsEnd(t *testing.T) {
	_, calls := runTestScript(t, true, "0", "SHARED=1")
	if !strings.HasSuffix(calls, "make check procs=2,docker stop,") {
		t.Errorf("calls=%q; want docker stop after the checks", calls)
	}
}

// suiteProcs runs scripts/suite-procs.sh on two /proc/stat copies whose
// aggregate line moved by total jiffies, idle of them idle (two cores).
func suiteProcs(t *testing.T, total, idle int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	stat := func(name string, user, idl int) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\nintr 1\n", user, idl)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := stat("before", 1000, 5000)
	after := stat("after", 1000+total-idle, 5000+idle)
	var stderr strings.Builder
	cmd := exec.Command("bash", "suite-procs.sh", "--from", before, after)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("suite-procs.sh: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), stderr.String()
}

// The suites run four processes on a quiet machine and two on one whose
// other work keeps more than half its cores busy (a busy loop per core), so
// a busy machine makes them slower, not red.
func TestSuiteProcessesFollowTheIdleCores(t *testing.T) {
	for _, c := range []struct {
		total, idle int
		want, says  string
	}{
		{400, 396, "4", "1.98 of 2 cores idle"},
		{400, 200, "4", "1.00 of 2 cores idle"},
		{400, 196, "2", "0.98 of 2 cores idle"},
		{400, 0, "2", "0.00 of 2 cores idle"},
	} {
		got, said := suiteProcs(t, c.total, c.idle)
		if got != c.want || !strings.Contains(said, c.says) {
			t.Errorf("%d of %d jiffies idle: got %s (%q), want %s (%q)", c.idle, c.total, got, said, c.want, c.says)
		}
	}
	// CPU times that did not move cannot say: the default stands.
	if got, said := suiteProcs(t, 0, 0); got != "4" || !strings.Contains(said, "cannot read") {
		t.Errorf("no interval: got %s (%q), want 4 and a word on why", got, said)
	}
}
