package harness

import "log/slog"

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
