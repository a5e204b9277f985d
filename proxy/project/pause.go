package project

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// hold is the project's deadline.Options.Hold: while an operator has the
// project paused, a request waits here, before its deadline clock starts.
// A request that waited writes a pause_wait row under its trace code.
func (p *Project) hold(ctx context.Context, method string, req mcp.Request) error {
	start := time.Now()
	waited, err := p.pause.Wait(ctx, p.Name)
	if waited == 0 && err == nil {
		return nil // not paused
	}
	c := callFrom(ctx)
	_, span, parent := trace.StartSpan(ctx)
	c.mu.Lock()
	row := audit.Row{
		Kind: audit.KindPauseWait, CorrelationID: trace.From(ctx), SpanID: span, ParentID: parent,
		SessionID: c.session, User: c.user, Project: p.Name, Start: start, Duration: waited,
		Status: audit.StatusOK, Detail: method + " waited for the project to resume",
	}
	c.mu.Unlock()
	var be *pause.BoundError
	var fe *pause.FullError
	switch {
	case errors.As(err, &be):
		row.Status, row.Detail = audit.StatusTimeout, err.Error()
	case errors.As(err, &fe):
		row.Status, row.Detail = audit.StatusRefused, err.Error()
	case err != nil:
		row.Status, row.Detail = audit.StatusCancelled, err.Error()
	}
	p.audit.Record(row)
	return err
}
