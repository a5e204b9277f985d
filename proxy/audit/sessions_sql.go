package audit

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The session records live beside the audit rows, in a table of their own.
var (
	sqliteSessionSchema = []string{
		`CREATE TABLE IF NOT EXISTS ` + SessionTable + ` (
			project    TEXT    NOT NULL,
			id         TEXT    NOT NULL,
			owner      TEXT    NOT NULL DEFAULT '',
			created_us INTEGER NOT NULL,
			closed_us  INTEGER NOT NULL DEFAULT 0,
			client     TEXT    NOT NULL DEFAULT '',
			PRIMARY KEY (project, id)
		)`,
		`CREATE INDEX IF NOT EXISTS ` + SessionTable + `_id_idx ON ` + SessionTable + ` (id)`,
	}
	postgresSessionSchema = []string{
		`CREATE TABLE IF NOT EXISTS ` + SessionTable + ` (
			project    TEXT        NOT NULL,
			id         TEXT        NOT NULL,
			owner      TEXT        NOT NULL DEFAULT '',
			created_at TIMESTAMPTZ NOT NULL,
			closed_at  TIMESTAMPTZ,
			client     TEXT        NOT NULL DEFAULT '',
			PRIMARY KEY (project, id)
		)`,
		`CREATE INDEX IF NOT EXISTS ` + SessionTable + `_id_idx ON ` + SessionTable + ` (id)`,
		// Stores made before session records kept their client.
		`ALTER TABLE ` + SessionTable + ` ADD COLUMN IF NOT EXISTS client TEXT NOT NULL DEFAULT ''`,
	}
)

// sqliteAddClient adds the client column to a session table made before
// session records kept their client: SQLite has no ADD COLUMN IF
// NOT EXISTS.
func sqliteAddClient(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('`+SessionTable+`') WHERE name = 'client'`).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.ExecContext(ctx, `ALTER TABLE `+SessionTable+` ADD COLUMN client TEXT NOT NULL DEFAULT ''`)
	return err
}

func unixMicro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicro(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// ClaimSession stores rec unless (rec.Project, rec.ID) has a record already,
// and returns the record the store holds afterwards.
func (s *SQLite) ClaimSession(ctx context.Context, rec SessionRecord) (SessionRecord, error) {
	rec = normalizeRecord(rec)
	s.wmu.Lock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+SessionTable+` (project, id, owner, created_us, closed_us, client)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project, id) DO NOTHING`,
		rec.Project, rec.ID, rec.Owner, unixMicro(rec.Created), unixMicro(rec.Closed), rec.Client)
	s.wmu.Unlock()
	if err != nil {
		return SessionRecord{}, fmt.Errorf("audit: sqlite claim session: %w", closedErr(err))
	}
	var out SessionRecord
	var created, closed int64
	err = s.db.QueryRowContext(ctx, `SELECT project, id, owner, created_us, closed_us, client FROM `+SessionTable+
		` WHERE project = ? AND id = ?`, rec.Project, rec.ID).Scan(&out.Project, &out.ID, &out.Owner, &created, &closed, &out.Client)
	if err != nil {
		return SessionRecord{}, fmt.Errorf("audit: sqlite claim session: %w", closedErr(err))
	}
	out.Created, out.Closed = fromMicro(created), fromMicro(closed)
	return out, nil
}

// CloseSession tombstones (rec.Project, rec.ID) at rec.Closed.
func (s *SQLite) CloseSession(ctx context.Context, rec SessionRecord) error {
	rec = normalizeRecord(rec)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+SessionTable+` (project, id, owner, created_us, closed_us)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, id) DO UPDATE SET closed_us = excluded.closed_us`,
		rec.Project, rec.ID, rec.Owner, unixMicro(rec.Created), unixMicro(rec.Closed))
	if err != nil {
		return fmt.Errorf("audit: sqlite close session: %w", closedErr(err))
	}
	return nil
}

// LookupSession returns the records of id in every project.
func (s *SQLite) LookupSession(ctx context.Context, id string) ([]SessionRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project, id, owner, created_us, closed_us, client FROM `+SessionTable+
		` WHERE id = ? ORDER BY project`, id)
	if err != nil {
		return nil, fmt.Errorf("audit: sqlite lookup session: %w", closedErr(err))
	}
	defer rows.Close()
	var out []SessionRecord
	for rows.Next() {
		var r SessionRecord
		var created, closed int64
		if err := rows.Scan(&r.Project, &r.ID, &r.Owner, &created, &closed, &r.Client); err != nil {
			return nil, fmt.Errorf("audit: sqlite lookup session: %w", err)
		}
		r.Created, r.Closed = fromMicro(created), fromMicro(closed)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: sqlite lookup session: %w", closedErr(err))
	}
	return out, nil
}

// PruneSessions forgets records whose last event is before cutoff.
func (s *SQLite) PruneSessions(ctx context.Context, cutoff time.Time) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	us := cutoff.UnixMicro()
	res, err := s.db.ExecContext(ctx, `DELETE FROM `+SessionTable+
		` WHERE (closed_us <> 0 AND closed_us < ?) OR (closed_us = 0 AND created_us < ?)`, us, us)
	if err != nil {
		return 0, fmt.Errorf("audit: sqlite prune sessions: %w", closedErr(err))
	}
	n, _ := res.RowsAffected()
	return n, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func scanPGRecord(row pgx.Row) (SessionRecord, error) {
	var r SessionRecord
	var closed *time.Time
	if err := row.Scan(&r.Project, &r.ID, &r.Owner, &r.Created, &closed, &r.Client); err != nil {
		return SessionRecord{}, err
	}
	r.Created = r.Created.UTC()
	if closed != nil {
		r.Closed = closed.UTC()
	}
	return r, nil
}

// ClaimSession stores rec unless (rec.Project, rec.ID) has a record already,
// and returns the record the store holds afterwards.
func (p *Postgres) ClaimSession(ctx context.Context, rec SessionRecord) (SessionRecord, error) {
	rec = normalizeRecord(rec)
	if _, err := p.pool.Exec(ctx, `INSERT INTO `+SessionTable+` (project, id, owner, created_at, closed_at, client)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (project, id) DO NOTHING`,
		rec.Project, rec.ID, rec.Owner, rec.Created, nullTime(rec.Closed), rec.Client); err != nil {
		return SessionRecord{}, fmt.Errorf("audit: postgres claim session: %w", p.closedErr(err))
	}
	out, err := scanPGRecord(p.pool.QueryRow(ctx, `SELECT project, id, owner, created_at, closed_at, client FROM `+SessionTable+
		` WHERE project = $1 AND id = $2`, rec.Project, rec.ID))
	if err != nil {
		return SessionRecord{}, fmt.Errorf("audit: postgres claim session: %w", p.closedErr(err))
	}
	return out, nil
}

// CloseSession tombstones (rec.Project, rec.ID) at rec.Closed.
func (p *Postgres) CloseSession(ctx context.Context, rec SessionRecord) error {
	rec = normalizeRecord(rec)
	if _, err := p.pool.Exec(ctx, `INSERT INTO `+SessionTable+` (project, id, owner, created_at, closed_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project, id) DO UPDATE SET closed_at = excluded.closed_at`,
		rec.Project, rec.ID, rec.Owner, rec.Created, nullTime(rec.Closed)); err != nil {
		return fmt.Errorf("audit: postgres close session: %w", p.closedErr(err))
	}
	return nil
}

// LookupSession returns the records of id in every project.
func (p *Postgres) LookupSession(ctx context.Context, id string) ([]SessionRecord, error) {
	rows, err := p.pool.Query(ctx, `SELECT project, id, owner, created_at, closed_at, client FROM `+SessionTable+
		` WHERE id = $1 ORDER BY project`, id)
	if err != nil {
		return nil, fmt.Errorf("audit: postgres lookup session: %w", p.closedErr(err))
	}
	defer rows.Close()
	var out []SessionRecord
	for rows.Next() {
		r, err := scanPGRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("audit: postgres lookup session: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: postgres lookup session: %w", p.closedErr(err))
	}
	return out, nil
}

// PruneSessions forgets records whose last event is before cutoff.
func (p *Postgres) PruneSessions(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM `+SessionTable+
		` WHERE COALESCE(closed_at, created_at) < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("audit: postgres prune sessions: %w", p.closedErr(err))
	}
	return tag.RowsAffected(), nil
}
