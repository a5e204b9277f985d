package harness

import (
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/stall"
)

// StallMeter measures how long this process was kept from running while a
// timed request was in flight (internal/stall says how). A verdict on a
// bounded answer subtracts it from the client's wall clock (Unstalled), so a
// timing spec judges the proxy's bound, not the machine's load.
type StallMeter struct {
	m     *stall.Meter
	extra time.Duration // SimulateStalls' addition, fixed at the start
}

// MeterStalls starts a StallMeter; Stop ends it and returns the stalls seen.
func MeterStalls() *StallMeter {
	return &StallMeter{m: stall.Start(), extra: time.Duration(simulated.Load())}
}

// Stop ends the meter and returns the stalls seen since MeterStalls (plus
// what SimulateStalls adds). It may be called once, and must be: the meter
// runs a goroutine until then.
func (s *StallMeter) Stop() time.Duration { return s.m.Stop() + s.extra }

// simulated is SimulateStalls' d, in nanoseconds; 0 when off.
var simulated atomic.Int64

// SimulateStalls makes every meter started until restore is called report d
// more stalls than it saw. It is for tests of the verdicts themselves: an
// operation whose timed part goes through a meter then reports at least d
// stalled, one timed on the wall clock alone reports none. Never set it
// around a real run: every budget verdict would be excused.
func SimulateStalls(d time.Duration) (restore func()) {
	old := simulated.Swap(int64(d))
	return func() { simulated.Store(old) }
}

// Unstalled is took less the stalls in it, never below zero.
var Unstalled = stall.Unstalled
