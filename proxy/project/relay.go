package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/relay"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// RelayCall answers one tools/call of session id through the raw relay
// (proxy/relay): the call's bytes go to the session's own upstream session
// and the answer's bytes come back, without the go-sdk decoding either on
// the way. It keeps what the SDK path keeps: the trace code, the pause, the
// request deadline and the upstream call timeout with their answers, the
// audit rows, progress and log messages on the call's stream, sampling,
// elicitation and roots asked of this client on the call's stream (ask),
// the client's cancellation.
//
// It reports false, having written nothing, when the call must take the SDK
// path: the proxy's own tools, an unknown tool, a gate not yet opened by
// begin_session, a client that offers sampling, elicitation or roots but
// holds no standalone stream, an armed failpoint, a recreation notice still owed, a closed
// session.
func (p *Project) RelayCall(w http.ResponseWriter, r *http.Request, id string, rc relay.Call) bool {
	p.mu.Lock()
	cl := p.clients[id]
	p.mu.Unlock()
	if !p.Relaying() || cl == nil || p.gatedSession(id) || p.fail.Armed(failpoint.ToolCall, rc.Name) || p.sessions.NoticePending(id) {
		return false
	}
	if _, own := p.proxyTool(rc.Name); own {
		return false
	}
	if cl.offersRequests() && !cl.isListening() {
		// Both paths ask such a client on the call's own stream; its
		// calls stay on the SDK path, whose answers it was first held to.
		return false
	}
	server, tool, ok := p.internal(rc.Name)
	if !ok {
		return false
	}
	meta, ok := relayMeta(rc.Meta)
	if !ok {
		return false
	}
	conn, err := cl.conn(server)
	if err != nil {
		return false
	}
	p.relayed.Add(1)
	p.relay(w, r, cl, conn, rc, server, tool, meta)
	return true
}

// offersRequests reports whether the client said it answers requests an
// upstream may send during a call (roots, sampling, elicitation).
func (c *client) offersRequests() bool {
	k := c.caps
	return k != nil && (k.Roots.ListChanged || k.RootsV2 != nil || k.Sampling != nil || k.Elicitation != nil)
}

// gatedSession reports whether session id must still call begin_session
// (the SDK path answers its refusal).
func (p *Project) gatedSession(id string) bool {
	if p.gate == nil {
		return false
	}
	info, ok := p.sessions.Get(id)
	return !ok || !info.GateOpen
}

// Relaying reports whether the project relays plain tools/calls (config
// `relay: true`).
func (p *Project) Relaying() bool { return p.relayOn }

// Relayed is how many tools/calls the raw relay answered.
func (p *Project) Relayed() int64 { return p.relayed.Load() }

// relayMeta is the _meta sent upstream: the client's, without the trace
// code key (as upstreamMeta does); nil when there is none. ok is false for
// a _meta that is not an object.
func relayMeta(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	if _, has := m[trace.MetaKey]; !has {
		if len(m) == 0 {
			return nil, true
		}
		return raw, true
	}
	delete(m, trace.MetaKey)
	if len(m) == 0 {
		return nil, true
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

// relayOut is the client's HTTP answer to a relayed call: a JSON body, or
// an SSE stream once something (progress, a log message) went out before
// the result.
type relayOut struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	sse  bool
	done bool // the answer is written: later events are dropped
}

func (o *relayOut) event(msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.writeEvent(msg)
	}
}

func (o *relayOut) writeEvent(msg []byte) {
	if !o.sse {
		o.sse = true
		h := o.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		o.w.WriteHeader(http.StatusOK)
	}
	_, _ = o.w.Write(relay.Event(msg))
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *relayOut) answer(msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	if o.sse {
		o.writeEvent(msg)
		return
	}
	o.w.Header().Set("Content-Type", "application/json")
	o.w.WriteHeader(http.StatusOK)
	_, _ = o.w.Write(msg)
}

// relay runs a call RelayCall took through the request's one guard
// (deadline.Guard, which the SDK path's Middleware runs too) and writes the
// answer it decides.
func (p *Project) relay(w http.ResponseWriter, r *http.Request, cl *client, conn *upstream.Conn, rc relay.Call, server, tool string, meta json.RawMessage) {
	c := &call{session: cl.id, user: r.Header.Get(HeaderUser), server: server, tool: rc.Name}
	if c.user == "" {
		if info, ok := p.sessions.Get(c.session); ok {
			c.user = info.User
		}
	}
	// The client's notifications/cancelled (CancelRelayed) ends the call
	// as the go-sdk ends a handler's context.
	ctx, cancelCall := context.WithCancel(r.Context())
	defer cancelCall()
	defer cl.relaying(rc.ID, cancelCall)()
	o := p.guard()
	o.Begin = func(ctx context.Context, _ string, _ mcp.Request) context.Context {
		return context.WithValue(ctx, callKey{}, c)
	}
	out := &relayOut{w: w}
	res, err := deadline.Guard(ctx, o, deadline.Request{Method: "tools/call", Header: r.Header}, func(ctx context.Context) (mcp.Result, error) {
		return p.relayCall(ctx, cl, conn, rc, server, tool, meta, out)
	})
	out.answer(relayAnswer(rc.ID, res, err))
}

// passedOn is the upstream's result as the relay passes it on: its bytes,
// stamped with the trace code, and the result they stand for, whose
// isError and first text the guard reads (deadline.Passed).
type passedOn struct {
	*mcp.CallToolResult
	raw json.RawMessage
}

// Shown is the result the bytes stand for.
func (r *passedOn) Shown() *mcp.CallToolResult { return r.CallToolResult }

// relayAnswer is the JSON-RPC answer to id the guard decided: the
// upstream's result as it came, or the result (or error) the guard made.
func relayAnswer(id json.RawMessage, res mcp.Result, err error) []byte {
	if po, ok := res.(*passedOn); ok {
		return relay.Response(id, po.raw, nil)
	}
	if err != nil { // the guard answers a tools/call with a result; an error is kept as it is
		we := relay.WireError{Code: deadline.CodeRequestFailed, Message: err.Error()}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			we.Code, we.Data = je.Code, je.Data
		}
		b, _ := json.Marshal(we)
		return relay.Response(id, nil, b)
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		b = []byte(`{"content":[],"isError":true}`)
	}
	return relay.Response(id, b, nil)
}

// relayCall forwards the call and, when the project has stages and the
// upstream's result is not an error, decodes the result once and runs the
// pipeline over it, as callTool does; an upstream's failure is answered as
// callTool answers it.
func (p *Project) relayCall(ctx context.Context, cl *client, conn *upstream.Conn, rc relay.Call, server, tool string, meta json.RawMessage, out *relayOut) (mcp.Result, error) {
	code := trace.From(ctx)
	got, isError, text, err := p.relayUpstream(ctx, cl, conn, rc, server, tool, meta, out, code)
	if err == nil && !isError && !p.pipeline.Empty() {
		var res mcp.CallToolResult
		if err = json.Unmarshal(got, &res); err == nil {
			return p.postProcess(ctx, callFrom(ctx), &res), nil
		}
		err = fmt.Errorf("upstream %s: calling \"tools/call\": %w", server, err)
	}
	if err != nil {
		return errorResult(fmt.Sprintf("%v; %s [trace %s]", err, upstream.Advice(err, server), code)), nil
	}
	shown := &mcp.CallToolResult{IsError: isError}
	if isError {
		shown.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	}
	return &passedOn{CallToolResult: shown, raw: got}, nil
}

// relayUpstream sends the call on the session's upstream session, under the
// upstream call timeout, reconnecting once if the upstream forgot the
// session, and writes its upstream_call row. It returns the result stamped
// with code, whether it is an isError result and its first text; or the
// error, worded as the SDK path words it.
func (p *Project) relayUpstream(ctx context.Context, cl *client, conn *upstream.Conn, rc relay.Call, server, tool string, meta json.RawMessage, out *relayOut, code string) (json.RawMessage, bool, string, error) {
	c := callFrom(ctx)
	_, span, parent := trace.StartSpan(ctx)
	start := time.Now()
	after := conn.CallTimeout()
	uctx, cancel := context.WithTimeoutCause(ctx, after, &upstream.TimeoutError{Server: server, After: after})
	defer cancel()
	_, done := cl.begin(uctx, server, rc.Progress)
	defer done()

	id := relay.NewID()
	var stamped, got json.RawMessage
	var isError bool
	var text string
	rs, err := conn.Session(uctx) // the first call of a session connects, as on the SDK path
	connectFailed := err != nil   // answered as the SDK path's do answers it: as it is
	var body []byte
	if err == nil {
		body, err = rc.Request(id, tool, meta)
	}
	tctx, end := conn.Track(uctx) // Close tells the upstream of it, if it is still running
	if err == nil {
		var result json.RawMessage
		result, err = p.relayRound(tctx, cl, conn, &rs, server, id, body, out)
		if err == nil {
			var r relay.Result
			if r, err = relay.ParseResult(result); err == nil {
				got, isError = result, r.IsError
				if isError {
					text = r.FirstText() // the row's detail
				}
				stamped, err = r.Stamped(trace.MetaKey, code)
				stamped = redact.ValuesIn(stamped) // an upstream may echo a secret the proxy holds
			}
			if err != nil {
				err = fmt.Errorf("upstream %s: calling \"tools/call\": %w", server, err)
			}
		}
	}
	if err != nil && uctx.Err() != nil && !connectFailed {
		// The row words it as the SDK path's does: the timeout or deadline
		// by its cause, a cancel as "context canceled" (not the transport's
		// "Post <url>: context canceled").
		if cause := context.Cause(uctx); cause != nil {
			err = cause
		}
		// As the SDK client tells the upstream; under the call's values, so
		// the Conn takes the call off its list once the cancel went.
		go p.relayCancelled(context.WithoutCancel(tctx), rs, id, after)
	}
	end(err != nil && uctx.Err() != nil && !connectFailed)
	err = redact.Error(err)
	p.audit.Record(p.upstreamRow(c, code, span, parent, server, tool, start, err, got))
	return stamped, isError, text, err
}

// relayRound posts body and reads the upstream's answer to id: progress and
// log messages go to the client as they come, the upstream's own requests
// (sampling, elicitation, roots, ping) are answered through the client's
// session, and the result (or the JSON-RPC error, as an error) is returned.
// An upstream that forgot the session gets one reconnect: it rejected the
// first try, so nothing ran twice. A failure of the answer is worded as the
// go-sdk client words it, and where that client fails its whole session
// (an answer it cannot read or decode, a refusal it cannot classify) the
// session is forgotten here too, so the next call connects anew.
func (p *Project) relayRound(ctx context.Context, cl *client, conn *upstream.Conn, rs *upstream.RawSession, server string, id json.RawMessage, body []byte, out *relayOut) (json.RawMessage, error) {
	failed := func(err error) (json.RawMessage, error) {
		return nil, fmt.Errorf("upstream %s: calling \"tools/call\": %w", server, err)
	}
	upstream.Sent(ctx, id, rs.ID)
	st, err := rawSession(*rs).Post(ctx, body)
	if errors.Is(err, relay.ErrSessionGone) {
		var n upstream.RawSession
		if n, err = conn.Reconnect(ctx, *rs); err != nil {
			return nil, err
		}
		*rs = n
		upstream.Sent(ctx, id, n.ID)
		st, err = rawSession(n).Post(ctx, body)
	}
	if err != nil {
		werr, fails := postError(err)
		if fails {
			conn.Forget(*rs)
		}
		return failed(werr)
	}
	defer st.Close()
	for {
		b, err := st.Next()
		if err != nil && st.SSE() && st.LastEventID() != "" {
			// A stream the upstream offers to resume: the go-sdk client of
			// a Conn (MaxRetries -1: none) gives up resuming it at once and
			// fails its session.
			conn.Forget(*rs)
			return failed(fmt.Errorf("%s: failed to reconnect (session ID: %v): connection aborted after 0 attempts", sendingCall, rs.ID))
		}
		if err != nil && st.SSE() {
			// The go-sdk client ends the call so when a stream it cannot
			// resume ends or breaks before the answer; the session lives on.
			return failed(errors.New("request terminated without response"))
		}
		if err != nil {
			conn.Forget(*rs)
			return failed(fmt.Errorf("%s: failed to read body: %v", sendingCall, err))
		}
		m := relay.Classify(b)
		if m.Kind == relay.Invalid {
			if _, derr := jsonrpc.DecodeMessage(b); derr != nil {
				// Not JSON-RPC: the go-sdk client fails its session with the
				// decoder's words (this path only: no go-sdk on a good answer).
				conn.Forget(*rs)
				if st.SSE() {
					return failed(fmt.Errorf("%s: failed to decode event: %v", sendingCall, derr))
				}
				return failed(fmt.Errorf("%s: failed to decode response: %v", sendingCall, derr))
			}
		}
		switch m.Kind {
		case relay.Answer:
			if string(m.ID) != string(id) {
				continue
			}
			if m.Error != nil {
				var we relay.WireError
				_ = json.Unmarshal(m.Error, &we)
				return failed(errors.New(we.Message))
			}
			return m.Result, nil
		case relay.Notify:
			cl.relayNotification(ctx, server, m, b, out)
		case relay.ServerCall:
			resp := cl.relayServerCall(ctx, server, m, out)
			if st2, err := rawSession(*rs).Post(ctx, resp); err == nil {
				st2.Close()
			}
		}
		if !st.SSE() {
			return failed(errors.New("the upstream ended its answer without a result"))
		}
	}
}

// sendingCall is how the go-sdk client names the request in its transport
// errors.
const sendingCall = `sending "tools/call"`

// postError words an error of relay.Session.Post as the go-sdk client
// words the same failure of its POST, and reports whether that client
// fails its session over it: an error of the HTTP client (the request may
// not have reached the upstream) and a refusal it classifies (a transient
// status, a JSON-RPC error) are rejections that keep the session; another
// refusal or an answer of an unsupported type fail it.
func postError(err error) (error, bool) {
	var se *relay.StatusError
	var ct *relay.ContentTypeError
	switch {
	case errors.As(err, &se):
		text := http.StatusText(se.Status)
		if transientStatus(se.Status) {
			return fmt.Errorf("rejected by transport: %s: %s", sendingCall, text), false
		}
		if msg, ok := se.RPCError(); ok {
			return fmt.Errorf("%s: %s: rejected by transport: %s", sendingCall, msg, text), false
		}
		return fmt.Errorf("%s: %s", sendingCall, text), true
	case errors.As(err, &ct):
		return fmt.Errorf("%s: %w", sendingCall, err), true
	case errors.Is(err, relay.ErrSessionGone):
		// Gone again right after the reconnect: the go-sdk client drops
		// that session too.
		return mcp.ErrSessionMissing, true
	}
	return fmt.Errorf("%s: rejected by transport: %w", sendingCall, err), false
}

// transientStatus is a status the go-sdk client takes as a passing refusal.
func transientStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

func rawSession(rs upstream.RawSession) relay.Session {
	return relay.Session{HTTP: rs.HTTP, URL: rs.URL, ID: rs.ID, ProtocolVersion: rs.ProtocolVersion}
}

// relayCancelled tells the upstream that the relayed request id was given
// up, bounded by the call timeout, and takes the call off its Conn's list;
// base carries the call's values (upstream.Track's), not its end.
func (p *Project) relayCancelled(base context.Context, rs upstream.RawSession, id json.RawMessage, after time.Duration) {
	ctx, cancel := context.WithTimeout(base, after)
	defer cancel()
	if st, err := rawSession(rs).Post(ctx, relay.Cancelled(id, "the client's request ended")); err == nil {
		st.Close()
	}
	upstream.Told(base) // told, or as good as: the upstream had the chance
}

// relayNotification passes what the upstream sent during the call on as the
// SDK path would: progress on the call's stream, log messages there at or
// above the client's level, list changes and resource updates through the
// session's own server.
func (c *client) relayNotification(ctx context.Context, server string, m relay.Message, raw []byte, out *relayOut) {
	switch m.Method {
	case "notifications/progress":
		out.event(raw)
	case "notifications/message":
		var lp struct {
			Level mcp.LoggingLevel `json:"level"`
		}
		_ = json.Unmarshal(m.Params, &lp)
		c.mu.Lock()
		level := c.level
		c.mu.Unlock()
		if level != "" && logRank(lp.Level) >= logRank(level) {
			out.event(raw)
		}
	case "notifications/tools/list_changed":
		c.listChanged("tools")
	case "notifications/prompts/list_changed":
		c.listChanged("prompts")
	case "notifications/resources/list_changed":
		c.listChanged("resources")
	case "notifications/resources/updated":
		var up mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(m.Params, &up) == nil {
			_ = c.srv.ResourceUpdated(ctx, &up)
		}
	}
}

var logLevels = map[mcp.LoggingLevel]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

func logRank(l mcp.LoggingLevel) int {
	if r, ok := logLevels[l]; ok {
		return r
	}
	return -1
}

// relayServerCall answers a request the upstream sent during the call and
// returns the response to post upstream: ping by the proxy; roots,
// sampling and elicitation, when the client offers them, by asking the
// client on the call's own stream (out) under an id of the proxy's, and
// passing its answer back as it came (AnswerRelayed delivers it); what the
// client does not offer with the error the SDK path gives.
func (c *client) relayServerCall(ctx context.Context, server string, m relay.Message, out *relayOut) []byte {
	k := c.caps
	offered := k != nil && ((m.Method == "roots/list" && k.RootsV2 != nil) ||
		(m.Method == "sampling/createMessage" && k.Sampling != nil) ||
		(m.Method == "elicitation/create" && k.Elicitation != nil))
	switch {
	case m.Method == "ping":
		return relay.Response(m.ID, json.RawMessage(`{}`), nil)
	case offered:
		res, errObj := c.ask(ctx, m, out)
		return relay.Response(m.ID, res, errObj)
	case m.Method == "roots/list":
		return relayError(m.ID, -32603, "the client behind this proxy offers no roots")
	}
	return relayError(m.ID, -32601, fmt.Sprintf("method %q not supported by this client", m.Method))
}

func relayError(id json.RawMessage, code int64, msg string) []byte {
	b, _ := json.Marshal(relay.WireError{Code: code, Message: msg})
	return relay.Response(id, nil, b)
}

// ask sends the upstream's request m to the client on the call's stream
// and waits, bounded by the call's ctx, for the client's answer: its result
// or its error object.
func (c *client) ask(ctx context.Context, m relay.Message, out *relayOut) (result, errObj json.RawMessage) {
	id := relay.NewAskID()
	answer := make(chan relay.Message, 1)
	c.mu.Lock()
	if c.asks == nil {
		c.asks = map[string]chan relay.Message{}
	}
	c.asks[string(id)] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.asks, string(id))
		c.mu.Unlock()
	}()
	out.event(relay.Ask(id, m.Method, m.Params))
	select {
	case a := <-answer:
		if a.Error != nil {
			return nil, a.Error
		}
		return a.Result, nil
	case <-ctx.Done():
		out.event(relay.Cancelled(id, "the call ended"))
		b, _ := json.Marshal(relay.WireError{Code: -32603, Message: fmt.Sprintf("%s: the client did not answer within the call: %v", m.Method, context.Cause(ctx))})
		return nil, b
	}
}

// AnswerRelayed delivers a client's answer (body, one JSON-RPC response)
// to the request the relay asked of it on session id (ask); it reports
// false when body is no answer to such a request (the SDK then handles it).
func (p *Project) AnswerRelayed(id string, body []byte) bool {
	if !relay.IsAskAnswer(body) {
		return false
	}
	m := relay.Classify(body)
	if m.Kind != relay.Answer {
		return false
	}
	p.mu.Lock()
	cl := p.clients[id]
	p.mu.Unlock()
	if cl == nil {
		return false
	}
	cl.mu.Lock()
	answer := cl.asks[string(m.ID)]
	delete(cl.asks, string(m.ID))
	cl.mu.Unlock()
	if answer == nil {
		return false
	}
	answer <- m // buffered for one, and the entry is gone: never blocks
	return true
}

// relaying registers a relayed call of the client under its JSON-RPC id,
// so the client's notifications/cancelled reaches it; the returned func
// unregisters it.
func (c *client) relaying(id json.RawMessage, cancel context.CancelFunc) func() {
	key := string(id)
	c.mu.Lock()
	if c.relays == nil {
		c.relays = map[string]context.CancelFunc{}
	}
	c.relays[key] = cancel
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.relays, key)
		c.mu.Unlock()
	}
}

// CancelRelayed ends the relayed call a client's notifications/cancelled
// (body) names, on session id; it reports false when body is not such a
// notification for a call being relayed (the SDK then handles it).
func (p *Project) CancelRelayed(id string, body []byte) bool {
	if !relay.IsCancel(body) {
		return false
	}
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &n) != nil || len(n.Params.RequestID) == 0 {
		return false
	}
	p.mu.Lock()
	cl := p.clients[id]
	p.mu.Unlock()
	if cl == nil {
		return false
	}
	cl.mu.Lock()
	cancel := cl.relays[string(n.Params.RequestID)]
	cl.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}
