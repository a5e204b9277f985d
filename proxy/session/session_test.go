package session

import (
	"fmt"
	"testing"
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

func TestDeletedIdsAreRememberedAndBounded(t *testing.T) {
	tb := NewTable()
	tb.Add(Info{ID: "x"})
	tb.Delete("x")
	if _, ok := tb.Get("x"); ok || !tb.WasDeleted("x") || tb.Len() != 0 {
		t.Fatal("deleted session still live or not remembered")
	}
	tb.Forget("y")
	if tb.WasDeleted("y") {
		t.Fatal("Forget remembered an id as deleted")
	}
	for i := 0; i < DeletedMemory+10; i++ {
		tb.Delete(fmt.Sprintf("id-%d", i))
	}
	if len(tb.deleted) != DeletedMemory || len(tb.ring) != DeletedMemory {
		t.Fatalf("deleted memory holds %d ids (ring %d), want %d", len(tb.deleted), len(tb.ring), DeletedMemory)
	}
	if tb.WasDeleted("x") {
		t.Fatal("oldest deleted id was not evicted")
	}
}
