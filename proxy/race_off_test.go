//go:build !race

package proxy

// raceMemoryFactor scales the memory bounds of memory_test.go (1 without
// the race detector; see race_on_test.go).
const raceMemoryFactor = 1
