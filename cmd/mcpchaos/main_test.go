package main

import (
	"os"
	"testing"
)

// TestMain lets this test binary play mcpchaos where a command starts
// mcpchaos itself: bench starts its floor as `mcpchaos fake floor` from
// its own executable, which under test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "fake" && os.Args[2] == "floor" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
