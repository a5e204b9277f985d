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

// Knob describes one bound: its environment variable, default and what it bounds.
type Knob struct {
	Env     string
	Default time.Duration
	Bounds  string
	field   func(*Values) *time.Duration
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
	ChatBudget           time.Duration
	AuditQueryTimeout    time.Duration
}

// Table lists every knob, in the order docs/knobs.md shows them.
var Table = []Knob{
	{"MCPCTL_LLM_CALL_BUDGET_MS", 20 * time.Second, "one complete(), failover included",
		func(v *Values) *time.Duration { return &v.LLMCallBudget }},
	{"MCPCTL_LLM_PROVIDER_TIMEOUT_MS", 10 * time.Second, "one provider attempt inside that budget",
		func(v *Values) *time.Duration { return &v.LLMProviderTimeout }},
	{"MCPCTL_STAGE_LLM_BUDGET_MS", 30 * time.Second, "all LLM work in one stage invocation",
		func(v *Values) *time.Duration { return &v.StageLLMBudget }},
	{"MCPCTL_GATE_LLM_TIMEOUT_MS", 8 * time.Second, "the gate's begin_session prompt selection",
		func(v *Values) *time.Duration { return &v.GateLLMTimeout }},
	{"MCPCTL_PAGINATION_LLM_TIMEOUT_MS", 10 * time.Second, "pagination's smart index",
		func(v *Values) *time.Duration { return &v.PaginationLLMTimeout }},
	{"MCPCTL_REQUEST_DEADLINE_MS", 90 * time.Second, "one MCP request end to end, from accept to answer",
		func(v *Values) *time.Duration { return &v.RequestDeadline }},
	{"MCPCTL_UPSTREAM_CALL_TIMEOUT_MS", 30 * time.Second, "one call to an upstream MCP server",
		func(v *Values) *time.Duration { return &v.UpstreamCallTimeout }},
	{"MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS", 10 * time.Second, "connecting and initializing one upstream session",
		func(v *Values) *time.Duration { return &v.UpstreamConnect }},
	{"MCPCTL_AUDIT_WRITE_TIMEOUT_MS", 1 * time.Second, "one audit row write (never on the request path)",
		func(v *Values) *time.Duration { return &v.AuditWriteTimeout }},
	{"MCPCTL_SHUTDOWN_GRACE_MS", 5 * time.Second, "draining in-flight requests when the proxy stops",
		func(v *Values) *time.Duration { return &v.ShutdownGrace }},
	{"MCPCTL_CHAT_BUDGET_MS", 60 * time.Second, "one chat turn through the failover chain, streaming included",
		func(v *Values) *time.Duration { return &v.ChatBudget }},
	{"MCPCTL_AUDIT_QUERY_TIMEOUT_MS", 10 * time.Second, "one GET /api/v1/audit query, flush included",
		func(v *Values) *time.Duration { return &v.AuditQueryTimeout }},
}

// Defaults returns every knob at its default.
func Defaults() Values {
	var v Values
	for _, k := range Table {
		*k.field(&v) = k.Default
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
		ms, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || ms <= 0 {
			return Values{}, fmt.Errorf("knob %s=%q: want a positive whole number of milliseconds", k.Env, raw)
		}
		*k.field(&v) = time.Duration(ms) * time.Millisecond
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

// Get returns the value of the knob named by env, for tables and reports.
func (v Values) Get(env string) (time.Duration, bool) {
	for _, k := range Table {
		if k.Env == env {
			return *k.field(&v), true
		}
	}
	return 0, false
}

// Set changes the knob named by env; it reports false for an unknown name.
func (v *Values) Set(env string, d time.Duration) bool {
	for _, k := range Table {
		if k.Env == env {
			*k.field(v) = d
			return true
		}
	}
	return false
}
