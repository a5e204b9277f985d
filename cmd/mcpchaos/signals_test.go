package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
)

// The first signal cancels the command's context and quits nothing; the
// second quits at once with exitInterrupted, whatever the first is still
// waiting for. Tolerance: the negative check waits 200 ms for an exit that
// must not come.
func TestASecondSignalQuitsNow(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exits := make(chan int, 2)
	var stderr syncbuf.Buffer
	ctx, cancel := watchSignals(context.Background(), sigs, &stderr, func(code int) { exits <- code })
	defer cancel()

	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel the command's context")
	}
	select {
	case code := <-exits:
		t.Fatalf("the first signal quit at once (status %d): the partial report is never printed", code)
	case <-time.After(200 * time.Millisecond):
	}
	if !strings.Contains(stderr.String(), "again quits now") {
		t.Errorf("the first signal does not say a second one quits: %q", stderr.String())
	}

	sigs <- syscall.SIGTERM
	select {
	case code := <-exits:
		if code != exitInterrupted {
			t.Errorf("the second signal quit with status %d, want %d", code, exitInterrupted)
		}
		if !strings.Contains(stderr.String(), "terminated again: quitting now") {
			t.Errorf("the second signal does not say it quits now: %q", stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal was ignored: a run stuck in a step can only be killed")
	}
}

// A run interrupted between rows prints the table of the rows that ran, says
// how many ran and which one was cut, and exits with exitInterrupted.
func TestAnInterruptedRunReportsWhatRan(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	// The second row's progress line starts: the interruption lands while
	// it runs, as a user's Ctrl-C would.
	stderr := &cancelOn{mark: "[ 2/", cancel: cancel}
	focus := "^(none|latency) × small tools/call$"
	err := runCatalogue(ctx, []string{"--focus", focus, "--seed", "5"}, &stdout, stderr)
	if err != exitError(exitInterrupted) {
		t.Fatalf("an interrupted run returned %v, want exit %d\n%s\n%s", err, exitInterrupted, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "] ") || !strings.HasSuffix(stderr.String(), "interrupted\n") {
		t.Errorf("the progress does not mark the row cut as interrupted:\n%s", stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "interrupted: 1 of 2 scenarios ran; ") || !strings.Contains(out, "was cut and is not judged") {
		t.Errorf("the partial report does not say what ran and what was cut:\n%s", out)
	}
	if !strings.Contains(out, "1 passed, 0 failed, 0 not applicable") {
		t.Errorf("the partial report does not count the row that ran (and only it):\n%s", out)
	}
}

// cancelOn is a progress writer that cancels the run when mark is written.
type cancelOn struct {
	syncbuf.Buffer
	mark   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Buffer.Write(p)
	if strings.Contains(string(p), c.mark) {
		c.cancel()
	}
	return n, err
}
