package audit

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// SessionTable is the name of the table the SQL stores keep session records in.
const SessionTable = "session_records"

// SessionRecord is what the store remembers about one client session of one
// project: the user who opened it (so that nobody else can adopt its id after
// a restart) and, once its client DELETEd it, when (a tombstone: the id is
// never adopted again). Records are keyed by (Project, ID).
type SessionRecord struct {
	Project string
	ID      string
	// Owner is the user who opened the session; "" for an anonymous one.
	Owner   string
	Created time.Time
	// Closed is when the session's own client DELETEd it; zero while open.
	Closed time.Time
	// Client is what the session's client said of itself when it opened the
	// session: its initialize's capabilities and clientInfo, as a JSON
	// object {"capabilities":...,"clientInfo":...} ("" when not known). A
	// recreated session replays them, so its upstream sessions offer what
	// the client offers (sampling, elicitation, roots). The first claim's
	// value is kept, like its owner.
	Client string
}

// Tombstone reports whether the session's client closed it.
func (r SessionRecord) Tombstone() bool { return !r.Closed.IsZero() }

// normalizeRecord returns rec as stores keep it (UTC, microseconds).
func normalizeRecord(rec SessionRecord) SessionRecord {
	rec.Created = rec.Created.Truncate(time.Microsecond).UTC()
	if !rec.Closed.IsZero() {
		rec.Closed = rec.Closed.Truncate(time.Microsecond).UTC()
	}
	return rec
}

func sortRecords(recs []SessionRecord) {
	slices.SortFunc(recs, func(a, b SessionRecord) int { return cmp.Compare(a.Project, b.Project) })
}

type recordKey struct{ project, id string }

// memorySessions is Memory's share of the session records.
type memorySessions struct {
	records map[recordKey]SessionRecord
}

// ClaimSession stores rec unless (rec.Project, rec.ID) has a record already,
// and returns the record the store holds afterwards: the first claim wins.
func (m *Memory) ClaimSession(ctx context.Context, rec SessionRecord) (SessionRecord, error) {
	if err := ctx.Err(); err != nil {
		return SessionRecord{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return SessionRecord{}, ErrClosed
	}
	if m.sessions.records == nil {
		m.sessions.records = map[recordKey]SessionRecord{}
	}
	k := recordKey{rec.Project, rec.ID}
	if old, ok := m.sessions.records[k]; ok {
		return old, nil
	}
	rec = normalizeRecord(rec)
	m.sessions.records[k] = rec
	return rec, nil
}

// CloseSession records that (rec.Project, rec.ID) was closed by its client at
// rec.Closed, creating the record (with rec.Owner) if it had none.
func (m *Memory) CloseSession(ctx context.Context, rec SessionRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.sessions.records == nil {
		m.sessions.records = map[recordKey]SessionRecord{}
	}
	rec = normalizeRecord(rec)
	k := recordKey{rec.Project, rec.ID}
	if old, ok := m.sessions.records[k]; ok {
		old.Closed = rec.Closed
		rec = old
	}
	m.sessions.records[k] = rec
	return nil
}

// LookupSession returns the records of id in every project, by project name.
func (m *Memory) LookupSession(ctx context.Context, id string) ([]SessionRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	var out []SessionRecord
	for k, r := range m.sessions.records {
		if k.id == id {
			out = append(out, r)
		}
	}
	sortRecords(out)
	return out, nil
}

// PruneSessions forgets the records whose last event (Closed, or Created
// while open) is before cutoff, and reports how many it forgot.
func (m *Memory) PruneSessions(ctx context.Context, cutoff time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, ErrClosed
	}
	var n int64
	for k, r := range m.sessions.records {
		if r.lastEvent().Before(cutoff) {
			delete(m.sessions.records, k)
			n++
		}
	}
	return n, nil
}

func (r SessionRecord) lastEvent() time.Time {
	if r.Tombstone() {
		return r.Closed
	}
	return r.Created
}
