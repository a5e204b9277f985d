package shared_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/shared"
)

// staleStore is a shared store whose reads lag: Shared answers what it
// held before the last PutShared.
type staleStore struct {
	version int64
	read    []audit.SharedEntry
}

func (s *staleStore) PutShared(_ context.Context, key, value string) (int64, error) {
	s.version++
	return s.version, nil
}

func (s *staleStore) Shared(context.Context) ([]audit.SharedEntry, error) { return s.read, nil }

func (s *staleStore) ClosedSince(_ context.Context, since time.Time) ([]audit.SessionRecord, time.Time, error) {
	return nil, since, nil
}

// applied records what a poll applied.
type applied struct{ values []string }

func (a *applied) Apply(_, value string, claim func() bool) {
	if claim() {
		a.values = append(a.values, value)
	}
}

func (a *applied) Closed(string, string) {}

// TestAPollNeverAppliesAValueOlderThanTheReplicasOwnChange: this replica
// pauses (version 2) while a poll's read still holds the resume another
// replica wrote before (version 1); the poll must not apply that resume
// over the pause, and it applies a newer value when one comes.
func TestAPollNeverAppliesAValueOlderThanTheReplicasOwnChange(t *testing.T) {
	st := &staleStore{version: 1, read: []audit.SharedEntry{{Key: "pause/p", Value: "running", Version: 1}}}
	a := &applied{}
	s := shared.New(st, a, time.Hour, time.Second, nil)
	if err := s.Put(context.Background(), "pause/p", "paused"); err != nil {
		t.Fatal(err)
	}
	if err := s.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.values) != 0 {
		t.Fatalf("a poll applied %v over this replica's newer change", a.values)
	}
	st.read = []audit.SharedEntry{{Key: "pause/p", Value: "running", Version: 3}}
	if err := s.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.values) != 1 || a.values[0] != "running" {
		t.Fatalf("a poll applied %v, want the newer running", a.values)
	}
}
