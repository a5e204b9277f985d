package catalogue

import (
	"testing"
	"time"
)

// TestCompressedWindowsOutlastWhatTheySpan: every compressed window is
// longer than the slowest the action it spans was measured on each target,
// times LoadFactor; and the windows are the values the scenarios use.
func TestCompressedWindowsOutlastWhatTheySpan(t *testing.T) {
	if len(Windows) == 0 {
		t.Fatal("no compressed windows declared")
	}
	for _, w := range Windows {
		slowest, ok := Slowest[w.Spans]
		if !ok || len(slowest) == 0 {
			t.Errorf("%s=%v spans %q, which was never measured (catalogue.Slowest)", w.Knob, w.Value, w.Spans)
			continue
		}
		for target, took := range slowest {
			if need := took * LoadFactor; w.Value <= need {
				t.Errorf("%s=%v (%s) spans the %s, measured at %v on the %s target: the window must be longer than %v (%d× that), or %s",
					w.Knob, w.Value, w.Where, w.Spans, took, target, need, LoadFactor, w.Reason)
			}
		}
	}
}

// TestOutlastsReportsAWindowOutrunAsATestDefect: the scenario's own
// measurement turns a window its action outran into a test defect, and
// leaves a window that outlasted it alone.
func TestOutlastsReportsAWindowOutrunAsATestDefect(t *testing.T) {
	if err := Outlasts("MCPCTL_SESSION_RECORD_TTL_MS", 400*time.Millisecond, ActionRestart, 440*time.Millisecond); err == nil {
		t.Error("a 440ms restart inside a 400ms window was not reported")
	}
	if err := Outlasts("MCPCTL_SESSION_RECORD_TTL_MS", 2*time.Second, ActionRestart, 440*time.Millisecond); err != nil {
		t.Errorf("a 440ms restart inside a 2s window was reported: %v", err)
	}
}

// A window the action took exactly is not outlasted: the action could
// have run past it by a hair.
func TestAWindowTheActionFilledExactlyIsOutrun(t *testing.T) {
	if err := Outlasts("MCPCTL_SESSION_IDLE_MS", 400*time.Millisecond, ActionCall, 400*time.Millisecond); err == nil {
		t.Error("a 400ms call in a 400ms window was not reported")
	}
}
