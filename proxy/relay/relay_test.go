package relay

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
)

func TestParseTakesOnlyOneToolsCallRequest(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"docmost_search","arguments":{"q":1},"_meta":{"progressToken":"p1"}}}`
	c, taken := Parse([]byte(ok))
	if !taken || string(c.ID) != "7" || c.Name != "docmost_search" || string(c.Progress) != `"p1"` {
		t.Fatalf("Parse(%s) = %+v, %v", ok, c, taken)
	}
	for name, body := range map[string]string{
		"batch":        `[` + ok + `]`,
		"notification": `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`,
		"other method": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"tools/call"}}`,
		"no name":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
		"object id":    `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"x"}}`,
		"null id":      `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}`,
		"not 2.0":      `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		"bad _meta":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":[1]}}`,
		"malformed":    `{"jsonrpc":"2.0","id":1,"method":"tools/call",`,
	} {
		if _, taken := Parse([]byte(body)); taken {
			t.Errorf("%s: Parse took %s; only one tools/call request may be relayed", name, body)
		}
	}
}

// The entry hands the relay its reading of the body (as it reads it, at
// most its batch cap of messages): the relay takes from that reading
// exactly the call Parse takes from the body, and refuses what Parse
// refuses.
func TestOfTheEntrysReadingIsParse(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"docmost_search","arguments":{"q":1},"_meta":{"progressToken":3}}}`
	for _, body := range []string{ok, " \n" + ok + "\n", "[" + ok + "]", "[" + ok + "," + ok + "]",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"tools/call"}}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","method":"tools/list","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"ID":2,"method":"tools/call","params":{"name":"x","NAME":"y"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":[1]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call",`, `"tools/call"`, ``} {
		want, wantOK := Parse([]byte(body))
		got, gotOK := Of(rpcread.ReadAtMost([]byte(body), 4))
		if gotOK != wantOK || string(got.ID) != string(want.ID) || got.Name != want.Name ||
			string(got.Arguments) != string(want.Arguments) || string(got.Progress) != string(want.Progress) {
			t.Errorf("%s: from the entry's reading %+v %v, Parse %+v %v", body, got, gotOK, want, wantOK)
		}
	}
	if c, taken := Of(rpcread.Read([]byte(ok))); !taken || c.Name != "docmost_search" || string(c.ID) != `"c-1"` {
		t.Errorf("the call itself: %+v %v", c, taken)
	}
}

func TestRequestSplicesTheUpstreamNameAndIDAndKeepsTheRest(t *testing.T) {
	c, _ := Parse([]byte(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"docmost_search","arguments":{"q":"x"},"_meta":{"progressToken":5,"traceCode":"T"}}}`))
	id := NewID()
	b, err := c.Request(id, "search", json.RawMessage(`{"progressToken":5}`))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if string(m.ID) != string(id) || m.Method != "tools/call" || m.Params.Name != "search" || string(m.Params.Arguments) != `{"q":"x"}` || string(m.Params.Meta) != `{"progressToken":5}` {
		t.Errorf("upstream request %s", b)
	}
	if id[0] != '"' || !strings.Contains(string(id), "mcplocal-relay-") {
		t.Errorf("relay id %s: want a string id, never a number the go-sdk client could issue", id)
	}
	b, _ = c.Request(id, "search", nil)
	if strings.Contains(string(b), "_meta") {
		t.Errorf("no meta given, none sent: %s", b)
	}
	c2, _ := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_b"}}`))
	b, _ = c2.Request(id, "b", nil)
	if !strings.Contains(string(b), `"arguments":{}`) {
		t.Errorf("missing arguments become {} as the go-sdk client sends them: %s", b)
	}
}

func TestStreamReadsJSONAndSSEAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "S" || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
			http.Error(w, "headers", http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("sse") == "" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":"r","result":{"content":[]}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": comment\n\nevent: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"r\",\"result\":{}}\n\n")
	}))
	defer srv.Close()
	s := Session{HTTP: srv.Client(), URL: srv.URL, ID: "S", ProtocolVersion: "2025-11-25"}
	st, err := s.Post(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Next()
	if err != nil || Classify(b).Kind != Answer {
		t.Fatalf("JSON answer: %s %v", b, err)
	}
	if _, err := st.Next(); err != io.EOF {
		t.Errorf("after the JSON body: %v, want EOF", err)
	}
	st.Close()
	s.URL += "?sse=1"
	st, err = s.Post(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var kinds []Kind
	for {
		b, err := st.Next()
		if err != nil {
			break
		}
		kinds = append(kinds, Classify(b).Kind)
	}
	if len(kinds) != 2 || kinds[0] != Notify || kinds[1] != Answer {
		t.Errorf("SSE kinds %v, want a notification then the answer (multi-line data joined)", kinds)
	}
}

func TestPostSaysSessionGoneOn404(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	defer srv.Close()
	_, err := Session{HTTP: srv.Client(), URL: srv.URL, ID: "S"}.Post(t.Context(), []byte(`{}`))
	if err != ErrSessionGone {
		t.Errorf("404 on a session: %v, want ErrSessionGone", err)
	}
}

// An event stream yields what the go-sdk client reads of it: the data of
// events named message (or not named), not of events named otherwise, and
// remembers the last event id (a stream the upstream offers to resume).
func TestStreamSkipsOtherEventsAndKeepsTheLastEventID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata:\n\nevent: ping\ndata: not json\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":{}}\n\n")
	}))
	defer srv.Close()
	st, err := Session{HTTP: srv.Client(), URL: srv.URL}.Post(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []string
	for {
		b, err := st.Next()
		if err != nil {
			break
		}
		got = append(got, string(b))
	}
	if len(got) != 1 || Classify([]byte(got[0])).Kind != Answer || st.LastEventID() != "2" || !st.SSE() {
		t.Errorf("events %q, last id %q: want only the answer, and id 2", got, st.LastEventID())
	}
}

// Post tells apart what the relay words differently: a 404 with a JSON-RPC
// error is a refusal, not a forgotten session; another status a
// *StatusError with its body; a 2xx answer neither JSON nor SSE a
// *ContentTypeError; an empty JSON body is one (empty) message.
func TestPostClassifiesRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("case") {
		case "404rpc":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`)
		case "400":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"oops":true}`)
		case "empty":
			w.Header()["Content-Type"] = nil
			w.WriteHeader(http.StatusOK)
		case "emptyjson":
			w.Header().Set("Content-Type", "application/json")
		}
	}))
	defer srv.Close()
	post := func(c string) (*Stream, error) {
		return Session{HTTP: srv.Client(), URL: srv.URL + "?case=" + c, ID: "S"}.Post(t.Context(), []byte(`{}`))
	}
	_, err := post("404rpc")
	if se, ok := err.(*StatusError); !ok || se.Status != 404 {
		t.Errorf("404 with a JSON-RPC error: %v, want a *StatusError", err)
	} else if msg, rpc := se.RPCError(); !rpc || msg != "no" {
		t.Errorf("404's JSON-RPC error %q %v, want \"no\"", msg, rpc)
	}
	_, err = post("400")
	if se, ok := err.(*StatusError); !ok || se.Status != 400 || string(se.Body) != `{"oops":true}` {
		t.Errorf("400: %v, want a *StatusError with its body", err)
	} else if _, rpc := se.RPCError(); rpc {
		t.Error("400 with a body that is not JSON-RPC: RPCError says it is one")
	}
	if _, err = post("empty"); err == nil || err.Error() != `unsupported content type ""` {
		t.Errorf("200 with no body and no Content-Type: %v, want a *ContentTypeError", err)
	}
	st, err := post("emptyjson")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if b, err := st.Next(); err != nil || len(b) != 0 || st.SSE() {
		t.Errorf("an empty JSON body: %q %v, want one empty message", b, err)
	}
}

func TestStampedAddsTheTraceCodeAndKeepsTheRest(t *testing.T) {
	r, err := ParseResult(json.RawMessage(`{"content":[{"type":"text","text":"boom"}],"isError":true,"_meta":{"k":"v"},"structuredContent":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || r.FirstText() != "boom" {
		t.Errorf("isError %v, first text %q", r.IsError, r.FirstText())
	}
	b, err := r.Stamped("traceCode", "ABCD1234")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Meta       map[string]string `json:"_meta"`
		Structured map[string]int    `json:"structuredContent"`
		IsError    bool              `json:"isError"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta["traceCode"] != "ABCD1234" || got.Meta["k"] != "v" || got.Structured["a"] != 1 || !got.IsError {
		t.Errorf("stamped %s", b)
	}
}

func TestIsCancel(t *testing.T) {
	if !IsCancel([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)) {
		t.Error("a notifications/cancelled")
	}
	if IsCancel([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notifications/cancelled"}}`)) {
		t.Error("a tools/call naming it is not one")
	}
}

func TestStampedSplicesIntoAResultWithoutMeta(t *testing.T) {
	for raw, want := range map[string]string{
		`{}`:                   `{"_meta":{"traceCode":"C"}}`,
		` { } `:                `{"_meta":{"traceCode":"C"}}`,
		`{"content":[]}`:       `{"_meta":{"traceCode":"C"},"content":[]}`,
		`{"_meta":null,"a":1}`: `{"_meta":{"traceCode":"C"},"a":1}`,
	} {
		r, err := ParseResult(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		b, err := r.Stamped("traceCode", "C")
		if err != nil || string(b) != want {
			t.Errorf("Stamped(%s) = %s, %v; want %s", raw, b, err, want)
		}
	}
	if _, err := ParseResult(json.RawMessage(`[1]`)); err == nil {
		t.Error("a result that is not an object is refused")
	}
}
