package audit_test

import (
	"reflect"
	"strings"
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

// TestEveryStringOfARowIsCut: Bounded cuts each string field of a row on its
// own (trace code, span and parent ids, session, user, project, server, tool,
// stage, status, degraded reason, detail), read from the row's own fields so
// a field added later is held too. Kind is the proxy's own closed set of
// names, never what a request or an upstream sent.
func TestEveryStringOfARowIsCut(t *testing.T) {
	const max = 64
	long := strings.Repeat("x", 10*max)
	rt := reflect.TypeOf(audit.Row{})
	seen := 0
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if f.Type.Kind() != reflect.String || f.Type == reflect.TypeOf(audit.Kind("")) {
			continue
		}
		seen++
		var r audit.Row
		v := reflect.ValueOf(&r).Elem()
		for j := 0; j < rt.NumField(); j++ {
			if g := v.Field(j); g.Kind() == reflect.String && j != i {
				g.SetString("kept")
			}
		}
		v.Field(i).SetString(long)
		b := reflect.ValueOf(r.Bounded(max))
		if got := b.Field(i).String(); len(got) > max || !strings.Contains(got, "cut") {
			t.Errorf("Row.%s of %d bytes kept as %d bytes %q, want at most %d ending in the cut marker", f.Name, len(long), len(got), got, max)
		}
		for j := 0; j < rt.NumField(); j++ {
			if g := b.Field(j); g.Kind() == reflect.String && j != i && g.String() != "kept" {
				t.Errorf("cutting Row.%s changed Row.%s to %q", f.Name, rt.Field(j).Name, g.String())
			}
		}
	}
	if seen < 12 {
		t.Fatalf("found %d string fields in a row, want every one of them (12 or more)", seen)
	}
}
