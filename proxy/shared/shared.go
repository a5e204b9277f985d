// Package shared keeps replicas of one mcplocal in step through the
// PostgreSQL store they share: the pause state of each project, the servers
// an operator manages through mcpctl, and the sessions their clients closed
// (tombstones) on any replica.
//
// A replica writes a change to the store before it applies it itself, and
// polls the store every MCPCTL_SHARED_POLL_MS for the changes the others
// made: every key's latest value (applied when its version is newer than the
// one this replica last applied) and the tombstones written since its last
// poll. No request path waits on the poll: a tools/call on an open session
// reads nothing from the store because of it.
package shared

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// Store is a store replicas share (audit.Postgres).
type Store interface {
	PutShared(ctx context.Context, key, value string) (int64, error)
	Shared(ctx context.Context) ([]audit.SharedEntry, error)
	ClosedSince(ctx context.Context, since time.Time) ([]audit.SessionRecord, time.Time, error)
}

// Of returns s as a shared Store, when it is one.
func Of(s audit.Store) (Store, bool) {
	st, ok := s.(Store)
	return st, ok
}

// Applier applies on this replica what another replica changed.
type Applier interface {
	// Apply sets key to value (the latest a replica wrote) if claim, called
	// under the lock the applier holds while it changes that state, says
	// the value is still newer than what this replica applied: a replica's
	// own change (Put) made meanwhile under that lock is never overwritten
	// by an older value a poll read before it.
	Apply(key, value string, claim func() bool)
	// Closed forgets a live session whose client closed it on any replica.
	Closed(project, id string)
}

// Margin is how far back each poll reads tombstones before the store's
// clock at the previous poll: a DELETE whose tombstone commits late (stamped
// with its replica's clock before the commit) is still seen. Reading a
// tombstone twice is harmless.
const Margin = 5 * time.Second

// Sync polls the store for the other replicas' changes.
type Sync struct {
	store   Store
	apply   Applier
	every   time.Duration
	timeout time.Duration
	logger  *slog.Logger

	mu       sync.Mutex
	applied  map[string]int64 // key -> version applied
	since    time.Time        // tombstones after this are read next
	lastErr  error
	polls    int64
	stop     context.CancelFunc
	finished chan struct{}
}

// New returns a Sync that polls store every every (knob
// MCPCTL_SHARED_POLL_MS), each read bounded by timeout.
func New(store Store, apply Applier, every, timeout time.Duration, logger *slog.Logger) *Sync {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sync{store: store, apply: apply, every: every, timeout: timeout, logger: logger,
		applied: map[string]int64{}, since: time.Now().Add(-Margin)}
}

// Put writes key = value for every replica. The caller holds the lock its
// Applier takes for key, and applies the change on this replica itself
// after Put succeeded, still under that lock: a change the others will not
// see is refused, not made on one replica only.
func (s *Sync) Put(ctx context.Context, key, value string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, err := s.store.PutShared(ctx, key, value)
	if err != nil {
		return err
	}
	s.claim(key, v)
	return nil
}

// claim records that this replica applies key at version v, and reports
// whether v is newer than what it applied before.
func (s *Sync) claim(key string, v int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v <= s.applied[key] {
		return false
	}
	s.applied[key] = v
	return true
}

// Poll applies, once, what changed in the store since the last poll.
func (s *Sync) Poll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	entries, err := s.store.Shared(ctx)
	if err == nil {
		for _, e := range entries {
			s.apply.Apply(e.Key, e.Value, func() bool { return s.claim(e.Key, e.Version) })
		}
		s.mu.Lock()
		since := s.since
		s.mu.Unlock()
		var recs []audit.SessionRecord
		var now time.Time
		recs, now, err = s.store.ClosedSince(ctx, since)
		if err == nil {
			for _, r := range recs {
				s.apply.Closed(r.Project, r.ID)
			}
			s.mu.Lock()
			s.since = now.Add(-Margin)
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls++
	if err != nil {
		if s.lastErr == nil {
			s.logger.Warn("reading the shared state failed; this replica may lag the others until the store answers", "err", err)
		}
		s.lastErr = err
		return err
	}
	if s.lastErr != nil {
		s.logger.Info("shared state read again; this replica is in step")
	}
	s.lastErr = nil
	return nil
}

// Start polls in the background until Stop.
func (s *Sync) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.mu.Lock()
	s.stop, s.finished = cancel, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_ = s.Poll(ctx)
		}
	}()
}

// Stop ends the polling started by Start and waits for it. Stop may be
// called more than once, and without Start.
func (s *Sync) Stop() {
	s.mu.Lock()
	stop, done := s.stop, s.finished
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
