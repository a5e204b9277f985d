package harness

import "time"

// Tolerance is what a bounded answer may take beyond its budget: a race build
// on two loaded cores, loopback only. Every verdict uses it (the catalogue's
// and the Ginkgo specs' Tolerance are this one).
const Tolerance = 300 * time.Millisecond

// The harness's own timeouts, in one table: how long it waits for the
// targets it starts, stops and probes. The proxy's bounds are knobs
// (proxy/knobs.Table); these bound the harness, never a verdict.
const (
	binaryHealthCap       = 10 * time.Second      // one start, until /healthz answers 200
	binaryHealthPoll      = 20 * time.Millisecond // between /healthz probes
	binaryRebindWindow    = 2 * time.Second       // retrying the same address after a stop
	binaryRebindPause     = 50 * time.Millisecond // between those retries
	binaryStopSlack       = 5 * time.Second       // on top of ShutdownGrace before SIGKILL
	binaryReapCap         = 10 * time.Second      // waiting for a SIGKILLed process to be reaped
	containerHealthCap    = 20 * time.Second      // one start, until the health path answers 200
	containerHealthPoll   = 20 * time.Millisecond // between health probes
	containerRebindWindow = 2 * time.Second       // retrying the same address after a stop
	containerRebindPause  = 50 * time.Millisecond // between those retries
	containerStopSlack    = 5 * time.Second       // docker stop: on top of ShutdownGrace before SIGKILL
	containerKillCap      = 10 * time.Second      // waiting for a killed container to be exited
	containerRemoveCap    = 30 * time.Second      // removing the container at Stop
	foreignStopDefault    = 10 * time.Second      // graceful stop before SIGKILL, unless the spec says
	tsInstallCap          = 5 * time.Minute       // npm ci, once per machine
	tsStopCap             = 5 * time.Second       // close, then SIGKILL
	readyDial             = time.Second           // one TCP readiness probe of a foreign target
)
