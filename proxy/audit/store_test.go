package audit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/audittest"
)

// One PostgreSQL server for the whole test binary, started by the first test
// that needs it and stopped by TestMain.
var (
	pgOnce sync.Once
	pgDSN  string
	pgStop func() error
	pgErr  error
)

func postgresDSN(t *testing.T) string {
	t.Helper()
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		pgDSN, pgStop, pgErr = audittest.StartPostgres(ctx)
		t.Logf("throwaway PostgreSQL started in %s", time.Since(start).Round(time.Millisecond))
	})
	if errors.Is(pgErr, audittest.ErrNoPostgres) {
		t.Fatalf("the PostgreSQL audit store tests need a local PostgreSQL server installation and none was found.\n%v", pgErr)
	}
	if pgErr != nil {
		t.Fatalf("start throwaway PostgreSQL: %v", pgErr)
	}
	return pgDSN
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgStop != nil {
		if err := pgStop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop throwaway PostgreSQL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestMemoryConformance(t *testing.T) {
	audittest.RunStoreConformance(t, audittest.Memory())
}

func TestSQLiteConformance(t *testing.T) {
	audittest.RunStoreConformance(t, audittest.SQLite())
}

func TestPostgresConformance(t *testing.T) {
	audittest.RunStoreConformance(t, audittest.Postgres(postgresDSN(t)))
}

func TestSQLiteUsesWALAndBusyTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := audit.OpenSQLite(ctx(t), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	var busy int
	if err := s.DB().QueryRowContext(ctx(t), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().QueryRowContext(ctx(t), "PRAGMA busy_timeout").Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	if want := int(audit.SQLiteBusyTimeout.Milliseconds()); busy != want {
		t.Errorf("busy_timeout = %d, want %d", busy, want)
	}
}

func TestOpenSQLiteForms(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{
		"sqlite::memory:",
		"sqlite:" + filepath.Join(dir, "plain.db"),
		"sqlite://" + filepath.Join(dir, "slashes.db"), // sqlite:///abs/path
		"sqlite:" + filepath.Join(dir, "params.db") + "?_pragma=cache_size(-1000)",
	} {
		t.Run(dsn, func(t *testing.T) {
			s, err := audit.Open(ctx(t), dsn)
			if err != nil {
				t.Fatalf("Open(%q): %v", dsn, err)
			}
			defer s.Close()
			if err := s.Write(ctx(t), audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: "ABCDEFGH", SpanID: "x"}); err != nil {
				t.Fatal(err)
			}
			rows, err := s.Query(ctx(t), audit.Filter{Trace: "ABCDEFGH"})
			if err != nil || len(rows) != 1 {
				t.Fatalf("Query: %d rows, %v", len(rows), err)
			}
		})
	}
	for _, name := range []string{"plain.db", "slashes.db", "params.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("database file: %v", err)
		}
	}
}

func TestOpenRejectsBadDSNs(t *testing.T) {
	for _, tc := range []struct{ dsn, mention string }{
		{"", "empty"},
		{"mysql://u@127.0.0.1/db", "mysql://u@127.0.0.1/db"},
		{"./audit.db", "./audit.db"},
		{"SQLITE:x.db", "SQLITE:x.db"},
		{"redis://u:hunter2@127.0.0.1/0", "redis://u:REDACTED@127.0.0.1/0"},
		{"sqlite:", "no path"},
		{"postgres://%zz", "postgres DSN"},
	} {
		s, err := audit.Open(ctx(t), tc.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q): no error", tc.dsn)
			continue
		}
		if !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("Open(%q) error %q does not mention %q", tc.dsn, err, tc.mention)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) error leaks the password: %q", tc.dsn, err)
		}
	}
}

func TestOpenPostgresUnreachableFailsFast(t *testing.T) {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	s, err := audit.Open(c, "postgres://postgres:secret@127.0.0.1:1/audit?sslmode=disable&connect_timeout=2")
	if err == nil {
		s.Close()
		t.Fatal("Open of an unreachable server: no error")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the password: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Open took %s", d)
	}
}

func TestRowJSON(t *testing.T) {
	r := audit.Row{
		ID: 7, Kind: audit.KindLLMAttempt, CorrelationID: "7K3M9QXZ", SpanID: "s2", ParentID: "s1",
		SessionID: "sess", User: "alice", Project: "docmost", Server: "docmost", Tool: "search", Stage: "paginate",
		Start:    time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC),
		Duration: 1500 * time.Microsecond, Status: audit.StatusError, Degraded: true,
		DegradedReason: "provider timeout", Detail: "anthropic-fallback/claude-sonnet-latest",
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": 7.0, "kind": "llm_attempt", "correlationId": "7K3M9QXZ", "spanId": "s2", "parentId": "s1",
		"sessionId": "sess", "user": "alice", "project": "docmost", "server": "docmost", "tool": "search",
		"stage": "paginate", "start": "2026-01-02T03:04:05.000006Z", "durationNs": 1.5e6, "durationMs": 1.5,
		"status": "error", "degraded": true, "degradedReason": "provider timeout",
		"detail": "anthropic-fallback/claude-sonnet-latest",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	if len(m) != len(want) {
		t.Errorf("JSON has %d fields, want %d: %s", len(m), len(want), b)
	}
	var back audit.Row
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != r {
		t.Errorf("round trip:\n got  %+v\n want %+v", back, r)
	}

	// A root row without the optional fields still says correlationId, spanId,
	// status and degraded.
	b, _ = json.Marshal(audit.Row{Kind: audit.KindToolCallTrace})
	for _, k := range []string{`"correlationId":""`, `"spanId":""`, `"status":""`, `"degraded":false`, `"durationMs":0`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("%s lacks %s", b, k)
		}
	}
	for _, k := range []string{"parentId", "sessionId", "degradedReason", "detail", "stage"} {
		if strings.Contains(string(b), k) {
			t.Errorf("%s has empty %s", b, k)
		}
	}
}

// TestSQLiteAddsTheClientColumnToAnOlderSessionTable: a store made before
// session records kept their client opens with the column added, its
// records kept (their client empty), and new records keep theirs.
func TestSQLiteAddsTheClientColumnToAnOlderSessionTable(t *testing.T) {
	s := sqliteOver(t, "the older session table",
		`CREATE TABLE `+audit.SessionTable+` (project TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '',
			created_us INTEGER NOT NULL, closed_us INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (project, id))`,
		`INSERT INTO `+audit.SessionTable+` (project, id, owner, created_us) VALUES ('p', 'OLD', 'alice', 1)`)
	defer s.Close()
	olderRecordAndNewClient(t, s)
}

// sqliteOver opens a SQLite store over a file an older version made with
// stmts (what names it in a failure).
func sqliteOver(t *testing.T, what string, stmts ...string) audit.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range stmts {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := audit.OpenSQLite(ctx(t), path)
	if err != nil {
		t.Fatalf("open a store with %s: %v", what, err)
	}
	return s
}

// olderRecordAndNewClient checks a store opened over an older session table
// holding alice's record OLD: it reads that record without a client, and a
// new record keeps its client.
func olderRecordAndNewClient(t *testing.T, s audit.Store) {
	t.Helper()
	recs, err := s.LookupSession(ctx(t), "OLD")
	if err != nil || len(recs) != 1 || recs[0].Owner != "alice" || recs[0].Client != "" {
		t.Fatalf("the older record: %+v, %v; want alice's, without a client", recs, err)
	}
	got, err := s.ClaimSession(ctx(t), audit.SessionRecord{Project: "p", ID: "NEW", Owner: "bob", Created: time.Now(), Client: `{"capabilities":{}}`})
	if err != nil || got.Client != `{"capabilities":{}}` {
		t.Fatalf("a new record: %+v, %v; want it with its client", got, err)
	}
}

// TestPostgresAddsTheClientColumnToAnOlderSessionTable: the same for a
// PostgreSQL store made before session records kept their client.
func TestPostgresAddsTheClientColumnToAnOlderSessionTable(t *testing.T) {
	dsn := audittest.Postgres(postgresDSN(t)).NewDSN(t)
	conn, err := pgx.Connect(ctx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE ` + audit.SessionTable + ` (project TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '',
			created_at TIMESTAMPTZ NOT NULL, closed_at TIMESTAMPTZ, PRIMARY KEY (project, id))`,
		`INSERT INTO ` + audit.SessionTable + ` (project, id, owner, created_at) VALUES ('p', 'OLD', 'alice', now())`,
	} {
		if _, err := conn.Exec(ctx(t), stmt); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.Close(ctx(t))
	s, err := audit.OpenPostgres(ctx(t), dsn)
	if err != nil {
		t.Fatalf("open a store with the older session table: %v", err)
	}
	defer s.Close()
	olderRecordAndNewClient(t, s)
}

// olderRowsTable is the audit table as stores made before upstream_call
// rows kept their answer's shape created it, with one row in it.
func olderRowsTable(idType, startCol, startType, startVal string) []string {
	return []string{
		`CREATE TABLE ` + audit.Table + ` (id ` + idType + ` PRIMARY KEY, kind TEXT NOT NULL, correlation_id TEXT NOT NULL,
			span_id TEXT NOT NULL, parent_id TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL DEFAULT '',
			user_name TEXT NOT NULL DEFAULT '', project TEXT NOT NULL DEFAULT '', server TEXT NOT NULL DEFAULT '',
			tool TEXT NOT NULL DEFAULT '', stage TEXT NOT NULL DEFAULT '', ` + startCol + ` ` + startType + ` NOT NULL,
			duration_ns BIGINT NOT NULL, status TEXT NOT NULL DEFAULT '', degraded BOOLEAN NOT NULL DEFAULT FALSE,
			degraded_reason TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '')`,
		`INSERT INTO ` + audit.Table + ` (kind, correlation_id, span_id, ` + startCol + `, duration_ns, status)
			VALUES ('upstream_call', 'OLDTRACE', 's1', ` + startVal + `, 5, 'ok')`,
	}
}

// olderRowAndNewShape checks a store opened over an older audit table: its
// row reads without a shape, and a new row keeps its answer's size and
// content kinds.
func olderRowAndNewShape(t *testing.T, s audit.Store) {
	t.Helper()
	rows, err := s.Query(ctx(t), audit.Filter{Trace: "OLDTRACE"})
	if err != nil || len(rows) != 1 || rows[0].Bytes != 0 || rows[0].Content != "" {
		t.Fatalf("the older row: %+v, %v; want it without a shape", rows, err)
	}
	r := audit.Row{Kind: audit.KindUpstreamCall, CorrelationID: "NEWTRACE", SpanID: "s2", Start: time.Now(),
		Status: audit.StatusOK, Bytes: 2048, Content: "text:1,image:1,structured"}
	if err := s.Write(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	rows, err = s.Query(ctx(t), audit.Filter{Trace: "NEWTRACE"})
	if err != nil || len(rows) != 1 || rows[0].Bytes != 2048 || rows[0].Content != r.Content {
		t.Fatalf("a new row: %+v, %v; want it with its shape", rows, err)
	}
}

// TestSQLiteAddsTheShapeColumnsToAnOlderAuditTable: a SQLite store made
// before upstream_call rows kept their answer's shape opens with the
// columns added.
func TestSQLiteAddsTheShapeColumnsToAnOlderAuditTable(t *testing.T) {
	s := sqliteOver(t, "the older audit table", olderRowsTable("INTEGER", "start_us", "INTEGER", "1")...)
	defer s.Close()
	olderRowAndNewShape(t, s)
}

// TestPostgresAddsTheShapeColumnsToAnOlderAuditTable: the same for a
// PostgreSQL store.
func TestPostgresAddsTheShapeColumnsToAnOlderAuditTable(t *testing.T) {
	dsn := audittest.Postgres(postgresDSN(t)).NewDSN(t)
	conn, err := pgx.Connect(ctx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range olderRowsTable("BIGINT GENERATED BY DEFAULT AS IDENTITY", "start_at", "TIMESTAMPTZ", "now()") {
		if _, err := conn.Exec(ctx(t), stmt); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.Close(ctx(t))
	s, err := audit.OpenPostgres(ctx(t), dsn)
	if err != nil {
		t.Fatalf("open a store with the older audit table: %v", err)
	}
	defer s.Close()
	olderRowAndNewShape(t, s)
}
