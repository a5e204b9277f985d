// Package scripts_test holds the promises of the shell scripts make runs.
package scripts_test

import (
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
	write("make", "#!/bin/sh\necho \"make $*\" >> \"$(dirname \"$0\")/calls\"\nexit $CHECK_RC\n")
	cmd := exec.Command("bash", filepath.Join(dir, "scripts", "test.sh"))
	cmd.Env = append(os.Environ(), "MAKE="+filepath.Join(dir, "make"), "CHECK_RC="+checkRC, "RUNNING=", "SHARED=")
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
	if rc != 0 || calls != "deps,docker status,docker start,make check," {
		t.Errorf("rc=%d calls=%q", rc, calls)
	}
}

func TestMakeTestStopsTheDockerItStarted(t *testing.T) {
	for _, checkRC := range []string{"0", "3"} {
		rc, calls := runTestScript(t, false, checkRC)
		if !strings.HasSuffix(calls, "make check,docker stop,") {
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
	if !strings.HasSuffix(calls, "make check,docker stop,") {
		t.Errorf("calls=%q; want docker stop after the checks", calls)
	}
}
