package mcplocal

import (
	"context"
	"net/url"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
)

// Getter reads a proxy's JSON API: a world (harness.Env) is one.
type Getter interface {
	GetJSON(ctx context.Context, path string, v any, apiErr *string) error
}

// Audit fetches the audit rows of one trace code through mcplocal's audit
// API (GET /api/v1/audit?trace=CODE).
func Audit(ctx context.Context, g Getter, code string) ([]audit.Row, error) {
	return query(ctx, g, "trace="+url.QueryEscape(code))
}

// AuditSession fetches the audit rows of one session through mcplocal's
// audit API (GET /api/v1/audit?session=ID).
func AuditSession(ctx context.Context, g Getter, id string) ([]audit.Row, error) {
	return query(ctx, g, "session="+url.QueryEscape(id))
}

// EachGetter is a Getter that can ask every process of a replicated target
// in turn (harness.Env.GetJSONFromEach): the audit API flushes only the
// answering replica's rows.
type EachGetter interface {
	GetJSONFromEach(ctx context.Context, path string, v any, apiErr *string) error
}

func query(ctx context.Context, g Getter, q string) ([]audit.Row, error) {
	var body struct {
		Rows  []audit.Row `json:"rows"`
		Error string      `json:"error"`
	}
	get := g.GetJSON
	if eg, ok := g.(EachGetter); ok {
		get = eg.GetJSONFromEach
	}
	err := get(ctx, "/api/v1/audit?"+q, &body, &body.Error)
	return body.Rows, err
}

// SessionSpans are the spans of every request of one session, from
// mcplocal's audit API, each request's in tree order.
func SessionSpans(ctx context.Context, g Getter, id string) ([]evidence.Span, error) {
	rows, err := AuditSession(ctx, g, id)
	return Spans(rows), err
}

// Evidence is mcplocal's evidence adapter over a world's proxy: its audit
// rows, as spans.
type Evidence struct{ Of Getter }

var _ evidence.Adapter = Evidence{}

// Spans implements evidence.Adapter.
func (e Evidence) Spans(ctx context.Context, trace string) ([]evidence.Span, error) {
	rows, err := Audit(ctx, e.Of, trace)
	return Spans(rows), err
}

// SessionRecord is one record of mcplocal's session store: the project
// and owner of a session id, and whether it was ended.
type SessionRecord = audit.SessionRecord

// SessionRecords reads the records of session id from the store a world
// names (store: "sqlite:PATH"), opened for this read alone.
func SessionRecords(ctx context.Context, store, id string) ([]SessionRecord, error) {
	s, err := audit.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.LookupSession(ctx, id)
}

// Instances fetches mcplocal's health of every upstream server
// (GET /api/v1/instances).
func Instances(ctx context.Context, g Getter) ([]health.Instance, error) {
	var body struct {
		Instances []health.Instance `json:"instances"`
		Error     string            `json:"error"`
	}
	err := g.GetJSON(ctx, "/api/v1/instances", &body, &body.Error)
	return body.Instances, err
}

// Instance is Instances narrowed to one server (the zero Instance, "" status,
// when it is absent or the API did not answer).
func Instance(ctx context.Context, g Getter, server string) health.Instance {
	ins, _ := Instances(ctx, g)
	for _, in := range ins {
		if in.Server == server {
			return in
		}
	}
	return health.Instance{}
}
