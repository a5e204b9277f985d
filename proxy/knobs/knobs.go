// Package knobs is the one table of every bound the proxy enforces.
//
// Each knob is a named duration (or count) with a default taken from the seed's
// reliability notes, overridable from the environment. Nothing in the proxy
// waits without a knob behind it; docs/knobs.md mirrors this table and a test
// keeps the two in step.
package knobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Unit is what a knob's number counts.
type Unit int

// The units of knobs. The environment variable's suffix names the unit.
const (
	// Millis knobs are durations, given in milliseconds (suffix _MS).
	Millis Unit = iota
	// Count knobs bound how many of a thing there may be (suffix _MAX).
	Count
	// Bytes knobs bound a size (suffix _BYTES).
	Bytes
)

// Knob describes one bound: its environment variable, default and what it
// bounds. A Millis knob's default is Default; a Count or Bytes knob's is N.
type Knob struct {
	Env     string
	Default time.Duration
	Bounds  string
	field   func(*Values) *time.Duration
	Unit    Unit
	N       int64
	count   func(*Values) *int64
	// ZeroOK: 0 is a value of this knob (it turns a wait off), not an error.
	ZeroOK bool
}

// dur declares a Millis knob.
func dur(env string, def time.Duration, bounds string, field func(*Values) *time.Duration) Knob {
	return Knob{Env: env, Default: def, Bounds: bounds, field: field}
}

// optionalWait declares a Millis knob whose 0 (its default) means no wait.
func optionalWait(env string, bounds string, field func(*Values) *time.Duration) Knob {
	return Knob{Env: env, Bounds: bounds, field: field, ZeroOK: true}
}

// num declares a Count or Bytes knob.
func num(env string, unit Unit, def int64, bounds string, field func(*Values) *int64) Knob {
	return Knob{Env: env, Unit: unit, N: def, Bounds: bounds, count: field}
}

// DefaultRaw is the knob's default in its unit (milliseconds for durations).
func (k Knob) DefaultRaw() int64 {
	if k.Unit == Millis {
		return k.Default.Milliseconds()
	}
	return k.N
}

// Raw is the knob's value in v, in its unit (milliseconds for durations,
// rounded up so that a positive duration never reads as 0).
func (k Knob) Raw(v Values) int64 {
	if k.Unit == Millis {
		d := *k.field(&v)
		return int64((d + time.Millisecond - 1) / time.Millisecond)
	}
	return *k.count(&v)
}

// Values holds the resolved value of every knob. The zero value is not useful:
// use Defaults or Load.
type Values struct {
	LLMCallBudget        time.Duration
	LLMProviderTimeout   time.Duration
	StageLLMBudget       time.Duration
	GateLLMTimeout       time.Duration
	PaginationLLMTimeout time.Duration
	RequestDeadline      time.Duration
	UpstreamCallTimeout  time.Duration
	UpstreamConnect      time.Duration
	AuditWriteTimeout    time.Duration
	ShutdownGrace        time.Duration
	StopDrain            time.Duration
	ChatBudget           time.Duration
	AuditQueryTimeout    time.Duration
	// ReadyTimeout bounds /readyz's check of the audit store: a readiness
	// probe has a short timeout of its own (Kubernetes: 1 s by default), so
	// it is neither the write timeout nor the query timeout (10 s).
	ReadyTimeout time.Duration
	PauseMaxWait time.Duration
	// SharedPoll is how often a replica reads the state replicas share
	// through a PostgreSQL store (pause, servers, tombstones): a change made
	// through one replica holds on every other within it (plus one read).
	SharedPoll time.Duration

	// MaxBodyBytes bounds one request body a client sends.
	MaxBodyBytes int64
	// PauseQueueMax bounds how many requests wait on one paused project.
	PauseQueueMax int64
	// AuditBatchMax bounds how many audit rows one store transaction writes.
	AuditBatchMax int64
	// AuditBatchWait bounds how long the audit writer waits for more rows
	// before it commits a batch.
	AuditBatchWait time.Duration
	// UpstreamSessionsMax bounds the upstream sessions the proxy holds at
	// once, over every client session and server.
	UpstreamSessionsMax int64

	// SessionIdle closes a session nobody used for this long.
	SessionIdle time.Duration
	// SessionsMax caps live sessions in the whole proxy.
	SessionsMax int64
	// SessionsPerUserMax caps the live sessions of one user.
	SessionsPerUserMax int64
	// SessionRecordTTL is how long a session's owner and a DELETEd id
	// (its tombstone) are remembered in the audit store.
	SessionRecordTTL time.Duration

	// ReadTimeout bounds reading one whole request, headers and body.
	ReadTimeout time.Duration
	// IdleConnTimeout closes a keep-alive connection with no request.
	IdleConnTimeout time.Duration
	// ConnsMax bounds the client connections open at once.
	ConnsMax int64
	// MaxHeaderBytes bounds one request's headers.
	MaxHeaderBytes int64
	// UpstreamMaxResponseBytes bounds one response body from an upstream.
	UpstreamMaxResponseBytes int64
	// LogBufferBytes bounds the log lines mcplocal holds for stderr when
	// stderr is slower than the proxy.
	LogBufferBytes int64
	// CallNotifyDrain bounds the wait, after an upstream's result, for the
	// progress and log messages that came before it on the call's stream.
	CallNotifyDrain time.Duration
	// BatchMax bounds the messages of one JSON-RPC batch.
	BatchMax int64
	// MaxNameBytes bounds a tool's or prompt's name in a request (the MCP
	// spec's limit for tool names).
	MaxNameBytes int64
	// MaxStoredStringBytes bounds every string the proxy stores or logs
	// from a request (audit rows, log lines); longer ones are cut with a
	// marker.
	MaxStoredStringBytes int64
}

// Table lists every knob, in the order docs/knobs.md shows them.
var Table = []Knob{
	dur("MCPCTL_LLM_CALL_BUDGET_MS", 20*time.Second, "one complete(), failover included",
		func(v *Values) *time.Duration { return &v.LLMCallBudget }),
	dur("MCPCTL_LLM_PROVIDER_TIMEOUT_MS", 10*time.Second, "one provider attempt inside that budget",
		func(v *Values) *time.Duration { return &v.LLMProviderTimeout }),
	dur("MCPCTL_STAGE_LLM_BUDGET_MS", 30*time.Second, "all LLM work in one stage invocation",
		func(v *Values) *time.Duration { return &v.StageLLMBudget }),
	dur("MCPCTL_GATE_LLM_TIMEOUT_MS", 8*time.Second, "the gate's begin_session prompt selection",
		func(v *Values) *time.Duration { return &v.GateLLMTimeout }),
	dur("MCPCTL_PAGINATION_LLM_TIMEOUT_MS", 10*time.Second, "pagination's smart index",
		func(v *Values) *time.Duration { return &v.PaginationLLMTimeout }),
	dur("MCPCTL_REQUEST_DEADLINE_MS", 90*time.Second, "one MCP request end to end, from accept to answer",
		func(v *Values) *time.Duration { return &v.RequestDeadline }),
	dur("MCPCTL_UPSTREAM_CALL_TIMEOUT_MS", 30*time.Second, "one call to an upstream MCP server",
		func(v *Values) *time.Duration { return &v.UpstreamCallTimeout }),
	dur("MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS", 10*time.Second, "connecting and initializing one upstream session",
		func(v *Values) *time.Duration { return &v.UpstreamConnect }),
	dur("MCPCTL_AUDIT_WRITE_TIMEOUT_MS", 1*time.Second, "one audit store write: a row (written off the request path), a session's owner (an initialize waits for it), a DELETEd session's tombstone, a stale session's owner lookup (a read) or its adoption claim (their requests wait for them)",
		func(v *Values) *time.Duration { return &v.AuditWriteTimeout }),
	dur("MCPCTL_SHUTDOWN_GRACE_MS", 5*time.Second, `draining in-flight requests when the proxy stops: a request still running at the grace less a quarter of it (at most 250 ms) is answered "shutting down" then, and the stop ends within the grace`,
		func(v *Values) *time.Duration { return &v.ShutdownGrace }),
	optionalWait("MCPCTL_STOP_DRAIN_MS", "when the proxy stops, before the shutdown grace: it keeps listening this long, answering /readyz 503 (stopping) and every new request 503 with Retry-After, not processed, so a load balancer's health check takes it out and retries those requests on another replica; 0: no such wait (one proxy, nothing in front)",
		func(v *Values) *time.Duration { return &v.StopDrain }),
	dur("MCPCTL_CHAT_BUDGET_MS", 60*time.Second, "one chat turn through the failover chain, streaming included",
		func(v *Values) *time.Duration { return &v.ChatBudget }),
	dur("MCPCTL_AUDIT_QUERY_TIMEOUT_MS", 10*time.Second, "one GET /api/v1/audit query, flush included",
		func(v *Values) *time.Duration { return &v.AuditQueryTimeout }),
	dur("MCPCTL_READY_TIMEOUT_MS", 1*time.Second, "GET /readyz's check of the audit store (past it: 503, not ready), under a readiness probe's own timeout",
		func(v *Values) *time.Duration { return &v.ReadyTimeout }),
	dur("MCPCTL_PAUSE_MAX_WAIT_MS", 60*time.Second, "one request waiting on a paused project (mcpctl pause), outside its deadline",
		func(v *Values) *time.Duration { return &v.PauseMaxWait }),
	dur("MCPCTL_SHARED_POLL_MS", 1*time.Second, "replicas sharing one PostgreSQL store: how often each reads the others' changes (pause, servers managed by mcpctl, closed sessions); a change through one replica holds on all within it plus one read",
		func(v *Values) *time.Duration { return &v.SharedPoll }),
	num("MCPCTL_MAX_BODY_BYTES", Bytes, 8<<20, "one request body a client sends (larger: 413 with a JSON-RPC error)",
		func(v *Values) *int64 { return &v.MaxBodyBytes }),
	num("MCPCTL_PAUSE_QUEUE_MAX", Count, 1024, "requests waiting at once on one paused project (more: answered at once, not queued)",
		func(v *Values) *int64 { return &v.PauseQueueMax }),
	num("MCPCTL_AUDIT_BATCH_MAX", Count, 256, "audit rows written in one store transaction (the writer commits what is queued, up to this)",
		func(v *Values) *int64 { return &v.AuditBatchMax }),
	dur("MCPCTL_AUDIT_BATCH_WAIT_MS", 5*time.Millisecond, "the audit writer's wait for more rows before it commits a batch (off the request path; rows trickling in share a commit)",
		func(v *Values) *time.Duration { return &v.AuditBatchWait }),
	num("MCPCTL_UPSTREAM_SESSIONS_MAX", Count, 20000, "upstream sessions held at once (one per client session and server it touched); past it a request needing a new one fails, readably",
		func(v *Values) *int64 { return &v.UpstreamSessionsMax }),
	dur("MCPCTL_SESSION_IDLE_MS", 30*time.Minute, "a session nobody uses; then it is closed and its upstream sessions released",
		func(v *Values) *time.Duration { return &v.SessionIdle }),
	num("MCPCTL_SESSIONS_MAX", Count, 10_000, "live sessions in the whole proxy (more: a JSON-RPC error naming this knob)",
		func(v *Values) *int64 { return &v.SessionsMax }),
	num("MCPCTL_SESSIONS_PER_USER_MAX", Count, 1_000, "live sessions of one user (more: a JSON-RPC error naming this knob)",
		func(v *Values) *int64 { return &v.SessionsPerUserMax }),
	dur("MCPCTL_SESSION_RECORD_TTL_MS", 7*24*time.Hour, "how long a session's owner and a DELETEd id (tombstone) are remembered in the audit store",
		func(v *Values) *time.Duration { return &v.SessionRecordTTL }),
	dur("MCPCTL_READ_TIMEOUT_MS", 30*time.Second, "reading one whole request, headers and body (a slow-trickle client is dropped)",
		func(v *Values) *time.Duration { return &v.ReadTimeout }),
	dur("MCPCTL_IDLE_CONN_TIMEOUT_MS", 120*time.Second, "a keep-alive connection with no request in flight; then it is closed",
		func(v *Values) *time.Duration { return &v.IdleConnTimeout }),
	num("MCPCTL_CONNS_MAX", Count, 20_000, "open client connections, silent ones included; past it a new one is answered 503 with a JSON-RPC error naming this knob, unless a connection silent past the read-header bound can be closed to make room",
		func(v *Values) *int64 { return &v.ConnsMax }),
	num("MCPCTL_MAX_HEADER_BYTES", Bytes, 64<<10, "one request's headers (larger: 431)",
		func(v *Values) *int64 { return &v.MaxHeaderBytes }),
	num("MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES", Bytes, 32<<20, "one response body from an upstream MCP server (larger: isError naming this knob)",
		func(v *Values) *int64 { return &v.UpstreamMaxResponseBytes }),
	num("MCPCTL_LOG_BUFFER_BYTES", Bytes, 1<<20, "log lines waiting for stderr, written off the request path (full: a line is dropped, counted, and the count logged)",
		func(v *Values) *int64 { return &v.LogBufferBytes }),
	dur("MCPCTL_CALL_NOTIFY_DRAIN_MS", 1*time.Second, "after an upstream's result, relaying the progress and log messages that came before it on the call's stream, on the client's stream of that call (past it: they go out on the client's standalone stream)",
		func(v *Values) *time.Duration { return &v.CallNotifyDrain }),
	num("MCPCTL_BATCH_MAX", Count, 32, "messages in one JSON-RPC batch, where the protocol version allows batches (more: a JSON-RPC error naming this knob; a batch is refused whole in 2025-06-18 and later, and whenever it holds an initialize)",
		func(v *Values) *int64 { return &v.BatchMax }),
	num("MCPCTL_MAX_NAME_BYTES", Bytes, 128, "a tool's or prompt's name in a request (the MCP spec's tool-name limit; tool names are also held to its characters A-Z a-z 0-9 _ - .); longer: a JSON-RPC error naming this knob",
		func(v *Values) *int64 { return &v.MaxNameBytes }),
	num("MCPCTL_MAX_STORED_STRING_BYTES", Bytes, 1024, "each string an audit row, a log line or an upstream's health state keeps (tool, method, id, trace code, error text, lastError); longer ones are cut and end in a marker saying how many bytes were cut",
		func(v *Values) *int64 { return &v.MaxStoredStringBytes }),
}

// Defaults returns every knob at its default.
func Defaults() Values {
	var v Values
	for _, k := range Table {
		v.SetRaw(k.Env, k.DefaultRaw())
	}
	return v
}

// Load resolves every knob from getenv (os.Getenv in production). A malformed
// value is an error naming the variable; an unset or empty one keeps its default.
func Load(getenv func(string) string) (Values, error) {
	v := Defaults()
	for _, k := range Table {
		raw := strings.TrimSpace(getenv(k.Env))
		if raw == "" {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 || (n == 0 && !k.ZeroOK) {
			want := "a positive"
			if k.ZeroOK {
				want = "a zero or positive"
			}
			return Values{}, fmt.Errorf("knob %s=%q: want %s whole number of %s", k.Env, raw, want, k.Unit)
		}
		v.SetRaw(k.Env, n)
	}
	if err := v.Check(); err != nil {
		return Values{}, err
	}
	return v, nil
}

// Check reports knob values that contradict each other, such as a provider
// attempt longer than the whole call budget it runs inside.
func (v Values) Check() error {
	if v.LLMProviderTimeout > v.LLMCallBudget {
		return fmt.Errorf("knob MCPCTL_LLM_PROVIDER_TIMEOUT_MS (%v) exceeds MCPCTL_LLM_CALL_BUDGET_MS (%v): an attempt runs inside the budget", v.LLMProviderTimeout, v.LLMCallBudget)
	}
	if v.UpstreamCallTimeout > v.RequestDeadline {
		return fmt.Errorf("knob MCPCTL_UPSTREAM_CALL_TIMEOUT_MS (%v) exceeds MCPCTL_REQUEST_DEADLINE_MS (%v): an upstream call runs inside the request", v.UpstreamCallTimeout, v.RequestDeadline)
	}
	return nil
}

// String is the unit's name, plural.
func (u Unit) String() string {
	switch u {
	case Count:
		return "items"
	case Bytes:
		return "bytes"
	}
	return "milliseconds"
}

// SetRaw sets the knob named by env from a number in its unit; it reports
// false for an unknown name.
func (v *Values) SetRaw(env string, n int64) bool {
	for _, k := range Table {
		if k.Env != env {
			continue
		}
		if k.Unit == Millis {
			*k.field(v) = time.Duration(n) * time.Millisecond
		} else {
			*k.count(v) = n
		}
		return true
	}
	return false
}

// Environ is every knob of v with a positive value as NAME=value, in the
// knobs' own units: what a proxy process must be given to run with v (a
// knob at 0 takes the proxy's default, and a knob whose 0 is allowed
// defaults to 0).
// Durations are rounded up to whole milliseconds, never down to 0.
func (v Values) Environ() []string {
	var env []string
	for _, k := range Table {
		if n := k.Raw(v); n > 0 {
			env = append(env, k.Env+"="+strconv.FormatInt(n, 10))
		}
	}
	return env
}

// Get returns the value of the duration knob named by env, for tables and
// reports; ok is false for an unknown name or a knob that is not a duration.
func (v Values) Get(env string) (time.Duration, bool) {
	for _, k := range Table {
		if k.Env == env && k.Unit == Millis {
			return *k.field(&v), true
		}
	}
	return 0, false
}

// Set changes the duration knob named by env; it reports false for an
// unknown name or a knob that is not a duration.
func (v *Values) Set(env string, d time.Duration) bool {
	for _, k := range Table {
		if k.Env == env && k.Unit == Millis {
			*k.field(v) = d
			return true
		}
	}
	return false
}
