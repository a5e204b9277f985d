//go:build !linux

package harness

// squatter cannot tell who listens on a port without /proc: known is false
// and readiness rests on the probe and the process being alive.
func squatter(addr string, pid int) (who string, known bool) { return "", false }
