package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// standInMcplocal is an executable taking mcplocal's `serve --config FILE
// --listen ADDR` that runs this test binary's stand-in on ADDR.
func standInMcplocal(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcplocal")
	script := "#!/bin/sh\n# serve --config FILE --listen ADDR\nexport " + helperListenEnv + "=\"$5\"\nexec \"" + os.Args[0] + "\" -test.run='^TestHelperListen$' -test.v\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A binary started under an open-file limit runs under it; its logs keep
// their bound; a start after a kill cleans what the killed run left.
func TestABinaryRunsUnderItsLimitsAndCleansAfterAKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := &Binary{Path: standInMcplocal(t), FDLimit: 512, MaxLog: 100}
	if err := b.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("ready before start: %v", err)
	}
	if err := b.Restart(ctx); err == nil || !strings.Contains(err.Error(), ": restart before start") {
		t.Errorf("restart before start: %v", err)
	}
	if err := b.KillRestart(ctx); err == nil || !strings.Contains(err.Error(), ": kill-restart before start") {
		t.Errorf("kill-restart before start: %v", err)
	}
	spec := foreignWorld(t)
	if err := b.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(b.PID()) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	var open string
	for _, l := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(l, "Max open files") {
			open = strings.Join(strings.Fields(l)[3:5], " ")
		}
	}
	if open != "512 512" {
		t.Errorf("open-file limit %q, want 512 512", open)
	}
	if err := b.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	if logs := b.Logs(); !strings.HasPrefix(logs, "[... ") || len(logs) > 200 {
		t.Errorf("logs of %d bytes with MaxLog 100: %q", len(logs), logs)
	}
	dir := b.dir
	if err := b.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a kill removed the config dir: %v", err)
	}
	if err := b.Ready(ctx); err == nil {
		t.Error("a killed binary is ready")
	}
	if err := b.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) || b.dir == dir {
		t.Errorf("the killed run's dir %s is left (%v)", dir, err)
	}
}

// Without MaxLog a binary keeps 1 MiB of its output.
func TestABinaryKeepsAMebibyteOfLogsByDefault(t *testing.T) {
	b := &Binary{}
	line := strings.Repeat("x", 1023) + "\n"
	for range 1024 {
		_, _ = b.logs().Write([]byte(line))
	}
	if logs := b.Logs(); len(logs) != 1<<20 || strings.HasPrefix(logs, "[...") {
		t.Errorf("kept %d bytes of 1 MiB written", len(logs))
	}
	_, _ = b.logs().Write([]byte(line))
	logs := b.Logs()
	note, kept, _ := strings.Cut(logs, "\n")
	var dropped int
	if _, err := fmt.Sscanf(note, "[... %d earlier bytes dropped]", &dropped); err != nil || !strings.HasSuffix(kept, line) {
		t.Fatalf("past 1 MiB: %q... (%v)", logs[:40], err)
	}
	// What the note says was dropped and what is kept are all that was written.
	if total := 1025 * len(line); dropped+len(kept) != total || len(kept) > 1<<20 {
		t.Errorf("dropped %d and kept %d bytes of %d", dropped, len(kept), total)
	}
	tb := newTailBuffer(10)
	fmt.Fprint(tb, "0123456789abcdefghij")
	if got := tb.String(); got != "[... 10 earlier bytes dropped]\nabcdefghij" {
		t.Errorf("a tail without a line boundary: %q", got)
	}
}

// A command that does not build is an error quoting the build's output.
func TestBuildCommandQuotesAFailedBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := BuildCommand(ctx, t.TempDir(), "no-such-command")
	if err == nil || !strings.Contains(err.Error(), "cmd/no-such-command") || !strings.Contains(err.Error(), "go build -o") {
		t.Errorf("a command that does not exist: %v", err)
	}
}
