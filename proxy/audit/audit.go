// Package audit is the proxy's audit trail: durable rows describing what one
// request did (the tool call, its pipeline and stages, gate decisions, LLM
// attempts, upstream calls, recreated sessions), all tied together by the
// request's trace code in CorrelationID.
//
// A Store keeps rows (SQLite, PostgreSQL, or in memory); Open picks one from a
// DSN such as the config's `audit:` field. The proxy never writes to a Store
// directly: it hands rows to a Recorder, whose Record never blocks and never
// fails the request.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/bound"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

// Table is the name of the table the SQL stores keep rows in.
const Table = "audit_rows"

// Kind says what a Row describes.
type Kind string

const (
	// KindToolCallTrace is the root row of one tools/call: the whole request,
	// from arrival to answer, as the client saw it.
	KindToolCallTrace Kind = "tool_call_trace"
	// KindPipelineExecution covers one run of a project's stage pipeline over a
	// tool result.
	KindPipelineExecution Kind = "pipeline_execution"
	// KindStageExecution covers one stage (paginate, summarize-tree, ...) inside
	// a pipeline run; Stage names it.
	KindStageExecution Kind = "stage_execution"
	// KindGateDecision records the gate's verdict on a call (allowed, refused,
	// the begin_session prompt selection).
	KindGateDecision Kind = "gate_decision"
	// KindSessionRecreated records that an unknown Mcp-Session-Id was adopted
	// and a fresh session built under it; Detail carries the reason.
	KindSessionRecreated Kind = "session_recreated"
	// KindLLMAttempt covers one attempt against one LLM provider inside a
	// failover chain; Detail carries provider and model.
	KindLLMAttempt Kind = "llm_attempt"
	// KindUpstreamCall covers one call to an upstream MCP server; Server and
	// Tool name it.
	KindUpstreamCall Kind = "upstream_call"
	// KindChatTurn covers one POST /api/v1/chat turn through the failover
	// chain; Server is the LLM that answered, Detail its model.
	KindChatTurn Kind = "chat_turn"
	// KindPauseWait covers the time one request waited on a paused project
	// (mcpctl pause); Status ok (resumed), timeout (MCPCTL_PAUSE_MAX_WAIT_MS
	// passed) or cancelled.
	KindPauseWait Kind = "pause_wait"
	// KindMCPRequest is the root row of every MCP request other than
	// tools/call (resources/read, prompts/get, ping, ...): Tool holds the
	// method, Server the upstream it went to ("" when the proxy answered).
	KindMCPRequest Kind = "mcp_request"
)

// Kinds lists every Kind the proxy writes, in the order above.
var Kinds = []Kind{
	KindToolCallTrace, KindPipelineExecution, KindStageExecution, KindGateDecision,
	KindSessionRecreated, KindLLMAttempt, KindUpstreamCall, KindChatTurn,
	KindPauseWait,
	KindMCPRequest,
}

// Common Row.Status values. The store accepts any string.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	StatusRefused   = "refused"
)

// Row is one durable audit row.
//
// Stores keep Start at microsecond precision and return it in UTC; Duration
// is kept to the nanosecond.
type Row struct {
	// ID is assigned by the store on Write; any value set by the writer is ignored.
	ID   int64 `json:"id"`
	Kind Kind  `json:"kind"`
	// CorrelationID is the request's trace code, shared by every row the
	// request produced.
	CorrelationID string `json:"correlationId"`
	SpanID        string `json:"spanId"`
	// ParentID is the SpanID of the enclosing span; "" for the root.
	ParentID  string `json:"parentId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	User      string `json:"user,omitempty"`
	Project   string `json:"project,omitempty"`
	Server    string `json:"server,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Stage     string `json:"stage,omitempty"`

	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"durationNs"`
	// Status is ok, error, timeout, cancelled, refused, ...
	Status string `json:"status"`
	// Degraded is set when the operation fell back to its deterministic path;
	// DegradedReason says why.
	Degraded       bool   `json:"degraded"`
	DegradedReason string `json:"degradedReason,omitempty"`
	// Detail is free text: error text, provider/model, etc.
	Detail string `json:"detail,omitempty"`
	// Bytes and Content are the shape of the answer an upstream_call got,
	// never its content: the tools/call result's size in bytes as JSON, and
	// its content kinds as Shape.String writes them ("text:2,image:1,
	// structured,isError"). 0 and "" when the call got no result, and on
	// other rows.
	Bytes   int64  `json:"bytes,omitempty"`
	Content string `json:"content,omitempty"`
}

// Bounded returns the row with every string cut to max bytes (a marker
// ends a cut one): what a request or an upstream sent, its tool name, its
// error text, cannot grow the store. max <= 0 keeps the row as it is.
func (r Row) Bounded(max int) Row {
	for _, f := range []*string{&r.CorrelationID, &r.SpanID, &r.ParentID, &r.SessionID, &r.User, &r.Project,
		&r.Server, &r.Tool, &r.Stage, &r.Status, &r.DegradedReason, &r.Detail, &r.Content} {
		*f = bound.String(*f, max)
	}
	return r
}

// rowJSON has Row's fields and tags, without its methods.
type rowJSON Row

// MarshalJSON encodes the row with an extra durationMs field (float,
// milliseconds) next to durationNs, for humans and dashboards.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		rowJSON
		DurationMs float64 `json:"durationMs"`
	}{rowJSON(r), float64(r.Duration) / float64(time.Millisecond)})
}

// UnmarshalJSON decodes what MarshalJSON encodes; durationMs is ignored in
// favour of durationNs.
func (r *Row) UnmarshalJSON(b []byte) error {
	var v rowJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Row(v)
	return nil
}

// End is Start + Duration.
func (r Row) End() time.Time { return r.Start.Add(r.Duration) }

// Filter selects rows for Query. Set fields are ANDed; an empty Filter
// selects every row.
type Filter struct {
	// Trace selects rows whose CorrelationID equals it.
	Trace string
	// Session selects rows whose SessionID equals it.
	Session string
	// Limit caps the number of rows returned (the first ones in order);
	// <= 0 means no cap.
	Limit int
}

// Store keeps audit rows. Implementations are safe for concurrent use.
type Store interface {
	// Write stores r; the store assigns its ID. The row is stored as given:
	// an empty CorrelationID is kept, not guessed.
	Write(ctx context.Context, r Row) error
	// Query returns the rows matching f ordered by Start, then ID.
	Query(ctx context.Context, f Filter) ([]Row, error)
	// Close releases the store. Later calls fail.
	Close() error

	// ClaimSession stores rec unless (rec.Project, rec.ID) has a record
	// already, and returns the record the store holds afterwards: the first
	// claim of an id wins, so its owner cannot change.
	ClaimSession(ctx context.Context, rec SessionRecord) (SessionRecord, error)
	// CloseSession records that (rec.Project, rec.ID) was closed by its
	// client at rec.Closed (a tombstone), creating the record with rec.Owner
	// if it had none.
	CloseSession(ctx context.Context, rec SessionRecord) error
	// LookupSession returns the records of id in every project, ordered by
	// project name.
	LookupSession(ctx context.Context, id string) ([]SessionRecord, error)
	// PruneSessions forgets the records whose last event (Closed, or Created
	// while open) is before cutoff and reports how many it forgot.
	PruneSessions(ctx context.Context, cutoff time.Time) (int64, error)
}

// ErrClosed is returned by a Store or Recorder used after Close.
var ErrClosed = errors.New("audit: closed")

// Open opens the store named by dsn and creates its schema if missing
// (idempotent). Accepted forms:
//
//	sqlite:PATH              SQLite file (WAL, busy timeout); also sqlite://PATH
//	sqlite::memory:          private in-memory SQLite database (tests)
//	postgres://...           PostgreSQL via pgx (also postgresql://)
func Open(ctx context.Context, dsn string) (Store, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		return OpenSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return OpenPostgres(ctx, dsn)
	case dsn == "":
		return nil, errors.New(`audit: empty store DSN; want "sqlite:PATH" or "postgres://..."`)
	default:
		return nil, fmt.Errorf("audit: unsupported store DSN %q; want \"sqlite:PATH\" or \"postgres://...\" (or postgresql://)", redactDSN(dsn))
	}
}

// redactDSN hides a password in a DSN before it goes into an error.
func redactDSN(dsn string) string { return redact.Text(dsn) }

// normalize returns r as stores keep it: Start in UTC at microsecond precision.
func normalize(r Row) Row {
	r.Start = r.Start.Truncate(time.Microsecond).UTC()
	return r
}
