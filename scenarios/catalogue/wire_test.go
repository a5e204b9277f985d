package catalogue

import (
	"encoding/json"
	"strings"
	"testing"
)

// An id comes back the same only as the same value: a string however
// escaped, a number however large; never a string for a number, a rounded
// large number, or another value.
func TestSameIDHoldsTheValueSent(t *testing.T) {
	for _, c := range []struct {
		sent, got string
		same      bool
	}{
		{`"plain"`, `"plain"`, true},
		{`"\u0041b\/c"`, `"Ab/c"`, true},
		{`""`, `""`, true},
		{`0`, `0`, true},
		{`-7`, `-7`, true},
		{`9007199254740993`, `9007199254740993`, true},
		{`9223372036854775807`, `9223372036854775807`, true},
		{`9007199254740993`, `9007199254740992`, false}, // rounded through a float64
		{`9223372036854775807`, `9223372036854775808`, false},
		{`7`, `"7"`, false},
		{`"7"`, `7`, false},
		{`-7`, `7`, false},
		{`"plain"`, `null`, false},
		{`0`, ``, false},
	} {
		if got := sameID(json.RawMessage(c.sent), json.RawMessage(c.got)); got != c.same {
			t.Errorf("sameID(%s, %s) = %v, want %v", c.sent, c.got, got, c.same)
		}
	}
}

// wantError accepts only a JSON-RPC error response with the code and id
// asked for, in JSON or SSE.
func TestWantErrorFailsEveryOtherAnswer(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":41,"error":{"code":-32601,"message":"method not found"}}`
	if why := wantError(200, ok, "41", -32601); why != "" {
		t.Errorf("the right answer failed: %s", why)
	}
	sse := "event: message\ndata: " + ok + "\n\n"
	if why := wantError(200, sse, "41", -32601); why != "" {
		t.Errorf("the right answer over SSE failed: %s", why)
	}
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"another code":        {200, `{"jsonrpc":"2.0","id":41,"error":{"code":-32603,"message":"internal"}}`},
		"another id":          {200, `{"jsonrpc":"2.0","id":42,"error":{"code":-32601,"message":"x"}}`},
		"a string id":         {200, `{"jsonrpc":"2.0","id":"41","error":{"code":-32601,"message":"x"}}`},
		"a result":            {200, `{"jsonrpc":"2.0","id":41,"result":{}}`},
		"an HTTP 5xx":         {500, `{"jsonrpc":"2.0","id":41,"error":{"code":-32601,"message":"x"}}`},
		"no response":         {200, ``},
		"only a notification": {200, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"},
	} {
		if why := wantError(c.status, c.body, "41", -32601); why == "" {
			t.Errorf("%s: passed", name)
		}
	}
}

// The large answer's text is what its name says, and not one byte repeated.
func TestLargeTextIsLargeAndVaried(t *testing.T) {
	s := largeText()
	if len(s) != largeAnswerBytes || strings.Count(s, "\n") < 1000 || !strings.Contains(s, "line 000001") {
		t.Errorf("largeText: %d bytes, %d lines", len(s), strings.Count(s, "\n"))
	}
}

// The version an initialize's answer chose is read from its result, JSON or
// SSE; an answer that is no result (an error, an HTTP failure, no
// response) chose none.
func TestNegotiatedVersionIsTheResults(t *testing.T) {
	result := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"0"}}}`
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"a JSON result", 200, result, "2025-06-18"},
		{"an SSE result", 200, "event: message\ndata: " + result + "\n\n", "2025-06-18"},
		{"a result naming none", 200, `{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{"an error", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported"}}`, ""},
		{"an HTTP failure", 500, result, ""},
		{"no response", 200, "", ""},
	} {
		if got := negotiatedVersion(c.status, c.body); got != c.want {
			t.Errorf("%s: negotiated %q, want %q", c.name, got, c.want)
		}
	}
}

// responseOf finds the one JSON-RPC response of an answer: a result under
// a 200, an error under a 200 or a 4xx (MCP has a refusal carry one);
// requests and notifications the answer carries along are not it, and a
// result under a 4xx, another status or no response at all is no answer.
func TestResponseOfFindsTheResponse(t *testing.T) {
	const (
		result = `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`
		rpcErr = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"refused"}}`
		note   = `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`
		req    = `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{},"result":{}}`
	)
	for _, c := range []struct {
		name    string
		status  int
		body    string
		answer  bool
		isError bool
	}{
		{"a result", 200, result, true, false},
		{"an error", 200, rpcErr, true, true},
		{"an error under a 400", 400, rpcErr, true, true},
		{"an error under a 404", 404, rpcErr, true, true},
		{"a result after a notification and a request", 200, "data: " + note + "\n\ndata: " + req + "\n\ndata: " + result + "\n\n", true, false},
		{"a result under a 400", 400, result, false, false},
		{"an error under a 500", 500, rpcErr, false, false},
		{"an error under a 302", 302, rpcErr, false, false},
		{"only a notification", 200, note, false, false},
		{"a response that is neither", 200, `{"jsonrpc":"2.0","id":1}`, false, false},
		{"no body", 200, "", false, false},
	} {
		a, why := responseOf(c.status, c.body)
		if got := why == ""; got != c.answer {
			t.Errorf("%s: answered=%v (%s), want %v", c.name, got, why, c.answer)
			continue
		}
		if c.answer && (a.Error != nil) != c.isError {
			t.Errorf("%s: error %v, want an error: %v", c.name, a.Error, c.isError)
		}
	}
}

// errText says a response's error, and nothing of a response without one.
func TestErrTextSaysTheError(t *testing.T) {
	a, _ := responseOf(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`)
	if got := errText(a); got != "error -32601: no such method" {
		t.Errorf("errText of an error: %q", got)
	}
	if got := errText(wireAnswer{}); got != "" {
		t.Errorf("errText without an error: %q", got)
	}
}
