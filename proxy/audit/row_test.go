package audit_test

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// A row ends at Start + Duration; a row that is no JSON object is refused.
func TestRowEndAndBadJSON(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r := audit.Row{Start: start, Duration: 1500 * time.Millisecond}
	if got := r.End(); !got.Equal(start.Add(1500 * time.Millisecond)) {
		t.Errorf("End() = %v", got)
	}
	var back audit.Row
	if err := back.UnmarshalJSON([]byte(`["not a row"]`)); err == nil {
		t.Error("an array decoded as a row")
	}
	if err := back.UnmarshalJSON([]byte(`{"kind":"mcp_request","durationNs":5,"durationMs":99}`)); err != nil || back.Kind != audit.KindMCPRequest || back.Duration != 5 {
		t.Errorf("decoded %+v, %v; want durationNs, not durationMs", back, err)
	}
}
