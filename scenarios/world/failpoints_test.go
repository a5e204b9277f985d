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
