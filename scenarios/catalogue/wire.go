package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The wire rows: what JSON-RPC 2.0 and the MCP spec (2025-06-18, Streamable
// HTTP) ask of any server, so of any proxy, seen as raw HTTP on the endpoint
// that reaches the everything fake: invalid params are -32602, a notification is accepted with 202 and no body, ids of
// every kind MCP allows come back as sent, an unsupported protocol version
// header is a 400, an unknown version asked for at initialize is answered
// with one the server supports, and a large answer arrives whole. They need only
// tools/call, so they hold for every shape, stateful or stateless, whatever
// its naming; each runs healthy and under the faults of the everything
// fake's link, where a protocol-level answer must not wait on the upstream.
// (An unknown method is held only to a 4xx or a JSON-RPC error, by
// MalformedRequests: the go-sdk's server answers it with a plain-text 400.)

// wireVersion is the protocol version the wire rows speak.
const wireVersion = "2025-06-18"

// wireLimit bounds what a wire row reads of one answer.
const wireLimit = 4 << 20

// largeAnswerBytes is the size of the text LargeAnswer has echoed.
const largeAnswerBytes = 256 << 10

// wireSession is one client session over raw HTTP on the endpoint that
// reaches the everything fake; id is "" on a stateless proxy.
type wireSession struct {
	env      *harness.Env
	hc       *http.Client
	endpoint string
	id       string
}

// openWire initializes a session (untimed) and sends
// notifications/initialized.
func openWire(ctx context.Context, env *harness.Env) (*wireSession, error) {
	w := &wireSession{env: env, hc: env.HTTPClient("alice"), endpoint: env.ServerURL("everything")}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + wireVersion + `","capabilities":{},"clientInfo":{"name":"mcpchaos-wire","version":"0"}}}`
	status, _, body, err := w.send(ctx, "", init, nil)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("initialize answered %d: %s", status, excerpt(body))
	}
	if status, _, body, err := w.send(ctx, wireVersion, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); err != nil || status/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized answered %d %v: %s", status, err, excerpt(body))
	}
	return w, nil
}

// send POSTs body on the session with the protocol version header given
// ("" sends none) and edit applied; it returns the status, the
// Content-Type and the body. The first answer's Mcp-Session-Id is the
// session's.
func (w *wireSession) send(ctx context.Context, version, body string, edit func(*http.Request)) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if w.id != "" {
		req.Header.Set("Mcp-Session-Id", w.id)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	if w.id == "" {
		w.id = resp.Header.Get("Mcp-Session-Id")
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, wireLimit))
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}

// close ends the session (a stateless proxy has none to end).
func (w *wireSession) close() {
	defer w.hc.CloseIdleConnections()
	if w.id != "" {
		closeSession(w.env, w.endpoint, "alice", w.id)
	}
}

// wireAnswer is the response of an answer, as read off the wire.
type wireAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// responseOf is the one JSON-RPC response in an answer (JSON or SSE), or
// why there is none.
// A JSON-RPC error response is an answer under a 4xx status too: JSON-RPC
// does not ask for a status, and MCP has a refusal carry one.
func responseOf(status int, body string) (wireAnswer, string) {
	if status != http.StatusOK && status/100 != 4 {
		return wireAnswer{}, fmt.Sprintf("answered HTTP %d, not a JSON-RPC response: %s", status, excerpt(body))
	}
	for _, m := range messages(body) {
		var a wireAnswer
		var probe struct {
			Method *string `json:"method"`
		}
		if json.Unmarshal(m, &probe) != nil || probe.Method != nil {
			continue
		}
		if err := json.Unmarshal(m, &a); err == nil && (a.Error != nil || a.Result != nil && status == http.StatusOK) {
			return a, ""
		}
	}
	return wireAnswer{}, fmt.Sprintf("answered %d without a JSON-RPC response: %s", status, excerpt(body))
}

// sameID reports whether the id got back is the id sent, as JSON-RPC 2.0
// says: the same value (a string as the same string, however escaped; a
// number as the same number, however large).
func sameID(sent, got json.RawMessage) bool {
	var s, g any
	ds, dg := json.NewDecoder(bytes.NewReader(sent)), json.NewDecoder(bytes.NewReader(got))
	ds.UseNumber()
	dg.UseNumber()
	if ds.Decode(&s) != nil || dg.Decode(&g) != nil {
		return false
	}
	switch sv := s.(type) {
	case string:
		gv, ok := g.(string)
		return ok && gv == sv
	case json.Number:
		gv, ok := g.(json.Number)
		if !ok {
			return false
		}
		a, oka := new(big.Rat).SetString(sv.String())
		b, okb := new(big.Rat).SetString(gv.String())
		return oka && okb && a.Cmp(b) == 0
	}
	return false
}

// wireOp wraps f: a session is opened (untimed) on the endpoint that
// reaches the everything fake, f runs its timed part, and the proxy must
// still serve afterwards.
func wireOp(name string, f func(context.Context, *wireSession) Observation) Operation {
	return Operation{Name: name, AnyShape: true, Do: func(ctx context.Context, env *harness.Env) Observation {
		w, err := openWire(ctx, env)
		if err != nil {
			return Observation{Err: err}
		}
		o := f(ctx, w)
		w.close()
		if why := dead(ctx, env); why != "" {
			o.Broken = append(o.Broken, why)
		}
		return o
	}}
}

// timedSend is one send, the timed part of o: a transport failure (no
// answer at all) is o.Err.
func (w *wireSession) timedSend(ctx context.Context, o *Observation, version, body string, edit func(*http.Request)) (int, string, string, bool) {
	clk := startClock()
	status, ctype, got, err := w.send(ctx, version, body, edit)
	clk.into(o)
	if err != nil {
		o.Err = err
		return 0, "", "", false
	}
	return status, ctype, got, true
}

// wantError checks that an answer is a JSON-RPC error response to id with
// code want.
func wantError(status int, body, id string, want int) string {
	a, why := responseOf(status, body)
	switch {
	case why != "":
		return why
	case a.Error == nil:
		return "answered with a result, not an error: " + excerpt(string(a.Result))
	case a.Error.Code != want:
		return fmt.Sprintf("answered error %d (%s), want %d", a.Error.Code, excerpt(a.Error.Message), want)
	case !sameID(json.RawMessage(id), a.ID):
		return fmt.Sprintf("the error's id is %s, not the request's %s", a.ID, id)
	}
	return ""
}

var (
	// InvalidParams: a tools/call whose params are no CallToolParams (no
	// name, arguments not an object) is answered with -32602 (Invalid
	// params), under its own id.
	InvalidParams = wireOp("invalid params are -32602", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		status, _, body, ok := w.timedSend(ctx, &o, wireVersion, `{"jsonrpc":"2.0","id":"bad-params","method":"tools/call","params":{"arguments":"not an object"}}`, nil)
		if ok {
			if why := wantError(status, body, `"bad-params"`, -32602); why != "" {
				o.Broken = append(o.Broken, "1 a tools/call without a name "+why)
			}
		}
		return o
	})
	// NotificationAccepted: a notification the server accepts is answered
	// 202 Accepted with no body (MCP Streamable HTTP: MUST).
	NotificationAccepted = wireOp("a notification is 202 with no body", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		status, _, body, ok := w.timedSend(ctx, &o, wireVersion, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, nil)
		if ok && (status != http.StatusAccepted || body != "") {
			o.Broken = append(o.Broken, fmt.Sprintf("1 a notification answered %d with %d bytes, want 202 and no body: %s", status, len(body), excerpt(body)))
		}
		return o
	})
	// IDsOfEveryKind: tools/calls with ids of every kind MCP allows (a
	// string, an escaped string, the empty string, zero, negative numbers,
	// the largest integers JSON exchanges exactly, ±(2^53-1), RFC 8259 §6)
	// are each answered under the id sent. Past them, byte for byte, is
	// mcplocal's own promise (IDsExact).
	IDsOfEveryKind = wireOp("ids of every kind come back as sent", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		for i, id := range wireIDs {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{"text":"id"}}}`, id, w.env.EverythingTool("echo"))
			var status int
			var got string
			if i == 0 {
				var ok bool
				if status, _, got, ok = w.timedSend(ctx, &o, wireVersion, body, nil); !ok {
					return o
				}
			} else {
				var err error
				if status, _, got, err = w.send(ctx, wireVersion, body, nil); err != nil {
					o.Broken = append(o.Broken, fmt.Sprintf("9 id %s: %v", id, err))
					continue
				}
			}
			a, why := responseOf(status, got)
			switch {
			case why != "":
				o.Broken = append(o.Broken, fmt.Sprintf("9 id %s: %s", id, why))
			case !sameID(json.RawMessage(id), a.ID):
				o.Broken = append(o.Broken, fmt.Sprintf("9 id %s came back as %s", id, a.ID))
			}
		}
		return o
	})
	// UnsupportedVersion: a request whose MCP-Protocol-Version header names
	// a version no one supports is refused with 400 (MCP: MUST), and the
	// same request with a supported one is answered.
	UnsupportedVersion = wireOp("an unsupported protocol version header is 400", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":%q,"arguments":{"text":"v"}}}`, w.env.EverythingTool("echo"))
		status, _, body, ok := w.timedSend(ctx, &o, "1999-01-01", call, nil)
		if !ok {
			return o
		}
		if status != http.StatusBadRequest {
			o.Broken = append(o.Broken, fmt.Sprintf("1 MCP-Protocol-Version 1999-01-01 answered %d, want 400: %s", status, excerpt(body)))
		}
		status, _, body, err := w.send(ctx, wireVersion, call, nil)
		if err != nil {
			o.Broken = append(o.Broken, "1 the same call on "+wireVersion+": "+err.Error())
		} else if _, why := responseOf(status, body); why != "" {
			o.Broken = append(o.Broken, fmt.Sprintf("1 the same call on %s %s", wireVersion, why))
		}
		return o
	})
	// LargeAnswer: a tools/call whose answer is 256 KiB of text gets it
	// whole, byte for byte.
	LargeAnswer = wireOp("a 256 KiB answer arrives whole", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		text := largeText()
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":"large","method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, w.env.EverythingTool("echo"), text)
		status, _, body, ok := w.timedSend(ctx, &o, wireVersion, call, nil)
		if !ok {
			return o
		}
		a, why := responseOf(status, body)
		if why != "" {
			o.Broken = append(o.Broken, "1 the large answer: "+why)
			return o
		}
		if a.Error != nil {
			// Answered, as an error: the scenario's Expect says whether
			// its fault allows one.
			o.Err = &jsonrpc.Error{Code: int64(a.Error.Code), Message: a.Error.Message}
			return o
		}
		var res struct {
			Meta    map[string]any `json:"_meta"`
			IsError bool           `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(a.Result, &res); err != nil || len(res.Content) == 0 {
			o.Broken = append(o.Broken, "1 the large answer is no tools/call result: "+excerpt(string(a.Result)))
			return o
		}
		o.IsError, o.Text = res.IsError, res.Content[0].Text
		traced(&o, res.Meta)
		if !res.IsError && res.Content[0].Text != text {
			o.Broken = append(o.Broken, fmt.Sprintf("1 the large answer came back with %d bytes of text, not the %d sent", len(res.Content[0].Text), len(text)))
		}
		if !res.IsError {
			o.Text = excerpt(o.Text)
		}
		return o
	})
)

var (
	// ToolsListedWhole: tools/list, its nextCursor followed to the end (at
	// most wirePages pages), lists every tool of the everything fake once,
	// under the shape's names.
	ToolsListedWhole = wireOp("tools/list followed to the end lists every tool once", func(ctx context.Context, w *wireSession) Observation {
		var o Observation
		seen := map[string]int{}
		cursor := ""
		for page := 0; ; page++ {
			if page == wirePages {
				o.Broken = append(o.Broken, fmt.Sprintf("1 tools/list still had a nextCursor after %d pages", wirePages))
				break
			}
			params := `{}`
			if cursor != "" {
				b, _ := json.Marshal(map[string]string{"cursor": cursor})
				params = string(b)
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, 100+page, params)
			var status int
			var got string
			if page == 0 {
				var ok bool
				if status, _, got, ok = w.timedSend(ctx, &o, wireVersion, body, nil); !ok {
					return o
				}
			} else {
				var err error
				if status, _, got, err = w.send(ctx, wireVersion, body, nil); err != nil {
					o.Broken = append(o.Broken, fmt.Sprintf("1 tools/list page %d: %v", page+1, err))
					break
				}
			}
			a, why := responseOf(status, got)
			if why != "" || a.Error != nil {
				o.Broken = append(o.Broken, fmt.Sprintf("1 tools/list page %d: %s%s", page+1, why, errText(a)))
				break
			}
			var res struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			}
			if err := json.Unmarshal(a.Result, &res); err != nil {
				o.Broken = append(o.Broken, fmt.Sprintf("1 tools/list page %d is no ListToolsResult: %v", page+1, err))
				break
			}
			for _, t := range res.Tools {
				seen[t.Name]++
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		for _, tool := range everythingTools {
			if n := seen[w.env.EverythingTool(tool)]; n != 1 {
				o.Broken = append(o.Broken, fmt.Sprintf("1 tools/list listed %s %d times, want once", w.env.EverythingTool(tool), n))
			}
		}
		return o
	})
	// StaleAfterRestart: a call under a session id issued before the proxy
	// restarted is answered 404 (MCP: the client then opens a new session),
	// or served (a proxy that keeps or recreates it; a stateless proxy, that
	// has none); never another refusal, a 5xx or silence.
	StaleAfterRestart = Operation{Name: "a call on the session id of before a restart", AnyShape: true, Do: func(ctx context.Context, env *harness.Env) Observation {
		w, err := openWire(ctx, env)
		if err != nil {
			return Observation{Err: err}
		}
		defer w.close()
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"text":"before"}}}`, env.EverythingTool("echo"))
		if status, _, body, err := w.send(ctx, wireVersion, call, nil); err != nil || status != http.StatusOK {
			return Observation{Err: fmt.Errorf("the call before the restart: %d %v %s", status, err, excerpt(body))}
		}
		if _, err := env.Strike(ctx); err != nil {
			return Observation{Err: err}
		}
		var o Observation
		status, _, body, ok := w.timedSend(ctx, &o, wireVersion, call, nil)
		if !ok {
			return o
		}
		switch {
		case status == http.StatusNotFound && w.id != "":
		case status == http.StatusOK:
			if _, why := responseOf(status, body); why != "" {
				o.Broken = append(o.Broken, "1 the call after the restart "+why)
			}
		default:
			o.Broken = append(o.Broken, fmt.Sprintf("1 the call on the session of before the restart answered %d, want 404 or its answer: %s", status, excerpt(body)))
		}
		if why := dead(ctx, env); why != "" {
			o.Broken = append(o.Broken, why)
		}
		return o
	}}
)

// VersionNegotiated: an initialize asking for a version the server does not
// know is answered with a version it supports (MCP lifecycle: MUST), and one
// asking for wireVersion, which every shape serves, gets wireVersion. Neither
// is timed on an open session: it is the client's first request.
var VersionNegotiated = Operation{Name: "an initialize for an unknown version gets one the server supports", AnyShape: true, Do: func(ctx context.Context, env *harness.Env) Observation {
	var o Observation
	for i, asked := range []string{"2999-01-01", wireVersion} {
		w := &wireSession{env: env, hc: env.HTTPClient("alice"), endpoint: env.ServerURL("everything")}
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + asked + `","capabilities":{},"clientInfo":{"name":"mcpchaos-wire","version":"0"}}}`
		var status int
		var body string
		if i == 0 {
			var ok bool
			if status, _, body, ok = w.timedSend(ctx, &o, "", init, nil); !ok {
				return o
			}
		} else {
			var err error
			if status, _, body, err = w.send(ctx, "", init, nil); err != nil {
				o.Broken = append(o.Broken, fmt.Sprintf("1 an initialize for %s: %v", asked, err))
				w.close()
				continue
			}
		}
		w.close()
		a, why := responseOf(status, body)
		if why != "" || a.Error != nil {
			o.Broken = append(o.Broken, fmt.Sprintf("1 an initialize for %s was not answered with a result: %s%s", asked, why, errText(a)))
			continue
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(a.Result, &res)
		switch {
		case asked == wireVersion && res.ProtocolVersion != wireVersion:
			o.Broken = append(o.Broken, fmt.Sprintf("1 an initialize for %s was answered with version %q", asked, res.ProtocolVersion))
		case asked != wireVersion && (res.ProtocolVersion == asked || !knownVersion(res.ProtocolVersion)):
			o.Broken = append(o.Broken, fmt.Sprintf("1 an initialize for unknown version %s was answered with version %q, not one the server supports", asked, res.ProtocolVersion))
		}
	}
	if why := dead(ctx, env); why != "" {
		o.Broken = append(o.Broken, why)
	}
	return o
}}

// knownVersion reports whether v is a published MCP protocol version.
func knownVersion(v string) bool {
	switch v {
	case "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25":
		return true
	}
	return false
}

// wirePages bounds the pages ToolsListedWhole follows.
const wirePages = 50

// everythingTools are the everything fake's tools, by its own names.
var everythingTools = []string{"echo", "whoami", "progress", "sample", "elicit", "roots", "log", "announce", "touch"}

// errText is a response's error as text ("" without one).
func errText(a wireAnswer) string {
	if a.Error == nil {
		return ""
	}
	return fmt.Sprintf("error %d: %s", a.Error.Code, excerpt(a.Error.Message))
}

// wireIDs are the ids IDsOfEveryKind sends, as JSON.
var wireIDs = []string{`"plain"`, `"\u0041b\/c"`, `""`, `0`, `-7`, `9007199254740991`, `-9007199254740991`}

// largeText is LargeAnswer's text: printable, not one repeated byte.
func largeText() string {
	var b strings.Builder
	for i := 0; b.Len() < largeAnswerBytes; i++ {
		fmt.Fprintf(&b, "line %06d of the large answer\n", i)
	}
	return b.String()[:largeAnswerBytes]
}

// WireOperations are the wire operations, in catalogue order.
var WireOperations = []Operation{InvalidParams, NotificationAccepted, IDsOfEveryKind, UnsupportedVersion, LargeAnswer, VersionNegotiated}

// wireScenarios: every wire operation healthy, then under the faults of the
// everything fake's link (slow, slow bytes, down, reset): the protocol-level
// answers come regardless; a call the upstream cannot answer is answered
// all the same, within the budget.
func wireScenarios() []Scenario {
	env := harness.EnvOptions{Everything: true}
	var out []Scenario
	for _, op := range WireOperations {
		out = append(out, Scenario{Fault: harness.None{}, Operation: op, Promise: "1 JSON-RPC and MCP answered as the specs say",
			Labels: []string{"wire", "baseline"}, Env: env, Budget: requestDeadline, Expect: answeredWithTrace})
	}
	faults := []harness.Fault{
		harness.Latency{Link: harness.LinkEverything, Ms: 100},
		harness.Slicer{Link: harness.LinkEverything, AvgBytes: 512, DelayUs: 100},
		harness.LinkDown{Link: harness.LinkEverything},
		harness.ResetPeer{Link: harness.LinkEverything, TimeoutMs: 1},
		harness.Blackhole{Link: harness.LinkEverything},
	}
	for _, f := range faults {
		for _, op := range WireOperations {
			out = append(out, Scenario{Fault: f, Operation: op, Promise: "1 answered as the specs say under a failing upstream",
				Labels: []string{"wire", "network", "deadline"}, Env: env, Budget: requestDeadline, Expect: answeredOrRPCError})
		}
	}
	// The whole tool list, on a healthy, a slow and a fragmenting link.
	for _, f := range []harness.Fault{harness.None{}, faults[0], faults[1]} {
		out = append(out, Scenario{Fault: f, Operation: ToolsListedWhole, Promise: "1 a list followed to its end is whole",
			Labels: []string{"wire", "baseline"}, Env: env, Budget: requestDeadline, Expect: answeredWithTrace})
	}
	out = append(out, Scenario{Fault: harness.ProxyRestart{}, Operation: StaleAfterRestart, Promise: "2 a session id of before a restart is 404 or served",
		Labels: []string{"wire", "restart"}, Env: env, Budget: requestDeadline, Expect: answeredWithTrace})
	return out
}
