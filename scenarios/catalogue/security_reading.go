package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The attacks on how the proxy reads a request (docs/security.md, "One
// reading of a request"): every decision is made from the reading the go-sdk
// serves, batches cannot grow the proxy, names and stored strings are
// bounded, ids come back as sent, and every refusal is a JSON-RPC error.

// batchMaxForScenario is MCPCTL_BATCH_MAX in the batch scenario.
const batchMaxForScenario = 4

// readingScenarios are the security scenarios about the reading of a request.
func readingScenarios() []Scenario {
	caps := withBounds(twoUsers, map[string]int64{harness.BoundSessionsUser: 2, harness.BoundSessions: 3})
	batches := withBounds(twoUsers, map[string]int64{harness.BoundBatch: batchMaxForScenario})
	sdkPath := twoUsers
	sdkPath.NoRelay = true
	// Only the client's cancel may end a hung call within cancelReach: the
	// proxy's own bounds are far past it.
	longBounds := map[string]int64{harness.BoundRequest: ms(30 * time.Second), harness.BoundUpstreamCall: ms(30 * time.Second)}
	cancelSDK, cancelRelay := withBounds(sdkPath, longBounds), withBounds(twoUsers, longBounds)
	open := withBounds(twoProjects, map[string]int64{harness.BoundHeaderBytes: 8 << 10})
	open.SecondProjectOpen = true
	sec := func(more ...string) []string { return append([]string{"security", "reading"}, more...) }
	return []Scenario{
		{Fault: harness.None{}, Operation: ParserDifferential, Promise: "9 every decision about a request is made from one strict reading",
			Labels: sec("caps", "sessions"), Env: caps, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessionsAlone},
		{Fault: harness.None{}, Operation: Batches, Promise: "8 a batch cannot grow the proxy",
			Labels: sec("batch", "knob"), Env: batches, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: LongNames, Promise: "8 names and stored strings are bounded",
			Labels: sec("names", "knob"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: IDsExact, Promise: "9 JSON-RPC ids round-trip byte for byte",
			Labels: sec("ids"), Env: sdkPath, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ToolHang{Tool: "update_page"}, Operation: CancelByOwnID, Promise: "5 a caller's cancel stops the call",
			Labels: sec("ids"), Env: cancelSDK, Budget: func(harness.Bounds) time.Duration { return cancelReach }, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.ToolHang{Tool: "update_page"}, Operation: CancelByOwnIDRelayed, Promise: "5 a caller's cancel stops the call",
			Labels: sec("ids"), Env: cancelRelay, Budget: func(harness.Bounds) time.Duration { return cancelReach }, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: HTTPRefusals, Promise: "8 every refusal is a JSON-RPC error; a wrong token is refused on every project",
			Labels: sec("refusals", "auth"), Env: open, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessionsAlone},
	}
}

// post sends one MCP POST as user's client would, with the session id and
// protocol version header given ("" sends none), and returns the status,
// the Content-Type and the body.
func post(ctx context.Context, env *harness.Env, endpoint, user, session, version, body string) (int, string, string, error) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && resp.StatusCode == http.StatusOK {
		// The session this request opened, if any: closed again at the end.
		defer closeSession(env, endpoint, user, id)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}

// closeSession DELETEs a session a scenario opened by accident, so that it
// does not outlive the scenario.
func closeSession(env *harness.Env, endpoint, user, id string) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodDelete, endpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", id)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
}

// openSession opens a session for user with an initialize asking for
// version, sends notifications/initialized, and returns its id.
func openSession(ctx context.Context, env *harness.Env, user, version string) (string, error) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"reading","version":"0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.ProjectURL(), strings.NewReader(init))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", fmt.Errorf("initialize for %s answered %d with session %q", version, resp.StatusCode, id)
	}
	if status, _, body, err := post(ctx, env, env.ProjectURL(), user, id, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || status/100 != 2 {
		return "", fmt.Errorf("notifications/initialized answered %d %v: %s", status, err, excerpt(body))
	}
	return id, nil
}

// messages returns the JSON-RPC messages of an answer, JSON (one message or
// an array) or SSE (data lines), each as sent.
func messages(body string) []json.RawMessage {
	var out []json.RawMessage
	add := func(b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return
		}
		if b[0] == '[' {
			var arr []json.RawMessage
			if json.Unmarshal(b, &arr) == nil {
				out = append(out, arr...)
			}
			return
		}
		out = append(out, json.RawMessage(b))
	}
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		add([]byte(t))
		return out
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			add([]byte(data))
		}
	}
	return out
}

// answerIDs are the ids (raw, as sent) of the responses in an answer.
func answerIDs(body string) []string {
	var ids []string
	for _, m := range messages(body) {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		dec := json.NewDecoder(bytes.NewReader(m))
		if dec.Decode(&r) == nil && r.Method == nil && len(r.ID) > 0 {
			ids = append(ids, string(r.ID))
		}
	}
	return ids
}

// ParserDifferential: with MCPCTL_SESSIONS_PER_USER_MAX=2 and alice at her
// cap, an initialize carrying an extra "METHOD":"x" key (encoding/json reads
// "x", the go-sdk "initialize") is refused by the cap like any initialize,
// and an initialize inside a batch (no protocol header: 2025-03-26, where
// the SDK accepts batches) is refused with a JSON-RPC error. Neither opens a
// session.
var ParserDifferential = Operation{Name: `an initialize disguised by a "METHOD" key or a batch, at the session cap`, Do: func(ctx context.Context, env *harness.Env) Observation {
	for i := range 2 {
		status, body, err := mcpRequest(ctx, env, "alice", http.MethodPost, "", initialize)
		if err != nil || status != http.StatusOK {
			return Observation{Err: fmt.Errorf("alice's session %d under the cap answered %d %v: %s", i+1, status, err, excerpt(body))}
		}
	}
	before, counted := env.LiveSessions()
	disguised := `{"jsonrpc":"2.0","id":1,"method":"initialize","METHOD":"x","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"caps","version":"0"}}}`
	clk := startClock()
	status, _, body, err := post(ctx, env, env.ProjectURL(), "alice", "", "2025-11-25", disguised)
	o := clk.stop(Observation{Err: err})
	if err != nil {
		return o
	}
	if bad, msg := rpcError(status, body, http.StatusTooManyRequests); bad != "" {
		o.Broken = append(o.Broken, `an initialize with an extra "METHOD":"x" key past alice's cap `+bad)
	} else {
		o.Text = msg
	}
	batch := `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"caps","version":"0"}}}]`
	for _, version := range []string{"", "2025-03-26"} {
		status, _, body, err = post(ctx, env, env.ProjectURL(), "alice", "", version, batch)
		if err != nil {
			o.Broken = append(o.Broken, "a batched initialize: "+err.Error())
		} else if bad, _ := rpcError(status, body, http.StatusBadRequest); bad != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("a batched initialize (protocol header %q) %s", version, bad))
		}
	}
	if after, _ := env.LiveSessions(); counted && after != before {
		o.Broken = append(o.Broken, fmt.Sprintf("the proxy holds %d sessions after the disguised initializes, had %d", after, before))
	}
	return o
}}

// Batches: with MCPCTL_BATCH_MAX=4, on a session that negotiated 2025-03-26
// (where JSON-RPC batches exist), a batch of two pings is answered message
// by message, a batch past the knob and a batch holding an initialize are
// refused with a JSON-RPC error; on a 2025-11-25 session a batch is refused
// whether or not the request carries the protocol header.
var Batches = Operation{Name: "MCPCTL_BATCH_MAX decides: batches past it, with an initialize, or on 2025-06-18 and later are refused", Do: func(ctx context.Context, env *harness.Env) Observation {
	old, err := openSession(ctx, env, "alice", "2025-03-26")
	if err != nil {
		return Observation{Err: err}
	}
	defer closeSession(env, env.ProjectURL(), "alice", old)
	pings := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var o Observation
	clk := startClock()
	status, _, body, err := post(ctx, env, env.ProjectURL(), "alice", old, "2025-03-26", pings(2))
	clk.into(&o)
	if o.Err = err; err != nil {
		return o
	}
	if ids := answerIDs(body); status != http.StatusOK || strings.Join(ids, ",") != "1,2" && strings.Join(ids, ",") != "2,1" {
		o.Broken = append(o.Broken, fmt.Sprintf("a batch of two pings on a 2025-03-26 session answered %d with response ids %v: %s", status, ids, excerpt(body)))
	}
	refused := func(what, session, version, body string) {
		status, _, got, err := post(ctx, env, env.ProjectURL(), "alice", session, version, body)
		if err != nil {
			o.Broken = append(o.Broken, what+": "+err.Error())
			return
		}
		bad, msg := rpcError(status, got, http.StatusBadRequest)
		if bad != "" {
			o.Broken = append(o.Broken, what+" "+bad)
			return
		}
		o.Text = msg
	}
	refused(fmt.Sprintf("a batch of %d pings (MCPCTL_BATCH_MAX=%d)", batchMaxForScenario+1, batchMaxForScenario), old, "2025-03-26", pings(batchMaxForScenario+1))
	if !strings.Contains(o.Text, "MCPCTL_BATCH_MAX") {
		o.Broken = append(o.Broken, "the batch past MCPCTL_BATCH_MAX was refused without naming it: "+o.Text)
	}
	refused("a batch holding an initialize on a 2025-03-26 session", old, "2025-03-26",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}]`)
	current, err := openSession(ctx, env, "alice", "2025-11-25")
	if err != nil {
		return Observation{Err: err}
	}
	defer closeSession(env, env.ProjectURL(), "alice", current)
	refused("a batch on a 2025-11-25 session, with its protocol header", current, "2025-11-25", pings(2))
	refused("a batch on a 2025-11-25 session, without a protocol header", current, "", pings(2))
	return o
}}

// LongNames: tools/calls whose tool name is past MCPCTL_MAX_NAME_BYTES, or
// holds a character the MCP spec does not allow in a tool name, are refused
// with a JSON-RPC error naming the knob; a 64 KiB method name and a 64 KiB
// string id are answered, and no audit row of the session, nor the proxy's
// log where the harness keeps it, holds either whole.
var LongNames = Operation{Name: "MCPCTL_MAX_NAME_BYTES and MCPCTL_MAX_STORED_STRING_BYTES decide: longer tool names are refused; stored strings are cut", Do: func(ctx context.Context, env *harness.Env) Observation {
	id, err := openSession(ctx, env, "alice", "2025-11-25")
	if err != nil {
		return Observation{Err: err}
	}
	defer closeSession(env, env.ProjectURL(), "alice", id)
	long := strings.Repeat("n", 64<<10)
	callNamed := func(name string) string {
		return `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
	}
	var o Observation
	bad := []string{long, strings.Repeat("d", int(env.Bounds().N(harness.BoundNameBytes))+1), "docmost update page", "docmost/update"}
	for i, name := range bad {
		var clk *clock
		if i == 0 {
			clk = startClock()
		}
		status, _, body, err := post(ctx, env, env.ProjectURL(), "alice", id, "2025-11-25", callNamed(name))
		if i == 0 {
			o.Err = err
			clk.into(&o)
		}
		if err != nil {
			o.Broken = append(o.Broken, fmt.Sprintf("tool name %q: %v", excerpt(name), err))
			continue
		}
		if why, msg := rpcError(status, body, http.StatusBadRequest); why != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("tool name %q (%d bytes) %s", excerpt(name), len(name), why))
		} else if o.Text = msg; !strings.Contains(msg, "MCPCTL_MAX_NAME_BYTES") {
			o.Broken = append(o.Broken, fmt.Sprintf("tool name %q was refused without naming MCPCTL_MAX_NAME_BYTES: %s", excerpt(name), msg))
		}
	}
	method := strings.Repeat("m", 64<<10)
	longID := strings.Repeat("i", 64<<10)
	for what, body := range map[string]string{
		"a 64 KiB method":    `{"jsonrpc":"2.0","id":6,"method":"` + method + `","params":{}}`,
		"a 64 KiB string id": `{"jsonrpc":"2.0","id":"` + longID + `","method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"p1","content":"x"}}}`,
	} {
		if status, _, got, err := post(ctx, env, env.ProjectURL(), "alice", id, "2025-11-25", body); err != nil || status == 0 {
			o.Broken = append(o.Broken, fmt.Sprintf("%s: %d %v %s", what, status, err, excerpt(got)))
		}
	}
	whole := []string{long[:4096], method[:4096], longID[:4096]}
	if rows, err := mcplocal.AuditSession(ctx, env, id); err != nil {
		o.Broken = append(o.Broken, "audit: "+err.Error())
	} else {
		for _, r := range rows {
			all := r.Tool + r.Detail + r.DegradedReason + r.CorrelationID + r.Stage + r.Server
			for _, w := range whole {
				if strings.Contains(all, w) {
					o.Broken = append(o.Broken, fmt.Sprintf("the %s audit row keeps a 64 KiB string whole (%d bytes of text)", r.Kind, len(all)))
					break
				}
			}
		}
	}
	if lr, ok := env.Target.(harness.LogReader); ok {
		logs := lr.Logs()
		for _, w := range whole {
			if strings.Contains(logs, w) {
				o.Broken = append(o.Broken, fmt.Sprintf("the proxy's log keeps a 64 KiB string whole (%s…)", w[:8]))
			}
		}
	}
	return o
}}

// IDsExact: on the go-sdk path (relay off), requests whose ids the SDK
// would rewrite (a number past int64, 1.5, 1e3, -0, a string with an
// escape) are answered with the id exactly as sent, alone and inside one
// batch (on a 2025-03-26 session).
var IDsExact = Operation{Name: "JSON-RPC ids the go-sdk would rewrite come back byte for byte", Do: func(ctx context.Context, env *harness.Env) Observation {
	id, err := openSession(ctx, env, "alice", "2025-11-25")
	if err != nil {
		return Observation{Err: err}
	}
	defer closeSession(env, env.ProjectURL(), "alice", id)
	var o Observation
	ids := []string{`123456789012345678901234567890`, `1.5`, `1e3`, `-0`, `"\u0041b"`, `"plain"`, `7`}
	for i, rid := range ids {
		reqs := []string{
			`{"jsonrpc":"2.0","id":` + rid + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + rid + `,"method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"p1","content":"ids"}}}`,
		}
		for _, body := range reqs {
			var clk *clock
			if i == 0 {
				clk = startClock()
			}
			status, _, got, err := post(ctx, env, env.ProjectURL(), "alice", id, "2025-11-25", body)
			if i == 0 {
				o.Err = err
				clk.into(&o)
			}
			if err != nil {
				o.Broken = append(o.Broken, fmt.Sprintf("id %s: %v", rid, err))
				continue
			}
			if back := answerIDs(got); status != http.StatusOK || len(back) != 1 || back[0] != rid {
				o.Broken = append(o.Broken, fmt.Sprintf("id %s came back as %v (%d): %s", rid, back, status, excerpt(got)))
			}
		}
	}
	// The same ids inside one batch, on a 2025-03-26 session (batches are
	// that version's): each comes back as sent.
	old, err := openSession(ctx, env, "alice", "2025-03-26")
	if err != nil {
		o.Broken = append(o.Broken, "a 2025-03-26 session for the batch: "+err.Error())
		return o
	}
	defer closeSession(env, env.ProjectURL(), "alice", old)
	var batch []string
	for _, rid := range ids {
		batch = append(batch, `{"jsonrpc":"2.0","id":`+rid+`,"method":"ping"}`)
	}
	status, _, got, err := post(ctx, env, env.ProjectURL(), "alice", old, "2025-03-26", "["+strings.Join(batch, ",")+"]")
	if err != nil {
		o.Broken = append(o.Broken, "the batch: "+err.Error())
		return o
	}
	back := map[string]bool{}
	for _, b := range answerIDs(got) {
		back[b] = true
	}
	for _, rid := range ids {
		if status != http.StatusOK || !back[rid] {
			o.Broken = append(o.Broken, fmt.Sprintf("id %s inside a batch did not come back as sent (%d): %s", rid, status, excerpt(got)))
		}
	}
	return o
}}

// cancelReach bounds the wait for a client's cancel to end the hung
// upstream call (the scenario's request deadline and upstream call timeout
// are far longer).
const cancelReach = 3 * time.Second

// CancelByOwnID: a tools/call whose id the go-sdk would rewrite (1.5, a
// number past int64, a string with an escape) hangs upstream; the
// client's notifications/cancelled names it by that id, as sent; the
// upstream call ends cancelled (the fake records it), on the go-sdk path,
// where the request is served under a stand-in id, and on the relay.
var (
	CancelByOwnID        = cancelByOwnID("a client's cancel naming a call by an id the go-sdk would rewrite (relay off)")
	CancelByOwnIDRelayed = cancelByOwnID("a client's cancel naming a call by an id the go-sdk would rewrite (relay on)")
)

func cancelByOwnID(name string) Operation {
	return Operation{Name: name, Do: cancelByOwnIDDo}
}

func cancelByOwnIDDo(ctx context.Context, env *harness.Env) Observation {
	id, err := openSession(ctx, env, "alice", "2025-11-25")
	if err != nil {
		return Observation{Err: err}
	}
	defer closeSession(env, env.ProjectURL(), "alice", id)
	clk := startClock()
	var o Observation
	for _, rid := range []string{`1.5`, `123456789012345678901234567890`, `"\u0041b"`} {
		before := cancelledCalls(env)
		cctx, stop := context.WithTimeout(ctx, cancelReach)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _, _, _ = post(cctx, env, env.ProjectURL(), "alice", id, "2025-11-25", `{"jsonrpc":"2.0","id":`+rid+`,"method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"p1","content":"cancel me"}}}`)
		}()
		for env.Docmost.InFlight() == 0 && cctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		if cctx.Err() != nil {
			o.Broken = append(o.Broken, "id "+rid+": the call never reached the upstream: the fault did not strike")
		} else {
			status, _, got, err := post(ctx, env, env.ProjectURL(), "alice", id, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+rid+`,"reason":"the user stopped it"}}`)
			if err != nil || status != http.StatusAccepted {
				o.Broken = append(o.Broken, fmt.Sprintf("id %s: the cancel got %d %v: %s", rid, status, err, excerpt(got)))
			}
			for cancelledCalls(env) == before && cctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if cancelledCalls(env) == before {
				o.Broken = append(o.Broken, fmt.Sprintf("5 the client's cancel of the call with id %s did not reach it: the upstream call ran on past %v", rid, cancelReach))
			}
		}
		stop()
		<-done
		for end := time.Now().Add(cancelReach); env.Docmost.InFlight() > 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond) // the next id starts on an idle upstream
		}
	}
	clk.into(&o)
	return o
}

// cancelledCalls counts the docmost fake's calls that ended cancelled.
func cancelledCalls(env *harness.Env) int {
	n := 0
	for _, c := range env.Docmost.Calls() {
		if c.Cancelled {
			n++
		}
	}
	return n
}

// HTTPRefusals: a 1 MiB Mcp-Session-Id header is refused 431 with a
// JSON-RPC error body, not net/http's text/plain; a wrong token is 401 with
// a JSON-RPC error on a project that requires a token and on one that does
// not (requireAuth: false): it never becomes an anonymous request.
var HTTPRefusals = Operation{Name: "a 1 MiB session-id header and a wrong token, on every project", Do: func(ctx context.Context, env *harness.Env) Observation {
	var o Observation
	clk := startClock()
	status, ctype, body, err := post(ctx, env, env.ProjectURL(), "alice", strings.Repeat("s", 1<<20), "2025-11-25", toolsCall)
	o = clk.stop(Observation{Err: err})
	if err != nil {
		return o
	}
	if bad, _ := rpcError(status, body, http.StatusRequestHeaderFieldsTooLarge); bad != "" || !strings.HasPrefix(ctype, "application/json") {
		o.Broken = append(o.Broken, fmt.Sprintf("a 1 MiB Mcp-Session-Id header (%s) %s", ctype, bad))
	}
	for _, endpoint := range []string{env.ProjectURL(), env.ProjectURLOf(harness.OtherProject)} {
		hc := harness.HTTPClient("not-" + env.Token("alice"))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(initialize))
		if err != nil {
			return Observation{Err: err}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			o.Broken = append(o.Broken, endpoint+": "+err.Error())
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		hc.CloseIdleConnections()
		if resp.StatusCode == http.StatusOK {
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				closeSession(env, endpoint, "", sid)
			}
		}
		if bad, _ := rpcError(resp.StatusCode, string(b), http.StatusUnauthorized); bad != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("a wrong token on %s %s", endpoint, bad))
		}
	}
	return o
}}
