package catalogue

import (
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// clock times an operation's timed part through the stall meter, as
// timedCall does: the Observation gets the part's wall time as Latency and
// what the machine's load took of it as Stalled, and the verdict judges the
// difference (a loaded machine is not a late proxy; code that ignores its
// bound is late by its own doing, which no stall accounts for).
type clock struct {
	start   time.Time
	m       *harness.StallMeter
	stopped bool
	latency time.Duration
	stalled time.Duration
}

// startClock starts a timed part. halt (or stop, or into) must end it on
// every path, once or more: the meter runs a goroutine until then, so an
// operation with early returns defers halt.
func startClock() *clock { return &clock{m: harness.MeterStalls(), start: time.Now()} }

// halt ends the timed part; later calls keep the first reading.
func (c *clock) halt() {
	if !c.stopped {
		c.latency, c.stalled, c.stopped = time.Since(c.start), c.m.Stop(), true
	}
}

// stop ends the timed part and returns o with its Latency and Stalled.
func (c *clock) stop(o Observation) Observation {
	c.halt()
	o.Latency, o.Stalled = c.latency, c.stalled
	return o
}

// into ends the timed part and sets o's Latency and Stalled.
func (c *clock) into(o *Observation) { *o = c.stop(*o) }
