package proxy

import (
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// The values the proxy derives from its knobs, as pure functions so that
// each is held at the knobs' defaults (where the caps bite) as well as at the
// compressed values the specs run with.

// sweepEvery is how often the janitor looks for idle sessions: a quarter of
// MCPCTL_SESSION_IDLE_MS, at least 10 ms and at most a minute (so a session
// idle for the knob is closed within a minute of it, whatever the knob).
func sweepEvery(idle time.Duration) time.Duration {
	return min(max(idle/4, 10*time.Millisecond), time.Minute)
}

// readHeaderTimeout bounds reading a request's headers (and evicting a
// connection that sent its first byte but no whole header): at most 10 s,
// and never longer than reading the whole request or answering it.
func readHeaderTimeout(k knobs.Values) time.Duration {
	return min(10*time.Second, k.ReadTimeout, k.RequestDeadline)
}

// readTimeout bounds reading one whole request: MCPCTL_READ_TIMEOUT_MS, and
// never longer than the request's deadline (reading is part of answering).
func readTimeout(k knobs.Values) time.Duration {
	return min(k.ReadTimeout, k.RequestDeadline)
}

// shutdownMargin is how long before MCPCTL_SHUTDOWN_GRACE_MS ends the
// requests still running are answered "shutting down": a quarter of the
// grace, at most 250 ms.
func shutdownMargin(grace time.Duration) time.Duration {
	return min(grace/4, 250*time.Millisecond)
}

// serverCheckBound bounds one "check server": connecting and initializing
// (MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS) and then the server's own health check.
func serverCheckBound(connect, check time.Duration) time.Duration {
	return connect + check
}
