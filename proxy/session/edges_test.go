package session

import (
	"slices"
	"testing"
	"time"
)

// TestCapErrorWholeText: each cap's whole message.
func TestCapErrorWholeText(t *testing.T) {
	for _, c := range []struct {
		err  *CapError
		want string
	}{
		{&CapError{Knob: KnobPerUser, Limit: 2, User: "ann"}, `user "ann" already has 2 live sessions, the most one user may hold (MCPCTL_SESSIONS_PER_USER_MAX=2); close one (DELETE) or wait for idle ones to expire`},
		{&CapError{Knob: KnobTotal, Limit: 3}, `the proxy already holds 3 live sessions, the most it may hold (MCPCTL_SESSIONS_MAX=3); try again when others close or expire`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// TestReAddingAnIDMovesItsCountAndKeepsItsRequests: adding an id that is
// live replaces it: the old owner's count goes, the new owner's comes, the
// total does not grow, and requests in flight still count against idling.
func TestReAddingAnIDMovesItsCountAndKeepsItsRequests(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(Limits{MaxPerUser: 1, Idle: time.Minute})
	r.now = func() time.Time { return now }
	tb := r.Table("p")
	tb.Add(Info{ID: "s", User: "ann"})
	done := tb.Use("s")
	tb.Add(Info{ID: "s", User: "bob", Recreated: true, Reason: "restart"})
	if r.Len() != 1 || tb.Len() != 1 {
		t.Fatalf("Len = %d/%d, want 1", r.Len(), tb.Len())
	}
	if _, err := r.Admit("ann"); err != nil {
		t.Fatalf("ann's count was not moved off the replaced session: %v", err)
	}
	if _, err := r.Admit("bob"); err == nil {
		t.Fatal("bob's count does not include the session he took over")
	}
	now = now.Add(2 * time.Minute)
	if got := r.Idle(); len(got) != 0 {
		t.Fatalf("a replaced session with a request in flight is idle: %+v", got)
	}
	done()
	now = now.Add(2 * time.Minute)
	if got := r.Idle(); len(got) != 1 || got[0] != (Key{Project: "p", ID: "s", User: "bob"}) {
		t.Fatalf("Idle = %+v", got)
	}
}

// TestInfoWholeShape: Get returns what was added, the creation time kept
// when given and stamped otherwise; OpenGate opens only a live session's
// gate; Forget drops a session and its count, once; IDs lists the live ones.
func TestInfoWholeShape(t *testing.T) {
	now := time.Unix(5000, 0)
	r := NewRegistry(Limits{MaxTotal: 2})
	r.now = func() time.Time { return now }
	tb := r.Table("p")
	created := time.Unix(42, 0)
	tb.Add(Info{ID: "old", Project: "p", User: "ann", Created: created})
	tb.Add(Info{ID: "new", Project: "p", User: "ann"})
	tb.OpenGate("new")
	tb.OpenGate("missing")
	got, ok := tb.Get("old")
	if want := (Info{ID: "old", Project: "p", User: "ann", Created: created, lastUsed: now}); !ok || got != want {
		t.Errorf("Get(old) = %+v %v, want %+v", got, ok, want)
	}
	got, ok = tb.Get("new")
	if want := (Info{ID: "new", Project: "p", User: "ann", Created: now, GateOpen: true, lastUsed: now}); !ok || got != want {
		t.Errorf("Get(new) = %+v %v, want %+v", got, ok, want)
	}
	if _, ok := tb.Get("missing"); ok {
		t.Error("Get(missing) found a session")
	}
	ids := tb.IDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"new", "old"}) {
		t.Errorf("IDs = %v", ids)
	}
	tb.Forget("old")
	tb.Forget("old")
	tb.Forget("missing")
	if r.Len() != 1 || tb.Len() != 1 {
		t.Fatalf("after Forget: Len = %d/%d, want 1", r.Len(), tb.Len())
	}
	if _, err := r.Admit("cy"); err != nil {
		t.Fatalf("a forgotten session still counts: %v", err)
	}
	if tb.Project() != "p" || NewTable().Project() != "" {
		t.Error("Project")
	}
	if tb.Use("missing") == nil {
		t.Error("Use of a missing session gave no done func")
	}
}

// TestAReleasedReservationFreesItsUsersSlot: a per-user reservation counts
// until released, once, and its user can then reserve again.
func TestAReleasedReservationFreesItsUsersSlot(t *testing.T) {
	r := NewRegistry(Limits{MaxPerUser: 1})
	release, err := r.Admit("ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Admit("ann"); err == nil {
		t.Fatal("a pending reservation did not count against the per-user cap")
	}
	if _, err := r.Admit("bob"); err != nil {
		t.Fatalf("another user's reservation counted: %v", err)
	}
	release()
	release()
	again, err := r.Admit("ann")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if len(r.pendingUser) != 1 || r.pendingUser["bob"] != 1 || r.pending != 1 {
		t.Errorf("pending = %d %v, want only bob's", r.pending, r.pendingUser)
	}
}

// TestIdleWholeShape: without an idle limit nothing ever expires, however
// old; with one, the idle sessions of every project come sorted by id.
func TestIdleWholeShape(t *testing.T) {
	now := time.Unix(1000, 0)
	never := NewRegistry(Limits{})
	never.now = func() time.Time { return now }
	never.Table("p").Add(Info{ID: "s", User: "ann"})
	now = now.Add(24 * time.Hour)
	if got := never.Idle(); got != nil {
		t.Fatalf("without an idle limit: %+v", got)
	}
	r := NewRegistry(Limits{Idle: time.Minute})
	r.now = func() time.Time { return now }
	r.Table("q").Add(Info{ID: "b", User: "bob"})
	r.Table("p").Add(Info{ID: "c", User: "cy"})
	r.Table("p").Add(Info{ID: "a", User: "ann"})
	now = now.Add(time.Minute)
	if got := r.Idle(); len(got) != 0 {
		t.Fatalf("idle at exactly the limit: %+v", got)
	}
	now = now.Add(time.Nanosecond)
	want := []Key{{"p", "a", "ann"}, {"q", "b", "bob"}, {"p", "c", "cy"}}
	if got := r.Idle(); !slices.Equal(got, want) {
		t.Fatalf("Idle = %+v, want %+v", got, want)
	}
}

// TestUserCountsFollowForgetting: forgetting one of a user's sessions leaves
// the others counted against the per-user cap, and a user with none left is
// no longer held in the registry's per-user counts.
func TestUserCountsFollowForgetting(t *testing.T) {
	r := NewRegistry(Limits{MaxPerUser: 1})
	tb := r.Table("p")
	tb.Add(Info{ID: "s1", User: "ann"})
	tb.Add(Info{ID: "s2", User: "ann"})
	tb.Forget("s1")
	if _, err := r.Admit("ann"); err == nil {
		t.Fatal("ann's remaining session no longer counts")
	}
	tb.Forget("s2")
	if len(r.byUser) != 0 {
		t.Fatalf("per-user counts kept after the last session: %v", r.byUser)
	}
}
