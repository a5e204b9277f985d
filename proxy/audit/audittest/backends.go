package audittest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// Memory is the Backend of audit.Memory.
func Memory() Backend {
	return Backend{
		Name:     "memory",
		NewStore: func(testing.TB) audit.Store { return audit.NewMemory() },
	}
}

// SQLite is the Backend of the SQLite store: one fresh database file per
// store, in the test's temporary directory.
func SQLite() Backend {
	return Backend{
		Name: "sqlite",
		NewDSN: func(t testing.TB) string {
			return "sqlite:" + filepath.Join(t.TempDir(), "audit.db")
		},
		IndexDefs: sqliteIndexDefs,
	}
}

func sqliteIndexDefs(t testing.TB, dsn string) []string {
	t.Helper()
	path := dsn[len("sqlite:"):]
	// A plain reader on the same file: the store's own connection could hide
	// a schema that only exists in its session.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctxFor(t),
		`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`, audit.Table)
	if err != nil {
		t.Fatalf("read sqlite_master: %v", err)
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatalf("scan sqlite_master: %v", err)
		}
		defs = append(defs, d)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read sqlite_master: %v", err)
	}
	return defs
}

var pgDBSeq atomic.Int64

// Postgres is the Backend of the PostgreSQL store on the server reachable
// through adminDSN (a postgres:// URL of a role allowed to CREATE DATABASE,
// such as the one StartPostgres returns): one fresh database per store,
// dropped at cleanup.
func Postgres(adminDSN string) Backend {
	return Backend{
		Name: "postgres",
		NewDSN: func(t testing.TB) string {
			t.Helper()
			name := fmt.Sprintf("audit_conf_%d", pgDBSeq.Add(1))
			dsn, err := CreateDatabase(ctxFor(t), adminDSN, name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				if err := DropDatabase(ctx, adminDSN, name); err != nil {
					t.Errorf("drop database %s: %v", name, err)
				}
			})
			return dsn
		},
		IndexDefs: pgIndexDefs,
	}
}

func pgIndexDefs(t testing.TB, dsn string) []string {
	t.Helper()
	ctx := ctxFor(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx,
		`SELECT i.indexdef FROM pg_indexes i
		 JOIN pg_class c ON c.relname = i.indexname
		 JOIN pg_index x ON x.indexrelid = c.oid
		 WHERE i.schemaname = current_schema() AND i.tablename = $1 AND NOT x.indisprimary
		 ORDER BY i.indexname`, audit.Table)
	if err != nil {
		t.Fatalf("read pg_indexes: %v", err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("read pg_indexes: %v", err)
	}
	return defs
}

// CreateDatabase creates database name on the server of adminDSN and
// returns adminDSN pointed at it.
func CreateDatabase(ctx context.Context, adminDSN, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return "", fmt.Errorf("audittest: connect %s: %w", adminDSN, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("audittest: create database %s: %w", name, err)
	}
	return withDatabase(adminDSN, name)
}

// DropDatabase drops database name on the server of adminDSN, closing any
// connection left to it.
func DropDatabase(ctx context.Context, adminDSN, name string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("audittest: connect %s: %w", adminDSN, err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("audittest: parse %s: %w", dsn, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}
