package catalogue

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rpcError passes only an answer of the status asked for whose body is a
// JSON-RPC 2.0 error, and gives its message.
func TestRPCErrorAcceptsOnlyAJSONRPCErrorOfTheStatus(t *testing.T) {
	const refusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"session not found"}}`
	if bad, msg := rpcError(http.StatusNotFound, refusal, http.StatusNotFound); bad != "" || msg != "session not found" {
		t.Errorf("a JSON-RPC 404: %q, message %q; want it accepted with its message", bad, msg)
	}
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"another status":   {http.StatusBadRequest, refusal},
		"a 200":            {http.StatusOK, refusal},
		"a plain-text 404": {http.StatusNotFound, "404 page not found"},
		"not JSON-RPC 2.0": {http.StatusNotFound, `{"jsonrpc":"1.0","error":{"code":-32001,"message":"x"}}`},
		"no error":         {http.StatusNotFound, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	} {
		if bad, _ := rpcError(c.status, c.body, http.StatusNotFound); bad == "" {
			t.Errorf("%s: accepted as a JSON-RPC 404", name)
		}
	}
}

// messages reads every JSON-RPC message of an answer as sent: one JSON
// message, a JSON array of them, or the data lines of an SSE stream.
func TestMessagesReadsJSONArraysAndSSE(t *testing.T) {
	a, b := `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/progress"}`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"one JSON message", "  " + a + "\n", []string{a}},
		{"a JSON array", "[" + a + "," + b + "]", []string{a, b}},
		{"an SSE stream", "event: message\ndata: " + b + "\n\nevent: message\ndata:" + a + "\n\n", []string{b, a}},
		{"an SSE event of a batch", "data: [" + a + "," + b + "]\n\n", []string{a, b}},
		{"empty data lines", "data: \n\ndata: " + a + "\n\n", []string{a}},
		{"nothing", "", nil},
		{"plain text", "404 page not found", nil},
	} {
		var got []string
		for _, m := range messages(c.body) {
			got = append(got, string(m))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	long := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 100<<10) + `"}}`
	if got := messages("data: " + long + "\n\n"); len(got) != 1 || string(got[0]) != long {
		t.Errorf("an SSE message of 100 KiB was not read whole: %d messages", len(got))
	}
}

// answerIDs are the ids of the responses of an answer, as sent; requests
// and notifications the proxy sends along carry none that counts.
func TestAnswerIDsAreTheResponses(t *testing.T) {
	body := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"a\\u0062\",\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"error\":{\"code\":-32600,\"message\":\"x\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"result\":{}}\n\n"
	want := []string{`"a\u0062"`, `9007199254740993`}
	if got := answerIDs(body); !reflect.DeepEqual(got, want) {
		t.Errorf("answerIDs: %q, want %q", got, want)
	}
}

// A chat answer's text is its "text", or, streamed, its chunks put back
// together (other events aside); its trace code is the first one any line
// carries.
func TestChatTextAndTraceCode(t *testing.T) {
	if got := chatText(`{"text":"hello","traceCode":"ABCDEFGH"}`, false); got != "hello" {
		t.Errorf("a plain answer's text: %q", got)
	}
	stream := "event: chunk\ndata: {\"text\":\"hel\"}\n\nevent: status\ndata: {\"text\":\"not a chunk\"}\n\n" +
		"event: chunk\ndata: {\"text\":\"lo\"}\n\nevent: chunk\ndata: not json\n\nevent: done\ndata: {\"traceCode\":\"ABCDEFGH\"}\n\n"
	if got := chatText(stream, true); got != "hello" {
		t.Errorf("a streamed answer's text: %q, want its chunks, hello", got)
	}
	if got := chatTraceCode(stream); got != "ABCDEFGH" {
		t.Errorf("a streamed answer's trace code: %q", got)
	}
	if got := chatTraceCode(`{"text":"x","traceCode":"HGFEDCBA"}`); got != "HGFEDCBA" {
		t.Errorf("a plain answer's trace code: %q", got)
	}
	if got := chatTraceCode(`{"text":"x"}`); got != "" {
		t.Errorf("an answer without a trace code gave %q", got)
	}
}

// panicLine is the line of the operator's log that reports the panic of
// one trace code, and only of that one.
func TestPanicLineIsTheTracesOwn(t *testing.T) {
	logs := "serving\nhandler panicked trace=AAAAAAAA: boom\nrequest trace=BBBBBBBB ok\nhandler panicked trace=BBBBBBBB: boom\n"
	if got := panicLine(logs, "BBBBBBBB"); got != "handler panicked trace=BBBBBBBB: boom" {
		t.Errorf("the panic of BBBBBBBB: %q", got)
	}
	if got := panicLine(logs, "CCCCCCCC"); got != "" {
		t.Errorf("a trace that never panicked: %q", got)
	}
}

// A sampling request's prompt is its first message's text; a request
// without one has none.
func TestSamplingPromptIsTheFirstMessages(t *testing.T) {
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"alpha"}},{"role":"user","content":{"type":"text","text":"beta"}}]}`)
	if got := samplingPrompt(params); got != "alpha" {
		t.Errorf("samplingPrompt: %q, want alpha", got)
	}
	for _, p := range []string{`{"messages":[]}`, `not json`, `{}`} {
		if got := samplingPrompt(json.RawMessage(p)); got != "" {
			t.Errorf("samplingPrompt(%s) = %q, want none", p, got)
		}
	}
}

// readMessages reads a JSON answer as its one message, and an SSE stream
// event by event (a data line split over two, an event that is no JSON
// skipped), until the reader says stop.
func TestReadMessagesReadsJSONAndSSE(t *testing.T) {
	respOf := func(ctype, body string) *http.Response {
		return &http.Response{Header: http.Header{"Content-Type": {ctype}}, Body: io.NopCloser(strings.NewReader(body))}
	}
	var got []string
	each := func(m rawMessage) bool { got = append(got, string(m.ID)+" "+m.Method); return true }
	if err := readMessages(respOf("application/json", `{"jsonrpc":"2.0","id":3,"result":{}}`), each); err != nil || !reflect.DeepEqual(got, []string{"3 "}) {
		t.Errorf("a JSON answer: %q %v", got, err)
	}
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n" +
		"data: not json\n\n" +
		"id: 7\ndata: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":5,\"result\":{}}\n\n" +
		"\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n"
	got = nil
	if err := readMessages(respOf("text/event-stream", stream), each); err != nil || !reflect.DeepEqual(got, []string{" notifications/message", "5 ", "6 "}) {
		t.Errorf("an SSE stream: %q %v", got, err)
	}
	got = nil
	stopAtFirst := func(m rawMessage) bool { got = append(got, m.Method); return false }
	if err := readMessages(respOf("text/event-stream", stream), stopAtFirst); err != nil || len(got) != 1 {
		t.Errorf("a reader that stops at the first message was given %d: %v", len(got), err)
	}
	if err := readMessages(respOf("application/json", "not json"), each); err == nil {
		t.Error("a JSON answer that is no JSON was read without an error")
	}
}

// healthzWithin reads /healthz's status and whole text on a connection of
// its own; an answer that is no HTTP is an error, not a status.
func TestHealthzWithinReadsTheStatusAndText(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "MCPCTL_CONNS_MAX reached\nsecond line\n")
	}))
	defer ts.Close()
	status, text, err := healthzWithin(context.Background(), ts.Listener.Addr().String(), 5*time.Second)
	if err != nil || status != http.StatusServiceUnavailable || !strings.HasSuffix(text, "\n\nMCPCTL_CONNS_MAX reached\nsecond line\n") {
		t.Errorf("healthz: %d %q %v; want 503 and its whole text", status, text, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.WriteString(c, "SSH-2.0-not-http\r\n")
		_ = c.Close()
	}()
	if status, _, err := healthzWithin(context.Background(), ln.Addr().String(), 5*time.Second); err == nil || status != 0 {
		t.Errorf("an answer that is no HTTP: status %d, err %v; want an error", status, err)
	}
}

// lastLine is the last line of a process's output, trailing blank lines
// aside.
func TestLastLineIsTheLastWithText(t *testing.T) {
	for in, want := range map[string]string{
		"starting\nrefused: use --allow-anonymous-network\n\n": "refused: use --allow-anonymous-network",
		"one line":  "one line",
		"a\nb\nc\n": "c",
	} {
		if got := lastLine(in); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", in, got, want)
		}
	}
}
