package project

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Initialize waits for unseen servers the connect knob, and at most half of
// what is left of the request: at the default knobs (10 s connect, 90 s
// deadline) the connect knob bounds it; under a short deadline half of it.
func TestAdvertiseWaitAtDefaultAndCompressedKnobs(t *testing.T) {
	def := knobs.Defaults()
	if def.UpstreamConnect != 10*time.Second || def.RequestDeadline != 90*time.Second {
		t.Fatalf("the defaults moved: connect %v, deadline %v", def.UpstreamConnect, def.RequestDeadline)
	}
	for _, tc := range []struct {
		name                string
		connect, left, want time.Duration
		hasDeadline         bool
	}{
		{"the defaults", def.UpstreamConnect, def.RequestDeadline, 10 * time.Second, true},
		{"a deadline shorter than twice the connect", def.UpstreamConnect, 4 * time.Second, 2 * time.Second, true},
		{"at the edge", def.UpstreamConnect, 20 * time.Second, 10 * time.Second, true},
		{"compressed knobs", 300 * time.Millisecond, 3 * time.Second, 300 * time.Millisecond, true},
		{"no deadline", def.UpstreamConnect, 0, 10 * time.Second, false},
	} {
		if got := advertiseWait(tc.connect, tc.left, tc.hasDeadline); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
