package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runFuzz runs scripts/fuzz.sh with a stub go command that records each of
// its calls (one line of arguments) and exits with $GO_RC after $GO_SLEEP
// seconds; env sets the script's variables. It returns the exit code, the
// recorded calls and what the script printed.
func runFuzz(t *testing.T, env ...string) (rc int, calls []string, out string) {
	t.Helper()
	dir := t.TempDir()
	stub := filepath.Join(dir, "go")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/calls\"\nsleep \"${GO_SLEEP:-0}\"\nexit \"${GO_RC:-0}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "fuzz.sh")
	cmd.Env = append(os.Environ(), "GO="+stub, "FUZZ_TARGETS=./a:FuzzA ./b:FuzzB", "FUZZTIME=0", "FUZZ_CHUNK=7x", "GO_RC=0", "GO_SLEEP=0")
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	recorded, _ := os.ReadFile(filepath.Join(dir, "calls"))
	for _, l := range strings.Split(strings.TrimSpace(string(recorded)), "\n") {
		if l != "" {
			calls = append(calls, l)
		}
	}
	return rc, calls, string(b)
}

// Each target is fuzzed with a count of executions, never a duration (Go
// before 1.27 can fail a duration-bounded run at its boundary), the target
// alone (an anchored -fuzz) and no unit test; FUZZTIME=0 runs each once.
func TestFuzzRunsEachTargetByCount(t *testing.T) {
	rc, calls, out := runFuzz(t)
	want := []string{
		"test -run ^$ -fuzz=^FuzzA$ -fuzztime=7x ./a",
		"test -run ^$ -fuzz=^FuzzB$ -fuzztime=7x ./b",
	}
	if rc != 0 || strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Fatalf("exit %d, calls %q; want 0 and %q\n%s", rc, calls, want, out)
	}
	if !strings.Contains(out, "FuzzB: 1 run(s) of 7x") {
		t.Errorf("no summary per target in:\n%s", out)
	}
}

// Runs follow each other until FUZZTIME has passed: a run of about 0.4 s
// and FUZZTIME=1s give each target from two to four runs.
func TestFuzzRepeatsRunsUntilItsTimeIsSpent(t *testing.T) {
	rc, calls, out := runFuzz(t, "FUZZTIME=1s", "GO_SLEEP=0.4", "FUZZ_TARGETS=./a:FuzzA")
	if rc != 0 || len(calls) < 2 || len(calls) > 4 {
		t.Fatalf("exit %d after %d runs; want 0 after 2 to 4 (1s of 0.4s runs)\n%s", rc, len(calls), out)
	}
	for _, c := range calls {
		if !strings.Contains(c, "-fuzztime=7x") {
			t.Fatalf("run %q is not bounded by the count", c)
		}
	}
}

// A failing input stops everything: exit 1, no later run or target, and
// the script says where go test saved the input.
func TestFuzzStopsAtAFailingInput(t *testing.T) {
	rc, calls, out := runFuzz(t, "GO_RC=1", "FUZZTIME=1m")
	if rc != 1 || len(calls) != 1 {
		t.Fatalf("exit %d after %d runs; want 1 after the first\n%s", rc, len(calls), out)
	}
	if !strings.Contains(out, "./a/testdata/fuzz/FuzzA/") {
		t.Errorf("the failure does not say where the input is:\n%s", out)
	}
}

// Bad settings are refused before anything runs, each saying what it wants.
func TestFuzzRefusesBadSettings(t *testing.T) {
	for _, c := range []struct{ env, says string }{
		{"FUZZTIME=5 minutes", "FUZZTIME=5 minutes: want N, Ns, Nm or Nh"},
		{"FUZZTIME=1m30s", "FUZZTIME=1m30s: want N, Ns, Nm or Nh"},
		{"FUZZ_CHUNK=10s", "FUZZ_CHUNK=10s: want a count of executions"},
		{"FUZZ_TARGETS=", "FUZZ_TARGETS is empty"},
		{"FUZZ_TARGETS=./a", "target ./a: want PKG:TARGET"},
	} {
		rc, calls, out := runFuzz(t, c.env)
		if rc != 2 || len(calls) != 0 || !strings.Contains(out, c.says) {
			t.Errorf("%s: exit %d after %d runs, output %q; want 2, none, saying %q", c.env, rc, len(calls), out, c.says)
		}
	}
}
