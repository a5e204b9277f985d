//go:build race

package proxy

// raceMemoryFactor scales the memory bounds of memory_test.go: the race
// detector's shadow memory makes every allocation cost 5 to 10 times its
// size (measured here: the chunked 150 MB answer's growth went from 20 MiB
// to 100 MiB under -race).
const raceMemoryFactor = 8
