//go:build unix

package stall

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stallChildEnv makes this test binary the subject of a stall measurement:
// it measures until told to on stdin and prints what it measured.
const stallChildEnv = "MCPCHAOS_STALL_CHILD"

// stopped is how long the subject is stopped (SIGSTOP: the scheduler running
// nothing of it, as a loaded machine does).
const stopped = 400 * time.Millisecond

// child is a subject process: ask sends it a line and returns its answer.
type child struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Reader
	cmd *exec.Cmd
}

// startChild runs the test named test in a subject process and waits for its
// first line, "metering".
func startChild(t *testing.T, test string) *child {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
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
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &child{t: t, in: in, out: bufio.NewReader(outPipe), cmd: cmd}
	if line, err := c.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "metering" {
		t.Fatalf("child: %q, %v", line, err)
	}
	return c
}

// ask sends line and reads the duration the child answers with.
func (c *child) ask(line string) time.Duration {
	if _, err := c.in.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
	answer, err := c.out.ReadString('\n')
	if err != nil {
		c.t.Fatalf("child's answer: %q, %v", answer, err)
	}
	var n int64
	if _, err := fmt.Sscan(answer, &n); err != nil {
		c.t.Fatalf("child's answer %q: %v", answer, err)
	}
	return time.Duration(n)
}

// stop stops the child for `stopped` and lets it run again.
func (c *child) stop() {
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		c.t.Fatal(err)
	}
	time.Sleep(stopped)
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		c.t.Fatal(err)
	}
}

// checkStop holds a measured stall to the stop: at least `stopped` (less one
// tick's slack the meter forgives), and no longer than it was measured after
// the stop began plus the few ticks before it.
func checkStop(t *testing.T, what string, stalled, measured time.Duration) {
	if stalled < stopped-Tick-Slack || stalled > measured+Tick {
		t.Errorf("%s counted %v of a %v stop (measured %v after it began)", what, stalled, stopped, measured)
	}
}

// TestStallMeterCountsTimeTheProcessWasNotRun stops a process that runs a
// Meter and checks the meter counts that time, and no more than the time it
// was metered.
func TestStallMeterCountsTimeTheProcessWasNotRun(t *testing.T) {
	if os.Getenv(stallChildEnv) == "1" {
		m := Start()
		fmt.Println("metering")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Println(int64(m.Stop()))
		return
	}
	c := startChild(t, "TestStallMeterCountsTimeTheProcessWasNotRun")
	start := time.Now()
	c.stop()
	checkStop(t, "the meter", c.ask("stop"), time.Since(start))
}

// TestStallClockTimesAnIntervalByTwoReadings: the stall of an interval is
// the difference of the Clock's readings at its ends, read as soon as the
// process runs again (the sleep it was stopped in counts before its
// goroutine wakes), and an interval with no stop in it gets about none.
func TestStallClockTimesAnIntervalByTwoReadings(t *testing.T) {
	if os.Getenv(stallChildEnv) == "1" {
		c := StartClock()
		defer c.Stop()
		fmt.Println("metering")
		in := bufio.NewReader(os.Stdin)
		for {
			if _, err := in.ReadString('\n'); err != nil {
				return
			}
			fmt.Println(int64(c.Stalled()))
		}
	}
	c := startChild(t, "TestStallClockTimesAnIntervalByTwoReadings")
	start := time.Now()
	before := c.ask("read")
	c.stop()
	after := c.ask("read")
	checkStop(t, "the clock", after-before, time.Since(start))
	// A clock that counted every sleep whole would count nearly all of an
	// interval; a sleeping process is woken promptly even on a busy machine,
	// so half of one is a stall only a SIGSTOP makes.
	calmStart := time.Now()
	calm := c.ask("read")
	time.Sleep(300 * time.Millisecond)
	d := c.ask("read") - calm
	if elapsed := time.Since(calmStart); d > elapsed/2 {
		t.Errorf("%v with no stop counted %v of stall", elapsed, d)
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
