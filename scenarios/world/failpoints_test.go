package world

import (
	"slices"
	"testing"
)

// A proxy in this process follows the failpoints of its spec: those armed
// before it started and those a fault arms while it runs.
func TestFailpointsArmedLaterReachAWatcher(t *testing.T) {
	fps := NewFailpoints()
	fps.HangToolCall("docmost_search")
	var seen []string
	fps.Watch(func(tool, action string) { seen = append(seen, tool+":"+action) })
	fps.PanicToolCall("docmost_update_page")
	slices.Sort(seen)
	if want := []string{"docmost_search:hang", "docmost_update_page:panic"}; !slices.Equal(seen, want) {
		t.Errorf("the watcher saw %v, want %v", seen, want)
	}
	var none *Failpoints
	none.Watch(func(string, string) { t.Error("no failpoints armed one") })
}

// String is what mcplocal reads from MCPLOCAL_FAILPOINTS: each armed tool
// call as tools/call=TOOL:ACTION, sorted, the last arming of a tool
// winning; no failpoints, or a nil set, are "".
func TestFailpointsStringIsSortedAndComplete(t *testing.T) {
	fps := NewFailpoints()
	if fps.String() != "" {
		t.Errorf("an empty set is %q, want \"\"", fps.String())
	}
	fps.PanicToolCall("zeta")
	fps.HangToolCall("alpha")
	fps.HangToolCall("zeta")
	if got, want := fps.String(), "tools/call=alpha:hang,tools/call=zeta:hang"; got != want {
		t.Errorf("failpoints %q, want %q", got, want)
	}
	var none *Failpoints
	if none.String() != "" {
		t.Errorf("a nil set is %q, want \"\"", none.String())
	}
}
