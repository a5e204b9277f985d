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

import (
	"sync"
	"time"
)

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
// It times one interval, from Start to Stop; a Clock times many.
type Meter struct{ c *Clock }

// Start starts a Meter; Stop ends it and returns the stalls seen.
func Start() *Meter { return &Meter{c: StartClock()} }

// Stop ends the meter and returns the time the process was stalled since
// Start. It may be called once.
func (m *Meter) Stop() time.Duration {
	d := m.c.Stalled()
	m.c.Stop()
	return d
}

// Clock keeps a running sum of the process's stalls, measured as a Meter
// does, for timing many overlapping intervals with one goroutine: an
// interval's stall is the difference of the readings at its ends.
type Clock struct {
	mu      sync.Mutex
	asked   time.Time     // when the sleep in progress was asked for
	stalled time.Duration // the stalls of the sleeps that have ended
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// over is how much of a Tick sleep asked at asked and still running (or
// ended) at end counts as a stall.
func over(asked, end time.Time) time.Duration {
	if late := end.Sub(asked) - Tick; late > Slack {
		return late - Slack
	}
	return 0
}

// StartClock starts a Clock; Stop ends its goroutine.
func StartClock() *Clock {
	// The first sleep is asked for now, not when the goroutine first runs:
	// a stall before it is scheduled counts too.
	c := &Clock{asked: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTimer(Tick)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				now := time.Now()
				c.mu.Lock()
				c.stalled += over(c.asked, now)
				c.asked = now
				c.mu.Unlock()
				t.Reset(Tick)
			}
		}
	}()
	return c
}

// Stalled is the time the process was stalled since StartClock, the sleep in
// progress counted up to now: a stall the goroutine has not yet woken from
// counts too.
func (c *Clock) Stalled() time.Duration {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled + over(c.asked, now)
}

// Stop ends the clock's goroutine; it returns once the goroutine is gone.
// Further calls do nothing.
func (c *Clock) Stop() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

// Unstalled is took less the stalls in it, never below zero: the time a
// bounded answer took that the machine's load does not explain.
func Unstalled(took, stalled time.Duration) time.Duration {
	if stalled > took {
		return 0
	}
	return took - stalled
}
