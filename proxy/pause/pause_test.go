package pause

import (
	"testing"
	"time"
)

// TestPausedListsThePausedProjectsByName: Paused lists every paused project,
// sorted by name, and none once resumed; a nil queue has none.
func TestPausedListsThePausedProjectsByName(t *testing.T) {
	q := New(time.Minute, 10)
	defer q.Close()
	for _, p := range []string{"charlie", "alpha", "bravo"} {
		if !q.Pause(p) {
			t.Fatalf("Pause(%s) = false", p)
		}
	}
	q.Resume("bravo")
	var names []string
	for _, s := range q.Paused() {
		if !s.Paused || s.Since.IsZero() || s.Waiting != 0 {
			t.Errorf("status %+v", s)
		}
		names = append(names, s.Project)
	}
	if len(names) != 2 || names[0] != "alpha" || names[1] != "charlie" {
		t.Fatalf("Paused() = %v, want [alpha charlie]", names)
	}
	var none *Queue
	if none.Paused() != nil {
		t.Fatal("a nil queue lists paused projects")
	}
}
