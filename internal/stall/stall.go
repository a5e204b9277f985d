// Package stall measures how long this process was kept from running: the
// time a loaded machine gave to other processes. Timing checks (the scenarios'
// budget verdicts, the proxy's own timing unit tests) subtract it from a wall
// clock, so that they judge a bound and not the machine's load, and still fail
// on code that ignores its bound: that code is late by its own doing, which
// no stall accounts for.
//
// It lives outside proxy/ and scenarios/ because both use it and proxy/ may
// not import scenarios/.
package stall

import "time"

const (
	// Tick is the meter's sleep: short enough that a stall of a few
	// scheduler slices shows, long enough to cost nothing.
	Tick = 10 * time.Millisecond
	// Slack is how late a sleep may end and not count: timer overshoot on an
	// idle race build stays well under 1 ms, so anything beyond 2 ms is the
	// scheduler running something else.
	Slack = 2 * time.Millisecond
)

// Meter sums how much later than asked each of a goroutine's Tick sleeps
// ended, beyond Slack. On an idle machine the sum stays near zero; on a loaded
// shared one (load averages of 10 to 30 on 2 cores were measured here) it is
// the time in which neither the test nor a proxy sharing its cores could run.
type Meter struct {
	stop chan time.Time // when Stop was called
	done chan time.Duration
}

// Start starts a Meter; Stop ends it and returns the stalls seen.
func Start() *Meter {
	m := &Meter{stop: make(chan time.Time, 1), done: make(chan time.Duration, 1)}
	// The first sleep is asked for now, not when the goroutine first runs:
	// a stall before it is scheduled counts too.
	asked := time.Now()
	go func() {
		var stalled time.Duration
		// over adds how much later than asked a sleep begun at asked ended at end.
		over := func(asked, end time.Time) {
			if late := end.Sub(asked) - Tick; late > Slack {
				stalled += late - Slack
			}
		}
		t := time.NewTimer(Tick - time.Since(asked))
		defer t.Stop()
		for {
			select {
			case at := <-m.stop:
				// The last sleep counts up to Stop, not up to when this
				// goroutine noticed it.
				over(asked, at)
				m.done <- stalled
				return
			case <-t.C:
				now := time.Now()
				over(asked, now)
				asked = now
				t.Reset(Tick)
			}
		}
	}()
	return m
}

// Stop ends the meter and returns the time the process was stalled since
// Start. It may be called once.
func (m *Meter) Stop() time.Duration {
	m.stop <- time.Now()
	return <-m.done
}

// Unstalled is took less the stalls in it, never below zero: the time a
// bounded answer took that the machine's load does not explain.
func Unstalled(took, stalled time.Duration) time.Duration {
	if stalled > took {
		return 0
	}
	return took - stalled
}
