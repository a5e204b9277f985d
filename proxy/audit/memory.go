package audit

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// Memory is an in-memory Store for tests and throwaway runs. It behaves like
// the SQL stores (IDs from 1, Start kept in UTC at microsecond precision,
// same ordering) but keeps nothing across processes. The zero value is not
// usable; call NewMemory.
type Memory struct {
	mu       sync.Mutex
	rows     []Row
	nextID   int64
	closed   bool
	sessions memorySessions
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{nextID: 1} }

// Write stores r and assigns its ID.
func (m *Memory) Write(ctx context.Context, r Row) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	r = normalize(r)
	r.ID = m.nextID
	m.nextID++
	m.rows = append(m.rows, r)
	return nil
}

// Query returns copies of the matching rows ordered by Start, then ID.
func (m *Memory) Query(ctx context.Context, f Filter) ([]Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	var out []Row
	for _, r := range m.rows {
		if f.Trace != "" && r.CorrelationID != f.Trace {
			continue
		}
		if f.Session != "" && r.SessionID != f.Session {
			continue
		}
		out = append(out, r)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Row) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Len reports how many rows the store holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows)
}

// Close makes later calls fail with ErrClosed. Calling it twice is fine.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
