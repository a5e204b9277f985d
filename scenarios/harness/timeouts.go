package harness

import "time"

// Tolerance is what a bounded answer may take beyond its budget: a race build
// on two loaded cores, loopback only. Every verdict uses it (the catalogue's
// and the Ginkgo specs' Tolerance are this one).
const Tolerance = 300 * time.Millisecond

// KnobWindow is how late after its narrow bound a knob-matrix call may end
// and still count as ended by it (scenarios/knob_matrix_test.go). It is wider
// than Tolerance because the matrix only has to tell the narrow knob from the
// wide ones: the narrowest wide bound (2.5 s) is above every narrow bound
// (1.5 s at most) plus this window, so a call ended by any other knob still
// falls outside it. Durations the proxy or a spec's store measured have no
// stall meter to take the load out, so the window also absorbs the load
// there (flake-check runs with Tolerance alone failed on load, not on the
// proxy, at load averages of 30 on 2 cores).
const KnobWindow = time.Second

// The stall meter (stall.go, internal/stall, with its Tick and Slack): how
// the harness tells the machine's load from the proxy's lateness. A timing
// verdict subtracts the stalls from the client's wall clock; Tolerance then
// covers only the work after a bound fires (closing a connection, writing the
// answer), not the load.

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
	warmProbe          = 2 * time.Second  // one readiness probe between two scenarios of a warm run
	warmQuiet          = 5 * time.Second  // the fakes finishing the last scenario's calls before the next
)
