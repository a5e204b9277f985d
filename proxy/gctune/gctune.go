// Package gctune sets how often mcplocal's garbage collector runs.
//
// Every JSON message the proxy reads goes through the go-sdk's decoder,
// which allocates a fresh 32 KiB buffer each time (about 160 KiB of garbage
// per forwarded tools/call, measured), while the proxy's live heap stays a
// few MiB. At Go's default GOGC=100 the collector then runs every few dozen
// requests and takes about a third of the proxy's CPU (docs/performance.md).
// A higher target trades heap headroom (up to 1 + DefaultPercent/100 times
// the live heap) for fewer collections.
package gctune

import "runtime/debug"

// DefaultPercent is the collector's target when the user did not set GOGC:
// a collection when the heap has grown by this percentage of the live heap
// since the last one. Measured on the bench (docs/performance.md, "Idle
// sessions"): CPU per forwarded call at 64 sessions 0.78-0.81 ms
// at 100, 0.54-0.73 at 200, 0.46-0.60 at 400; RSS per idle session: 41, 51
// and 74-79 KiB. 200 keeps most of the CPU saving over 100 and holds the
// 64 KiB idle-session target, which 400 misses by 10-15 KiB of GC headroom.
const DefaultPercent = 200

// Apply sets the collector to DefaultPercent unless getenv("GOGC") is set,
// in which case Go has already applied the user's value and Apply leaves it.
// It returns the percentage in force and where it came from ("GOGC" or
// "default"); -1 means off (GOGC=off).
func Apply(getenv func(string) string) (percent int, from string) {
	if v := getenv("GOGC"); v != "" {
		cur := debug.SetGCPercent(-1) // read it back: the runtime parsed GOGC
		debug.SetGCPercent(cur)
		return cur, "GOGC"
	}
	debug.SetGCPercent(DefaultPercent)
	return DefaultPercent, "default"
}
