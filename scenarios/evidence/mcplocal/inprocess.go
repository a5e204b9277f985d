package mcplocal

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/audittest"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// mcplocal run by the harness: in this process (the in-process target), and
// the PostgreSQL store a cluster of its replicas shares.

// Proxy is mcplocal's proxy running in this process, for white-box checks
// (its session table, its knobs).
type Proxy = proxy.Proxy

// FailpointSet is mcplocal's set of armed failpoints.
type FailpointSet = failpoint.Set

// Follow is a failpoint set that follows f: the failpoints armed in f now,
// and those armed later (a fault armed while the proxy runs). A nil f arms
// none.
func Follow(f *world.Failpoints) *FailpointSet {
	fps := failpoint.New()
	f.Watch(func(tool, action string) { fps.Arm(failpoint.ToolCall, tool, failpoint.Action(action)) })
	return fps
}

// Run is how mcplocal runs in this process.
type Run struct {
	World  *world.World
	Bounds world.Bounds
	// Env is the proxy's environment (the secrets the world names).
	Env        map[string]string
	Logger     *slog.Logger
	Failpoints *FailpointSet
	// Stalled, when it says so, makes the audit store answer nothing: every
	// query and write waits for its context (a database that hangs).
	Stalled func() bool
}

// Start runs mcplocal in this process, serving r.World under r.Bounds on
// addr ("127.0.0.1:0": a free port).
func Start(ctx context.Context, r Run, addr string) (*Proxy, error) {
	store, err := OpenStallable(ctx, r.World, r.Stalled)
	if err != nil {
		return nil, err
	}
	kv := KnobsOf(r.Bounds)
	p, err := proxy.New(ctx, Config(r.World), proxy.Options{
		Knobs: &kv, Logger: r.Logger, Failpoints: r.Failpoints,
		Getenv: func(k string) string { return r.Env[k] }, AuditStore: store,
	})
	if err != nil {
		if store != nil {
			_ = store.Close() // closed once: New may have closed it already
		}
		return nil, err
	}
	if err := p.Start(addr); err != nil {
		_ = p.Close(ctx)
		return nil, err
	}
	return p, nil
}

// OpenStallable opens the store w names, stalled while stalled says so (nil:
// never); nil for "memory" (the proxy makes its own).
func OpenStallable(ctx context.Context, w *world.World, stalled func() bool) (audit.Store, error) {
	if w == nil || w.Store == "memory" {
		return nil, nil
	}
	s, err := audit.Open(ctx, w.Store)
	if err != nil {
		return nil, err
	}
	if stalled == nil {
		stalled = func() bool { return false }
	}
	return &stallStore{Store: s, stalled: stalled}, nil
}

// stallStore is an audit store that, once stalled says so, makes every call
// wait for its context instead of answering.
type stallStore struct {
	audit.Store
	stalled   func() bool
	closeOnce sync.Once
	closeErr  error
}

func (s *stallStore) wait(ctx context.Context) error {
	if !s.stalled() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *stallStore) Write(ctx context.Context, r audit.Row) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.Write(ctx, r)
}

// WriteBatch keeps the store a BatchWriter when the one it wraps is.
func (s *stallStore) WriteBatch(ctx context.Context, rows []audit.Row) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	if bw, ok := s.Store.(audit.BatchWriter); ok {
		return bw.WriteBatch(ctx, rows)
	}
	for _, r := range rows {
		if err := s.Store.Write(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (s *stallStore) Query(ctx context.Context, f audit.Filter) ([]audit.Row, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.Query(ctx, f)
}

func (s *stallStore) ClaimSession(ctx context.Context, rec audit.SessionRecord) (audit.SessionRecord, error) {
	if err := s.wait(ctx); err != nil {
		return audit.SessionRecord{}, err
	}
	return s.Store.ClaimSession(ctx, rec)
}

func (s *stallStore) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.LookupSession(ctx, id)
}

// Close closes the wrapped store once: the proxy closes it, and so does the
// target when the proxy failed to start.
func (s *stallStore) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.Store.Close() })
	return s.closeErr
}

func (s *stallStore) CloseSession(ctx context.Context, rec audit.SessionRecord) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.CloseSession(ctx, rec)
}

func (s *stallStore) PruneSessions(ctx context.Context, cutoff time.Time) (int64, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.Store.PruneSessions(ctx, cutoff)
}

// Postgres is a throwaway PostgreSQL server: a cluster's shared store.
type Postgres = audittest.Server

// StartPostgres starts a throwaway PostgreSQL server for a cluster's
// replicas to share.
func StartPostgres(ctx context.Context) (*Postgres, error) { return audittest.StartServer(ctx) }

// TraceCodes are the trace codes of the tool calls the store at dsn holds a
// row for (its tool_call_trace rows).
func TraceCodes(ctx context.Context, dsn string) (map[string]bool, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT correlation_id FROM "+audit.Table+" WHERE kind = $1", string(audit.KindToolCallTrace))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kept := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		kept[id] = true
	}
	return kept, rows.Err()
}
