package catalogue

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// twoUsers is the world of the attacks: alice and bob, each with a valid
// token of their own.
var twoUsers = harness.EnvOptions{Users: map[string]string{"alice": "alice-token", "bob": "bob-token"}}

// ownsSessions says why a target cannot run an ownership scenario: the
// attacks need a proxy that recreates sessions and serves the audit API.
func ownsSessions(t harness.Target) string {
	return harness.Lacks(t, harness.CapSessionAdoption, harness.CapAuditAPI)
}

// ownsSessionsAlone is ownsSessions for the rows about what one proxy
// process does on its own (a bound on its client connections, which a load
// balancer in front holds first; its stop), harness.OneProcess.
func ownsSessionsAlone(t harness.Target) string {
	if why := ownsSessions(t); why != "" {
		return why
	}
	return harness.OneProcess(t)
}

// securityScenarios are the attacks of docs/security.md, each a scenario with the
// "security" label, run on every target that claims what they need.
func securityScenarios() []Scenario {
	caps := withBounds(twoUsers, map[string]int64{harness.BoundSessionsUser: 2, harness.BoundSessions: 3})
	idle := withBounds(twoUsers, map[string]int64{harness.BoundSessionIdle: ms(idleForScenario)})
	idle.Everything = true // its whoami names the upstream session a client session holds
	big := withBounds(twoUsers, map[string]int64{harness.BoundUpstreamAnswer: 4096})
	slow := withBounds(twoUsers, map[string]int64{
		harness.BoundReadTimeout: ms(readTimeoutForScenario), harness.BoundIdleConn: ms(idleConnForScenario), harness.BoundHeaderBytes: 8 << 10,
	})
	ttl := withBounds(twoUsers, map[string]int64{harness.BoundSessionTTL: ms(recordTTLForScenario)})
	conns := withBounds(twoUsers, map[string]int64{harness.BoundConns: connsForScenario, harness.BoundReadTimeout: ms(connsReadTimeout)})
	secretURL := twoUsers
	secretURL.DocmostQuery = "apikey=" + upstreamSecret
	// Probes every 200 ms: the health output is judged once a probe has
	// recorded the down upstream, on every target, whether the first probe
	// ran before the link went down or after.
	secretURL = probedOften(secretURL)
	sec := func(more ...string) []string { return append([]string{"security", "sessions"}, more...) }
	return []Scenario{
		{Fault: harness.None{}, Operation: Hijack, Promise: "8 a session belongs to its user",
			Labels: sec("ownership"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ProxyRestart{}, Operation: AdoptOthers, Promise: "8 ownership survives a restart",
			Labels: sec("ownership", "restart"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ProxyKill{}, Operation: AdoptOthers, Promise: "8 ownership survives a restart",
			Labels: sec("ownership", "restart", "kill"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ProxyRestart{}, Operation: DeletedStaysDeleted, Promise: "2 a DELETEd id is never adopted, across restarts",
			Labels: sec("delete", "restart"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: BadSessionIDs, Promise: "8 session ids are validated before any lookup",
			Labels: sec("ids"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: SessionCaps, Promise: "8 sessions are capped per user and in total",
			Labels: sec("caps", "knob"), Env: caps, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: AuditPrivacy, Promise: "8 audit rows only their user can read",
			Labels: sec("audit-api"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: OriginGuard, Promise: "8 Origin and Host are checked on every endpoint",
			Labels: sec("origin"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: UpstreamTooLarge, Promise: "8 an upstream cannot grow the proxy",
			Labels: sec("bounded-io", "knob"), Env: big, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: SlowTrickle, Promise: "8 a slow client cannot hold the proxy",
			Labels: sec("bounded-io", "slow-client", "knob"), Env: slow, Budget: func(b harness.Bounds) time.Duration { return b.D(harness.BoundReadTimeout) },
			Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: IdleConnection, Promise: "8 idle connections are closed",
			Labels: sec("bounded-io", "knob"), Env: slow, Budget: func(b harness.Bounds) time.Duration { return b.D(harness.BoundIdleConn) },
			Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: ConnCap, Promise: "8 open connections are bounded",
			Labels: sec("bounded-io", "knob"), Env: conns, Budget: func(b harness.Bounds) time.Duration { return b.D(harness.BoundReadTimeout) },
			Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: HugeHeaders, Promise: "8 request headers are bounded",
			Labels: sec("bounded-io", "knob"), Env: slow, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.LinkDown{}, Operation: SecretsStayIn, Promise: "8 secrets never leave",
			Labels: sec("secrets"), Env: secretURL, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ProxyRestart{}, Operation: TombstoneExpiry, Promise: "8 session records expire",
			Labels: sec("ttl", "knob", "restart"), Env: ttl, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ProxyRestart{}, Operation: ShutdownInFlight, Promise: "8 a stop answers the calls still running",
			Labels: sec("shutdown", "restart"), Env: twoUsers, Budget: func(b harness.Bounds) time.Duration {
				return b.D(harness.BoundStopDrain) + b.D(harness.BoundShutdownGrace)
			},
			Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: IdleExpiry, Promise: "8 idle sessions expire and are released",
			Labels: sec("idle", "knob"), Env: idle, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
	}
}

// idleForScenario is the idle knob of the expiry scenario: long enough that
// a call is never mistaken for idleness, short enough to wait out.
const idleForScenario = 400 * time.Millisecond

// mcpRequest sends one MCP HTTP request as user's client would, with a
// session id if given ("" sends none), and returns the status and body.
func mcpRequest(ctx context.Context, env *harness.Env, user, method, session, body string) (int, string, error) {
	return mcpRequestAt(ctx, env, env.ProjectURL(), user, method, session, body)
}

// mcpRequestAt is mcpRequest on the MCP endpoint endpoint (another project's).
func mcpRequestAt(ctx context.Context, env *harness.Env, endpoint, user, method, session, body string) (int, string, error) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, method, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header["Mcp-Session-Id"] = []string{session} // as sent, even when not canonical
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

const toolsCall = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"p1","content":"mine now"}}}`

// rpcError checks that an answer has status want and a JSON-RPC error body;
// it returns what is wrong ("" if nothing) and the error's message.
func rpcError(status int, body string, want int) (string, string) {
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != want {
		return fmt.Sprintf("answered %d, want %d: %s", status, want, excerpt(body)), ""
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.JSONRPC != "2.0" || e.Error == nil {
		return "the body is not a JSON-RPC error: " + excerpt(body), ""
	}
	return "", e.Error.Message
}

// aliceArgs are the arguments of alice's calls in the ownership scenarios.
var aliceArgs = map[string]any{"page_id": "p1", "content": "alice's"}

// aliceCalled opens a session for alice and makes one successful call on it,
// so that the session exists upstream too; what names the call in an error.
func aliceCalled(ctx context.Context, env *harness.Env, what string) (*mcp.ClientSession, error) {
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return nil, err
	}
	if o := timedCall(ctx, cs, "docmost_update_page", aliceArgs); o.Err != nil || o.IsError {
		_ = cs.Close()
		return nil, fmt.Errorf("%s: %v %s", what, o.Err, o.Text)
	}
	return cs, nil
}

// Hijack: bob, with his own valid token, presents alice's live session id.
// His tools/call and his DELETE are refused with a JSON-RPC 404; alice's
// session keeps working and no audit row of it names bob.
var Hijack = Operation{Name: "another user's tools/call and DELETE on a live session", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := aliceCalled(ctx, env, "alice's own call")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	id := cs.ID()
	clk := startClock()
	status, body, err := mcpRequest(ctx, env, "bob", http.MethodPost, id, toolsCall)
	o := clk.stop(Observation{Err: err})
	if err != nil {
		return o
	}
	if bad, msg := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "bob's tools/call on alice's session "+bad)
	} else {
		o.Text = msg
	}
	status, body, err = mcpRequest(ctx, env, "bob", http.MethodDelete, id, "")
	if err != nil {
		o.Broken = append(o.Broken, "bob's DELETE: "+err.Error())
	} else if bad, _ := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "bob's DELETE of alice's session "+bad)
	}
	if again := timedCall(ctx, cs, "docmost_update_page", aliceArgs); again.Err != nil || again.IsError {
		o.Broken = append(o.Broken, fmt.Sprintf("alice's session after bob's attempts: %v %s", again.Err, again.Text))
	}
	// Her token with the scheme in lower case is still hers (RFC 6750: the
	// scheme is case-insensitive).
	if req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.ProjectURL(), strings.NewReader(toolsCall)); err == nil {
		req.Header.Set("Authorization", "bearer "+env.Token("alice"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", id)
		hc := &http.Client{}
		if resp, err := hc.Do(req); err != nil {
			o.Broken = append(o.Broken, "alice's call with `bearer` in lower case: "+err.Error())
		} else {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) {
				o.Broken = append(o.Broken, fmt.Sprintf("alice's call with `bearer` in lower case answered %d: %s", resp.StatusCode, excerpt(string(b))))
			}
		}
		hc.CloseIdleConnections()
	}
	o.Broken = append(o.Broken, rowsOnlyOf(ctx, env, id, "alice")...)
	return o
}}

// rowsOnlyOf lists what is wrong with session id's audit rows if any names
// a user other than owner.
func rowsOnlyOf(ctx context.Context, env *harness.Env, id, owner string) []string {
	rows, err := mcplocal.AuditSession(ctx, env, id)
	if err != nil {
		return []string{"audit: " + err.Error()}
	}
	for _, r := range rows {
		if r.User != owner {
			return []string{fmt.Sprintf("the %s row %s of %s's session names user %q", r.Kind, r.CorrelationID, owner, r.User)}
		}
	}
	return nil
}

// AdoptOthers: after the proxy lost every session (the pending fault), bob
// presents alice's id first. He is refused, and so is alice presenting an id
// the proxy never issued; alice's own next call recreates her session, and
// the session_recreated row names her.
var AdoptOthers = Operation{Name: "another user presents a lost session's id first", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := aliceCalled(ctx, env, "alice's call before the fault")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	id := cs.ID()
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	clk := startClock()
	status, body, err := mcpRequest(ctx, env, "bob", http.MethodPost, id, toolsCall)
	o := clk.stop(Observation{Err: err})
	if err != nil {
		return o
	}
	if bad, msg := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "bob adopting alice's id after the restart "+bad)
	} else {
		o.Text = msg
	}
	// An id of the same shape that the proxy never issued: no record names an
	// owner, so nobody may adopt it, not even a user in good standing.
	madeUp := madeUpID(id)
	status, body, err = mcpRequest(ctx, env, "alice", http.MethodPost, madeUp, toolsCall)
	if err != nil {
		return Observation{Err: err}
	}
	if bad, _ := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "alice presenting a well-formed id the proxy never issued "+bad)
	}
	if rows, err := mcplocal.AuditSession(ctx, env, madeUp); err != nil {
		o.Broken = append(o.Broken, "audit: "+err.Error())
	} else if len(rows) > 0 {
		o.Broken = append(o.Broken, fmt.Sprintf("the never-issued id has %d audit rows (%s): it was adopted", len(rows), rows[0].Kind))
	}
	mine := timedCall(ctx, cs, "docmost_update_page", aliceArgs)
	switch {
	case mine.Err != nil || mine.IsError:
		o.Broken = append(o.Broken, fmt.Sprintf("alice's own call after the restart: %v %s", mine.Err, mine.Text))
	case !strings.Contains(mine.Text, NoticePrefix):
		o.Broken = append(o.Broken, "alice's session was not recreated for her (no ⚠ notice)")
	}
	o.Broken = append(o.Broken, rowsOnlyOf(ctx, env, id, "alice")...)
	return o
}}

// madeUpID is a session id of the same length and alphabet as id that no
// proxy issued: what an attacker guesses or a client invents.
func madeUpID(id string) string {
	b := []byte(id)
	for i := range b {
		b[i] = "ZYXWVUTSRQ"[i%10]
	}
	return string(b)
}

// DeletedStaysDeleted: alice DELETEs her session, the proxy restarts (the
// pending fault), and the id is answered with a JSON-RPC 404, never adopted.
// Bob's DELETEs of an id that was never issued and, after the restart, of
// alice's other (lost) session are refused and leave nothing behind.
var DeletedStaysDeleted = Operation{Name: "a DELETEd id presented after a restart", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	id := cs.ID()
	if err := cs.Close(); err != nil { // the go-sdk client's DELETE
		return Observation{Err: fmt.Errorf("alice's DELETE: %w", err)}
	}
	other, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	defer other.Close()
	var o Observation
	status, body, err := mcpRequest(ctx, env, "bob", http.MethodDelete, "NEVER-ISSUED-"+id, "")
	if err != nil {
		return Observation{Err: err}
	}
	if bad, _ := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "bob's DELETE of a never-issued id "+bad)
	}
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	clk := startClock()
	status, body, err = mcpRequest(ctx, env, "alice", http.MethodPost, id, toolsCall)
	o.Err = err
	clk.into(&o)
	if err != nil {
		return o
	}
	if bad, msg := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "the DELETEd id after the restart "+bad)
	} else {
		o.Text = msg
	}
	// Alice's other session, lost by the restart: bob's DELETE of it is
	// refused and leaves no tombstone, so it is still recreated for her.
	status, body, err = mcpRequest(ctx, env, "bob", http.MethodDelete, other.ID(), "")
	if err != nil {
		return Observation{Err: err}
	}
	if bad, _ := rpcError(status, body, http.StatusNotFound); bad != "" {
		o.Broken = append(o.Broken, "bob's DELETE of alice's session after the restart "+bad)
	}
	if mine := timedCall(ctx, other, "docmost_update_page", map[string]any{"page_id": "p1", "content": "still mine"}); mine.Err != nil || mine.IsError {
		o.Broken = append(o.Broken, fmt.Sprintf("alice's session whose DELETE by bob was refused is not recreated for her: %v %s", mine.Err, mine.Text))
	}
	return o
}}

// BadSessionIDs: ids that are not 1-128 visible ASCII characters get a 400
// JSON-RPC error and are never stored (no session, no audit row).
var BadSessionIDs = Operation{Name: "malformed and oversized session ids", Do: func(ctx context.Context, env *harness.Env) Observation {
	before, counted := env.LiveSessions()
	bad := []string{"ünï😀", "a b/../c", strings.Repeat("x", 129), strings.Repeat("y", 1<<16), "tab\tid"}
	var o Observation
	for i, id := range bad {
		var clk *clock
		if i == 0 { // the first id's answer is the timed part
			clk = startClock()
		}
		status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, id, toolsCall)
		if i == 0 {
			o.Err = err
			clk.into(&o)
		}
		if err != nil {
			o.Broken = append(o.Broken, fmt.Sprintf("id %q: %v", excerpt(id), err))
			continue
		}
		if why, msg := rpcError(status, body, http.StatusBadRequest); why != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("id %q %s", excerpt(id), why))
		} else {
			o.Text = msg
		}
		if rows, err := mcplocal.AuditSession(ctx, env, id); err == nil && len(rows) > 0 {
			o.Broken = append(o.Broken, fmt.Sprintf("id %q left %d audit rows", excerpt(id), len(rows)))
		}
	}
	if after, _ := env.LiveSessions(); counted && after != before {
		o.Broken = append(o.Broken, fmt.Sprintf("the proxy holds %d sessions after the bad ids, had %d", after, before))
	}
	return o
}}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"caps","version":"0"}}}`

// SessionCaps: with MCPCTL_SESSIONS_PER_USER_MAX=2 and MCPCTL_SESSIONS_MAX=3,
// alice's third session and then the fourth in all are refused with a
// JSON-RPC error naming the cap that is full; closing one makes room.
var SessionCaps = Operation{Name: "MCPCTL_SESSIONS_PER_USER_MAX and MCPCTL_SESSIONS_MAX decide: sessions over a cap are refused naming it", Do: func(ctx context.Context, env *harness.Env) Observation {
	open := func(user string) (int, string) {
		status, body, err := mcpRequest(ctx, env, user, http.MethodPost, "", initialize)
		if err != nil {
			return 0, err.Error()
		}
		return status, body
	}
	var o Observation
	for range 2 {
		status, body := open("alice")
		if status != http.StatusOK {
			return Observation{Err: fmt.Errorf("alice's session under the cap answered %d: %s", status, excerpt(body))}
		}
	}
	clk := startClock()
	status, body := open("alice")
	clk.into(&o)
	if bad, msg := rpcError(status, body, http.StatusTooManyRequests); bad != "" {
		o.Broken = append(o.Broken, "alice's 3rd session "+bad)
	} else if o.Text = msg; !strings.Contains(msg, "MCPCTL_SESSIONS_PER_USER_MAX") {
		o.Broken = append(o.Broken, "alice's 3rd session was refused without naming MCPCTL_SESSIONS_PER_USER_MAX: "+msg)
	}
	if status, body := open("bob"); status != http.StatusOK {
		o.Broken = append(o.Broken, fmt.Sprintf("bob's 1st session (3rd in all) answered %d: %s", status, excerpt(body)))
	}
	status, body = open("bob")
	if bad, msg := rpcError(status, body, http.StatusTooManyRequests); bad != "" {
		o.Broken = append(o.Broken, "the 4th session in all "+bad)
	} else if !strings.Contains(msg, "MCPCTL_SESSIONS_MAX") {
		o.Broken = append(o.Broken, "the 4th session was refused without naming MCPCTL_SESSIONS_MAX: "+msg)
	}
	return o
}}

// IdleExpiry: with MCPCTL_SESSION_IDLE_MS, a session nobody uses is closed
// once the knob (plus the janitor's sweep, a quarter of it, and the
// tolerance) has passed; its owner's next call recreates it, with the ⚠
// notice, and a call before the knob expires does not.
var IdleExpiry = Operation{Name: "MCPCTL_SESSION_IDLE_MS decides: a session idle past it is closed and recreated on its next call", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	args := map[string]any{"page_id": "p1", "content": "x"}
	if o := timedCall(ctx, cs, "docmost_update_page", args); o.Err != nil || o.IsError {
		return Observation{Err: fmt.Errorf("first call: %v %s", o.Err, o.Text)}
	}
	var o Observation
	if early := timedCall(ctx, cs, "docmost_update_page", args); early.Err != nil || strings.Contains(early.Text, NoticePrefix) {
		o.Broken = append(o.Broken, fmt.Sprintf("a call well inside MCPCTL_SESSION_IDLE_MS found the session expired: %v %s", early.Err, excerpt(early.Text)))
	}
	who := timedCall(ctx, cs, "everything_whoami", nil) // the upstream session alice's session holds there
	if who.Err != nil || who.IsError || who.Text == "" {
		return Observation{Err: fmt.Errorf("everything_whoami: %v %s", who.Err, who.Text)}
	}
	idle := env.Bounds().D(harness.BoundSessionIdle)
	wait := idle + idle/4 + Tolerance
	t := time.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		return Observation{Err: ctx.Err()}
	case <-t.C:
	}
	if n, counted := env.LiveSessions(); counted && n != 0 {
		o.Broken = append(o.Broken, fmt.Sprintf("%v after the last use (MCPCTL_SESSION_IDLE_MS=%v + sweep + tolerance) the proxy still holds %d sessions", wait, idle, n))
	}
	if env.Everything != nil && slices.Contains(env.Everything.SessionIDs(), who.Text) {
		o.Broken = append(o.Broken, fmt.Sprintf("the expired session's upstream session %s was not released %v after its last use", who.Text, wait))
	}
	late := timedCall(ctx, cs, "docmost_update_page", args)
	o.Latency, o.Stalled, o.Err, o.Text, o.Trace = late.Latency, late.Stalled, late.Err, late.Text, late.Trace
	if late.Err == nil && !strings.Contains(late.Text, NoticePrefix) {
		o.Broken = append(o.Broken, "the call after the idle expiry carries no ⚠ notice: the session was never closed")
	}
	return o
}}

// apiGet GETs path from the proxy with user's token ("" sends none) and
// returns the status and body.
func apiGet(ctx context.Context, env *harness.Env, user, path string) (int, string, error) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// AuditPrivacy: alice's trace code and session id, handed to bob (errors
// quote codes), show him none of her rows; without a token the audit and
// instances APIs answer 401; alice reads her own rows.
var AuditPrivacy = Operation{Name: "another user reads the audit trail by trace code and session id", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	o := timedCall(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p1", "content": "secret"})
	if o.Err != nil || o.IsError || o.Trace == "" {
		return Observation{Err: fmt.Errorf("alice's call: %v %s (trace %q)", o.Err, o.Text, o.Trace)}
	}
	// The rows are flushed first, on every replica of a cluster (the audit
	// API flushes only the answering process's queue): a user's read that
	// then finds none was refused them, not early.
	if _, err := mcplocal.Audit(ctx, env, o.Trace); err != nil {
		return Observation{Err: fmt.Errorf("flushing alice's rows: %w", err)}
	}
	rowsFor := func(user, query string) (int, int, string) {
		status, body, err := apiGet(ctx, env, user, "/api/v1/audit?"+query)
		if err != nil {
			return 0, 0, err.Error()
		}
		var b struct {
			Rows []json.RawMessage `json:"rows"`
		}
		_ = json.Unmarshal([]byte(body), &b)
		return status, len(b.Rows), body
	}
	for _, q := range []string{"trace=" + o.Trace, "session=" + url.QueryEscape(cs.ID())} {
		if status, n, body := rowsFor("bob", q); status != http.StatusOK || n != 0 {
			o.Broken = append(o.Broken, fmt.Sprintf("bob's GET /api/v1/audit?%s answered %d with %d of alice's rows: %s", q, status, n, excerpt(body)))
		}
		if status, _, body := rowsFor("", q); status != http.StatusUnauthorized {
			o.Broken = append(o.Broken, fmt.Sprintf("GET /api/v1/audit?%s without a token answered %d, want 401: %s", q, status, excerpt(body)))
		}
		if status, n, body := rowsFor("alice", q); status != http.StatusOK || n == 0 {
			o.Broken = append(o.Broken, fmt.Sprintf("alice's own GET /api/v1/audit?%s answered %d with %d rows: %s", q, status, n, excerpt(body)))
		}
	}
	if status, body, err := apiGet(ctx, env, "", "/api/v1/instances"); err == nil && status != http.StatusUnauthorized {
		o.Broken = append(o.Broken, fmt.Sprintf("GET /api/v1/instances without a token answered %d, want 401: %s", status, excerpt(body)))
	}
	// A chat turn spends LLM credit: without a token it is refused before
	// anything is spent, whether an LLM is configured or not.
	if req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.Target.URL()+"/api/v1/chat", strings.NewReader(`{"message":"spend credit"}`)); err == nil {
		req.Header.Set("Content-Type", "application/json")
		hc := harness.HTTPClient("")
		if resp, err := hc.Do(req); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				o.Broken = append(o.Broken, fmt.Sprintf("POST /api/v1/chat without a token answered %d, want 401: %s", resp.StatusCode, excerpt(string(b))))
			}
		}
		hc.CloseIdleConnections()
	}
	return o
}}

// OriginGuard: a DNS-rebinding page (Host evil.example) and a cross-site
// page (Origin http://evil.example) are refused with 403 on the MCP endpoint
// and on /api/v1; a loopback origin is served; chat takes only JSON bodies.
var OriginGuard = Operation{Name: "cross-origin and rebinding requests on every endpoint", Do: func(ctx context.Context, env *harness.Env) Observation {
	hc := harness.HTTPClient(env.Token("alice"))
	defer hc.CloseIdleConnections()
	do := func(method, path, host, origin, ct, body string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, method, env.Target.URL()+path, strings.NewReader(body))
		if err != nil {
			return 0, err.Error()
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b)
	}
	mcpPath := strings.TrimPrefix(env.ProjectURL(), env.Target.URL())
	var o Observation
	clk := startClock()
	status, body := do(http.MethodPost, mcpPath, "", "http://evil.example", "application/json", initialize)
	clk.into(&o)
	if bad, msg := rpcError(status, body, http.StatusForbidden); bad != "" {
		o.Broken = append(o.Broken, "an initialize from Origin http://evil.example "+bad)
	} else {
		o.Text = msg
	}
	if status, body := do(http.MethodPost, mcpPath, "evil.example", "", "application/json", initialize); status != http.StatusForbidden {
		o.Broken = append(o.Broken, fmt.Sprintf("an initialize with Host evil.example answered %d, want 403: %s", status, excerpt(body)))
	}
	for _, path := range []string{"/api/v1/audit?trace=ABCDEFGH", "/api/v1/instances"} {
		if status, body := do(http.MethodGet, path, "evil.example", "", "", ""); status != http.StatusForbidden {
			o.Broken = append(o.Broken, fmt.Sprintf("GET %s with Host evil.example answered %d, want 403: %s", path, status, excerpt(body)))
		}
		if status, body := do(http.MethodGet, path, "", "http://evil.example", "", ""); status != http.StatusForbidden {
			o.Broken = append(o.Broken, fmt.Sprintf("GET %s from Origin http://evil.example answered %d, want 403: %s", path, status, excerpt(body)))
		}
	}
	if status, body := do(http.MethodPost, "/api/v1/chat", "", "", "application/x-www-form-urlencoded", "message=spend+credit"); status != http.StatusUnsupportedMediaType && status != http.StatusForbidden {
		o.Broken = append(o.Broken, fmt.Sprintf("a form post to /api/v1/chat answered %d, want 415: %s", status, excerpt(body)))
	}
	if status, body := do(http.MethodPost, mcpPath, "", "http://localhost:6274", "application/json", initialize); status != http.StatusOK {
		o.Broken = append(o.Broken, fmt.Sprintf("an initialize from the loopback Origin http://localhost:6274 answered %d, want 200: %s", status, excerpt(body)))
	}
	return o
}}

// The connection knobs of the slow-client scenarios: short enough to wait
// out, far longer than a loopback request takes.
const (
	readTimeoutForScenario = 500 * time.Millisecond
	idleConnForScenario    = 500 * time.Millisecond
)

// UpstreamTooLarge: with MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES=4096, a search
// whose upstream answer is larger comes back as isError naming the knob;
// a small call on the same session still works.
var UpstreamTooLarge = Operation{Name: "MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES decides: a larger upstream answer is an isError naming it", Do: func(ctx context.Context, env *harness.Env) Observation {
	return withSession(ctx, env, func(ctx context.Context, cs *mcp.ClientSession) Observation {
		o := timedCall(ctx, cs, "docmost_search", map[string]any{"query": "everything"})
		switch {
		case o.Err != nil:
			return o
		case !o.IsError || !strings.Contains(o.Text, "MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES"):
			o.Broken = append(o.Broken, "a search larger than the limit was not an isError naming MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES: "+excerpt(o.Text))
		}
		if small := timedCall(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p", "content": "x"}); small.Err != nil || small.IsError {
			o.Broken = append(o.Broken, fmt.Sprintf("a small call after the large one: %v %s", small.Err, small.Text))
		}
		return o
	})
}}

// rawConn dials the proxy for requests written by hand.
func rawConn(ctx context.Context, env *harness.Env) (net.Conn, string, error) {
	u, err := url.Parse(env.Target.URL())
	if err != nil {
		return nil, "", err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	return c, u.Host, err
}

// closedWithin reads from c until the proxy closes it or limit passes, and
// returns how long that took and whether it closed.
func closedWithin(c net.Conn, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return time.Since(start), false
			}
			return time.Since(start), true
		}
	}
}

// SlowTrickle: a client that sends its body one byte at a time is dropped
// once MCPCTL_READ_TIMEOUT_MS has passed, instead of holding a connection
// and a goroutine for as long as it likes.
var SlowTrickle = Operation{Name: "MCPCTL_READ_TIMEOUT_MS decides: a body trickled byte by byte is cut off", Do: func(ctx context.Context, env *harness.Env) Observation {
	c, host, err := rawConn(ctx, env)
	if err != nil {
		return Observation{Err: err}
	}
	defer c.Close()
	path := strings.TrimPrefix(env.ProjectURL(), env.Target.URL())
	clk := startClock()
	defer clk.halt()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\nContent-Length: 100000\r\n\r\n", path, host, env.Token("alice")); err != nil {
		return Observation{Err: err}
	}
	readTimeout := env.Bounds().D(harness.BoundReadTimeout)
	limit := readTimeout + Tolerance
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 50 ms, for far longer than the knob
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if _, err := c.Write([]byte("{")); err != nil {
					return
				}
			}
		}
	}()
	_, closed := closedWithin(c, 3*limit)
	o := clk.stop(Observation{})
	if !closed {
		o.Broken = append(o.Broken, fmt.Sprintf("a trickling client was still connected %v after it began (MCPCTL_READ_TIMEOUT_MS=%v)", o.Latency.Round(time.Millisecond), readTimeout))
	}
	return o
}}

// IdleConnection: a keep-alive connection left idle after one request is
// closed by the proxy once MCPCTL_IDLE_CONN_TIMEOUT_MS has passed.
var IdleConnection = Operation{Name: "MCPCTL_IDLE_CONN_TIMEOUT_MS decides: an idle keep-alive connection is closed", Do: func(ctx context.Context, env *harness.Env) Observation {
	c, host, err := rawConn(ctx, env)
	if err != nil {
		return Observation{Err: err}
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		return Observation{Err: err}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return Observation{Err: fmt.Errorf("the request before idling: %w", err)}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	clk := startClock()
	idleConn := env.Bounds().D(harness.BoundIdleConn)
	_, closed := closedWithin(c, 3*(idleConn+Tolerance))
	o := clk.stop(Observation{})
	if !closed {
		o.Broken = append(o.Broken, fmt.Sprintf("an idle keep-alive connection was still open after %v (MCPCTL_IDLE_CONN_TIMEOUT_MS=%v)", o.Latency.Round(time.Millisecond), idleConn))
	}
	return o
}}

// connsForScenario and connsReadTimeout are ConnCap's knobs: a cap a few
// dials reach, and a read-header bound (the least of 10 s and the read
// timeout) long enough that those dials are younger than it.
const (
	connsForScenario = 3
	connsReadTimeout = time.Second
)

// connRefused reads what the proxy sent a connection within wait: the
// status line and body of an answer it sent unasked, or "" if it sent
// nothing (the connection is open and waits for a request).
func connRefused(c net.Conn, wait time.Duration) (status int, body string, err error) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	_ = c.SetReadDeadline(time.Time{})
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// ConnCap: connections past MCPCTL_CONNS_MAX are refused with a 503 whose
// body is a JSON-RPC error naming the knob; once the oldest silent
// connection has waited out the read-header bound, a new one is served
// instead, and that silent one is closed to make room.
var ConnCap = Operation{Name: "MCPCTL_CONNS_MAX decides: connections past it get a 503 naming it, and make room by closing one silent past the read-header bound", Do: func(ctx context.Context, env *harness.Env) Observation {
	http.DefaultClient.CloseIdleConnections()
	var o Observation
	var open []net.Conn
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	bounds := env.Bounds()
	connsMax, readTimeout := bounds.N(harness.BoundConns), bounds.D(harness.BoundReadTimeout)
	first := time.Now()
	// Dial silent connections until one is refused: never more than the cap
	// may be open (the harness may hold a few of its own).
	refusedAt := -1
	var status int
	var body string
	for i := 0; i <= int(connsMax); i++ {
		c, _, err := rawConn(ctx, env)
		if err != nil {
			return Observation{Err: err}
		}
		open = append(open, c)
		st, b, err := connRefused(c, 100*time.Millisecond)
		if err != nil {
			o.Broken = append(o.Broken, fmt.Sprintf("connection %d: neither open nor refused readably: %v", i+1, err))
			return o
		}
		if st != 0 {
			refusedAt, status, body = i, st, b
			break
		}
	}
	switch {
	case refusedAt < 0:
		o.Broken = append(o.Broken, fmt.Sprintf("%d connections open at once, past MCPCTL_CONNS_MAX=%d", len(open), connsMax))
		return o
	case refusedAt == 0:
		o.Broken = append(o.Broken, fmt.Sprintf("the first connection was refused (MCPCTL_CONNS_MAX=%d)", connsMax))
		return o
	case status != http.StatusServiceUnavailable || !strings.Contains(body, `"jsonrpc":"2.0"`) || !strings.Contains(body, "MCPCTL_CONNS_MAX"):
		o.Broken = append(o.Broken, fmt.Sprintf("a connection past the cap got %d %q: want 503 with a JSON-RPC error naming MCPCTL_CONNS_MAX", status, body))
		return o
	}
	if since := time.Since(first); since >= readTimeout {
		return Observation{Err: fmt.Errorf("dialling took %v, past the read-header bound %v: the machine is too slow for this scenario", since, readTimeout)}
	}
	// The read-header bound passes for the oldest silent connection: the
	// wait is what is tested, no request may be in flight.
	time.Sleep(time.Until(first.Add(readTimeout + Tolerance)))
	clk := startClock()
	defer clk.halt()
	c, host, err := rawConn(ctx, env)
	if err != nil {
		return Observation{Err: err}
	}
	open = append(open, c)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		return Observation{Err: err}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	clk.into(&o)
	if err != nil {
		o.Broken = append(o.Broken, fmt.Sprintf("at the cap, with a connection silent past the read-header bound, a new connection was not served: %v", err))
		return o
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		o.Broken = append(o.Broken, fmt.Sprintf("at the cap, with a connection silent past the read-header bound, a new connection got %d, want 200", resp.StatusCode))
	}
	if _, closed := closedWithin(open[0], Tolerance); !closed {
		o.Broken = append(o.Broken, "the oldest silent connection is still open: it should have made room")
	}
	return o
}}

// HugeHeaders: headers larger than MCPCTL_MAX_HEADER_BYTES get 431, and a
// request just under it is served.
var HugeHeaders = Operation{Name: "MCPCTL_MAX_HEADER_BYTES decides: larger request headers get 431", Do: func(ctx context.Context, env *harness.Env) Observation {
	hc := harness.HTTPClient(env.Token("alice"))
	defer hc.CloseIdleConnections()
	send := func(pad int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+"/healthz", nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-Pad", strings.Repeat("p", pad))
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	max := int(env.Bounds().N(harness.BoundHeaderBytes))
	clk := startClock()
	status, err := send(4 * max)
	o := clk.stop(Observation{Err: err})
	if err == nil && status != http.StatusRequestHeaderFieldsTooLarge {
		o.Broken = append(o.Broken, fmt.Sprintf("headers of %d bytes (MCPCTL_MAX_HEADER_BYTES=%d) answered %d, want 431", 4*max, max, status))
	}
	if status, err := send(max / 2); err != nil || status != http.StatusOK {
		o.Broken = append(o.Broken, fmt.Sprintf("headers well under MCPCTL_MAX_HEADER_BYTES answered %d, %v", status, err))
	}
	return o
}}

// upstreamSecret is the API key an operator put in the upstream's URL.
const upstreamSecret = "SEKRET-K3Y-4242"

// SecretsStayIn: the upstream's URL carries ?apikey=...; with the upstream
// down, the proxy's log (where the harness keeps it), the tools/call error
// text, every list method's JSON-RPC error (secretLists), the requests' audit
// rows and /api/v1/instances all describe the failure without the key.
var SecretsStayIn = Operation{Name: "an upstream URL's key in errors, audit rows and health output", Do: func(ctx context.Context, env *harness.Env) Observation {
	o := call(ctx, env, "docmost_update_page", map[string]any{"page_id": "p", "content": "x"})
	if o.Err != nil {
		return o
	}
	if !o.IsError {
		o.Broken = append(o.Broken, "the call through a down upstream succeeded: the fault did not strike")
	}
	if strings.Contains(o.Text, upstreamSecret) {
		o.Broken = append(o.Broken, "the tools/call error text carries the upstream URL's key: "+excerpt(o.Text))
	}
	if o.Trace != "" {
		rows, err := mcplocal.Audit(ctx, env, o.Trace)
		if err != nil {
			o.Broken = append(o.Broken, "audit: "+err.Error())
		}
		for _, r := range rows {
			if strings.Contains(r.Detail+r.DegradedReason, upstreamSecret) {
				o.Broken = append(o.Broken, fmt.Sprintf("the %s audit row carries the upstream URL's key: %s", r.Kind, excerpt(r.Detail)))
			}
		}
	}
	if status, body, err := apiGet(ctx, env, "alice", "/api/v1/instances"); err == nil && strings.Contains(body, upstreamSecret) {
		o.Broken = append(o.Broken, fmt.Sprintf("/api/v1/instances (%d) carries the upstream URL's key: %s", status, excerpt(body)))
	}
	// An admin's view too: only admins read an upstream's lastError. It is
	// judged once a probe has recorded the down upstream's failure, so the
	// verdict never depends on whether the probe had run yet.
	status, body, probed := probedInstances(ctx, env, "docmost")
	if !probed {
		o.Broken = append(o.Broken, fmt.Sprintf("no probe recorded the down upstream's failure within %v: the health output was never exercised (last %d: %s)", probeRecordWait, status, excerpt(body)))
	} else if strings.Contains(body, upstreamSecret) {
		o.Broken = append(o.Broken, fmt.Sprintf("an admin's /api/v1/instances (%d) carries the upstream URL's key: %s", status, excerpt(body)))
	}
	o.Broken = append(o.Broken, listsKeepTheKey(ctx, env)...)
	// The operator's log too, where the harness keeps it (a binary's stderr,
	// the in-process proxy's logger): the failed call's error is logged.
	if lr, ok := env.Target.(harness.LogReader); ok {
		if logs := lr.Logs(); strings.Contains(logs, upstreamSecret) {
			i := strings.Index(logs, upstreamSecret)
			o.Broken = append(o.Broken, "the proxy's log carries the upstream URL's key: "+excerpt(logs[max(0, i-200):]))
		}
	}
	return o
}}

// probeRecordWait bounds the wait for a health probe to record a down
// upstream's failure: a few probe intervals of the scenario's world.
const probeRecordWait = 10 * time.Second

// probedInstances reads the admin's /api/v1/instances until server's
// instance carries a lastError (a probe has recorded a failure), within
// probeRecordWait; it returns the last answer and whether one did.
func probedInstances(ctx context.Context, env *harness.Env, server string) (int, string, bool) {
	ctx, cancel := context.WithTimeout(ctx, probeRecordWait)
	defer cancel()
	var (
		status int
		body   string
	)
	for {
		s, b, err := apiGetWith(ctx, env, env.AdminToken(), "/api/v1/instances")
		if err == nil {
			status, body = s, b
			var got struct {
				Instances []struct {
					Server    string `json:"server"`
					LastError string `json:"lastError"`
				} `json:"instances"`
			}
			if json.Unmarshal([]byte(b), &got) == nil {
				for _, in := range got.Instances {
					if in.Server == server && in.LastError != "" {
						return status, body, true
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return status, body, false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// secretLists are the list methods a client may send, each failing over the
// down upstream whose URL carries the key: every one is answered with a
// JSON-RPC error carrying its trace code, and neither that error nor the
// request's audit rows quote the key.
var secretLists = []struct {
	method string
	list   func(ctx context.Context, cs *mcp.ClientSession) error
}{
	{"tools/list", func(ctx context.Context, cs *mcp.ClientSession) error { _, err := cs.ListTools(ctx, nil); return err }},
	{"resources/list", func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.ListResources(ctx, nil)
		return err
	}},
	{"resources/templates/list", func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.ListResourceTemplates(ctx, nil)
		return err
	}},
	{"prompts/list", func(ctx context.Context, cs *mcp.ClientSession) error { _, err := cs.ListPrompts(ctx, nil); return err }},
}

// listsKeepTheKey runs every secretLists method on one session and returns
// what it saw broken.
func listsKeepTheKey(ctx context.Context, env *harness.Env) []string {
	var broken []string
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return []string{"connect for the list methods: " + err.Error()}
	}
	defer cs.Close()
	for _, l := range secretLists {
		err := l.list(ctx, cs)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			broken = append(broken, fmt.Sprintf("%s over a down upstream: want a JSON-RPC error, got %v", l.method, err))
			continue
		}
		var data map[string]string
		_ = json.Unmarshal(werr.Data, &data)
		code := data[smoke.TraceMetaKey]
		if !smoke.ValidTraceCode(code) {
			broken = append(broken, fmt.Sprintf("%s's error carries no trace code in error.data: %s", l.method, excerpt(string(werr.Data))))
		}
		if strings.Contains(werr.Message+string(werr.Data), upstreamSecret) {
			broken = append(broken, fmt.Sprintf("%s's JSON-RPC error carries the upstream URL's key: %s", l.method, excerpt(werr.Message)))
		}
		if code == "" {
			continue
		}
		rows, err := mcplocal.Audit(ctx, env, code)
		if err != nil {
			broken = append(broken, fmt.Sprintf("%s: audit: %v", l.method, err))
		}
		if len(rows) == 0 {
			broken = append(broken, fmt.Sprintf("%s: no audit row for trace %s", l.method, code))
		}
		for _, r := range rows {
			if strings.Contains(r.Detail+r.DegradedReason, upstreamSecret) {
				broken = append(broken, fmt.Sprintf("%s: the %s audit row carries the upstream URL's key: %s", l.method, r.Kind, excerpt(r.Detail)))
			}
		}
	}
	return broken
}

// recordTTLForScenario is the record TTL of the expiry scenario: short
// enough to wait out, and longer than the slowest restart it spans on any
// target (catalogue.Windows).
const recordTTLForScenario = 2 * time.Second

// TombstoneExpiry: the session records (owners and tombstones) live
// MCPCTL_SESSION_RECORD_TTL_MS after their last event, then are forgotten.
// Alice's session opened before the wait is, after a restart, an id the proxy
// no longer knows it issued: refused like one it never issued. Her session
// opened inside the TTL is recreated for her. Her DELETEd id is refused on
// both sides of the TTL: forgetting a tombstone never makes an id adoptable.
var TombstoneExpiry = Operation{Name: "MCPCTL_SESSION_RECORD_TTL_MS decides: a session record older than it is forgotten", Do: func(ctx context.Context, env *harness.Env) Observation {
	var clients []*mcp.ClientSession
	defer func() {
		for _, cs := range clients {
			_ = cs.Close() // after the checks: its DELETE changes nothing they saw
		}
	}()
	open := func() (string, error) {
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
		if err != nil {
			return "", err
		}
		clients = append(clients, cs)
		return cs.ID(), nil // not closed before the restart, which loses it
	}
	old, err := open()
	if err != nil {
		return Observation{Err: err}
	}
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	deleted := cs.ID()
	if err := cs.Close(); err != nil {
		return Observation{Err: fmt.Errorf("alice's DELETE: %w", err)}
	}
	var o Observation
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, deleted, list); err != nil || status != http.StatusNotFound {
		o.Broken = append(o.Broken, fmt.Sprintf("right after the DELETE, inside MCPCTL_SESSION_RECORD_TTL_MS, the id answered %d (%v): %s", status, err, excerpt(body)))
	}
	ttl := env.Bounds().D(harness.BoundSessionTTL)
	wait := ttl + Tolerance
	t := time.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		return Observation{Err: ctx.Err()}
	case <-t.C:
	}
	openedAt := time.Now() // the young record's age counts from here
	young, err := open()
	if err != nil {
		return Observation{Err: err}
	}
	restartAt := time.Now()
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	restart := time.Since(restartAt)
	clk := startClock()
	status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, young, list)
	o.Err = err
	clk.into(&o)
	if err != nil {
		return o
	}
	// The young record must be younger than the TTL when the restarted
	// proxy looks it up; if opening it, the restart and the request took
	// longer, a refusal says nothing about the proxy.
	if status != http.StatusOK {
		if defect := Outlasts("MCPCTL_SESSION_RECORD_TTL_MS", ttl, ActionRestart+fmt.Sprintf(" (%v) and the session's opening", restart.Round(time.Millisecond)), time.Since(openedAt)); defect != nil {
			return Observation{Err: defect}
		}
	}
	if status != http.StatusOK {
		o.Broken = append(o.Broken, fmt.Sprintf("alice's session opened inside MCPCTL_SESSION_RECORD_TTL_MS=%v was not recreated after the restart: %d %s", ttl, status, excerpt(body)))
	}
	for what, id := range map[string]string{"opened": old, "DELETEd": deleted} {
		status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, id, list)
		if err != nil {
			return Observation{Err: err}
		}
		if bad, _ := rpcError(status, body, http.StatusNotFound); bad != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("an id %s %v before the restart (MCPCTL_SESSION_RECORD_TTL_MS=%v, its record forgotten) %s", what, wait, ttl, bad))
		}
	}
	return o
}}

// ShutdownInFlight ("SIGTERM with a request still running past the
// shutdown grace: the client gets EOF and the audit row says outcome=ok"):
// alice's tools/call hangs upstream; the proxy is stopped (the pending fault:
// SIGTERM for the binary) and started again. Within MCPCTL_SHUTDOWN_GRACE_MS
// the call is answered with an isError saying the proxy is shutting down,
// quoting its trace code, and that code's tool_call_trace row says
// shutting_down, none ok.
var ShutdownInFlight = Operation{Name: "a call still running when the proxy stops", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	env.Docmost.Set("update_page", upstream.Behavior{Kind: upstream.Hang})
	defer env.Docmost.Reset()
	type answer struct {
		Observation
		at time.Time
	}
	answered := make(chan answer, 1)
	go func() {
		o := timedCall(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p1", "content": "never stored"})
		answered <- answer{o, time.Now()}
	}()
	// The call has passed the proxy once the upstream serves it: only then
	// is it a request in flight that the stop must answer.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for env.Docmost.InFlight() == 0 {
		select {
		case <-ctx.Done():
			return Observation{Err: ctx.Err()}
		case o := <-answered:
			return Observation{Err: fmt.Errorf("the hanging call was answered before the stop: %v %s", o.Err, o.Text)}
		case <-tick.C:
		}
	}
	clk := startClock()
	defer clk.halt()
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	var a answer
	select {
	case <-ctx.Done():
		return Observation{Err: ctx.Err()}
	case a = <-answered:
	}
	o := clk.stop(a.Observation)
	o.Latency = a.at.Sub(clk.start) // from the stop's start to the answer: within the grace
	if o.Err != nil {
		o.Broken = append(o.Broken, fmt.Sprintf("the call running at the stop got no answer: %v", o.Err))
		o.Err = nil
		return o
	}
	if !o.IsError || !strings.Contains(o.Text, "shutting down") || o.Trace == "" || !strings.Contains(o.Text, o.Trace) {
		o.Broken = append(o.Broken, "the call running at the stop was not answered with an isError saying the proxy is shutting down and quoting its trace code: "+excerpt(o.Text))
		return o
	}
	rows, err := mcplocal.Audit(ctx, env, o.Trace)
	if err != nil {
		o.Broken = append(o.Broken, "audit: "+err.Error())
		return o
	}
	said := false
	for _, sp := range mcplocal.Spans(rows) {
		if sp.Kind != mcplocal.KindToolCall {
			continue
		}
		if sp.Status == evidence.StatusOK {
			o.Broken = append(o.Broken, fmt.Sprintf("the tool_call_trace row %s of the call answered at the stop says ok", sp.ID))
		}
		said = said || sp.Status == "shutting_down"
	}
	if !said {
		o.Broken = append(o.Broken, fmt.Sprintf("no tool_call_trace row of trace %s says shutting_down (%d rows)", o.Trace, len(rows)))
	}
	return o
}}
