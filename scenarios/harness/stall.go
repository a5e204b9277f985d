package harness

import "github.com/mcpchaos/mcpchaos/internal/stall"

// StallMeter measures how long this process was kept from running while a
// timed request was in flight (internal/stall says how). A verdict on a
// bounded answer subtracts it from the client's wall clock (Unstalled), so a
// timing spec judges the proxy's bound, not the machine's load.
type StallMeter = stall.Meter

// MeterStalls starts a StallMeter; Stop ends it and returns the stalls seen.
func MeterStalls() *StallMeter { return stall.Start() }

// Unstalled is took less the stalls in it, never below zero.
var Unstalled = stall.Unstalled
