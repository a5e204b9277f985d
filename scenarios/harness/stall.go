package harness

import "time"

// StallMeter measures how long this process was kept from running while a
// timed request was in flight: one goroutine sleeps stallTick again and again
// and sums how much later than asked each sleep ended, beyond stallSlack. On
// an idle machine the sum stays near zero; on a loaded shared machine (the
// flake check measured load averages of 10 to 30 on 2 cores) it is the time
// the scheduler gave to other jobs, time in which neither the client nor a
// proxy sharing its cores could run. A verdict on a bounded answer subtracts
// it from the client's wall clock (Unstalled), so a timing spec judges the
// proxy's bound, not the machine's load, and still fails on a proxy that
// ignores its bound: that proxy is late by its own doing, which no stall
// accounts for.
type StallMeter struct {
	stop chan time.Time // when Stop was called
	done chan time.Duration
}

// MeterStalls starts a StallMeter; Stop ends it and returns the stalls seen.
func MeterStalls() *StallMeter {
	m := &StallMeter{stop: make(chan time.Time, 1), done: make(chan time.Duration, 1)}
	// The first sleep is asked for now, not when the goroutine first runs:
	// a stall before it is scheduled counts too.
	asked := time.Now()
	go func() {
		var stalled time.Duration
		// over adds how much later than asked a sleep begun at asked ended at end.
		over := func(asked, end time.Time) {
			if late := end.Sub(asked) - stallTick; late > stallSlack {
				stalled += late - stallSlack
			}
		}
		t := time.NewTimer(stallTick - time.Since(asked))
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
				t.Reset(stallTick)
			}
		}
	}()
	return m
}

// Stop ends the meter and returns the time the process was stalled since
// MeterStalls. It may be called once.
func (m *StallMeter) Stop() time.Duration {
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
