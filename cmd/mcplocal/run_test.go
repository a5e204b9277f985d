package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
)

// The commands a person types first: help on stdout and no error; no
// command, usage and an error; an unknown one, usage on stderr and an error
// naming it; knobs, one line per bound.
func TestCommandsAndHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errw bytes.Buffer
		if err := run(args, &out, &errw); err != nil || !strings.Contains(out.String(), "mcplocal serve --config FILE") || errw.Len() != 0 {
			t.Errorf("%v: err %v, stdout %q, stderr %q", args, err, out.String(), errw.String())
		}
	}
	var out, errw bytes.Buffer
	if err := run(nil, &out, &errw); err == nil || !strings.Contains(out.String(), "Usage:") {
		t.Errorf("no command: err %v, stdout %q", err, out.String())
	}
	out.Reset()
	if err := run([]string{"serv"}, &out, &errw); err == nil || !strings.Contains(err.Error(), `"serv"`) || !strings.Contains(errw.String(), "Usage:") || out.Len() != 0 {
		t.Errorf("unknown command: err %v, stdout %q, stderr %q", err, out.String(), errw.String())
	}
	out.Reset()
	t.Setenv("MCPCTL_REQUEST_DEADLINE_MS", "123456")
	if err := run([]string{"knobs"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^MCPCTL_REQUEST_DEADLINE_MS\s+123456 ms\s`).MatchString(out.String()) {
		t.Errorf("knobs does not show the overridden request deadline in ms:\n%s", out.String())
	}
	t.Setenv("MCPCTL_REQUEST_DEADLINE_MS", "not a number")
	if err := run([]string{"knobs"}, io.Discard, io.Discard); err == nil {
		t.Error("knobs accepted a knob that is not a number")
	}
}

// configFile writes a config serving one project on 127.0.0.1:0, its audit in
// dir, and returns its path.
func configFile(t *testing.T, listen string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcplocal.yaml")
	body := "listen: " + listen + "\naudit: sqlite:" + filepath.Join(dir, "audit.db") + "\nprojects:\n  p:\n    servers:\n      up:\n        url: http://127.0.0.1:1/mcp\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve refuses what it cannot start from, each with its reason: no
// --config, a bad flag, a config that does not load, an audit DSN that
// does not validate, a network address without users, a bad knob, a bad
// failpoint, a pprof address off loopback.
func TestServeRefusesWhatItCannotStartFrom(t *testing.T) {
	good := configFile(t, "127.0.0.1:0")
	for _, c := range []struct {
		name string
		args []string
		env  [2]string
		want string
	}{
		{"no config", nil, [2]string{}, "--config is required"},
		{"a bad flag", []string{"--nope"}, [2]string{}, "flag provided but not defined"},
		{"a missing config", []string{"--config", filepath.Join(t.TempDir(), "none.yaml")}, [2]string{}, "none.yaml"},
		{"a bad audit", []string{"--config", good, "--audit", "mysql://x"}, [2]string{}, "audit"},
		{"a network address without users", []string{"--config", good, "--listen", "0.0.0.0:0"}, [2]string{}, "reachable from other hosts"},
		{"a bad knob", []string{"--config", good}, [2]string{"MCPCTL_REQUEST_DEADLINE_MS", "x"}, "MCPCTL_REQUEST_DEADLINE_MS"},
		{"a bad failpoint", []string{"--config", good}, [2]string{failpointsEnv, "not a failpoint"}, "failpoint"},
		{"pprof off loopback", []string{"--config", good, "--pprof", "0.0.0.0:0"}, [2]string{}, "--pprof"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env[0] != "" {
				t.Setenv(c.env[0], c.env[1])
				t.Setenv(enableFailpointsEnv, "1")
			}
			var errw bytes.Buffer
			err := run(append([]string{"serve"}, c.args...), io.Discard, &errw)
			if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error()+errw.String(), c.want) {
				t.Errorf("err %v, stderr %q; want an error saying %q", err, errw.String(), c.want)
			}
			// A mistyped command line gets serve's flags on stderr.
			if len(c.args) < 2 && !strings.Contains(errw.String(), "-config string") {
				t.Errorf("stderr %q; want serve's usage", errw.String())
			}
		})
	}
}

// serve starts, says where it listens, answers there, stops on SIGTERM
// within its drain and grace, and says so; armed failpoints are announced,
// ignored ones too.
func TestServeListensAndStopsOnSIGTERM(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("MCPCTL_STOP_DRAIN_MS", "100")
	t.Setenv(failpointsEnv, "tools/call=up_x:panic")
	t.Setenv(enableFailpointsEnv, "")
	var log syncbuf.Buffer
	done := make(chan error, 1)
	audit := "sqlite:" + filepath.Join(t.TempDir(), "given.db")
	go func() {
		done <- run([]string{"serve", "--config", configFile(t, "127.0.0.1:0"), "--audit", audit}, io.Discard, &log)
	}()
	listening := regexp.MustCompile(`msg="mcplocal listening" addr=(127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == ""; {
		select {
		case err := <-done:
			t.Fatalf("serve returned before listening: %v\n%s", err, log.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := listening.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say where it listens:\n%s", log.String())
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz answered %d", resp.StatusCode)
	}
	if !strings.Contains(log.String(), "audit="+audit) {
		t.Errorf("the listening line does not name the --audit given:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "garbage collector target set") {
		t.Errorf("the collector's target, set without GOGC, was not said:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "failpoints ignored: this is not a test run") {
		t.Errorf("failpoints without the enable variable were not said to be ignored:\n%s", log.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if !strings.Contains(log.String(), `msg="mcplocal stopping"`) {
		t.Errorf("serve did not say it stops:\n%s", log.String())
	}
}

// With the enable variable, failpoints are armed and said to be.
func TestArmedFailpointsAreAnnounced(t *testing.T) {
	var log syncbuf.Buffer
	t.Setenv(failpointsEnv, "tools/call=up_x:panic")
	t.Setenv(enableFailpointsEnv, "1")
	if fps, err := failpoints(newLogger(&log)); err != nil || fps == nil {
		t.Fatalf("%v %v", fps, err)
	}
	if !strings.Contains(log.String(), "chaos failpoints armed") {
		t.Errorf("armed failpoints not announced: %q", log.String())
	}
}
