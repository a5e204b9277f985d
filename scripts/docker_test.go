package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dockerStubs is scripts/docker.sh run against stubs on PATH: a dockerd that
// writes its --pidfile and idles (at most 60 s), a docker whose `info`
// answers while that dockerd lives, and an id that says root. The state dir
// and the socket are in a temp dir.
type dockerStubs struct {
	t     *testing.T
	env   []string
	state string
}

func newDockerStubs(t *testing.T) *dockerStubs {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("dockerd", `#!/bin/bash
while [ $# -gt 0 ]; do case $1 in --pidfile) echo $$ >"$2"; shift ;; esac; shift; done
trap 'exit 0' TERM
for i in $(seq 600); do sleep 0.1; done
`)
	write("docker", `#!/bin/sh
p=$(cat "$MCPCHAOS_DOCKER_STATE/dockerd.pid" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null || exit 1
[ "$1" = info ] && echo stub
exit 0
`)
	write("id", "#!/bin/sh\necho 0\n")
	s := &dockerStubs{t: t, state: state, env: append(os.Environ(),
		"PATH="+bin+":"+os.Getenv("PATH"),
		"MCPCHAOS_DOCKER_STATE="+state,
		"MCPCHAOS_DOCKER_SOCK="+filepath.Join(dir, "docker.sock"),
		"MCPCHAOS_DOCKER_WAIT_S=10", "MCPCHAOS_DOCKER_STOP_S=5")}
	t.Cleanup(func() {
		if pid, ok := s.dockerd(); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return s
}

// run runs docker.sh VERB as the user pid and returns its last line.
func (s *dockerStubs) run(verb string, user int) string {
	s.t.Helper()
	cmd := exec.Command("bash", "docker.sh", verb)
	cmd.Env = append(s.env, "MCPCHAOS_DOCKER_USER="+strconv.Itoa(user))
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("docker.sh %s as %d: %v\n%s", verb, user, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// dockerd reports the stub daemon's pid and whether it still runs.
func (s *dockerStubs) dockerd() (int, bool) {
	b, err := os.ReadFile(filepath.Join(s.state, "dockerd.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

// user starts a process standing for one suite run (at most 60 s).
func user(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// Two suite runs share one dockerd: the first to end must not stop it under
// the second; the last user's stop stops it.
func TestDockerStopLeavesTheDaemonToItsOtherUsers(t *testing.T) {
	s := newDockerStubs(t)
	a, b := user(t).Process.Pid, user(t).Process.Pid
	if got := s.run("start", a); !strings.HasPrefix(got, "docker: started") {
		t.Fatalf("start as the first run: %q", got)
	}
	if got := s.run("start", b); !strings.HasPrefix(got, "docker: shared") || !strings.Contains(got, strconv.Itoa(a)) {
		t.Fatalf("start as the second run: %q; want shared with pid %d", got, a)
	}
	if got := s.run("stop", a); !strings.HasPrefix(got, "docker: left running") {
		t.Errorf("stop as the first run: %q; want the daemon left to the second", got)
	}
	if _, ok := s.dockerd(); !ok {
		t.Fatal("the first run's stop stopped the daemon the second still uses")
	}
	if got := s.run("stop", b); got != "docker: stopped" {
		t.Errorf("stop as the last run: %q; want stopped", got)
	}
	if pid, ok := s.dockerd(); ok {
		t.Errorf("dockerd (pid %d) still runs after its last user's stop", pid)
	}
}

// A user whose process is gone (a run killed before its stop) does not keep
// the daemon running.
func TestDockerStopForgetsUsersThatAreGone(t *testing.T) {
	s := newDockerStubs(t)
	a, gone := user(t).Process.Pid, user(t)
	if got := s.run("start", a); !strings.HasPrefix(got, "docker: started") {
		t.Fatalf("start: %q", got)
	}
	if got := s.run("start", gone.Process.Pid); !strings.HasPrefix(got, "docker: shared") {
		t.Fatalf("start as the second run: %q", got)
	}
	_ = gone.Process.Kill()
	_ = gone.Wait()
	if got := s.run("stop", a); got != "docker: stopped" {
		t.Errorf("stop: %q; want stopped (the other user is gone)", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, ok := s.dockerd(); ok && time.Now().Before(deadline); _, ok = s.dockerd() {
		time.Sleep(50 * time.Millisecond)
	}
	if pid, ok := s.dockerd(); ok {
		t.Errorf("dockerd (pid %d) still runs", pid)
	}
}
