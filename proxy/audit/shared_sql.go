package audit

import (
	"context"
	"fmt"
	"time"
)

// SharedTable holds the state replicas of one mcplocal share through their
// PostgreSQL store: one row per key (a project's pause state, a server
// managed by mcpctl), each write stamped with a version from one sequence,
// so a replica that polls the table applies every key's latest value.
const SharedTable = "replica_state"

var postgresSharedSchema = []string{
	`CREATE SEQUENCE IF NOT EXISTS ` + SharedTable + `_version`,
	`CREATE TABLE IF NOT EXISTS ` + SharedTable + ` (
		key     TEXT   PRIMARY KEY,
		value   TEXT   NOT NULL,
		version BIGINT NOT NULL
	)`,
	// Replicas read the tombstones written since their last poll.
	`CREATE INDEX IF NOT EXISTS ` + SessionTable + `_closed_idx ON ` + SessionTable + ` (closed_at) WHERE closed_at IS NOT NULL`,
}

// SharedEntry is one row of the shared state.
type SharedEntry struct {
	Key     string
	Value   string
	Version int64
}

// PutShared sets key to value for every replica, with a version newer than
// any written before, and returns that version.
func (p *Postgres) PutShared(ctx context.Context, key, value string) (int64, error) {
	var v int64
	if err := p.pool.QueryRow(ctx, `INSERT INTO `+SharedTable+` (key, value, version)
		VALUES ($1, $2, nextval('`+SharedTable+`_version'))
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version
		RETURNING version`, key, value).Scan(&v); err != nil {
		return 0, fmt.Errorf("audit: postgres put shared state: %w", p.closedErr(err))
	}
	return v, nil
}

// Shared returns every key of the shared state with its latest value.
func (p *Postgres) Shared(ctx context.Context) ([]SharedEntry, error) {
	rows, err := p.pool.Query(ctx, `SELECT key, value, version FROM `+SharedTable+` ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("audit: postgres read shared state: %w", p.closedErr(err))
	}
	defer rows.Close()
	var out []SharedEntry
	for rows.Next() {
		var e SharedEntry
		if err := rows.Scan(&e.Key, &e.Value, &e.Version); err != nil {
			return nil, fmt.Errorf("audit: postgres read shared state: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: postgres read shared state: %w", p.closedErr(err))
	}
	return out, nil
}

// ClosedSince returns the tombstones whose session was closed after since,
// and the store's own clock now (the since of the next call, less a margin).
func (p *Postgres) ClosedSince(ctx context.Context, since time.Time) ([]SessionRecord, time.Time, error) {
	var now time.Time
	if err := p.pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return nil, time.Time{}, fmt.Errorf("audit: postgres read tombstones: %w", p.closedErr(err))
	}
	rows, err := p.pool.Query(ctx, `SELECT project, id, owner, created_at, closed_at, client FROM `+SessionTable+
		` WHERE closed_at IS NOT NULL AND closed_at > $1 ORDER BY closed_at`, since)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("audit: postgres read tombstones: %w", p.closedErr(err))
	}
	defer rows.Close()
	var out []SessionRecord
	for rows.Next() {
		r, err := scanPGRecord(rows)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("audit: postgres read tombstones: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("audit: postgres read tombstones: %w", p.closedErr(err))
	}
	return out, now.UTC(), nil
}
