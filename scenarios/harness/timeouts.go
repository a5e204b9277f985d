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
	// The one lifecycle of out-of-process targets (lifecycle.go).
	readyCap       = 20 * time.Second      // one start, until the readiness probe answers
	readyPoll      = 20 * time.Millisecond // between readiness probes
	stateEvery     = 10                    // probes between two looks at whether the proxy still runs
	rebindWindow   = 2 * time.Second       // retrying the same address after a stop
	rebindPause    = 50 * time.Millisecond // between those retries
	reapCap        = 10 * time.Second      // waiting for a SIGKILLed process to be reaped
	freshPortTries = 5                     // Start: fresh ports tried on bind failure

	binaryStopSlack    = 5 * time.Second  // on top of ShutdownGrace before SIGKILL
	containerStopSlack = 5 * time.Second  // docker stop: on top of ShutdownGrace before SIGKILL
	containerKillCap   = 10 * time.Second // waiting for a killed container to be exited
	containerRemoveCap = 30 * time.Second // removing the container at Stop
	foreignStopDefault = 10 * time.Second // graceful stop before SIGKILL, unless the spec says
	tsInstallCap       = 5 * time.Minute  // npm ci, once per machine
	tsStopCap          = 5 * time.Second  // close, then SIGKILL
	readyDial          = time.Second      // one TCP readiness probe of a foreign target
)
