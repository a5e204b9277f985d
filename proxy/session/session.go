// Package session keeps the proxy's tables of live MCP sessions: one table
// per project (an SDK session belongs to one project), under one Registry
// that enforces the proxy-wide caps and finds idle sessions.
//
// The go-sdk handler owns the protocol state of a session; a table owns what
// the proxy knows about it: who owns it, whether it was recreated after the
// proxy lost it (so the first tools/call can say so, once), and when it was
// last used. Which ids their clients DELETEd is durable, so it lives in the
// audit store (audit.SessionRecord), not here.
package session

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// MaxIDBytes is the longest session id the proxy accepts: the MCP spec says a
// session id holds only visible ASCII; 128 bytes is far more than any SDK mints
// (go-sdk: 26) and keeps an attacker's ids from growing memory or the store.
const MaxIDBytes = 128

// ValidID reports whether id is a session id the proxy may look up or store:
// 1 to MaxIDBytes bytes, each visible ASCII (0x21 to 0x7E).
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7E {
			return false
		}
	}
	return true
}

// Info is what the proxy knows about one session.
type Info struct {
	ID      string
	Project string
	// User owns the session: the authenticated user who opened it, "" for an
	// anonymous one. Nobody else may use, close or adopt it.
	User    string
	Created time.Time
	// Recreated is set when the session was adopted under the client's id
	// after the proxy had lost it; Reason says why it was unknown.
	Recreated bool
	Reason    string
	// GateOpen is set once the session called begin_session (gated projects).
	GateOpen bool
	// Protocol is the protocol version the session's initialize negotiated
	// ("" when unknown): what its requests are served under when they carry
	// no Mcp-Protocol-Version header.
	Protocol string
	// noticePending is true until the first tools/call of a recreated session
	// has carried the ⚠ notice.
	noticePending bool
	lastUsed      time.Time
	busy          int // requests in flight (an open GET stream counts)
}

// Limits are the registry's bounds (knobs MCPCTL_SESSIONS_MAX,
// MCPCTL_SESSIONS_PER_USER_MAX, MCPCTL_SESSION_IDLE_MS). Zero means unbounded.
type Limits struct {
	MaxTotal   int64
	MaxPerUser int64
	Idle       time.Duration
}

// The knobs a CapError names.
const (
	KnobTotal   = "MCPCTL_SESSIONS_MAX"
	KnobPerUser = "MCPCTL_SESSIONS_PER_USER_MAX"
)

// CapError says which cap refused a new session.
type CapError struct {
	Knob  string
	Limit int64
	User  string
}

func (e *CapError) Error() string {
	if e.Knob == KnobPerUser {
		return fmt.Sprintf("user %q already has %d live sessions, the most one user may hold (%s=%d); close one (DELETE) or wait for idle ones to expire", e.User, e.Limit, e.Knob, e.Limit)
	}
	return fmt.Sprintf("the proxy already holds %d live sessions, the most it may hold (%s=%d); try again when others close or expire", e.Limit, e.Knob, e.Limit)
}

// Registry holds every project's table. It is safe for concurrent use.
type Registry struct {
	limits Limits
	now    func() time.Time

	mu          sync.Mutex
	tables      map[string]*Table
	total       int64
	byUser      map[string]int64
	pending     int64
	pendingUser map[string]int64
}

// NewRegistry returns an empty registry with the given limits.
func NewRegistry(l Limits) *Registry {
	return &Registry{limits: l, now: time.Now, tables: map[string]*Table{},
		byUser: map[string]int64{}, pendingUser: map[string]int64{}}
}

// Table returns the table of project, creating it on first use.
func (r *Registry) Table(project string) *Table {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tables[project]
	if !ok {
		t = &Table{r: r, project: project, live: map[string]*Info{}}
		r.tables[project] = t
	}
	return t
}

// Len is the number of live sessions in every project.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int(r.total)
}

// Admit reserves room for one more session of user, or says which cap is
// full. The caller opens the session and then calls release whatever
// happened: a session that was opened counts from its Add on.
func (r *Registry) Admit(user string) (release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.limits.MaxTotal; m > 0 && r.total+r.pending >= m {
		return nil, &CapError{Knob: KnobTotal, Limit: m}
	}
	if m := r.limits.MaxPerUser; m > 0 && r.byUser[user]+r.pendingUser[user] >= m {
		return nil, &CapError{Knob: KnobPerUser, Limit: m, User: user}
	}
	r.pending++
	r.pendingUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.pending--
			if r.pendingUser[user]--; r.pendingUser[user] <= 0 {
				delete(r.pendingUser, user)
			}
		})
	}, nil
}

// Key names one session.
type Key struct{ Project, ID, User string }

// Idle returns the sessions nobody used for longer than the idle limit and
// that have no request in flight; none when the limit is 0.
func (r *Registry) Idle() []Key {
	if r.limits.Idle <= 0 {
		return nil
	}
	cutoff := r.now().Add(-r.limits.Idle)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Key
	for _, t := range r.tables {
		for id, i := range t.live {
			if i.busy == 0 && i.lastUsed.Before(cutoff) {
				out = append(out, Key{Project: t.project, ID: id, User: i.User})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Table is one project's live sessions. It is safe for concurrent use.
type Table struct {
	r       *Registry
	project string
	live    map[string]*Info
}

// NewTable returns an empty table of its own, without limits (tests).
func NewTable() *Table { return NewRegistry(Limits{}).Table("") }

// Project is the project whose sessions the table holds.
func (t *Table) Project() string { return t.project }

// Add registers a live session. A recreated session owes one notice.
func (t *Table) Add(info Info) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	info.noticePending = info.Recreated
	now := t.r.now()
	if info.Created.IsZero() {
		info.Created = now
	}
	info.lastUsed = now
	if old, ok := t.live[info.ID]; ok {
		// Replaced in place: the done funcs of the requests in flight (Use)
		// hold this pointer, and must end their requests on the new Info.
		t.r.uncount(old.User)
		info.busy = old.busy
		*old = info
	} else {
		t.live[info.ID] = &info
	}
	t.r.total++
	t.r.byUser[info.User]++
}

func (r *Registry) uncount(user string) {
	r.total--
	if r.byUser[user]--; r.byUser[user] <= 0 {
		delete(r.byUser, user)
	}
}

// Get returns a copy of the session's info.
func (t *Table) Get(id string) (Info, bool) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	i, ok := t.live[id]
	if !ok {
		return Info{}, false
	}
	return *i, true
}

// Use marks the session in use until done is called: an idle session is one
// with nothing in flight whose last use ended longer ago than the limit.
func (t *Table) Use(id string) (done func()) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	i, ok := t.live[id]
	if !ok {
		return func() {}
	}
	i.busy++
	i.lastUsed = t.r.now()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.r.mu.Lock()
			defer t.r.mu.Unlock()
			i.busy--
			i.lastUsed = t.r.now()
		})
	}
}

// TakeNotice reports, exactly once per recreated session, that its next
// tools/call result must carry the recreation notice, and why.
func (t *Table) TakeNotice(id string) (reason string, ok bool) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	i, found := t.live[id]
	if !found || !i.noticePending {
		return "", false
	}
	i.noticePending = false
	return i.Reason, true
}

// OpenGate records that the session called begin_session.
func (t *Table) OpenGate(id string) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if i, ok := t.live[id]; ok {
		i.GateOpen = true
	}
}

// Forget drops a live session (its client closed it, or it expired). Which
// ids their clients closed is remembered by the audit store, not here.
func (t *Table) Forget(id string) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if old, ok := t.live[id]; ok {
		delete(t.live, id)
		t.r.uncount(old.User)
	}
}

// Len is the number of live sessions in this project.
func (t *Table) Len() int {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	return len(t.live)
}

// IDs returns the ids of live sessions in this project.
func (t *Table) IDs() []string {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	out := make([]string, 0, len(t.live))
	for id := range t.live {
		out = append(out, id)
	}
	return out
}

// NoticePending reports, without taking it, whether the session's next
// tools/call result owes the recreation notice (the raw relay leaves such a
// call to the SDK path, which gives it).
func (t *Table) NoticePending(id string) bool {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	i, found := t.live[id]
	return found && i.noticePending
}
