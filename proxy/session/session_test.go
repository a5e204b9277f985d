package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRecreatedSessionOwesOneNotice(t *testing.T) {
	tb := NewTable()
	tb.Add(Info{ID: "a", User: "alice", Recreated: true, Reason: "proxy restarted"})
	tb.Add(Info{ID: "b", User: "bob"})
	if r, ok := tb.TakeNotice("a"); !ok || r != "proxy restarted" {
		t.Fatalf("first TakeNotice(a) = %q, %v", r, ok)
	}
	if _, ok := tb.TakeNotice("a"); ok {
		t.Fatal("second TakeNotice(a) owed another notice")
	}
	if _, ok := tb.TakeNotice("b"); ok {
		t.Fatal("a fresh session owes a notice")
	}
	if i, _ := tb.Get("a"); i.User != "alice" || !i.Recreated {
		t.Fatalf("Get(a) = %+v", i)
	}
}

func TestTablesArePerProject(t *testing.T) {
	r := NewRegistry(Limits{})
	docs, wiki := r.Table("docs"), r.Table("wiki")
	docs.Add(Info{ID: "s", User: "alice"})
	if _, ok := wiki.Get("s"); ok {
		t.Fatal("a session of project docs is live in project wiki")
	}
	if r.Table("docs") != docs {
		t.Fatal("Table(docs) returned another table the second time")
	}
	wiki.Add(Info{ID: "s", User: "bob"})
	docs.Forget("s")
	if i, ok := wiki.Get("s"); !ok || i.User != "bob" || r.Len() != 1 {
		t.Fatalf("after forgetting docs/s: wiki/s = %+v %v, registry holds %d", i, ok, r.Len())
	}
}

func TestValidIDIsVisibleASCIIUpTo128Bytes(t *testing.T) {
	for _, id := range []string{"a", "ABCDEFGHJKMNPQRSTVWXYZ0123", "!~", strings.Repeat("x", MaxIDBytes)} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
	for _, id := range []string{"", "a b", "ünï😀", "tab\there", "nul\x00", "del\x7f", strings.Repeat("x", MaxIDBytes+1)} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true, want false", id)
		}
	}
}

func TestAdmitNamesTheCapThatIsFull(t *testing.T) {
	r := NewRegistry(Limits{MaxTotal: 3, MaxPerUser: 2})
	tb := r.Table("p")
	open := func(id, user string) error {
		release, err := r.Admit(user)
		if err != nil {
			return err
		}
		defer release()
		tb.Add(Info{ID: id, User: user})
		return nil
	}
	for _, s := range []struct{ id, user string }{{"a1", "alice"}, {"a2", "alice"}} {
		if err := open(s.id, s.user); err != nil {
			t.Fatalf("open %s: %v", s.id, err)
		}
	}
	var ce *CapError
	if err := open("a3", "alice"); !errors.As(err, &ce) || ce.Knob != KnobPerUser || !strings.Contains(err.Error(), "MCPCTL_SESSIONS_PER_USER_MAX=2") {
		t.Fatalf("alice's third session: %v, want the per-user cap named", err)
	}
	if err := open("b1", "bob"); err != nil {
		t.Fatalf("bob's first session: %v", err)
	}
	if err := open("c1", "carol"); !errors.As(err, &ce) || ce.Knob != KnobTotal || !strings.Contains(err.Error(), "MCPCTL_SESSIONS_MAX=3") {
		t.Fatalf("the fourth session: %v, want the total cap named", err)
	}
	// A reservation counts until released, so concurrent opens cannot overshoot.
	tb.Forget("b1")
	release, err := r.Admit("carol")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Admit("dave"); err == nil {
		t.Fatal("a pending reservation did not count against the total cap")
	}
	release()
	release() // twice is harmless
	if _, err := r.Admit("dave"); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestIdleSkipsSessionsInUse(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(Limits{Idle: time.Minute})
	r.now = func() time.Time { return now }
	tb := r.Table("p")
	tb.Add(Info{ID: "idle", User: "alice"})
	tb.Add(Info{ID: "streaming", User: "bob"})
	done := tb.Use("streaming")
	now = now.Add(2 * time.Minute)
	if got := r.Idle(); len(got) != 1 || got[0] != (Key{Project: "p", ID: "idle", User: "alice"}) {
		t.Fatalf("Idle() = %+v, want only p/idle", got)
	}
	done()
	if got := r.Idle(); len(got) != 1 {
		t.Fatalf("right after its request ended, streaming is idle already: %+v", got)
	}
	now = now.Add(2 * time.Minute)
	if got := r.Idle(); len(got) != 2 {
		t.Fatalf("Idle() = %+v, want both", got)
	}
	if NewRegistry(Limits{}).Idle() != nil {
		t.Fatal("without an idle limit nothing expires")
	}
}
