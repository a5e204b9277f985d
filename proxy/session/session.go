// Package session keeps the proxy's table of live MCP sessions and the ids
// clients have deleted.
//
// The go-sdk handler owns the protocol state of a session; this table owns
// what the proxy knows about it: who the user is, which project it belongs
// to, and whether it was recreated after the proxy lost it (so the first
// tools/call can say so, once).
package session

import (
	"sync"
	"time"
)

// DeletedMemory is how many DELETEd ids the table remembers, so that a client
// which deleted a session gets a 404 rather than a silent adoption. 100k ids
// of ~26 bytes is a few MB at most, and older ids are from clients long gone.
const DeletedMemory = 100_000

// Info is what the proxy knows about one session.
type Info struct {
	ID      string
	Project string
	User    string
	Created time.Time
	// Recreated is set when the session was adopted under the client's id
	// after the proxy had lost it; Reason says why it was unknown.
	Recreated bool
	Reason    string
	// GateOpen is set once the session called begin_session (gated projects).
	GateOpen bool
	// noticePending is true until the first tools/call of a recreated session
	// has carried the ⚠ notice.
	noticePending bool
}

// Table is safe for concurrent use.
type Table struct {
	mu      sync.Mutex
	live    map[string]*Info
	deleted map[string]struct{}
	ring    []string // insertion order of deleted, for eviction
	next    int
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{live: map[string]*Info{}, deleted: map[string]struct{}{}}
}

// Add registers a live session. A recreated session owes one notice.
func (t *Table) Add(info Info) {
	t.mu.Lock()
	defer t.mu.Unlock()
	info.noticePending = info.Recreated
	if info.Created.IsZero() {
		info.Created = time.Now()
	}
	t.live[info.ID] = &info
}

// Get returns a copy of the session's info.
func (t *Table) Get(id string) (Info, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.live[id]
	if !ok {
		return Info{}, false
	}
	return *i, true
}

// TakeNotice reports, exactly once per recreated session, that its next
// tools/call result must carry the recreation notice, and why.
func (t *Table) TakeNotice(id string) (reason string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, found := t.live[id]
	if !found || !i.noticePending {
		return "", false
	}
	i.noticePending = false
	return i.Reason, true
}

// OpenGate records that the session called begin_session.
func (t *Table) OpenGate(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.live[id]; ok {
		i.GateOpen = true
	}
}

// Delete forgets a live session and remembers its id as deleted by the
// client, so it is never adopted again.
func (t *Table) Delete(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, id)
	if _, ok := t.deleted[id]; ok {
		return
	}
	if len(t.ring) < DeletedMemory {
		t.ring = append(t.ring, id)
	} else {
		delete(t.deleted, t.ring[t.next])
		t.ring[t.next] = id
		t.next = (t.next + 1) % DeletedMemory
	}
	t.deleted[id] = struct{}{}
}

// Forget drops a live session without remembering it as deleted (the proxy,
// not the client, closed it).
func (t *Table) Forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, id)
}

// WasDeleted reports whether the client deleted id.
func (t *Table) WasDeleted(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.deleted[id]
	return ok
}

// Len is the number of live sessions.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}

// IDs returns the ids of live sessions.
func (t *Table) IDs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.live))
	for id := range t.live {
		out = append(out, id)
	}
	return out
}
