package proxy

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Every value the proxy derives from its knobs, at the knobs' defaults
// (where a cap that compressed knobs never reach bites) and at compressed
// values and the edges of each cap.
func TestDerivedValuesAtDefaultAndCompressedKnobs(t *testing.T) {
	def := knobs.Defaults()
	compressed := def
	compressed.SessionIdle, compressed.ReadTimeout, compressed.RequestDeadline = 200*time.Millisecond, 2*time.Second, 3*time.Second
	compressed.ShutdownGrace, compressed.UpstreamConnect = 400*time.Millisecond, 300*time.Millisecond
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		// MCPCTL_SESSION_IDLE_MS at its 30 minutes: a sweep a minute, not every 7.5 minutes.
		{"sweep at the default idle", sweepEvery(def.SessionIdle), time.Minute},
		{"sweep at a compressed idle", sweepEvery(compressed.SessionIdle), 50 * time.Millisecond},
		{"sweep at the cap's edge", sweepEvery(4 * time.Minute), time.Minute},
		{"sweep just under the cap", sweepEvery(4*time.Minute - 4*time.Millisecond), time.Minute - time.Millisecond},
		{"sweep at a tiny idle", sweepEvery(time.Millisecond), 10 * time.Millisecond},
		// Headers within 10 s at the defaults (30 s read, 90 s deadline).
		{"read header at the defaults", readHeaderTimeout(def), 10 * time.Second},
		{"read header at compressed knobs", readHeaderTimeout(compressed), 2 * time.Second},
		{"read header under a short deadline", readHeaderTimeout(knobs.Values{ReadTimeout: 5 * time.Second, RequestDeadline: time.Second}), time.Second},
		{"read at the defaults", readTimeout(def), 30 * time.Second},
		{"read under a short deadline", readTimeout(knobs.Values{ReadTimeout: 5 * time.Second, RequestDeadline: time.Second}), time.Second},
		// MCPCTL_SHUTDOWN_GRACE_MS at its 5 s: answered 250 ms before the end, not 1.25 s.
		{"shutdown margin at the default grace", shutdownMargin(def.ShutdownGrace), 250 * time.Millisecond},
		{"shutdown margin at a compressed grace", shutdownMargin(compressed.ShutdownGrace), 100 * time.Millisecond},
		{"shutdown margin at the cap's edge", shutdownMargin(time.Second), 250 * time.Millisecond},
		{"server check at the default connect", serverCheckBound(def.UpstreamConnect, 2*time.Second), 12 * time.Second},
		{"server check at a compressed connect", serverCheckBound(compressed.UpstreamConnect, 100*time.Millisecond), 400 * time.Millisecond},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// The defaults these rows assume; a changed default is a changed row.
	if def.SessionIdle != 30*time.Minute || def.ReadTimeout != 30*time.Second || def.RequestDeadline != 90*time.Second ||
		def.ShutdownGrace != 5*time.Second || def.UpstreamConnect != 10*time.Second {
		t.Errorf("the defaults moved: %+v", def)
	}
}
