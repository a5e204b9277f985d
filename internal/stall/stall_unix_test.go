//go:build unix

package stall

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stallChildEnv makes this test binary the meter's subject: it meters until
// told to stop on stdin and prints what it measured.
const stallChildEnv = "MCPCHAOS_STALL_CHILD"

// TestStallMeterCountsTimeTheProcessWasNotRun stops a process that runs a
// Meter (SIGSTOP: the scheduler running nothing of it, as a loaded
// machine does) for 400 ms, and checks the meter counts that time, and no
// more than the time it was metered.
func TestStallMeterCountsTimeTheProcessWasNotRun(t *testing.T) {
	if os.Getenv(stallChildEnv) == "1" {
		m := Start()
		fmt.Println("metering")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Println(int64(m.Stop()))
		return
	}
	const stopped = 400 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^TestStallMeterCountsTimeTheProcessWasNotRun$")
	cmd.Env = append(os.Environ(), stallChildEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "metering" {
		t.Fatalf("child: %q, %v", line, err)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(stopped)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("stop\n")); err != nil {
		t.Fatal(err)
	}
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("child's answer: %q, %v", line, err)
	}
	metered := time.Since(start)
	var n int64
	if _, err := fmt.Sscan(line, &n); err != nil {
		t.Fatalf("child's answer %q: %v", line, err)
	}
	stalled := time.Duration(n)
	// The child was stopped for at least `stopped` (less one tick's slack the
	// meter forgives); it cannot have been stalled longer than it was metered
	// after the stop began plus the few ticks before it.
	if stalled < stopped-Tick-Slack || stalled > metered+Tick {
		t.Errorf("the meter counted %v (%q) of a %v stop (metered %v after it began)", stalled, line, stopped, metered)
	}
}

func TestUnstalledNeverNegative(t *testing.T) {
	for _, c := range []struct{ took, stalled, want time.Duration }{
		{time.Second, 300 * time.Millisecond, 700 * time.Millisecond},
		{time.Second, 0, time.Second},
		{100 * time.Millisecond, 200 * time.Millisecond, 0},
	} {
		if got := Unstalled(c.took, c.stalled); got != c.want {
			t.Errorf("Unstalled(%v, %v) = %v, want %v", c.took, c.stalled, got, c.want)
		}
	}
}
