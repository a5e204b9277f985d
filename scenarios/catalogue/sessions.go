package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// NoticePrefix starts the notice a recreated session's first result carries.
const NoticePrefix = "⚠ Session state unavailable ("

// Reconnect is the operation of promise 2: a client with a live session
// calls a tool, the pending fault strikes (the proxy restarts), and the client
// calls again on its old session. The timed call is the first after the fault.
var Reconnect = Operation{Name: "reconnect after restart", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	id := cs.ID()
	args := map[string]any{"page_id": "p1", "content": "before"}
	if o := timedCall(ctx, cs, env.Tool("update_page"), args); o.Err != nil || o.IsError {
		return Observation{Err: fmt.Errorf("call before the fault: %v %s", o.Err, o.Text)}
	}
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	o := timedCall(ctx, cs, env.Tool("update_page"), args)
	if o.Err != nil {
		return o
	}
	if cs.ID() != id {
		o.Broken = append(o.Broken, fmt.Sprintf("session id changed from %s to %s", id, cs.ID()))
	}
	if !strings.Contains(o.Text, NoticePrefix) {
		o.Broken = append(o.Broken, "the first call after recreation carries no ⚠ Session state unavailable notice")
	}
	if !strings.Contains(o.Text, "begin_session") {
		o.Broken = append(o.Broken, "the notice does not tell the agent to call begin_session again")
	}
	again := timedCall(ctx, cs, env.Tool("update_page"), args)
	if again.Err != nil || strings.Contains(again.Text, NoticePrefix) {
		o.Broken = append(o.Broken, fmt.Sprintf("the second call after recreation: err=%v, notice repeated=%v", again.Err, strings.Contains(again.Text, NoticePrefix)))
	}
	rows, err := mcplocal.SessionSpans(ctx, env, id)
	if err != nil {
		o.Broken = append(o.Broken, "audit: "+err.Error())
		return o
	}
	var recreated *evidence.Span
	for i := range rows {
		if rows[i].Kind == mcplocal.KindRecreated {
			recreated = &rows[i]
		}
	}
	switch {
	case recreated == nil:
		o.Broken = append(o.Broken, "no session_recreated audit row for the session")
	case env.Token("alice") != "" && recreated.Attrs[mcplocal.AttrUser] != "alice":
		o.Broken = append(o.Broken, fmt.Sprintf("session_recreated row has user %q, want alice", recreated.Attrs[mcplocal.AttrUser]))
	case recreated.Trace != o.Trace:
		o.Broken = append(o.Broken, fmt.Sprintf("session_recreated row has code %q, the request that caused it %q", recreated.Trace, o.Trace))
	}
	for _, r := range rows {
		if r.Kind == mcplocal.KindToolCall && r.Start.After(time.Time{}) && env.Token("alice") != "" && r.Attrs[mcplocal.AttrUser] != "alice" {
			o.Broken = append(o.Broken, fmt.Sprintf("%s row %s of the recreated session has user %q", r.Kind, r.Trace, r.Attrs[mcplocal.AttrUser]))
			break
		}
	}
	return o
}}

// DeleteEmptyJSON is the operation of promise 3: DELETE with
// Content-Type: application/json and an empty body closes the session; the
// id is then answered with a JSON-RPC 404 and never adopted; the proxy holds
// no session for it.
var DeleteEmptyJSON = Operation{Name: "DELETE with empty JSON body", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return Observation{Err: err}
	}
	id := cs.ID()
	hc := env.HTTPClient("alice")
	defer hc.CloseIdleConnections()
	if id == "" {
		defer cs.Close()
		return statelessDelete(ctx, env, hc)
	}
	before, counted := env.LiveSessions()

	clk := startClock()
	status, body, err := rawRequest(ctx, hc, http.MethodDelete, env.ProjectURL(), id, "")
	o := clk.stop(Observation{Err: err})
	_ = cs.Close() // its own DELETE now meets a closed session; the client ignores the answer
	if err != nil {
		return o
	}
	if status/100 != 2 {
		o.Broken = append(o.Broken, fmt.Sprintf("DELETE with an empty JSON body answered %d: %s", status, excerpt(body)))
	}
	status, body, err = rawRequest(ctx, hc, http.MethodPost, env.ProjectURL(), id, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	switch {
	case err != nil:
		o.Broken = append(o.Broken, "request on the deleted id: "+err.Error())
	case status != http.StatusNotFound:
		o.Broken = append(o.Broken, fmt.Sprintf("request on the deleted id answered %d, want 404: %s", status, excerpt(body)))
	default:
		var e struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(body), &e) != nil || e.JSONRPC != "2.0" || e.Error == nil {
			// The MCP spec asks for the 404 only; its body is mcplocal's choice.
			o.Breached = append(o.Breached, Breach{Tier: Own, Promise: PromiseDelete, Capability: harness.CapErrorShapes,
				Detail: "the 404 body is not a JSON-RPC error: " + excerpt(body)})
		} else {
			o.Text = e.Error.Message
		}
	}
	if counted {
		if after, _ := env.LiveSessions(); after != before-1 {
			o.Broken = append(o.Broken, fmt.Sprintf("the proxy holds %d sessions after the DELETE, had %d", after, before))
		}
	}
	return o
}}

// statelessDelete holds a proxy that issued no Mcp-Session-Id (stateless,
// as the MCP spec allows) to the stateless promises: there is no session to
// end, so its DELETE is answered (2xx, or 405 as the spec lets a server
// refuse it) and a request after it is served as before.
func statelessDelete(ctx context.Context, env *harness.Env, hc *http.Client) Observation {
	clk := startClock()
	status, body, err := rawRequest(ctx, hc, http.MethodDelete, env.ProjectURL(), "", "")
	o := clk.stop(Observation{Err: err})
	if err != nil {
		return o
	}
	if status/100 != 2 && status != http.StatusMethodNotAllowed {
		o.Broken = append(o.Broken, fmt.Sprintf("stateless: DELETE with an empty JSON body answered %d, want 2xx or 405: %s", status, excerpt(body)))
	}
	o.Text = fmt.Sprintf("stateless (no Mcp-Session-Id issued): DELETE answered %d", status)
	status, body, err = rawRequest(ctx, hc, http.MethodPost, env.ProjectURL(), "", `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	switch {
	case err != nil:
		o.Broken = append(o.Broken, "stateless: a request after the DELETE: "+err.Error())
	case status/100 != 2:
		o.Broken = append(o.Broken, fmt.Sprintf("stateless: a request after the DELETE answered %d: %s", status, excerpt(body)))
	}
	return o
}

// rawRequest sends one MCP HTTP request with a session id and returns the
// status and body. A POST body is sent as JSON; DELETE gets Content-Type:
// application/json and an empty body, as some clients send it.
func rawRequest(ctx context.Context, hc *http.Client, method, url, session, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// sessionAnswered: the operation answered and every promise it checked held.
func sessionAnswered(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	if o.Err != nil {
		return fmt.Errorf("answered with a JSON-RPC error: %s", rpcText(o.Err))
	}
	return nil
}

// CallAcrossFault is a tools/call, the pending fault, and the same call
// again on the same client session (timed): it must be answered, with its
// result or a readable isError (a call whose connection broke is not
// replayed: it may have run). The call after it must work: the proxy has
// reconnected.
var CallAcrossFault = Operation{Name: "tools/call across the fault", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	args := map[string]any{"page_id": "p1", "content": "note"}
	if o := timedCall(ctx, cs, env.Tool("update_page"), args); o.Err != nil || o.IsError {
		return Observation{Err: fmt.Errorf("call before the fault: %v %s", o.Err, o.Text)}
	}
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	o := timedCall(ctx, cs, env.Tool("update_page"), args)
	if next := timedCall(ctx, cs, env.Tool("update_page"), args); next.Err != nil || next.IsError {
		o.Broken = append(o.Broken, fmt.Sprintf("the call after the fault failed too: the proxy did not reconnect (%v %s)", next.Err, excerpt(next.Text)))
	}
	return o
}}
