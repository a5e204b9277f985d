package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (pure Go)
)

// SQLiteBusyTimeout is how long a SQLite connection waits for a lock held by
// another connection or process before failing with SQLITE_BUSY.
const SQLiteBusyTimeout = 5 * time.Second

var sqliteSchema = []string{
	`CREATE TABLE IF NOT EXISTS ` + Table + ` (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		kind            TEXT    NOT NULL,
		correlation_id  TEXT    NOT NULL,
		span_id         TEXT    NOT NULL,
		parent_id       TEXT    NOT NULL DEFAULT '',
		session_id      TEXT    NOT NULL DEFAULT '',
		user_name       TEXT    NOT NULL DEFAULT '',
		project         TEXT    NOT NULL DEFAULT '',
		server          TEXT    NOT NULL DEFAULT '',
		tool            TEXT    NOT NULL DEFAULT '',
		stage           TEXT    NOT NULL DEFAULT '',
		start_us        INTEGER NOT NULL,
		duration_ns     INTEGER NOT NULL,
		status          TEXT    NOT NULL DEFAULT '',
		degraded        INTEGER NOT NULL DEFAULT 0,
		degraded_reason TEXT    NOT NULL DEFAULT '',
		detail          TEXT    NOT NULL DEFAULT '',
		answer_bytes    INTEGER NOT NULL DEFAULT 0,
		answer_content  TEXT    NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS ` + Table + `_correlation_id_idx ON ` + Table + ` (correlation_id, start_us, id)`,
	`CREATE INDEX IF NOT EXISTS ` + Table + `_session_id_idx ON ` + Table + ` (session_id, start_us, id)`,
}

const sqlColumns = `id, kind, correlation_id, span_id, parent_id, session_id, user_name, project, server, tool, stage, `

// SQLite is a Store in a SQLite database (modernc.org/sqlite, no cgo).
type SQLite struct {
	db   *sql.DB
	path string
	// wmu serialises this process's writers so they queue in Go instead of
	// spinning in SQLite's busy handler; the busy timeout still covers other
	// processes sharing the file.
	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// OpenSQLite opens (creating if needed) the SQLite database at path in WAL
// mode with a busy timeout, and creates the schema if missing. path may be
// ":memory:" for a private in-memory database, and may carry extra driver
// parameters after "?" (e.g. "x.db?_pragma=cache_size(-4000)"). A leading
// "//" is dropped, so "sqlite:///abs/path" names /abs/path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	path = strings.TrimPrefix(path, "//")
	if path == "" || strings.HasPrefix(path, "?") {
		return nil, errors.New(`audit: sqlite DSN has no path; want "sqlite:PATH" (or "sqlite::memory:")`)
	}
	memory := path == ":memory:" || strings.HasPrefix(path, ":memory:?")
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	dsn := path + sep + fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)",
		SQLiteBusyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("audit: open sqlite %q: %w", path, err)
	}
	if memory {
		// Every connection to ":memory:" is its own database: keep exactly one, forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	} else {
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
	}
	s := &SQLite{db: db, path: path}
	for _, stmt := range append(sqliteSchema, sqliteSessionSchema...) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("audit: open sqlite %q: create schema: %w", path, err)
		}
	}
	if err := sqliteAddClient(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit: open sqlite %q: add the session table's client column: %w", path, err)
	}
	if err := sqliteAddShape(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit: open sqlite %q: add the audit table's answer columns: %w", path, err)
	}
	return s, nil
}

// sqliteAddShape adds the answer columns (Row.Bytes, Row.Content) to an
// audit table made before upstream_call rows kept their answer's shape:
// SQLite has no ADD COLUMN IF NOT EXISTS.
func sqliteAddShape(ctx context.Context, db *sql.DB) error {
	for _, col := range []string{"answer_bytes INTEGER NOT NULL DEFAULT 0", "answer_content TEXT NOT NULL DEFAULT ''"} {
		name, _, _ := strings.Cut(col, " ")
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('`+Table+`') WHERE name = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if _, err := db.ExecContext(ctx, `ALTER TABLE `+Table+` ADD COLUMN `+col); err != nil {
			return err
		}
	}
	return nil
}

// DB exposes the underlying database (for inspection in tests and tools).
func (s *SQLite) DB() *sql.DB { return s.db }

// Write stores r; SQLite assigns its ID.
func (s *SQLite) Write(ctx context.Context, r Row) error {
	r = normalize(r)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, insertRow,
		string(r.Kind), r.CorrelationID, r.SpanID, r.ParentID, r.SessionID, r.User, r.Project, r.Server, r.Tool, r.Stage,
		r.Start.UnixMicro(), int64(r.Duration), r.Status, r.Degraded, r.DegradedReason, r.Detail, r.Bytes, r.Content)
	if err != nil {
		return fmt.Errorf("audit: sqlite write: %w", closedErr(err))
	}
	return nil
}

// insertRow is the statement Write and WriteBatch use.
const insertRow = `INSERT INTO ` + Table + ` (
		kind, correlation_id, span_id, parent_id, session_id, user_name, project, server, tool, stage,
		start_us, duration_ns, status, degraded, degraded_reason, detail, answer_bytes, answer_content
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// WriteBatch stores rows in one transaction, in order: all of them or, on
// error, none. One commit for many rows is what lets the writer keep up
// under load.
func (s *SQLite) WriteBatch(ctx context.Context, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: sqlite write batch: %w", closedErr(err))
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	stmt, err := tx.PrepareContext(ctx, insertRow)
	if err != nil {
		return fmt.Errorf("audit: sqlite write batch: %w", closedErr(err))
	}
	defer stmt.Close()
	for _, r := range rows {
		r = normalize(r)
		if _, err := stmt.ExecContext(ctx, string(r.Kind), r.CorrelationID, r.SpanID, r.ParentID, r.SessionID, r.User,
			r.Project, r.Server, r.Tool, r.Stage, r.Start.UnixMicro(), int64(r.Duration), r.Status, r.Degraded,
			r.DegradedReason, r.Detail, r.Bytes, r.Content); err != nil {
			return fmt.Errorf("audit: sqlite write batch: %w", closedErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: sqlite write batch: %w", closedErr(err))
	}
	return nil
}

// Query returns the rows matching f ordered by Start, then ID.
func (s *SQLite) Query(ctx context.Context, f Filter) ([]Row, error) {
	q := `SELECT ` + sqlColumns + `start_us, duration_ns, status, degraded, degraded_reason, detail, answer_bytes, answer_content FROM ` + Table
	var where []string
	var args []any
	if f.Trace != "" {
		where = append(where, "correlation_id = ?")
		args = append(args, f.Trace)
	}
	if f.Session != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.Session)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY start_us, id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("audit: sqlite query: %w", closedErr(err))
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var (
			r        Row
			kind     string
			startUS  int64
			duration int64
		)
		if err := rows.Scan(&r.ID, &kind, &r.CorrelationID, &r.SpanID, &r.ParentID, &r.SessionID, &r.User,
			&r.Project, &r.Server, &r.Tool, &r.Stage, &startUS, &duration, &r.Status, &r.Degraded,
			&r.DegradedReason, &r.Detail, &r.Bytes, &r.Content); err != nil {
			return nil, fmt.Errorf("audit: sqlite scan: %w", err)
		}
		r.Kind = Kind(kind)
		r.Start = time.UnixMicro(startUS).UTC()
		r.Duration = time.Duration(duration)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: sqlite query: %w", err)
	}
	return out, nil
}

// Close closes the database. Calling it twice is fine.
func (s *SQLite) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.db.Close() })
	return s.closeErr
}

// closedErr maps database/sql's "closed" error to ErrClosed (keeping both).
func closedErr(err error) error {
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "sql: database is closed") {
		return errors.Join(ErrClosed, err)
	}
	return err
}
