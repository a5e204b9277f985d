package harness

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// inProcessLogBytes bounds InProcess.Logs, as binaryLogBytes bounds a binary's.
const inProcessLogBytes = 1 << 20

// LogReader is implemented by targets whose proxy log the harness keeps (the
// in-process proxy's logger, a binary's stderr): scenarios read what the
// operator would find there.
type LogReader interface {
	Logs() string
}

// AuditStaller is implemented by targets whose audit store the harness can
// make stop answering: every later query and write waits for its context.
type AuditStaller interface {
	StallAudit()
}

var (
	_ LogReader    = (*InProcess)(nil)
	_ LogReader    = (*Binary)(nil)
	_ AuditStaller = (*InProcess)(nil)
)

// Logs returns what the proxy logged so far (the most recent 1 MiB), as text.
func (t *InProcess) Logs() string { return t.logs().String() }

func (t *InProcess) logs() *tailBuffer {
	t.logOnce.Do(func() { t.log = newTailBuffer(inProcessLogBytes) })
	return t.log
}

// logger is the proxy's logger: text lines into Logs, and Logger too if set.
func (t *InProcess) logger() *slog.Logger {
	mine := slog.NewTextHandler(t.logs(), nil)
	if t.Logger == nil {
		return slog.New(mine)
	}
	return slog.New(slog.NewMultiHandler(mine, t.Logger.Handler()))
}

// StallAudit implements AuditStaller: from now on, until the target stops,
// the proxy's audit store answers nothing (a database that hangs).
func (t *InProcess) StallAudit() { t.stalled.Store(true) }

// openStore opens the store the config names, stallable; nil for "memory"
// (the proxy makes its own).
func (t *InProcess) openStore(ctx context.Context) (audit.Store, error) {
	t.stalled.Store(false)
	if t.spec.World == nil || t.spec.World.Store == "memory" {
		return nil, nil
	}
	s, err := audit.Open(ctx, t.spec.World.Store)
	if err != nil {
		return nil, err
	}
	return &stallStore{Store: s, stalled: t.stalled.Load}, nil
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

// Twin is a new, unstarted target of the same kind as t, for operations that
// start a second proxy of their own (another config, no failpoint switch);
// "" or, when t's kind cannot be twinned, why.
func Twin(t Target) (Target, string) {
	switch t := t.(type) {
	case *InProcess:
		return &InProcess{Logger: t.Logger}, ""
	case *Binary:
		return &Binary{Path: t.Path, Stderr: t.Stderr, Env: t.Env, MaxLog: t.MaxLog}, ""
	}
	return nil, "the scenario starts a second mcplocal of its own config, which only mcplocal's inprocess and binary targets can: target " + t.Name() + " cannot"
}
